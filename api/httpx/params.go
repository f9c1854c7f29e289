package httpx

import (
	"encoding/json"
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
