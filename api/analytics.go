package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// analysisLimits are the engine settings every analysis runs under, so a
// request cannot hold the engine longer or use more memory than the
// server allows, nor return a result no client can take in. They belong
// in Config once the analyses need them tuned per deployment.
var analysisLimits = querybuilder.Limits{
	MaxExecutionTime: 60,
	MaxMemoryUsage:   4 << 30,
	MaxResultRows:    1_000_000,
}

func (s *Server) analyticsRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id/insights", checkFormat)
	read := requireScope("insight:read")
	g.GET("/trend", read, s.trend)
	g.POST("/trend", read, s.trend)
	g.GET("/funnel", read, s.funnel)
	g.POST("/funnel", read, s.funnel)
	g.GET("/timing", read, s.timing)
	g.POST("/timing", read, s.timing)
}

// analysisEnvelope is every analysis' answer. LastRefresh is null only
// for refresh=force_cache with nothing cached.
type analysisEnvelope struct {
	Result      json.RawMessage `json:"result"`
	IsCached    bool            `json:"is_cached"`
	LastRefresh *time.Time      `json:"last_refresh"`
	Timezone    string          `json:"timezone"`
	Debug       *analysisDebug  `json:"debug,omitempty"`
}

// analysisDebug is what debug=true adds: the statement as the engine ran
// it, so a user can see and rerun what was asked of ClickHouse.
type analysisDebug struct {
	SQL    string         `json:"sql"`
	Params map[string]any `json:"params"`
}

func (s *Server) trend(c *gin.Context) { s.analyze(c, s.prepareTrends, renderTrendCSV) }

// analyze answers an analysis endpoint: parse and build with prepare,
// answer from the cache or compute, render as JSON or CSV.
func (s *Server) analyze(c *gin.Context, prepare preparer, csv func(*gin.Context, json.RawMessage)) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	params, err := analysisParams(c)
	if err != nil {
		writeError(c, err)
		return
	}
	queryID, err := analysisQueryID(c, p.ID, params)
	if err != nil {
		writeError(c, err)
		return
	}
	a, err := prepare(c.Request.Context(), p, params)
	if err != nil {
		writeError(c, err)
		return
	}
	r, err := s.analysisResult(c.Request.Context(), a.pol, analysisRefreshMode(refreshParam(c, params)), s.run(a, queryID))
	if err != nil {
		writeError(c, err)
		return
	}
	env := analysisEnvelope{Result: json.RawMessage("null"), Timezone: a.loc.String()}
	if r != nil {
		at := r.ComputedAt.UTC()
		env.Result, env.IsCached, env.LastRefresh = r.Result, r.Cached, &at
	}
	if wantsCSV(c) {
		csv(c, env.Result)
		return
	}
	if debugRequested(c, params) {
		env.Debug = &analysisDebug{SQL: a.stmt.SQL, Params: a.stmt.Params}
	}
	c.JSON(http.StatusOK, env)
}

// analysis is a request ready to answer: its statement, how its rows
// become the result and how the result is cached.
type analysis struct {
	stmt  querybuilder.Statement
	shape func(rows [][]any) (any, error)
	pol   cachePolicy
	loc   *time.Location
}

// preparer parses and builds one kind of analysis of project p; invalid
// parameters are a 400 naming the parameter.
type preparer func(ctx context.Context, p *metadata.Project, params querybuilder.Params) (*analysis, error)

// prepareTrends is the preparer of trends.
func (s *Server) prepareTrends(ctx context.Context, p *metadata.Project, params querybuilder.Params) (*analysis, error) {
	project, err := s.analysisProject(ctx, p, params)
	if err != nil {
		return nil, err
	}
	q, err := querybuilder.ParseTrends(params, project, time.Now())
	if err != nil {
		return nil, validationError(err)
	}
	stmt, err := s.withoutOverrides(ctx, &q.Project, func() (querybuilder.Statement, error) { return querybuilder.BuildTrends(q) })
	if err != nil {
		return nil, err
	}
	key, err := cacheKey("trends", params, newCacheScope(&q.Common))
	if err != nil {
		return nil, err
	}
	return &analysis{stmt: querybuilder.WithLimits(stmt, analysisLimits), loc: q.Location(),
		pol:   rangePolicy(p.ID, key, q.Range),
		shape: func(rows [][]any) (any, error) { return querybuilder.ShapeTrends(q, rows) }}, nil
}

// withoutOverrides builds a statement, and when it joins person
// overrides and the project has none, builds it again without them (the
// same answer, a fraction of the cost): one lookup per request.
func (s *Server) withoutOverrides(ctx context.Context, project *querybuilder.Project, build func() (querybuilder.Statement, error)) (querybuilder.Statement, error) {
	stmt, err := build()
	if err != nil || !strings.Contains(stmt.SQL, "person_overrides") {
		return stmt, err
	}
	rows, err := s.engine.Query(ctx, querybuilder.PersonOverridesStatement(project.ID))
	if err != nil {
		return stmt, analysisError(err)
	}
	if len(rows.Data) > 0 {
		return stmt, nil
	}
	project.NoPersonOverrides = true
	return build()
}

