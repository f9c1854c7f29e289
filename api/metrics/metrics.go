// Package metrics is insightd's Prometheus instrumentation: one Metrics
// value owns a registry of its own (never the global default, so two
// servers in one process, or two tests, do not see each other's counts)
// and the few observations the server, the engine and the event writer
// make. Every method is safe on a nil *Metrics and then does nothing, so
// code running without metrics pays one nil check. The engine knows them
// only as the observers it defines (olap.StatementObserver, handed to its
// calls with olap.WithStatementObserver, and olap.WriterObserver), so it
// does not import this package.
package metrics

import (
	"database/sql"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Cache outcomes of an analysis (see ObserveAnalysis).
const (
	CacheHit    = "hit"    // answered from the result cache
	CacheMiss   = "miss"   // computed by this request
	CacheShared = "shared" // computed by a concurrent request this one waited for
)

// Outcomes of captured events (see IngestEvents).
const (
	IngestAccepted     = "accepted"     // stored
	IngestDeduplicated = "deduplicated" // already stored under the same uuid, dropped
	IngestRejected     = "rejected"     // refused: an invalid body or token
	IngestFailed       = "failed"       // valid, but the writer could not store them
)

// Metrics holds insightd's collectors and the registry they are in.
type Metrics struct {
	reg *prometheus.Registry

	requests   *prometheus.HistogramVec
	analyses   *prometheus.HistogramVec
	stmtRows   prometheus.Histogram
	stmtBytes  prometheus.Histogram
	ingested   *prometheus.CounterVec
	flushSize  prometheus.Histogram
	flushTime  prometheus.Histogram
	statements atomic.Pointer[func() (running, queued int)]
	queue      atomic.Pointer[func() int64]
}

// New makes the collectors and registers them, with Go's runtime and
// process collectors, in a registry of their own.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "insightd_http_request_duration_seconds",
		Help: "HTTP requests by method, route template (unmatched: no route) and status.",
		// From a cached answer (a millisecond) to a long analysis.
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"method", "route", "status"})
	m.analyses = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "insightd_analysis_duration_seconds",
		Help:    "Answered analyses by kind and cache outcome (hit, miss, shared), from the cache lookup to the result.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"kind", "cache"})
	m.stmtRows = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "insightd_engine_statement_rows_read",
		Help:    "Rows the engine read from storage per statement run for a request.",
		Buckets: prometheus.ExponentialBuckets(10, 10, 10), // 10 .. 1e10
	})
	m.stmtBytes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "insightd_engine_statement_bytes_read",
		Help:    "Bytes the engine read from storage (uncompressed) per statement run for a request.",
		Buckets: prometheus.ExponentialBuckets(1024, 8, 10), // 1 KiB .. 128 TiB
	})
	m.ingested = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "insightd_ingest_events_total",
		Help: "Captured events by outcome: accepted, deduplicated, rejected, failed.",
	}, []string{"outcome"})
	m.flushSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "insightd_ingest_flush_events",
		Help:    "Events stored per group-commit flush of the event writer.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 10), // 1 .. 262 144
	})
	m.flushTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "insightd_ingest_flush_duration_seconds",
		Help:    "Time one flush of the event writer takes to store persons, events and their uuids.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
	statements := func(running bool) func() float64 {
		return func() float64 {
			fn := m.statements.Load()
			if fn == nil {
				return 0
			}
			r, q := (*fn)()
			if running {
				return float64(r)
			}
			return float64(q)
		}
	}
	m.reg.MustRegister(m.requests, m.analyses, m.stmtRows, m.stmtBytes, m.ingested, m.flushSize, m.flushTime,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "insightd_engine_statements_running",
			Help: "Statements running in the engine."}, statements(true)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "insightd_engine_statements_queued",
			Help: "Statements waiting for their project's slot or an engine connection."}, statements(false)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "insightd_ingest_writer_queue_events",
			Help: "Events handed to the event writer and not yet stored (queued or being written)."}, func() float64 {
			if fn := m.queue.Load(); fn != nil {
				return float64((*fn)())
			}
			return 0
		}),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry is where the collectors are registered.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveRequest records one HTTP request; route is its template, never
// the path (ids would make a series per resource).
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Observe(d.Seconds())
}

// ObserveAnalysis records one answered analysis of kind, by cache outcome.
func (m *Metrics) ObserveAnalysis(kind, cache string, d time.Duration) {
	if m == nil {
		return
	}
	m.analyses.WithLabelValues(kind, cache).Observe(d.Seconds())
}

// ObserveStatement records what one engine statement read from storage.
func (m *Metrics) ObserveStatement(rows, bytes uint64) {
	if m == nil {
		return
	}
	m.stmtRows.Observe(float64(rows))
	m.stmtBytes.Observe(float64(bytes))
}

// IngestEvents counts n captured events with outcome.
func (m *Metrics) IngestEvents(outcome string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.ingested.WithLabelValues(outcome).Add(float64(n))
}

// ObserveFlush records one flush of the event writer.
func (m *Metrics) ObserveFlush(events int, d time.Duration) {
	if m == nil {
		return
	}
	m.flushSize.Observe(float64(events))
	m.flushTime.Observe(d.Seconds())
}

// WatchStatements makes fn the source of the engine's running and queued
// statements, read at each scrape (the engine counts them anyway).
func (m *Metrics) WatchStatements(fn func() (running, queued int)) {
	if m != nil {
		m.statements.Store(&fn)
	}
}

// WatchWriterQueue makes fn the source of the writer's queue depth.
func (m *Metrics) WatchWriterQueue(fn func() int64) {
	if m != nil {
		m.queue.Store(&fn)
	}
}

// WatchPostgres reports the pool of db at each scrape. Call it once per
// Metrics: a second pool would register the same series twice.
func (m *Metrics) WatchPostgres(db *sql.DB) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(postgresCollector{db})
}
