package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// Text PostgreSQL cannot store (NUL in text and jsonb, lone surrogates
// and bytes that are not UTF-8 in jsonb) once made these 500s. A NUL is
// refused naming the field; the others are stored with U+FFFD, as Go's
// decoder reads them.
func TestTextPostgreSQLCannotStoreIsRefusedOrCleaned(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	insight := f.newInsight(t, map[string]any{"name": "i"})
	_, ann := call(t, f.h, "POST", f.annotations(f.a.ProjectID), key, map[string]any{"content": "a"})
	type target struct{ name, create, update string }
	targets := []target{
		{"project", f.projects(f.a.OrganizationID), f.project(f.a.OrganizationID, f.a.ProjectID)},
		{"insight", f.insights(f.a.ProjectID), f.insight(f.a.ProjectID, insight["id"])},
		{"annotation", f.annotations(f.a.ProjectID), f.annotation(f.a.ProjectID, ann["id"])},
	}
	fields := map[string][]struct {
		field string
		value func(bad string) string // the field's JSON value holding bad
	}{
		"project": {
			{"name", func(b string) string { return `"n` + b + `"` }},
			{"slack_incoming_webhook", func(b string) string { return `"https://h` + b + `"` }},
			{"app_urls", func(b string) string { return `["https://a` + b + `"]` }},
			{"recording_domains", func(b string) string { return `["d` + b + `"]` }},
			{"test_account_filters", func(b string) string { return `[{"key": "email", "value": "x` + b + `", "operator": "not_icontains"}]` }},
			{"correlation_config", func(b string) string { return `{"k` + b + `": 1}` }},
			{"extra_settings", func(b string) string { return `{"v": ["` + b + `"]}` }},
			{"session_replay_config", func(b string) string { return `{"v": "` + b + `"}` }},
			{"timezone", func(b string) string { return `"Europe/Paris` + b + `"` }},
		},
		"insight": {
			{"name", func(b string) string { return `"n` + b + `"` }},
			{"description", func(b string) string { return `"d` + b + `"` }},
			{"tags", func(b string) string { return `["t` + b + `"]` }},
			{"filters", func(b string) string { return `{"insight": "TRENDS", "events": [{"id": "e` + b + `"}]}` }},
			{"query", func(b string) string { return `{"kind": "k` + b + `"}` }},
		},
		"annotation": {
			{"content", func(b string) string { return `"c` + b + `"` }},
		},
	}
	for _, tg := range targets {
		for _, fd := range fields[tg.name] {
			for _, m := range []struct{ method, path string }{{"POST", tg.create}, {"PATCH", tg.update}} {
				body := func(v string) string {
					if tg.name == "project" && fd.field != "name" && m.method == "POST" {
						return `{"name": "ok", "` + fd.field + `": ` + v + `}`
					}
					return `{"` + fd.field + `": ` + v + `}`
				}
				t.Run(fmt.Sprintf("%s %s %s with NUL is 400 naming it", m.method, tg.name, fd.field), func(t *testing.T) {
					w := send(t, f, m.method, m.path, key, body(fd.value(`\u0000`)))
					var out map[string]any
					_ = json.Unmarshal(w.Body.Bytes(), &out)
					if w.Code != 400 || out["attr"] != fd.field {
						t.Fatalf("%d %s", w.Code, w.Body)
					}
				})
				if fd.field == "timezone" {
					continue // no zone name holds U+FFFD: those are 400s, checked above for NUL
				}
				for _, bad := range []struct{ name, text string }{{"a lone surrogate", `\ud800`}, {"a byte that is not UTF-8", "\xff"}} {
					t.Run(fmt.Sprintf("%s %s %s with %s stores U+FFFD", m.method, tg.name, fd.field, bad.name), func(t *testing.T) {
						w := send(t, f, m.method, m.path, key, body(fd.value(bad.text)))
						if w.Code >= 300 {
							t.Fatalf("%d %s", w.Code, w.Body)
						}
						if !strings.Contains(w.Body.String(), "\ufffd") && !strings.Contains(w.Body.String(), `\ufffd`) {
							t.Fatalf("no U+FFFD in %s", w.Body)
						}
					})
				}
			}
		}
	}
	t.Run("a NUL in a list's search is 400", func(t *testing.T) {
		for _, p := range []string{f.insights(f.a.ProjectID), f.annotations(f.a.ProjectID)} {
			w := send(t, f, "GET", p+"?search=a%00b", key, "")
			if w.Code != 400 || !strings.Contains(w.Body.String(), `"attr":"search"`) {
				t.Fatalf("%s: %d %s", p, w.Code, w.Body)
			}
		}
	})
}

