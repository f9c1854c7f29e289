package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/olap"
)

// Metrics (Config.Metrics) are served at GET /metrics of the API, or with
// Config.MetricsAddr on that address alone (the API then has no
// /metrics): the counts reveal traffic, which an operator may want kept
// off the public address. Without Config.Metrics nothing is observed.

// statementCounter is an engine that counts its statements under way
// (both backends do, see olap/slots.go).
type statementCounter interface {
	Statements() (running, queued int)
}

// watchMetrics points the metrics' scrape-time gauges at the engine and
// the PostgreSQL pool; New calls it.
func (s *Server) watchMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	if sc, ok := s.engine.(statementCounter); ok {
		m.WatchStatements(sc.Statements)
	}
	if err := m.WatchPostgres(s.store.DB().DB); err != nil {
		// The same Metrics given to a second server: the first pool is watched.
		s.log.Warn("metrics: the PostgreSQL pool is already watched", "error", err)
	}
}

// observeRequests times each request by its route template (gin's
// FullPath, never the path, which holds ids) and status, and hands the
// metrics to the engine calls the request makes (olap.WithStatementObserver).
func (s *Server) observeRequests(c *gin.Context) {
	start := time.Now()
	c.Request = c.Request.WithContext(olap.WithStatementObserver(c.Request.Context(), s.cfg.Metrics))
	c.Next()
	s.cfg.Metrics.ObserveRequest(c.Request.Method, c.FullPath(), c.Writer.Status(), time.Since(start))
}

// metricsRoutes serves /metrics on the API when metrics have no address
// of their own.
func (s *Server) metricsRoutes(r *gin.Engine) {
	if s.cfg.Metrics != nil && s.cfg.MetricsAddr == "" {
		r.GET("/metrics", gin.WrapH(s.cfg.Metrics.Handler()))
	}
}

// serveMetrics listens on Config.MetricsAddr, when set, and serves the
// metrics there until the returned stop is called.
func (s *Server) serveMetrics() (stop func(), err error) {
	if s.cfg.Metrics == nil || s.cfg.MetricsAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", s.cfg.MetricsAddr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.cfg.Metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics listener stopped", "error", err)
		}
	}()
	s.log.Info("serving metrics", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

// analysisKind is the kind a cache key names (kind_hash, cacheKey).
func analysisKind(key string) string {
	if i := strings.LastIndexByte(key, '_'); i > 0 {
		return key[:i]
	}
	return key
}
