package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gin-gonic/gin"
)

// posthogJSDist is the pinned browser SDK (scripts/sdk/node: setup
// installs it).
var posthogJSDist = filepath.Join("..", "scripts", "sdk", "node", "node_modules", "posthog-js", "dist")

// TestPostHogJSLogsNoErrorAndItsEventsArrive loads posthog-js, the
// browser SDK, in headless Chromium against a real server, as a page of
// a site using insightd does: init, a custom event, identify. The page
// logs no error (remote config, flags, the lazily loaded extensions the
// SDK asks for), and the events land.
func TestPostHogJSLogsNoErrorAndItsEventsArrive(t *testing.T) {
	if _, err := os.Stat(filepath.Join(posthogJSDist, "array.js")); err != nil {
		t.Fatalf("posthog-js is not installed (scripts/setup.sh installs it in scripts/sdk/node): %v", err)
	}
	s := newServer(t, quietLog())
	t.Cleanup(s.writer.Close)
	env := &funnelEnv{s: s, h: s.Handler()}
	p := env.project(t, nil)
	base := s.extraRoutes
	s.extraRoutes = func(r *gin.Engine) {
		base(r)
		r.GET("/test/site/array.js", func(c *gin.Context) { c.File(filepath.Join(posthogJSDist, "array.js")) })
		r.GET("/test/site/page.html", func(c *gin.Context) {
			c.Data(http.StatusOK, "text/html; charset=utf-8", []byte(`<!doctype html><html><head><link rel="icon" href="data:,"><script src="/test/site/array.js"></script></head>
<body><script>
posthog.init(`+fmt.Sprintf("%q", p.token)+`, {api_host: location.origin, person_profiles: 'always', request_batching: false,
  // Headless Chromium says so in its user agent, which the SDK takes for a bot.
  opt_out_useragent_filter: true,
  loaded: function (ph) {
    ph.capture('js-event', {plan: 'pro'});
    ph.identify('js-user', {email: 'js@example.com'});
    ph.capture('js-after-identify');
    document.title = 'ready';
  }});
</script></body></html>`))
		})
	}
	var mu sync.Mutex
	var requests []string
	handler := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		handler.ServeHTTP(rec, r)
		mu.Lock()
		requests = append(requests, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.status))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)

	b := newBrowser(t)
	var title string
	b.run(t, "load the page", chromedp.Navigate(srv.URL+"/test/site/page.html"),
		chromedp.Poll(`document.title === 'ready'`, nil, chromedp.WithPollingTimeout(20*time.Second)), chromedp.Title(&title))
	// Give the SDK its time to send and to load what it loads lazily.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && analyticsEvents(t, env, p) < 3 {
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	b.noErrors(t, "after the events")
	mu.Lock()
	defer mu.Unlock()
	for _, r := range requests {
		if strings.HasSuffix(r, " 404") || strings.HasSuffix(r, " 500") {
			t.Errorf("the SDK's request %s failed; every request: %v", r, requests)
		}
	}
	if n := analyticsEvents(t, env, p); n < 3 {
		t.Fatalf("%d of the page's events arrived; requests: %v", n, requests)
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// analyticsEvents counts the page's events the project holds.
func analyticsEvents(t *testing.T, env *funnelEnv, p *funnelProject) int {
	t.Helper()
	st, out := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/query/", p.id), p.key, map[string]any{"query": map[string]any{
		"kind": "HogQLQuery", "query": "SELECT count() FROM events WHERE event IN ('js-event', '$identify', 'js-after-identify')"}})
	if st != 200 {
		t.Fatalf("count: %d %v", st, out)
	}
	return int(out["results"].([]any)[0].([]any)[0].(float64))
}

// TestExtensionScriptsAreEmptyAndNamedByAllowList: the SDK's extension
// paths answer a script; anything else under /static/ is a 404.
func TestExtensionScriptsAreEmptyAndNamedByAllowList(t *testing.T) {
	h := newServer(t, quietLog()).Handler()
	for path, want := range map[string]int{
		"/static/surveys.js?v=1.455.2":               200,
		"/static/1.455.2/recorder.js":                200,
		"/static/1.455.2-beta.1/web-vitals.js":       200,
		"/static/Surveys.js":                         404,
		"/static/surveys.css":                        404,
		"/static/..%2F..%2Fetc%2Fpasswd":             404,
		"/static/latest/surveys.js":                  404,
		"/static/1.455.2/%3Cscript%3E.js":            404,
		"/static/" + strings.Repeat("a", 80) + ".js": 404,
	} {
		r := httptest.NewRequest("GET", path, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("%s: %d, want %d", path, w.Code, want)
		}
		if want == 200 && (!strings.HasPrefix(w.Header().Get("Content-Type"), "application/javascript") || strings.Contains(w.Body.String(), "<")) {
			t.Errorf("%s: %s %q", path, w.Header().Get("Content-Type"), w.Body)
		}
	}
}
