package api

import (
	"encoding/json"
	"time"

	"github.com/gin-gonic/gin"

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
func (s *Server) insightResult(c *gin.Context, p *metadata.Project, i *metadata.Insight, mode refreshMode, out *insightJSON) error {
	var filters map[string]json.RawMessage
	if json.Unmarshal(i.Filters, &filters) != nil {
		return nil
	}
	params := querybuilder.Params(filters)
	kind, ok := querybuilder.ForSavedInsight(params)
	if !ok {
		return nil
	}
	// Filters that do not validate, when parsed or once the engine's facts
	// are known, are the insight's problem, not the request's.
	invalid := func(err error) error {
		if e := toError(err); e.Kind == KindInvalid {
			b, _ := json.Marshal(queryStatusJSON{Complete: true, Error: true, ErrorMessage: e.Detail})
			out.QueryStatus = b
			return nil
		}
		return err
	}
	a, err := s.prepare(c.Request.Context(), p, kind, params)
	if err != nil {
		return invalid(err)
	}
	queryID, err := analysisQueryID(c, p.ID, nil)
	if err != nil {
		return err
	}
	r, err := s.analysisResult(c.Request.Context(), a.pol, mode, s.compute(a, queryID))
	if err != nil || r == nil {
		return invalid(err)
	}
	computed := r.ComputedAt.UTC()
	next := a.pol.nextRefresh(r.ComputedAt).UTC()
	target := r.StaleAt.UTC().Format(time.RFC3339Nano)
	out.Result, out.IsCached, out.LastRefresh = r.Result, r.Cached, &computed
	out.NextAllowedClientRefresh, out.CacheTargetAge = &next, &target
	out.Timezone = a.q.Base().Location().String()
	return nil
}
