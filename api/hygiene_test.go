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
// every route that reads a body. It is a 400 there now, and never a 5xx
// anywhere.
func TestBadGzipBodiesAre400OnEveryRoute(t *testing.T) {
	s := newServer(t, quietLog())
	var r *gin.Engine
	probes := s.extraRoutes
	s.extraRoutes = func(e *gin.Engine) { probes(e); r = e }
	f := &fixture{s: s, h: s.Handler()}
	a, err := s.store.Bootstrap(context.Background(), "ada@example.com", "Acme", "Web")
	if err != nil {
		t.Fatal(err)
	}
	f.a = a
	insight := f.newInsight(t, map[string]any{"name": "i"})
	replace := strings.NewReplacer(":organization_id", a.OrganizationID.String(), ":project_id", fmt.Sprint(a.ProjectID),
		":token", a.ProjectAPIToken)
	body := gz(t, []byte(`{"name": "x", "api_key": "`+a.ProjectAPIToken+`", "batch": [{"event": "e", "distinct_id": "d"}]}`))
	bodies := map[string][]byte{"truncated": body[:len(body)-9], "corrupt": append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, []byte("not deflate at all")...), "not gzip": []byte("{}")}
	// The routes that read a body must refuse it; the others may ignore it.
	readers := map[string]bool{
		"POST /batch": true, "POST /capture": true, "POST /e": true, "POST /i/v0/e": true, "POST /flags": true, "POST /decide": true,
		"POST /api/organizations/:organization_id/projects": true, "PATCH /api/organizations/:organization_id/projects/:id": true,
		"PUT /api/organizations/:organization_id/projects/:id": true, "PATCH /api/projects/:project_id": true, "PUT /api/projects/:project_id": true,
		"POST /api/projects/:project_id/insights": true, "PATCH /api/projects/:project_id/insights/:id": true,
		"PUT /api/projects/:project_id/insights/:id": true, "PATCH /api/projects/:project_id/insights/:id/sharing": true,
		"POST /api/projects/:project_id/insights/cancel": true, "POST /api/projects/:project_id/insights/trend": true,
		"POST /api/projects/:project_id/insights/funnel": true, "POST /api/projects/:project_id/annotations": true,
		"PATCH /api/projects/:project_id/annotations/:id": true, "/test/body": true,
	}
	checked := 0
	for _, rt := range r.Routes() {
		if rt.Path == "/test/panic" || rt.Path == "/test/slow" {
			continue // probes of this package's tests, not routes
		}
		path := replace.Replace(rt.Path)
		if strings.Contains(path, ":id") {
			id := fmt.Sprint(a.ProjectID)
			if strings.Contains(rt.Path, "/insights/:id") {
				id = fmt.Sprint(insight["id"])
			}
			path = strings.Replace(path, ":id", id, 1)
		}
		for name, b := range bodies {
			t.Run(fmt.Sprintf("%s %s with a %s gzip body", rt.Method, rt.Path, name), func(t *testing.T) {
				req := httptest.NewRequest(rt.Method, path+"/", strings.NewReader(string(b)))
				req.Header.Set("Authorization", "Bearer "+a.PersonalAPIKey)
				req.Header.Set("Content-Encoding", "gzip")
				w := httptest.NewRecorder()
				f.h.ServeHTTP(w, req)
				if w.Code >= 500 {
					t.Fatalf("%d %s", w.Code, w.Body)
				}
				if readers[rt.Method+" "+rt.Path] || readers[rt.Path] {
					if w.Code != 400 || !strings.Contains(w.Body.String(), "gzip") {
						t.Fatalf("want 400 saying gzip, got %d %s", w.Code, w.Body)
					}
				}
			})
			checked++
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
