package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

func (s *Server) funnel(c *gin.Context) { s.analyze(c, s.prepareFunnel, renderFunnelCSV) }

func (s *Server) timing(c *gin.Context) { s.analyze(c, s.prepareTiming, renderFunnelCSV) }

// prepareFunnel is the preparer of funnels.
func (s *Server) prepareFunnel(ctx context.Context, p *metadata.Project, params querybuilder.Params) (*analysis, error) {
	return s.prepareFunnelKind(ctx, p, params, querybuilder.ParseFunnel)
}

// prepareTiming is the preparer of timing analyses.
func (s *Server) prepareTiming(ctx context.Context, p *metadata.Project, params querybuilder.Params) (*analysis, error) {
	return s.prepareFunnelKind(ctx, p, params, querybuilder.ParseTiming)
}

func (s *Server) prepareFunnelKind(ctx context.Context, p *metadata.Project, params querybuilder.Params,
	parse func(querybuilder.Params, querybuilder.Project, time.Time) (*querybuilder.FunnelQuery, error)) (*analysis, error) {
	project, err := s.analysisProject(ctx, p, params)
	if err != nil {
		return nil, err
	}
	q, err := parse(params, project, time.Now())
	if err != nil {
		return nil, validationError(err)
	}
	stmt, err := s.withoutOverrides(ctx, &q.Project, func() (querybuilder.Statement, error) { return querybuilder.BuildFunnel(q) })
	if err != nil {
		return nil, err
	}
	key, err := cacheKey(q.Kind(), params, newCacheScope(&q.Common))
	if err != nil {
		return nil, err
	}
	return &analysis{stmt: querybuilder.WithLimits(stmt, analysisLimits), loc: q.Location(),
		pol:   rangePolicy(p.ID, key, q.Range),
		shape: func(rows [][]any) (any, error) { return querybuilder.ShapeFunnel(q, rows) }}, nil
}

// renderFunnelCSV writes a funnel result as a table: one row per step
// (with a breakdown column when broken down), one row per bin for times,
// one row per breakdown value for funnel trends.
func renderFunnelCSV(c *gin.Context, result json.RawMessage) {
	fail := func(err error) { writeError(c, errors.Join(errors.New("funnel csv"), err)) }
	var v any
	if err := json.Unmarshal(result, &v); err != nil {
		fail(err)
		return
	}
	switch x := v.(type) {
	case map[string]any: // time to convert, timing
		bins, _ := x["bins"].([]any)
		rows := make([][]string, 0, len(bins))
		for _, b := range bins {
			pair, _ := b.([]any)
			if len(pair) == 2 {
				rows = append(rows, []string{valueCell(pair[0]), valueCell(pair[1])})
			}
		}
		writeCSV(c, http.StatusOK, []string{"from_seconds", "persons"}, rows)
		return
	case []any:
		if len(x) > 0 {
			if _, nested := x[0].([]any); nested { // broken down: a step list per value
				var header []string
				var rows [][]string
				for _, list := range x {
					steps := toRecords(list)
					h, r := funnelTable(steps)
					header = append([]string{"breakdown_value"}, h...)
					for k := range r {
						rows = append(rows, append([]string{valueCell(steps[k]["breakdown_value"])}, r[k]...))
					}
				}
				writeCSV(c, http.StatusOK, header, rows)
				return
			}
			if first, _ := x[0].(map[string]any); first != nil && first["days"] != nil { // funnel trends
				recs := toRecords(x)
				for _, r := range recs {
					r["label"] = r["breakdown_value"]
				}
				header, rows := trendTable(recs)
				writeCSV(c, http.StatusOK, header, rows)
				return
			}
		}
		header, rows := funnelTable(toRecords(x))
		writeCSV(c, http.StatusOK, header, rows)
		return
	}
	writeCSV(c, http.StatusOK, []string{"step"}, nil)
}

// toRecords is a decoded JSON list of objects.
func toRecords(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		out = append(out, m)
	}
	return out
}
