package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// analyticsRoutes serves every analysis kind of querybuilder's registry
// at its route: a new kind needs no line here.
func (s *Server) analyticsRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id/insights", httpx.CheckFormat)
	read := requireScope("insight:read")
	for _, route := range querybuilder.Routes() {
		h := s.analyze(route)
		g.GET("/"+route, read, h)
		g.POST("/"+route, read, h)
	}
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
// it (or would run it, for a cached answer), so a user can see and rerun
// what was asked of ClickHouse.
type analysisDebug struct {
	SQL    string         `json:"sql,omitempty"`
	Params map[string]any `json:"params,omitempty"`
	// Error says why the statement of a cached answer could not be shown.
	Error string `json:"error,omitempty"`
}

// analyze answers an analysis route: parse the request, answer from the
// cache or compute, render as JSON or CSV.
func (s *Server) analyze(route string) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, ok := s.pathInsightProject(c)
		if !ok {
			return
		}
		params, err := analysisParams(c)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		kind, ok := querybuilder.ForRoute(route, params)
		if !ok {
			httpx.WriteError(c, httpx.NotFound())
			return
		}
		queryID, err := analysisQueryID(c, p.ID, params)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		mode, err := analysisRefreshMode(refreshParam(c, params))
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		a, err := s.prepare(c.Request.Context(), p, kind, params)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		ctx := c.Request.Context()
		r, err := s.analysisResult(ctx, a.pol, mode, s.compute(a, queryID))
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		env := analysisEnvelope{Result: json.RawMessage("null"), Timezone: a.q.Base().Location().String()}
		if r != nil {
			at := r.ComputedAt.UTC()
			env.Result, env.IsCached, env.LastRefresh = r.Result, r.Cached, &at
		}
		if httpx.WantsCSV(c) {
			s.renderResultCSV(c, a, r)
			return
		}
		if debugRequested(c, params) {
			env.Debug = s.debugStatement(ctx, a)
		}
		writeEnvelope(c, env)
	}
}

// writeEnvelope answers env as c.JSON would, but writes the result's
// bytes as they are instead of re-encoding them into a buffer and copying
// that: at the budget's edge a result is tens of megabytes, and c.JSON
// held two more copies of it. A result is what json.Marshal made (or the
// cache kept of it as text), so it is already compact and escaped as
// c.JSON would make it; one that is not (a cache entry written as jsonb
// before 0002) goes through c.JSON.
func writeEnvelope(c *gin.Context, env analysisEnvelope) {
	result := env.Result
	env.Result = json.RawMessage("null")
	rest, err := json.Marshal(env)
	const head = `{"result":null`
	if err != nil || !bytes.HasPrefix(rest, []byte(head)) || !json.Valid(result) || !marshalled(result) {
		env.Result = result
		c.JSON(http.StatusOK, env)
		return
	}
	if c.Writer.Header().Get("Content-Type") == "" { // as c.JSON sets it
		c.Header("Content-Type", "application/json; charset=utf-8")
	}
	c.Status(http.StatusOK)
	w := c.Writer
	for _, b := range [][]byte{[]byte(`{"result":`), result, rest[len(head):]} {
		if _, err := w.Write(b); err != nil {
			return // the client left
		}
	}
}

// analysis is a parsed request of one kind and how its result is cached.
// Preparing one reads no store: a cached answer needs nothing else.
type analysis struct {
	kind      *querybuilder.Kind
	q         querybuilder.Query
	projectID int64
	pol       cachePolicy
}

// prepare parses an analysis request of project p; invalid parameters
// are a *querybuilder.ValidationError (400).
func (s *Server) prepare(ctx context.Context, p *metadata.Project, kind *querybuilder.Kind, params querybuilder.Params) (*analysis, error) {
	env, err := s.entitiesEnv(ctx, p, params)
	if err != nil {
		return nil, err
	}
	q, err := kind.Parse(params, env)
	if err != nil {
		return nil, err
	}
	key, err := cacheKey(kind.Name, params, newCacheScope(q.Base()))
	if err != nil {
		return nil, err
	}
	return &analysis{kind: kind, q: q, projectID: p.ID, pol: rangePolicy(p.ID, key, q.Base())}, nil
}

