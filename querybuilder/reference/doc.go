// Package reference is a brute-force evaluator of every analysis kind
// (funnels, timing, retention, lifecycle, stickiness, paths and funnel
// correlation), written from analytics.md with no SQL in sight: the
// oracle the kinds' tests compare the server's answers with
// (api/analysis/analysistest holds the comparisons). It walks each
// person's events in Go and favours being obviously right over being
// fast; only tests import it.
package reference
