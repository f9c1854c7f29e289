// Package analysis is the one way down for every analysis insightd
// answers: the legacy analysis endpoints, saved insights, dashboard tiles
// and the query API's insight nodes all call Run (dashboards Prepare and
// Answer, to group their tiles by cache key first). It knows no HTTP: a
// request comes in as a Request and leaves as a Result or an error that
// api/httpx maps to a status.
//
// The steps, in order and once each per request: the request (a legacy
// filter, a query node or a saved insight, with a dashboard's overrides)
// -> parse -> entities (the actions and cohorts it names) -> cache key
// -> cache -> single-flight -> facts -> build -> engine -> shape ->
// store. Prepare does the first four and reads only PostgreSQL; Answer
// the rest, touching the engine only when the cache cannot answer.
package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// Config is what the service runs analyses under.
type Config struct {
	// Schema names the tables analyses read (olap.Engine.Schema unless
	// the server is told otherwise).
	Schema querybuilder.Schema
	// Limits are the engine settings every statement runs under.
	Limits querybuilder.Limits
	// Metrics, when set, times every answer by its cache outcome.
	Metrics *metrics.Metrics
	// Background runs work that outlives its request (pruning the
	// cache), tracked so the server's shutdown waits for it; nil runs it
	// on a goroutine of its own.
	Background func(fn func(ctx context.Context))
}

// Service answers analyses. Its zero value is not usable: use New.
type Service struct {
	cfg    Config
	log    *slog.Logger
	store  *metadata.Store
	engine olap.Engine
	// ingest is when each project last received events (open ranges
	// computed before are stale); flights computes each result once for
	// concurrent requests; lastPrune is when long-stale cached results
	// were last deleted (unix ns).
	ingest    *IngestClock
	flights   flightGroup
	lastPrune atomic.Int64
}

// New builds the service on the stores.
func New(cfg Config, log *slog.Logger, store *metadata.Store, engine olap.Engine) *Service {
	if cfg.Background == nil {
		cfg.Background = func(fn func(ctx context.Context)) { go fn(context.Background()) }
	}
	return &Service{cfg: cfg, log: log, store: store, engine: engine, ingest: NewIngestClock()}
}

// SetEngine replaces the engine the service's statements run on, and
// SetLimits their limits: tests wrap the real engine to count or fail
// statements, and lower limits to reach them. Neither is safe while
// requests are being answered.
func (s *Service) SetEngine(e olap.Engine) { s.engine = e }

// SetLimits: see SetEngine.
func (s *Service) SetLimits(l querybuilder.Limits) { s.cfg.Limits = l }

// Ingest is the clock of the projects' events the cache judges open
// ranges by; whoever stores events notes them on it.
func (s *Service) Ingest() *IngestClock { return s.ingest }

// ErrNotComputed is a request of no kind the service computes: a legacy
// route or an insight kind without a registry entry. Callers decide what
// it means (404 for a route, a null result for a saved insight).
var ErrNotComputed = errors.New("not an analysis insightd computes")

// StatementError is the engine's error running a statement a user
// wrote (a saved HogQL insight's): whether it is the user's mistake or
// the server's is the caller's to tell, by the engine's code.
type StatementError struct{ Err error }

func (e *StatementError) Error() string { return e.Err.Error() }
func (e *StatementError) Unwrap() error { return e.Err }

// Run answers one analysis request: Prepare, then Answer.
func (s *Service) Run(ctx context.Context, req Request) (*Result, error) {
	a, err := s.Prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return s.Answer(ctx, a)
}

// Prepare parses a request into its kind's query, with the entities it
// names, and names its cached result. Invalid requests are
// *querybuilder.ValidationErrors (a node's name the node's fields).
func (s *Service) Prepare(ctx context.Context, req Request) (*Analysis, error) {
	params, node, err := req.params()
	if err != nil {
		return nil, err
	}
	kind, ok := req.kind(params, node)
	if !ok {
		return nil, ErrNotComputed
	}
	env, err := s.Entities(ctx, req.Project, params)
	if err != nil {
		return nil, err
	}
	q, err := kind.Parse(params, env)
	if err != nil {
		if node != nil {
			// Problems name the node's fields the client sent, not the
			// legacy parameters they became.
			err = querybuilder.NodeErrors(node, err)
		}
		return nil, err
	}
	key, err := cacheKey(kind.Name, params, newCacheScope(q.Base()))
	if err != nil {
		return nil, err
	}
	return &Analysis{kind: kind, q: q, projectID: req.Project.ID, pol: rangePolicy(req.Project.ID, key, q.Base()),
		refresh: req.Refresh, queryID: req.queryID(), debug: req.Debug}, nil
}

// Answer answers a prepared analysis: from the cache when its refresh
// allows, else computed once for every concurrent request of the same
// key (single flight) and stored. With RefreshNever and nothing cached
// the result has no Raw.
func (s *Service) Answer(ctx context.Context, a *Analysis) (*Result, error) {
	r, err := s.cached(ctx, a)
	if err != nil {
		return nil, err
	}
	res := &Result{a: a, Key: a.pol.key, Timezone: a.q.Base().Location().String()}
	if r != nil {
		res.Raw, res.Cached, res.ComputedAt, res.StaleAt = r.Result, r.Cached, r.ComputedAt, r.StaleAt
		res.NextRefresh = a.pol.nextRefresh(r.ComputedAt)
	}
	if a.debug {
		res.Debug = s.debugStatement(ctx, a)
	}
	return res, nil
}

// statement reads the engine facts a's statement depends on and builds
// it under the server's limits: only on a cache miss (or for debug).
func (s *Service) statement(ctx context.Context, a *Analysis) (querybuilder.Statement, error) {
	f, err := olap.ReadFacts(ctx, s.engine, s.cfg.Schema, a.projectID, a.q.Needs())
	if err != nil {
		return querybuilder.Statement{}, err
	}
	stmt, err := a.q.Build(f)
	if err != nil {
		return stmt, err
	}
	return querybuilder.WithLimits(stmt, s.cfg.Limits), nil
}

// compute runs a's statement on the engine under its query id and
// encodes the shaped result.
func (s *Service) compute(ctx context.Context, a *Analysis) (json.RawMessage, error) {
	stmt, err := s.statement(ctx, a)
	if err != nil {
		return nil, err
	}
	rows, err := s.engine.Query(olap.WithProject(olap.WithQueryID(ctx, a.queryID), a.projectID), stmt)
	if _, user := a.q.(querybuilder.UserStatement); err != nil && user {
		return nil, &StatementError{Err: err}
	}
	if err != nil {
		return nil, err
	}
	var result querybuilder.Result
	if cs, ok := a.q.(querybuilder.ColumnShaper); ok {
		types := make([]string, len(rows.Columns))
		for i, col := range rows.Columns {
			types[i] = col.Type
		}
		result, err = cs.ShapeColumns(types, rows.Data)
	} else {
		result, err = a.q.Shape(rows.Data)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(result)
}

// debugStatement is the statement of a, built again for a cached answer.
func (s *Service) debugStatement(ctx context.Context, a *Analysis) *Debug {
	stmt, err := s.statement(ctx, a)
	if err != nil {
		return &Debug{Err: err}
	}
	return &Debug{SQL: stmt.SQL, Params: stmt.Params}
}
