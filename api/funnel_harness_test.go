package api

// The analysis tests' projects: a server, a project per case fed through
// /batch/, asked through the HTTP API (analysistest compares the answers
// with the reference).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// funnelEnv is one server; every case gets its own project on it.
type funnelEnv struct {
	s *Server
	h http.Handler
	n int
}

func newFunnelEnv(t *testing.T) *funnelEnv {
	t.Helper()
	s := New(testConfig(), quietLog(), metadatatest.NewStore(t), engine)
	t.Cleanup(s.writer.Close)
	return &funnelEnv{s: s, h: validated(t, s.Handler())}
}

type funnelProject struct {
	env        *funnelEnv
	id         int64
	org        uuid.UUID
	token, key string
}

// project makes a fresh project holding events.
func (e *funnelEnv) project(t *testing.T, events []reference.Event) *funnelProject {
	t.Helper()
	e.n++
	b, err := e.s.store.Bootstrap(context.Background(), fmt.Sprintf("funnel%d@example.com", e.n), fmt.Sprintf("Funnels %d", e.n), "Funnels")
	if err != nil {
		t.Fatal(err)
	}
	p := &funnelProject{env: e, id: b.ProjectID, org: b.OrganizationID, token: b.ProjectAPIToken, key: b.PersonalAPIKey}
	p.Capture(t, events)
	return p
}

// Capture sends events through /batch/.
func (p *funnelProject) Capture(t testing.TB, events []reference.Event) {
	t.Helper()
	analysistest.Capture(t, p.env.h, p.token, events)
}

// Set PATCHes the project's settings.
func (p *funnelProject) Set(t testing.TB, settings map[string]any) {
	t.Helper()
	st, out := call(t, p.env.h, "PATCH", fmt.Sprintf("/api/organizations/%s/projects/%d/", p.org, p.id), p.key, settings)
	if st != http.StatusOK {
		t.Fatalf("project settings: %d %v", st, out)
	}
}

func (p *funnelProject) Ask(t testing.TB, method, kind string, filter map[string]any) (int, map[string]json.RawMessage) {
	t.Helper()
	path := fmt.Sprintf("/api/projects/%d/insights/%s/", p.id, kind)
	var r *http.Request
	if method == "GET" {
		q := url.Values{}
		for k, v := range filter {
			if s, ok := v.(string); ok {
				q.Set(k, s)
			} else {
				q.Set(k, string(mustJSON(t, v)))
			}
		}
		r = httptest.NewRequest("GET", path+"?"+q.Encode(), nil)
	} else {
		r = httptest.NewRequest("POST", path, bytes.NewReader(mustJSON(t, filter)))
		r.Header.Set("Content-Type", "application/json")
	}
	r.Host = "insightd.test"
	r.Header.Set("Authorization", "Bearer "+p.key)
	w := httptest.NewRecorder()
	p.env.h.ServeHTTP(w, r)
	var out map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, path, w.Code, w.Body)
	}
	return w.Code, out
}

// result runs a valid analysis and decodes its result into v.

func (p *funnelProject) result(t testing.TB, kind string, filter map[string]any, v any) {
	t.Helper()
	analysistest.Result(t, p, kind, filter, v)
}

func (p *funnelProject) wantInvalid(t testing.TB, kind string, filter map[string]any, attr string) {
	t.Helper()
	analysistest.WantInvalid(t, p, kind, filter, attr)
}

const (
	h  = time.Hour
	mi = time.Minute
	sc = time.Second
	us = time.Microsecond
	dy = 24 * time.Hour
)
