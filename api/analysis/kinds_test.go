package analysis_test

// The kinds' correctness tests' projects: events captured through the
// ingestion service's /batch/, analyses answered by the analysis service
// as the legacy endpoints ask it (analysistest compares the answers with
// the reference and with numbers worked out by hand).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/api/ingest"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
	"github.com/insightd/insightd/querybuilder/reference"
)

// funnelEnv is one analysis service and its capture; every case gets
// its own project on them.
type funnelEnv struct {
	store   *metadata.Store
	svc     *analysis.Service
	capture http.Handler
	n       int
}

func newFunnelEnv(t *testing.T) *funnelEnv {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := metadatatest.NewStore(t)
	svc := analysis.New(analysis.Config{Schema: engine.Schema(), Limits: querybuilder.DefaultLimits()}, log, store, engine)
	writer := olap.NewWriter(engine, log, olap.DefaultWriterConfig())
	t.Cleanup(writer.Close)
	gin.SetMode(gin.TestMode)
	r := gin.New()
	ingest.New(ingest.Config{BodyLimit: 1 << 20}, log, store, writer, svc.Ingest()).Routes(r)
	return &funnelEnv{store: store, svc: svc, capture: httpx.StripTrailingSlash(r)}
}

type funnelProject struct {
	env   *funnelEnv
	id    int64
	org   string
	user  int64
	token string
}

// project makes a fresh project holding events.
func (e *funnelEnv) project(t *testing.T, events []reference.Event) *funnelProject {
	t.Helper()
	e.n++
	b, err := e.store.Bootstrap(context.Background(), fmt.Sprintf("funnel%d@example.com", e.n), fmt.Sprintf("Funnels %d", e.n), "Funnels")
	if err != nil {
		t.Fatal(err)
	}
	p := &funnelProject{env: e, id: b.ProjectID, org: b.OrganizationID.String(), user: b.UserID, token: b.ProjectAPIToken}
	p.Capture(t, events)
	return p
}

func (p *funnelProject) Capture(t testing.TB, events []reference.Event) {
	t.Helper()
	analysistest.Capture(t, p.env.capture, p.token, events)
}

// Set updates the project's settings as PATCH /api/projects/:id/ does.
func (p *funnelProject) Set(t testing.TB, settings map[string]any) {
	t.Helper()
	body := map[string]json.RawMessage{}
	for k, v := range settings {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		body[k] = b
	}
	in, err := metadata.ParseProjectInput(body)
	if err == nil {
		_, err = p.env.store.UpdateProject(context.Background(), p.user, p.org, p.id, in)
	}
	if err != nil {
		t.Fatalf("project settings %v: %v", settings, err)
	}
}

// Ask answers a POSTed legacy request on route through the service, as
// the endpoint would: the status and {"result"} or the error's fields.
func (p *funnelProject) Ask(t testing.TB, method, route string, filter map[string]any) (int, map[string]json.RawMessage) {
	t.Helper()
	if method != "POST" {
		t.Fatalf("%s: the service takes the parsed body; GET is the API's (api's tests)", method)
	}
	ctx := context.Background()
	b, err := json.Marshal(filter)
	if err != nil {
		t.Fatal(err)
	}
	project, err := p.env.store.ProjectByID(ctx, p.id)
	if err != nil {
		t.Fatal(err)
	}
	params, err := querybuilder.ParseBody(b)
	var r *analysis.Result
	if err == nil {
		r, err = p.env.svc.Run(ctx, analysis.Request{Project: project, Route: route, Filter: params, Refresh: analysis.RefreshIfStale})
	}
	if errors.Is(err, analysis.ErrNotComputed) {
		err = httpx.NotFound()
	}
	if err != nil {
		e := httpx.ToError(err)
		out := map[string]json.RawMessage{}
		for k, v := range map[string]string{"code": e.Code, "detail": e.Detail, "attr": e.Attr} {
			if v != "" {
				out[k], _ = json.Marshal(v)
			}
		}
		return e.Kind.Status(), out
	}
	return http.StatusOK, map[string]json.RawMessage{"result": r.Raw}
}

func (p *funnelProject) result(t testing.TB, route string, filter map[string]any, v any) {
	t.Helper()
	analysistest.Result(t, p, route, filter, v)
}

func (p *funnelProject) wantInvalid(t testing.TB, route string, filter map[string]any, attr string) {
	t.Helper()
	analysistest.WantInvalid(t, p, route, filter, attr)
}

// stepsCase is one steps-funnel case: events, the funnel, extra request
// values and (for the key cases) the steps worked out by hand.
type stepsCase struct {
	name   string
	events []reference.Event
	f      reference.Funnel
	extra  map[string]any
	hand   []reference.StepResult
}

func runStepsCases(t *testing.T, cases []stepsCase) {
	t.Helper()
	env := newFunnelEnv(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := env.project(t, tc.events)
			analysistest.CheckSteps(t, p, tc.events, tc.f, tc.extra, tc.hand)
		})
	}
}

const (
	h  = time.Hour
	mi = time.Minute
	sc = time.Second
	us = time.Microsecond
	dy = 24 * time.Hour
)
