package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/insightd/insightd/api/httpx"
)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	spec := mustSpec(t)
	if v := spec.doc.OpenAPI; v != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", v)
	}
	if !spec.doc.IsOpenAPI31OrLater() {
		t.Fatal("the validator does not read the document as OpenAPI 3.1")
	}
}

// ginParam turns gin's :name into OpenAPI's {name}.
var ginParam = regexp.MustCompile(`[:*]([A-Za-z_]+)`)

func TestEveryRouteIsInTheOpenAPIDocumentAndBack(t *testing.T) {
	spec := mustSpec(t)
	s := newServer(t, quietLog())
	served := map[string]bool{}
	for _, r := range s.router().Routes() {
		if strings.HasPrefix(r.Path, "/test/") {
			continue // this package's probes
		}
		served[r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	// Paths under /api/environments are served by the alias; the document
	// may list some, and must list their /api/projects twins.
	aliased := map[string]bool{}
	for k := range served {
		method, path, _ := strings.Cut(k, " ")
		if alias, ok := (httpx.Alias{From: environments.To, To: environments.From}).Map(path); ok {
			aliased[method+" "+alias] = true
		}
	}
	// documented maps an operation to whether the test server must route
	// it: operations marked x-when exist only under some configuration.
	documented := map[string]bool{}
	for path, item := range spec.doc.Paths.Map() {
		for method, op := range item.Operations() {
			_, conditional := op.Extensions["x-when"]
			documented[method+" "+path] = !conditional
		}
	}
	var missing, extra []string
	for k := range served {
		if _, ok := documented[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k, required := range documented {
		if required && !served[k] && !aliased[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes the document lacks:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("operations the server does not route:\n  %s", strings.Join(extra, "\n  "))
	}
	if len(served) < 100 {
		t.Fatalf("only %d routes walked: the walk is broken", len(served))
	}
}

func TestTheSchemaIsServedAsYAMLAndJSONWithoutAKey(t *testing.T) {
	h := validated(t, newServer(t, quietLog()).Handler())
	get := func(target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		return w
	}
	t.Run("YAML by default, the embedded file byte for byte", func(t *testing.T) {
		w := get("/api/schema/")
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/yaml") {
			t.Fatalf("status %d content type %q", w.Code, w.Header().Get("Content-Type"))
		}
		if !bytesEqual(w.Body.Bytes(), openAPIYAML) {
			t.Fatal("the YAML served is not the embedded document")
		}
	})
	t.Run("JSON with format=json, the same document", func(t *testing.T) {
		w := get("/api/schema/?format=json")
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Fatalf("status %d content type %q", w.Code, w.Header().Get("Content-Type"))
		}
		var fromJSON, fromYAML map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &fromJSON); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		if err := yaml.Unmarshal(openAPIYAML, &fromYAML); err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(fromJSON)
		b, _ := json.Marshal(fromYAML)
		if string(a) != string(b) {
			t.Fatal("the JSON document differs from the YAML one")
		}
		if fromJSON["openapi"] != "3.1.0" {
			t.Fatalf("openapi %v", fromJSON["openapi"])
		}
	})
	t.Run("another format is a 400 naming format", func(t *testing.T) {
		w := get("/api/schema?format=xml")
		var body map[string]any
		json.Unmarshal(w.Body.Bytes(), &body)
		wantError(t, w, body, http.StatusBadRequest, "invalid_input")
		if body["attr"] != "format" {
			t.Fatalf("attr %v", body["attr"])
		}
	})
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }
