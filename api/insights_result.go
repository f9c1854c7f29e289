package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// queryStatusJSON is PostHog's query status, answered when a saved
// insight's filters cannot be computed: the insight is still readable
// (and can be fixed), its result null.
type queryStatusJSON struct {
	QueryAsync   bool   `json:"query_async"`
	Complete     bool   `json:"complete"`
	Error        bool   `json:"error"`
	ErrorMessage string `json:"error_message"`
}

// insightResult fills out's analysis fields from the insight's filters,
// from the cache or computed as mode allows, for every kind the query
// builder's registry computes; other kinds keep a null result. Filters
// that do not validate answer a null result and a query_status saying
// why; engine failures (timeouts, cancellation) are the request's error.
// With a dashboard d (from_dashboard), its filters override the
// insight's (dashboardParams) and the result is cached under the filters
// computed.
func (s *Server) insightResult(c *gin.Context, p *metadata.Project, i *metadata.Insight, d *metadata.Dashboard, mode refreshMode, out *insightJSON) error {
	a, err := s.savedAnalysis(c.Request.Context(), p, i, d, out)
	if err != nil || a == nil {
		return err
	}
	queryID, err := analysisQueryID(c, p.ID, nil)
	if err != nil {
		return err
	}
	r, err := s.analysisResult(c.Request.Context(), a.pol, mode, s.compute(a, queryID))
	return setSavedResult(a, r, err, out)
}

// savedAnalysis parses a saved insight's filters (with dashboard d's
// overrides when d is not nil); nil when its kind is not computed or its
// filters do not validate (then out's query_status says why).
func (s *Server) savedAnalysis(ctx context.Context, p *metadata.Project, i *metadata.Insight, d *metadata.Dashboard, out *insightJSON) (*analysis, error) {
	var filters map[string]json.RawMessage
	// An insight node in query wins over filters, as in PostHog.
	if q := json.RawMessage(i.Query.JSONText); i.Query.Valid && querybuilder.IsInsightNode(querybuilder.NodeKind(q)) {
		node, err := querybuilder.TranslateNode(q, "query")
		if err != nil {
			return nil, invalidFilters(err, out)
		}
		filters = node.Params
	} else if json.Unmarshal(i.Filters, &filters) != nil {
		return nil, nil
	}
	params := querybuilder.Params(filters)
	if d != nil {
		params = dashboardParams(params, d)
	}
	kind, ok := querybuilder.ForSavedInsight(params)
	if !ok {
		return nil, nil
	}
	a, err := s.prepare(ctx, p, kind, params)
	if err != nil {
		return nil, invalidFilters(err, out)
	}
	return a, nil
}

// invalidFilters makes filters that do not validate, when parsed or once
// the engine's facts are known, the insight's problem (its query_status),
// not the request's.
func invalidFilters(err error, out *insightJSON) error {
	if e := httpx.ToError(err); e.Kind == httpx.KindInvalid {
		b, _ := json.Marshal(queryStatusJSON{Complete: true, Error: true, ErrorMessage: e.Detail})
		out.QueryStatus = b
		return nil
	}
	return err
}

// setSavedResult fills out's analysis fields from a's result r (or err).
func setSavedResult(a *analysis, r *cachedResult, err error, out *insightJSON) error {
	if err != nil || r == nil {
		return invalidFilters(err, out)
	}
	computed := r.ComputedAt.UTC()
	next := a.pol.nextRefresh(r.ComputedAt).UTC()
	target := r.StaleAt.UTC().Format(time.RFC3339Nano)
	out.Result, out.IsCached, out.LastRefresh = r.Result, r.Cached, &computed
	out.NextAllowedClientRefresh, out.CacheTargetAge = &next, &target
	out.Timezone = a.q.Base().Location().String()
	return nil
}
