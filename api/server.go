// Package api is insightd's HTTP interface: PostHog's legacy projects and
// insights API and its query API, on Gin. Handlers are thin: bind,
// validate, call a service (api/analysis for every analysis, api/ingest
// for the SDKs, api/cohortcalc for cohort members, api/taxonomy for the
// definitions) or a store, render
// (api/httpx). One file per resource.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/cohortcalc"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/api/ingest"
	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/api/taxonomy"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// Config tunes the HTTP server.
type Config struct {
	Addr            string        // default 127.0.0.1:8000
	BodyLimit       int64         // bytes, default 20 MiB (also after gzip)
	ShutdownTimeout time.Duration // how long in-flight requests may finish, default 30s
	Ingest          olap.WriterConfig
	// Limits are the engine settings every analysis runs under; their
	// execution time follows the engine's query timeout.
	Limits querybuilder.Limits
	// Schema names the tables analyses read; zero means the engine's
	// (olap.Engine.Schema). Ingestion and project deletion always use the
	// engine's, where the data is stored.
	Schema querybuilder.Schema
	// Metrics, when set, are observed and served at GET /metrics, or only
	// on MetricsAddr when that is set (api/metrics.go).
	Metrics     *metrics.Metrics
	MetricsAddr string
	// GeoIP, when set, adds $geoip_* properties at capture (the database
	// INSIGHTD_GEOIP_DB names; its caller opens and closes it).
	GeoIP        *ingest.GeoIP
	GeoIPPersons bool // set the person's $geoip_* properties too

	// Slow and idle clients (zero turns each off). A request's header
	// must arrive within HeaderTimeout; its body's first n bytes within
	// BodyReadTimeout + n/BodyMinRate (bytes a second) of its start, so
	// the time a body may take grows with its size and slow but steady
	// uploads get through (408 past it). A keep-alive connection idle
	// for IdleTimeout is closed; at most MaxConnections are held, the
	// longest idle giving way when a new one comes (httpx.ConnLimiter).
	HeaderTimeout   time.Duration
	BodyReadTimeout time.Duration
	BodyMinRate     int64
	IdleTimeout     time.Duration
	MaxConnections  int
}

// DefaultConfig is the configuration without any setting.
func DefaultConfig() Config {
	return Config{Addr: "127.0.0.1:8000", BodyLimit: 20 << 20, ShutdownTimeout: 30 * time.Second,
		Ingest: olap.DefaultWriterConfig(), Limits: querybuilder.DefaultLimits(), Schema: querybuilder.DefaultSchema(),
		HeaderTimeout: 10 * time.Second, BodyReadTimeout: 10 * time.Second, BodyMinRate: 1024,
		IdleTimeout: 120 * time.Second, MaxConnections: httpx.DefaultMaxConnections()}
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("address %q: %w", c.Addr, err))
	}
	if c.BodyLimit < 1024 {
		errs = append(errs, fmt.Errorf("body limit %d is below 1 KiB", c.BodyLimit))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("shutdown timeout must be positive"))
	}
	if c.HeaderTimeout < 0 || c.BodyReadTimeout < 0 || c.IdleTimeout < 0 {
		errs = append(errs, errors.New("header, body read and idle timeouts must not be negative"))
	}
	if c.BodyReadTimeout > 0 && c.BodyMinRate <= 0 {
		errs = append(errs, errors.New("the body minimum rate must be positive when the body read timeout is on"))
	}
	if c.MaxConnections < 0 {
		errs = append(errs, errors.New("max connections must not be negative"))
	}
	if c.Limits.MaxExecutionTime < 0 || c.Limits.MaxMemoryUsage < 0 || c.Limits.MaxResultRows < 0 ||
		c.Limits.MaxRowsToRead < 0 || c.Limits.MaxRowsInJoin < 0 || c.Limits.MaxBytesInJoin < 0 {
		errs = append(errs, errors.New("query limits must not be negative"))
	}
	return errors.Join(errs...)
}

// Server holds what the handlers need.
type Server struct {
	cfg    Config
	log    *slog.Logger
	store  *metadata.Store
	engine olap.Engine
	// writer stores events (group commit): the SDKs' captures, persons'
	// changes and deletions, demo data.
	writer *olap.Writer
	// ingest answers the SDKs: capture, flags, remote config (api/ingest).
	ingest *ingest.Service
	// cohorts computes cohorts' members in the background (api/cohortcalc).
	cohorts *cohortcalc.Calculator
	// analysis answers every analysis (api/analysis): the legacy
	// endpoints, saved insights, dashboard tiles and the query API.
	analysis *analysis.Service
	// taxonomy answers the event and property definitions (api/taxonomy).
	taxonomy *taxonomy.Service
	// renders keeps dashboards' latest answers (dashboard_render.go).
	renders renderCache

	// bg tracks work that outlives its request (a deleted project's
	// events), so shutdown can wait for it.
	bg sync.WaitGroup
	// bgCtx ends when shutdown gives up waiting.
	bgCtx    context.Context
	bgCancel context.CancelFunc

	// conns holds the connection cap while serving (nil without one).
	conns atomic.Pointer[httpx.ConnLimiter]

	// extraRoutes lets tests in this package mount probes (a slow handler,
	// a body reader) on the real middleware chain.
	extraRoutes func(r *gin.Engine)
	// demoProgress, set by tests, is the progress hook of the demo runs
	// projects created with is_demo start (synth.DemoConfig.Progress).
	demoProgress func(visitors, events int)
}

