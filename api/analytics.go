package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
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

// analyze answers an analysis route: the service answers the request
// (from the cache or computed); the handler renders it as JSON or CSV.
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
		queryID, err := analysisQueryID(c, p.ID, params)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		mode, err := analysis.AnalysisRefresh(refreshParam(c, params))
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		r, err := s.analysis.Run(c.Request.Context(), analysis.Request{Project: p, Route: route, Filter: params,
			Refresh: mode, QueryID: queryID, Debug: debugRequested(c, params) && !httpx.WantsCSV(c)})
		if errors.Is(err, analysis.ErrNotComputed) {
			err = httpx.NotFound()
		}
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		if httpx.WantsCSV(c) {
			header, rows, err := r.Table()
			if err != nil {
				httpx.WriteError(c, err)
				return
			}
			httpx.WriteCSV(c, http.StatusOK, header, rows)
			return
		}
		writeEnvelope(c, newAnalysisEnvelope(r))
	}
}

// newAnalysisEnvelope is r as the analysis endpoints answer it.
func newAnalysisEnvelope(r *analysis.Result) analysisEnvelope {
	env := analysisEnvelope{Result: json.RawMessage("null"), Timezone: r.Timezone}
	if r.Raw != nil {
		at := r.ComputedAt.UTC()
		env.Result, env.IsCached, env.LastRefresh = r.Raw, r.Cached, &at
	}
	if d := r.Debug; d != nil {
		env.Debug = &analysisDebug{SQL: d.SQL, Params: d.Params}
		if d.Err != nil {
			env.Debug = &analysisDebug{Error: httpx.ToError(d.Err).Detail}
		}
	}
	return env
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
		return analysis.ProjectQueryID(projectID, uuid.NewString()), nil
	}
	return analysis.ClientQueryID(projectID, id)
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
