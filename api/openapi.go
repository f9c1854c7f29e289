package api

import (
	_ "embed"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"

	"github.com/insightd/insightd/api/httpx"
)

// openAPIYAML is the API's contract, written by hand before the handlers
// it describes (spec-first); the package's tests check every request and
// response they make against it, and every route against its paths.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// openAPIJSON is the same document as JSON, converted once.
var openAPIJSON = sync.OnceValues(func() ([]byte, error) { return yaml.YAMLToJSON(openAPIYAML) })

// openAPISchema serves the document at /api/schema/: YAML, or JSON with
// format=json. Like PostHog's, it needs no key: it holds no data, and a
// client generator must read it before it has one.
func (s *Server) openAPISchema(c *gin.Context) {
	switch c.Query("format") {
	case "", "yaml":
		c.Data(http.StatusOK, "application/yaml; charset=utf-8", openAPIYAML)
	case "json":
		b, err := openAPIJSON()
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		c.Data(http.StatusOK, "application/json; charset=utf-8", b)
	default:
		httpx.WriteError(c, httpx.Invalid("format", "format must be yaml or json."))
	}
}