// run computes a's result on the engine under queryID.
func (s *Server) run(a *analysis, queryID string) func(ctx context.Context) (json.RawMessage, error) {
	return func(ctx context.Context) (json.RawMessage, error) {
		rows, err := s.engine.Query(olap.WithQueryID(ctx, queryID), a.stmt)
		if err != nil {
			return nil, analysisError(err)
		}
		result, err := a.shape(rows.Data)
		if err != nil {
			return nil, err
		}
		return json.Marshal(result)
	}
}

// refreshParam is the request's refresh: the query string's, else one
// sent in the body beside the filter.
func refreshParam(c *gin.Context, params querybuilder.Params) string {
	if v, ok := c.GetQuery("refresh"); ok {
		return v
	}
	if raw, ok := params["refresh"]; ok {
		return string(raw)
	}
	return ""
}

// analysisParams reads the filter: a GET's query string, or a POST's JSON
// body (top level or under filters).
func analysisParams(c *gin.Context) (querybuilder.Params, error) {
	if c.Request.Method == http.MethodGet {
		return querybuilder.ParseQuery(c.Request.URL.Query()), nil
	}
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return nil, err
	}
	params, err := querybuilder.ParseBody(b)
	if err != nil {
		return nil, validationError(err)
	}
	// client_query_id, debug and refresh may sit beside filters, not
	// inside them.
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) == nil {
		for _, k := range []string{"client_query_id", "debug", "refresh"} {
			if v, ok := top[k]; ok {
				if _, inside := params[k]; !inside {
					params[k] = v
				}
			}
		}
	}
	return params, nil
}

// analysisQueryID is the engine query id the analysis runs under: the
// client's client_query_id (so POST insights/cancel can stop it), scoped
// to the project, or a fresh one.
func analysisQueryID(c *gin.Context, projectID int64, params querybuilder.Params) (string, error) {
	id := c.Query("client_query_id")
	if raw, ok := params["client_query_id"]; ok && !isJSONNull(raw) {
		if json.Unmarshal(raw, &id) != nil {
			id = string(raw) // not a JSON string: refused below
		}
	}
	if id == "" {
		return projectQueryID(projectID, uuid.NewString()), nil
	}
	if len(id) > clientQueryIDMax || !olap.ValidQueryID(id) {
		return "", Invalid("client_query_id", fmt.Sprintf(
			"client_query_id must be 1 to %d characters of letters, digits, _ and -.", clientQueryIDMax))
	}
	return projectQueryID(projectID, id), nil
}

// analysisProject is what the query builder needs to know of the project;
// date_from=all also needs its first event, one cheap query.
func (s *Server) analysisProject(ctx context.Context, p *metadata.Project, params querybuilder.Params) (querybuilder.Project, error) {
	out := querybuilder.Project{ID: p.ID, Timezone: p.Timezone, TestAccountFilters: json.RawMessage(p.TestAccountFilters)}
	if p.WeekStartDay.Valid {
		out.WeekStartDay = int(p.WeekStartDay.Int64)
	}
	if params.DateFromAll() {
		rows, err := s.engine.Query(ctx, querybuilder.FirstEventStatement(p.ID))
		if err != nil {
			return out, analysisError(err)
		}
		if len(rows.Data) > 0 {
			if t, ok := rows.Data[0][0].(time.Time); ok {
				out.FirstEvent = t
			}
		}
	}
	return out, nil
}

func debugRequested(c *gin.Context, params querybuilder.Params) bool {
	if v := c.Query("debug"); v == "true" || v == "1" {
		return true
	}
	raw, ok := params["debug"]
	return ok && strings.TrimSpace(string(raw)) == "true"
}

// validationError turns the query builder's validation errors into one
// 400: the first problem's parameter as attr, every problem in the detail.
func validationError(err error) error {
	ves := querybuilder.ValidationErrors(err)
	if len(ves) == 0 {
		return err
	}
	details := make([]string, len(ves))
	for i, ve := range ves {
		details[i] = ve.Detail
	}
	return Invalid(ves[0].Attr, strings.Join(details, "; "))
}

// analysisError gives the engine's refusals of an analysis their kinds;
// everything else goes through the shared mapping (timeouts are 504,
// cancellations 499).
func analysisError(err error) error {
	code, ok := olap.ErrorCode(err)
	if !ok {
		return err
	}
	switch code {
	case olap.CodeTooManyRows:
		return &Error{Kind: KindInvalid, Code: "result_too_large", Err: err, Detail: fmt.Sprintf(
			"The analysis would return more than %d rows: use a shorter range, a coarser interval or a lower breakdown_limit.",
			analysisLimits.MaxResultRows)}
	case olap.CodeMemoryLimitExceeded:
		return &Error{Kind: KindUnavailable, Code: "query_memory_limit", Err: err,
			Detail: "The analysis needs more memory than the server allows: use a shorter range or fewer breakdown values."}
	case olap.CodeCannotCompileRegexp:
		// The regex check before running approximates RE2; the engine
		// has the last word.
		return &Error{Kind: KindInvalid, Code: "invalid_input", Attr: "properties", Err: err,
			Detail: "A regular expression in the filters is not valid RE2 syntax."}
	}
	return err
}

// renderTrendCSV writes the series as a table: one row per series.
func renderTrendCSV(c *gin.Context, result json.RawMessage) {
	var rows []map[string]any
	if err := json.Unmarshal(result, &rows); err != nil {
		writeError(c, errors.Join(errors.New("trend csv"), err))
		return
	}
	header, cells := trendTable(rows)
	writeCSV(c, http.StatusOK, header, cells)
}
