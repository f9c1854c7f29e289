package benchmarks

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/insightd/insightd/olap/metrics"
)

// BenchmarkMetricsPerAnalysisRequest is what Prometheus metrics add to one
// computed analysis request: the request's context carrying them, one
// engine statement's rows and bytes, the analysis's duration by kind and
// cache outcome, and the request's latency by route template and status
// (api/metrics.go, olap). Divided by a request's time it bounds the
// metrics' cost more finely than timing whole requests on a shared
// machine can (benchmarks/results/metrics.md).
func BenchmarkMetricsPerAnalysisRequest(b *testing.B) {
	m := metrics.New()
	req := httptest.NewRequest("POST", "/api/projects/1/insights/trend/", nil)
	b.ReportAllocs()
	for b.Loop() {
		r := req.WithContext(metrics.NewContext(req.Context(), m))
		mm := metrics.FromContext(r.Context())
		mm.ObserveStatement(22_569_701, 437_103_622)
		mm.ObserveAnalysis("trends", "miss", 230*time.Millisecond)
		mm.ObserveRequest("POST", "/api/projects/:project_id/insights/trend", 200, 230*time.Millisecond)
	}
}
