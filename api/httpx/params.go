package httpx

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// PathID reads a numeric id from the path; anything else names nothing
// that exists: 404.
func PathID(c *gin.Context, param string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(param), 10, 64)
	if err != nil || id < 1 {
		return 0, NotFound()
	}
	return id, nil
}

// CheckQueryText refuses query-string values PostgreSQL cannot compare
// with text: invalid UTF-8 and NUL.
func CheckQueryText(name, v string) error {
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return Invalid(name, name+" must be UTF-8 text without NUL characters.")
	}
	return nil
}

// QueryBool reads an optional boolean query parameter (true/false, 1/0).
func QueryBool(c *gin.Context, name string) (*bool, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return nil, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, Invalid(name, name+" must be true or false.")
	}
	return &b, nil
}

func IsJSONNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// JSONObject reads the request body as one JSON object (an empty body is
// an empty object).
func JSONObject(c *gin.Context) (map[string]json.RawMessage, error) {
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return nil, err
	}
	body := map[string]json.RawMessage{}
	if len(b) == 0 {
		return body, nil
	}
	if err := json.Unmarshal(b, &body); err != nil || body == nil {
		return nil, &Error{Kind: KindInvalid, Code: "parse_error", Detail: "The body must be a JSON object."}
	}
	return body, nil
}

// Bind reads the request body as one JSON object and checks its fields
// with parse (a store's Parse<Resource>Input).
func Bind[T any](c *gin.Context, parse func(map[string]json.RawMessage) (T, error)) (T, error) {
	body, err := JSONObject(c)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(body)
}
