package api

import (
	"encoding/json"
	"strings"
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

// insightKind is the analysis a saved insight's filters ask for:
// filters.insight, else TRENDS when they name events or actions (as
// PostHog's default), else none ("").
func insightKind(filters map[string]json.RawMessage) string {
	var kind string
	if raw, ok := filters["insight"]; ok && json.Unmarshal(raw, &kind) == nil && kind != "" {
		return strings.ToUpper(kind)
	}
	for _, k := range []string{"events", "actions"} {
		var list []json.RawMessage
		if raw, ok := filters[k]; ok && json.Unmarshal(raw, &list) == nil && len(list) > 0 {
			return "TRENDS"
		}
	}
	return ""
}

// insightResult fills out's analysis fields from the insight's filters,
// from the cache or computed as mode allows. Trends and funnels compute;
// other kinds keep a null result until their analyses exist. Filters that
// do not validate answer a null result and a query_status saying why;
// engine failures (timeouts, cancellation) are the request's error.
func (s *Server) insightResult(c *gin.Context, p *metadata.Project, i *metadata.Insight, mode refreshMode, out *insightJSON) error {
	var filters map[string]json.RawMessage
	if json.Unmarshal(i.Filters, &filters) != nil {
		return nil
	}
	prepare, ok := map[string]preparer{"TRENDS": s.prepareTrends, "FUNNELS": s.prepareFunnel}[insightKind(filters)]
	if !ok {
		return nil
	}
	params := querybuilder.Params(filters)
	a, err := prepare(c.Request.Context(), p, params)
	if err != nil {
		if e := toError(err); e.Kind == KindInvalid {
			b, _ := json.Marshal(queryStatusJSON{Complete: true, Error: true, ErrorMessage: e.Detail})
			out.QueryStatus = b
			return nil
		}
		return err
	}
	queryID, err := analysisQueryID(c, p.ID, nil)
	if err != nil {
		return err
	}
	r, err := s.analysisResult(c.Request.Context(), a.pol, mode, s.run(a, queryID))
	if err != nil || r == nil {
		return err
	}
	computed := r.ComputedAt.UTC()
	next := a.pol.nextRefresh(r.ComputedAt).UTC()
	target := r.StaleAt.UTC().Format(time.RFC3339Nano)
	out.Result, out.IsCached, out.LastRefresh = r.Result, r.Cached, &computed
	out.NextAllowedClientRefresh, out.CacheTargetAge = &next, &target
	out.Timezone = a.loc.String()
	return nil
}