// analysisEnv is what the query builder knows of the project and the
// clock.
func (s *Server) analysisEnv(p *metadata.Project) querybuilder.Env {
	project := querybuilder.Project{ID: p.ID, Timezone: p.Timezone, TestAccountFilters: json.RawMessage(p.TestAccountFilters),
		PathCleaningFilters: json.RawMessage(p.PathCleaningFilters), CorrelationConfig: json.RawMessage(p.CorrelationConfig),
		PersonDisplayNameProperties: p.PersonDisplayNameProperties}
	if p.WeekStartDay.Valid {
		project.WeekStartDay = int(p.WeekStartDay.Int64)
	}
	return querybuilder.Env{Project: project, Now: time.Now(), Schema: s.cfg.Schema}
}

// entitiesEnv is analysisEnv with the saved actions and cohorts params
// names (through the project's test-account filters, actions' steps and
// cohorts' definitions too), loaded from the store.
func (s *Server) entitiesEnv(ctx context.Context, p *metadata.Project, params querybuilder.Params) (querybuilder.Env, error) {
	env := s.analysisEnv(p)
	actionIDs, cohortIDs := querybuilder.References(params)
	if len(p.TestAccountFilters) > 0 {
		_, more := querybuilder.References(querybuilder.Params{"test_account_filters": json.RawMessage(p.TestAccountFilters)})
		cohortIDs = append(cohortIDs, more...)
	}
	if len(actionIDs) > 0 {
		actions, err := s.store.ActionsByID(ctx, p.ID, actionIDs)
		if err != nil {
			return env, err
		}
		env.Actions = map[int64]querybuilder.Action{}
		for id, a := range actions {
			env.Actions[id] = querybuilder.Action{ID: id, Name: a.Name, Steps: a.Steps, Version: a.Version, Deleted: a.Deleted}
			_, more := querybuilder.References(querybuilder.Params{"steps": a.Steps})
			cohortIDs = append(cohortIDs, more...)
		}
	}
	// Cohorts may name cohorts: load them a level at a time.
	for level := 0; len(cohortIDs) > 0 && level < 5; level++ {
		var missing []int64
		for _, id := range cohortIDs {
			if _, ok := env.Cohorts[id]; !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			break
		}
		cohorts, err := s.store.CohortsByID(ctx, p.ID, missing)
		if err != nil {
			return env, err
		}
		if env.Cohorts == nil {
			env.Cohorts = map[int64]querybuilder.Cohort{}
		}
		cohortIDs = nil
		for id, co := range cohorts {
			env.Cohorts[id] = cohortEnv(co)
			_, more := querybuilder.References(querybuilder.Params{"groups": co.Groups, "filters": co.Filters})
			cohortIDs = append(cohortIDs, more...)
		}
	}
	return env, nil
}

func cohortEnv(co *metadata.Cohort) querybuilder.Cohort {
	return querybuilder.Cohort{ID: co.ID, Name: co.Name, IsStatic: co.IsStatic, Groups: co.Groups, Filters: co.Filters,
		Version: co.Version, Deleted: co.Deleted}
}

// statement reads the engine facts a's statement depends on and builds
// it under the server's limits: only on a cache miss (or for debug).
func (s *Server) statement(ctx context.Context, a *analysis) (querybuilder.Statement, error) {
	f, err := olap.ReadFacts(ctx, s.engine, s.cfg.Schema, a.projectID, a.q.Needs())
	if err != nil {
		return querybuilder.Statement{}, err
	}
	stmt, err := a.q.Build(f)
	if err != nil {
		return stmt, err
	}
	return querybuilder.WithLimits(stmt, s.cfg.Limits), nil
}

// compute runs a's statement on the engine under queryID and encodes the
// shaped result.
func (s *Server) compute(a *analysis, queryID string) func(ctx context.Context) (json.RawMessage, error) {
	return func(ctx context.Context) (json.RawMessage, error) {
		stmt, err := s.statement(ctx, a)
		if err != nil {
			return nil, err
		}
		rows, err := s.engine.Query(olap.WithProject(olap.WithQueryID(ctx, queryID), a.projectID), stmt)
		if err != nil {
			return nil, err
		}
		result, err := a.q.Shape(rows.Data)
		if err != nil {
			return nil, err
		}
		return json.Marshal(result)
	}
}

