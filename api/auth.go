package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/metadata"
)

const principalKey = "principal"

// authenticate finds the personal API key where PostHog clients put it:
// the Authorization: Bearer header, else the personal_api_key query
// parameter, else a personal_api_key field in a JSON body.
func (s *Server) authenticate(c *gin.Context) {
	key, err := apiKey(c)
	if err != nil {
		writeError(c, err)
		return
	}
	if key == "" {
		writeError(c, &Error{Kind: KindUnauthenticated, Code: "not_authenticated",
			Detail: "Authentication credentials were not provided: send Authorization: Bearer <personal API key>."})
		return
	}
	p, err := s.store.Authenticate(c.Request.Context(), key)
	if errors.Is(err, metadata.ErrNotFound) {
		writeError(c, &Error{Kind: KindUnauthenticated, Code: "authentication_failed", Detail: "Personal API key is invalid."})
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.Set(principalKey, p)
	c.Next()
}

func apiKey(c *gin.Context) (string, error) {
	if h := strings.TrimSpace(c.GetHeader("Authorization")); h != "" {
		scheme, key, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", &Error{Kind: KindUnauthenticated, Code: "authentication_failed",
				Detail: "The Authorization header must be: Bearer <personal API key>."}
		}
		return strings.TrimSpace(key), nil
	}
	if k := c.Query("personal_api_key"); k != "" {
		return k, nil
	}
	if c.Request.Body == nil || c.Request.Method == "GET" || c.Request.Method == "HEAD" {
		return "", nil
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return "", err
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return "", nil
	}
	var holder struct {
		Key string `json:"personal_api_key"`
	}
	_ = json.Unmarshal(body, &holder) // a body that is not JSON is the handler's to reject
	return holder.Key, nil
}

// requireScope answers 403 naming the scope when the key lacks it.
func requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !principal(c).HasScope(scope) {
			writeError(c, &Error{Kind: KindForbidden, Code: "permission_denied",
				Detail: fmt.Sprintf("API key missing required scope '%s'", scope)})
			return
		}
		c.Next()
	}
}

func principal(c *gin.Context) *metadata.Principal {
	p, _ := c.MustGet(principalKey).(*metadata.Principal)
	return p
}