// A body that says it is gzip and is not, or is cut short, was a 500 on
// every route that reads a body. Every POST, PATCH and PUT of the router
// (walked, so a route added later is checked too) answers it 400 saying
// gzip; the only exceptions are the routes named in noBody, which read
// none; every other route never answers 5xx.
func TestBadGzipBodiesAre400OnEveryRoute(t *testing.T) {
	s := newServer(t, quietLog())
	var r *gin.Engine
	probes := s.extraRoutes
	s.extraRoutes = func(e *gin.Engine) { probes(e); r = e }
	f := &fixture{s: s, h: validated(t, s.Handler())}
	a, err := s.store.Bootstrap(context.Background(), "ada@example.com", "Acme", "Web")
	if err != nil {
		t.Fatal(err)
	}
	f.a = a
	key := a.PersonalAPIKey
	created := func(path string, body map[string]any) string {
		t.Helper()
		st, out := call(t, f.h, "POST", path, key, body)
		if st != 201 {
			t.Fatalf("create %s: %d %v", path, st, out)
		}
		return fmt.Sprint(out["id"])
	}
	base := fmt.Sprintf("/api/projects/%d/", a.ProjectID)
	// Each /<resource>/:id route gets an id that exists, so the handler
	// goes as far as reading its body.
	ids := map[string]string{
		"projects":    fmt.Sprint(a.ProjectID),
		"insights":    created(base+"insights/", map[string]any{"name": "i"}),
		"annotations": created(base+"annotations/", map[string]any{"content": "a"}),
		"actions":     created(base+"actions/", map[string]any{"name": "a", "steps": []any{map[string]any{"event": "e"}}}),
		"cohorts": created(base+"cohorts/", map[string]any{"name": "c", "groups": []any{map[string]any{"properties": []any{
			map[string]any{"key": "email", "value": "x", "operator": "icontains", "type": "person"}}}}}),
		"dashboards": created(base+"dashboards/", map[string]any{"name": "d"}),
		"persons":    uuid.NewString(), // the body is read before the person is looked up
		"events":     uuid.NewString(),
		// Definitions are read by id without a body.
		"event_definitions":    uuid.NewString(),
		"property_definitions": uuid.NewString(),
	}
	replace := strings.NewReplacer(":organization_id", a.OrganizationID.String(), ":project_id", fmt.Sprint(a.ProjectID),
		":token", a.ProjectAPIToken, "/static/:file/:name", "/static/1.455.2/surveys.js", "/static/:file", "/static/surveys.js")
	body := gz(t, []byte(`{"name": "x", "api_key": "`+a.ProjectAPIToken+`", "batch": [{"event": "e", "distinct_id": "d"}]}`))
	bodies := map[string][]byte{"truncated": body[:len(body)-9], "corrupt": append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, []byte("not deflate at all")...), "not gzip": []byte("{}")}
	// The routes that take POST, PATCH or PUT and read no body at all, so
	// that a corrupt one goes unnoticed (a bad gzip header is still refused
	// before any handler: the "not gzip" case).
	noBody := map[string]string{
		"POST /api/projects/:project_id/insights/:id/viewed":                 "records that the key's user viewed the insight; nothing to send",
		"POST /api/projects/:project_id/cohorts/:id/calculate":               "recalculates the stored definition; nothing to send",
		"PATCH /api/organizations/:organization_id/projects/:id/reset_token": "makes a new token; nothing to send",
	}
	routes := map[string]bool{}
	checked := 0
	for _, rt := range r.Routes() {
		if rt.Path == "/test/panic" || rt.Path == "/test/slow" {
			continue // probes of this package's tests, not routes
		}
		route := rt.Method + " " + rt.Path
		routes[route] = true
		path := replace.Replace(rt.Path)
		for resource, id := range ids {
			path = strings.Replace(path, "/"+resource+"/:id", "/"+resource+"/"+id, 1)
		}
		if strings.Contains(path, ":") {
			t.Fatalf("%s: no value for a parameter of %s", route, path)
		}
		readsBody := (rt.Method == "POST" || rt.Method == "PATCH" || rt.Method == "PUT") && noBody[route] == ""
		for name, b := range bodies {
			t.Run(fmt.Sprintf("%s with a %s gzip body", route, name), func(t *testing.T) {
				req := httptest.NewRequest(rt.Method, path+"/", strings.NewReader(string(b)))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Encoding", "gzip")
				w := httptest.NewRecorder()
				f.h.ServeHTTP(w, req)
				if w.Code >= 500 {
					t.Fatalf("%d %s", w.Code, w.Body)
				}
				if readsBody || name == "not gzip" {
					if w.Code != 400 || !strings.Contains(w.Body.String(), "gzip") {
						t.Fatalf("want 400 saying gzip, got %d %s", w.Code, w.Body)
					}
				}
			})
			checked++
		}
	}
	for route := range noBody {
		if !routes[route] {
			t.Errorf("%s is listed as reading no body but is not a route", route)
		}
	}
	if checked < 150 {
		t.Fatalf("only %d requests: the walk missed the router", checked)
	}
}

