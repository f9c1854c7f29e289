package api

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
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
// insight's and the result is cached under the filters computed.
func (s *Server) insightResult(c *gin.Context, p *metadata.Project, i *metadata.Insight, d *metadata.Dashboard, mode analysis.Refresh, out *insightJSON) error {
	queryID, err := analysisQueryID(c, p.ID, nil)
	if err != nil {
		return err
	}
	r, err := s.analysis.Run(c.Request.Context(), analysis.Request{Project: p, Insight: i, Dashboard: d, Refresh: mode, QueryID: queryID})
	return setSavedResult(r, err, out)
}

// savedAnalysis prepares a saved insight's analysis (with dashboard d's
// overrides when d is not nil); nil when its kind is not computed or its
// filters do not validate (then out's query_status says why).
func (s *Server) savedAnalysis(ctx context.Context, p *metadata.Project, i *metadata.Insight, d *metadata.Dashboard, mode analysis.Refresh, out *insightJSON) (*analysis.Analysis, error) {
	a, err := s.analysis.Prepare(ctx, analysis.Request{Project: p, Insight: i, Dashboard: d, Refresh: mode})
	if err != nil {
		return nil, invalidFilters(err, out)
	}
	return a, nil
}

// invalidFilters makes filters that do not validate, when parsed or once
// the engine's facts are known, the insight's problem (its query_status),
// not the request's; a kind insightd does not compute keeps a null
// result.
func invalidFilters(err error, out *insightJSON) error {
	if errors.Is(err, analysis.ErrNotComputed) {
		return nil
	}
	// The engine refusing a statement the insight's author wrote is the
	// insight's problem too, when it is one of the statement's.
	var se *analysis.StatementError
	if errors.As(err, &se) {
		err = statementError(se.Err, "query")
	}
	if e := httpx.ToError(err); e.Kind == httpx.KindInvalid {
		b, _ := json.Marshal(queryStatusJSON{Complete: true, Error: true, ErrorMessage: e.Detail})
		out.QueryStatus = b
		return nil
	}
	return err
}

// setSavedResult fills out's analysis fields from the result r (or err).
func setSavedResult(r *analysis.Result, err error, out *insightJSON) error {
	if err != nil {
		return invalidFilters(err, out)
	}
	if r.Raw == nil {
		return nil
	}
	computed := r.ComputedAt.UTC()
	next := r.NextRefresh.UTC()
	target := r.StaleAt.UTC().Format(time.RFC3339Nano)
	out.Result, out.IsCached, out.LastRefresh = r.Raw, r.Cached, &computed
	if r.Tabular() {
		// A HogQL statement's rows are the result, its columns beside
		// them, as PostHog answers a SQL insight.
		var t struct {
			Columns, Types, Results json.RawMessage
			HasMore                 *bool `json:"hasMore"`
		}
		if err := json.Unmarshal(r.Raw, &t); err != nil {
			return err
		}
		out.Result, out.Columns, out.Types, out.HasMore = t.Results, t.Columns, t.Types, t.HasMore
	}
	out.NextAllowedClientRefresh, out.CacheTargetAge = &next, &target
	out.Timezone = r.Timezone
	return nil
}