// renderResultCSV writes a result as its kind's table (an empty table for
// force_cache with nothing cached).
func (s *Server) renderResultCSV(c *gin.Context, a *analysis, r *cachedResult) {
	if r == nil {
		httpx.WriteCSV(c, http.StatusOK, nil, nil)
		return
	}
	res, err := a.q.Decode(r.Result)
	if err != nil {
		httpx.WriteError(c, fmt.Errorf("%s csv: %w", a.kind.Name, err))
		return
	}
	header, rows := res.Table()
	httpx.WriteCSV(c, http.StatusOK, header, rows)
}

// debugStatement is the statement of a, built again for a cached answer.
func (s *Server) debugStatement(ctx context.Context, a *analysis) *analysisDebug {
	stmt, err := s.statement(ctx, a)
	if err != nil {
		return &analysisDebug{Error: httpx.ToError(err).Detail}
	}
	return &analysisDebug{SQL: stmt.SQL, Params: stmt.Params}
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

// analysisParams reads the filter: a GET's query string, a POST's JSON
// body (top level or under filters), or a POST form whose values are
// JSON-encoded as in a query string (PostHog's legacy clients send both).
func analysisParams(c *gin.Context) (querybuilder.Params, error) {
	params, err := requestParams(c)
	// A personal API key sent as a parameter (auth.go) is a credential,
	// not a filter: kept, it would be written into people URLs, cached
	// results and cache keys.
	delete(params, "personal_api_key")
	return params, err
}

// requestParams is analysisParams before the credential is dropped.
func requestParams(c *gin.Context) (querybuilder.Params, error) {
	if c.Request.Method == http.MethodGet {
		return querybuilder.ParseQuery(c.Request.URL.Query()), nil
	}
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type")); mt == "application/x-www-form-urlencoded" {
		form, err := url.ParseQuery(string(b))
		if err != nil {
			return nil, httpx.Invalid("body", "The form body is not valid application/x-www-form-urlencoded.")
		}
		// The form's fields as the JSON object they encode, read as a
		// JSON body is (filters inside filters, or at the top level).
		if b, err = json.Marshal(querybuilder.ParseQuery(form)); err != nil {
			return nil, err
		}
	}
	params, err := querybuilder.ParseBody(b)
	if err != nil {
		return nil, err
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
	if raw, ok := params["client_query_id"]; ok && !httpx.IsJSONNull(raw) {
		if json.Unmarshal(raw, &id) != nil {
			id = string(raw) // not a JSON string: refused below
		}
	}
	if id == "" {
		return projectQueryID(projectID, uuid.NewString()), nil
	}
	if len(id) > clientQueryIDMax || !olap.ValidQueryID(id) {
		return "", httpx.Invalid("client_query_id", fmt.Sprintf(
			"client_query_id must be 1 to %d characters of letters, digits, _ and -.", clientQueryIDMax))
	}
	return projectQueryID(projectID, id), nil
}

func debugRequested(c *gin.Context, params querybuilder.Params) bool {
	if v := c.Query("debug"); v == "true" || v == "1" {
		return true
	}
	raw, ok := params["debug"]
	return ok && strings.TrimSpace(string(raw)) == "true"
}

// marshalled reports whether valid JSON b is as json.Marshal writes it:
// no space between tokens, and none of the characters it escapes (<, >,
// &, U+2028, U+2029) left in strings.
func marshalled(b []byte) bool {
	inString, escaped := false, false
	for i, ch := range b {
		switch {
		case escaped:
			escaped = false
		case inString && ch == '\\':
			escaped = true
		case ch == '"':
			inString = !inString
		case inString && (ch == '<' || ch == '>' || ch == '&'):
			return false
		case inString && ch == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9):
			return false
		case !inString && (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'):
			return false
		}
	}
	return true
}
