package benchmarks

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/olap"
)

// BenchmarkMetricsPerAnalysisRequest is what Prometheus metrics add to one
// computed analysis request: the request's context carrying them
// (olap.WithStatementObserver), one engine statement's rows and bytes,
// the analysis's duration by kind and cache outcome, and the request's
// latency by route template and status (api/metrics.go, olap). Divided
// by a request's time it bounds the metrics' cost more finely than timing
// whole requests on a shared machine can (benchmarks/results/metrics.md).
func BenchmarkMetricsPerAnalysisRequest(b *testing.B) {
	m := metrics.New()
	req := httptest.NewRequest("POST", "/api/projects/1/insights/trend/", nil)
	b.ReportAllocs()
	for b.Loop() {
		// The engine's lookup of the observer in the context (one value
		// and a type assertion) is unexported, so not counted here.
		_ = req.WithContext(olap.WithStatementObserver(req.Context(), m))
		m.ObserveStatement(22_569_701, 437_103_622)
		m.ObserveAnalysis("trends", "miss", 230*time.Millisecond)
		m.ObserveRequest("POST", "/api/projects/:project_id/insights/trend", 200, 230*time.Millisecond)
	}
}