// New builds the server.
func New(cfg Config, log *slog.Logger, store *metadata.Store, engine olap.Engine) *Server {
	// The embedded engine belongs to this process alone, so the writer
	// may trust its memory of the uuids it stored.
	cfg.Ingest.SoleWriter = engine.Backend() == "chdb"
	cfg.Ingest.Metrics = cfg.Metrics
	if cfg.Schema.Events == "" {
		cfg.Schema = engine.Schema()
	}
	s := &Server{cfg: cfg, log: log, store: store, engine: engine, writer: olap.NewWriter(engine, log, cfg.Ingest)}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	s.analysis = analysis.New(analysis.Config{Schema: cfg.Schema, Limits: cfg.Limits, Metrics: cfg.Metrics, Background: s.background},
		log, store, engine)
	s.taxonomy = taxonomy.New(cfg.Schema, s.analysis, store)
	s.cohorts = cohortcalc.New(log, store, engine, s.analysis, s.background)
	s.ingest = ingest.New(ingest.Config{BodyLimit: cfg.BodyLimit, Metrics: cfg.Metrics, GeoIP: cfg.GeoIP, GeoIPPersons: cfg.GeoIPPersons}, log, store, s.writer, s.analysis.Ingest())
	s.watchMetrics()
	return s
}

// WriterStats is what the event writer has done since the server started.
func (s *Server) WriterStats() *olap.WriterStats { return s.writer.Stats() }

// SetTaxonomy turns the event writer's taxonomy upkeep on or off (the
// ingestion benchmark's A/B; olap.Writer.SetTaxonomy).
func (s *Server) SetTaxonomy(on bool) { s.writer.SetTaxonomy(on) }

// background runs fn after the response, tracked so shutdown waits for it.
func (s *Server) background(fn func(ctx context.Context)) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		fn(s.bgCtx)
	}()
}

// waitBackground waits for background work until ctx ends, then cancels it.
func (s *Server) waitBackground(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.log.Warn("shutdown: background work canceled")
		s.bgCancel()
		<-done
	}
}

// environments serves every project resource under /api/environments/:id/
// as under /api/projects/:id/, the same id, as PostHog does (it rewrites
// the one prefix onto the other for every resource); /api/environments/
// itself lists and reads the projects.
var environments = httpx.Alias{From: "/api/environments", To: "/api/projects"}

// Handler is the whole HTTP interface.
func (s *Server) Handler() http.Handler {
	return httpx.StripTrailingSlash(environments.Handler(s.router()))
}

// router registers every route; the OpenAPI document's test walks them.
func (s *Server) router() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	if s.cfg.Metrics != nil {
		r.Use(s.observeRequests)
	}
	r.Use(httpx.RequestID(), httpx.LogRequests(s.log), httpx.RecoverPanics(s.log), ingest.CORS,
		httpx.BodyDeadline(s.cfg.BodyReadTimeout, s.cfg.BodyMinRate), httpx.LimitBody(s.cfg.BodyLimit))
	r.NoRoute(notFound)
	r.NoMethod(func(c *gin.Context) {
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindMethodNotAllowed, Code: "method_not_allowed",
			Detail: fmt.Sprintf("Method %q not allowed.", c.Request.Method)})
	})

	r.GET("/_health", s.health)
	r.GET("/_ready", s.ready)
	s.metricsRoutes(r)
	s.consoleRoutes(r)
	r.GET("/api/schema", s.openAPISchema)

	s.ingest.Routes(r)
	api := r.Group("/api", s.authenticate, s.noteRenderWrites)
	s.projectRoutes(api)
	s.insightRoutes(api)
	s.analyticsRoutes(api)
	s.userRoutes(api)
	s.organizationRoutes(api)
	s.annotationRoutes(api)
	s.actionRoutes(api)
	s.cohortRoutes(api)
	s.eventRoutes(api)
	s.personsRoutes(api)
	s.groupRoutes(api)
	s.dashboardRoutes(api)
	s.queryRoutes(api)
	s.taxonomyRoutes(api)
	s.mcpToolRoutes(api)
	if s.extraRoutes != nil {
		s.extraRoutes(r)
	}
	return r
}

// Run serves until ctx ends, then stops accepting connections and lets
// in-flight requests finish (up to ShutdownTimeout).
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on a listener the caller opened.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout, // zero: none, as ReadTimeout is unset
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if s.cfg.MaxConnections > 0 {
		lim := httpx.LimitConnections(ln, s.cfg.MaxConnections)
		ln, srv.ConnState = lim, lim.Track
		s.conns.Store(lim)
	}
	stopMetrics, err := s.serveMetrics()
	if err != nil {
		return err
	}
	defer stopMetrics()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	schedCtx, stopSchedule := context.WithCancel(s.bgCtx)
	scheduleDone := make(chan struct{})
	go func() { defer close(scheduleDone); s.cohorts.Run(schedCtx) }()
	defer func() { stopSchedule(); <-scheduleDone }()
	s.log.Info("serving", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing in-flight requests", "timeout", s.cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	s.waitBackground(sctx)
	// Requests have all been answered; what they queued is written.
	s.writer.Close()
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