// A body that ends before its declared length (a client cut off) is the
// client's fault: 400, not 500.
func TestABodyCutShortIs400(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f.h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	for _, path := range []string{f.projects(f.a.OrganizationID), f.insights(f.a.ProjectID), "/batch/"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: insightd.test\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\": \"cut",
				path, f.a.PersonalAPIKey)
			conn.(*net.TCPConn).CloseWrite()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 400 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
		})
	}
}

// A number PostgreSQL's jsonb cannot hold (1e200000) was a 500 in every
// stored document; one it can (1e131071) was stored as 128 kB of digits.
// Numbers beyond a double's range are refused naming the field; the
// largest and smallest doubles are stored.
func TestNumbersBeyondADoubleAreRefusedInStoredDocuments(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	insight := f.newInsight(t, map[string]any{"name": "i"})
	_, dash := call(t, f.h, "POST", f.dashboards(f.a.ProjectID), key, map[string]any{"name": "d"})
	cases := []struct{ method, path, field, body string }{
		{"PATCH", f.insight(f.a.ProjectID, insight["id"]), "filters", `{"filters": {"insight": "TRENDS", "events": [], "x": %s}}`},
		{"POST", f.insights(f.a.ProjectID), "query", `{"query": {"kind": "TrendsQuery", "x": [%s]}}`},
		{"PATCH", f.project(f.a.OrganizationID, f.a.ProjectID), "extra_settings", `{"extra_settings": {"v": %s}}`},
		{"PATCH", f.dashboard(f.a.ProjectID, dash["id"]), "filters", `{"filters": {"properties": [{"key": "n", "value": %s, "operator": "exact", "type": "event"}]}}`},
		{"POST", fmt.Sprintf("/api/projects/%d/actions/", f.a.ProjectID), "steps", `{"name": "a", "steps": [{"event": "e", "properties": [{"key": "n", "value": %s, "type": "event"}]}]}`},
	}
	for _, tc := range cases {
		for _, n := range []string{"1e200000", "1e131071", "1e400", "-1e309", "1e-400", "0.5e-20000", "0e-20000", "1." + strings.Repeat("0", 17000)} {
			t.Run(fmt.Sprintf("%s %s with %s is 400 naming %s", tc.method, tc.path, n, tc.field), func(t *testing.T) {
				w := send(t, f, tc.method, tc.path, key, fmt.Sprintf(tc.body, n))
				var out map[string]any
				_ = json.Unmarshal(w.Body.Bytes(), &out)
				if w.Code != 400 || out["attr"] != tc.field || !strings.Contains(fmt.Sprint(out["detail"]), "double") {
					t.Fatalf("%d %s", w.Code, w.Body)
				}
			})
		}
		for _, n := range []string{"1.7976931348623157e308", "-5e-324", "0e-400", "123456789012345678901234567890"} {
			t.Run(fmt.Sprintf("%s %s with %s is stored", tc.method, tc.path, n), func(t *testing.T) {
				if w := send(t, f, tc.method, tc.path, key, fmt.Sprintf(tc.body, n)); w.Code >= 300 {
					t.Fatalf("%d %s", w.Code, w.Body)
				}
			})
		}
	}
}
