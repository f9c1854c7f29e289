package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAliasServesOnePrefixAsTheOther(t *testing.T) {
	a := Alias{From: "/api/environments", To: "/api/projects"}
	var seen, sent string
	h := StripTrailingSlash(a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, sent = r.URL.Path, SentPath(r)
	})))
	for _, tc := range []struct {
		name, path, seen, sent string
	}{
		{"a resource under the alias is routed under the target", "/api/environments/1/insights/",
			"/api/projects/1/insights", "/api/environments/1/insights/"},
		{"without a trailing slash too, and the sent path is still the alias", "/api/environments/1/insights/7",
			"/api/projects/1/insights/7", "/api/environments/1/insights/7"},
		{"the prefix itself", "/api/environments/", "/api/projects", "/api/environments/"},
		{"a longer first segment is not the alias", "/api/environmentsx/1", "/api/environmentsx/1", "/api/environmentsx/1"},
		{"the target is left alone", "/api/projects/1/query/", "/api/projects/1/query", "/api/projects/1/query/"},
		{"an escaped prefix is decoded first, as the router reads it", "/api/environment%73/1/events",
			"/api/projects/1/events", "/api/environments/1/events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tc.path, nil)
			h.ServeHTTP(httptest.NewRecorder(), r)
			if seen != tc.seen || sent != tc.sent {
				t.Fatalf("routed %q sent %q, want %q and %q", seen, sent, tc.seen, tc.sent)
			}
		})
	}
	t.Run("the caller's request keeps its path", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/api/environments/2/cohorts", nil)
		a.Handler(http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), r)
		if r.URL.Path != "/api/environments/2/cohorts" {
			t.Fatalf("path changed to %q", r.URL.Path)
		}
	})
}
