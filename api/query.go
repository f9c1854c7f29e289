package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/chdb"
	"github.com/insightd/insightd/querybuilder"
)

// queryRoutes serves PostHog's query API: POST query/ with {"query":
// node, "refresh": ...} under a project (and, as every project route,
// under /api/environments/: server.go).
func (s *Server) queryRoutes(api *gin.RouterGroup) {
	read := requireScope("query:read")
	api.POST("/projects/:project_id/query", read, s.query)
}

// queryBody is the body of POST query/.
type queryBody struct {
	Query         json.RawMessage `json:"query"`
	Refresh       json.RawMessage `json:"refresh"`
	ClientQueryID json.RawMessage `json:"client_query_id"`
}

// queryEnvelope is an insight node's answer: what the legacy endpoint
// puts in result, as results.
type queryEnvelope struct {
	Results     json.RawMessage `json:"results"`
	IsCached    bool            `json:"is_cached"`
	LastRefresh *time.Time      `json:"last_refresh"`
	Timezone    string          `json:"timezone"`
	CacheKey    string          `json:"cache_key,omitempty"`
}

// hogqlEnvelope is a HogQLQuery's or EventsQuery's answer.
type hogqlEnvelope struct {
	Columns     []string `json:"columns"`
	Types       []string `json:"types"`
	Results     [][]any  `json:"results"`
	HasMore     bool     `json:"hasMore"`
	Limit       int      `json:"limit"`
	IsCached    bool     `json:"is_cached"`
	LastRefresh string   `json:"last_refresh"`
	Timezone    string   `json:"timezone"`
	Query       string   `json:"query,omitempty"`
}

// query answers POST query/ for one node: an insight node through its
// kind (and the cache it shares with the legacy request), an EventsQuery
// or a HogQLQuery run under the project's limits.
func (s *Server) query(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	var body queryBody
	if json.Unmarshal(b, &body) != nil {
		httpx.WriteError(c, httpx.Invalid("body", "The body must be a JSON object holding query."))
		return
	}
	if httpx.IsJSONNull(body.Query) || len(body.Query) == 0 {
		httpx.WriteError(c, httpx.Invalid("query", "query is required: a query node such as {\"kind\": \"HogQLQuery\", \"query\": \"SELECT ...\"}."))
		return
	}
	if _, err := analysis.AnalysisRefresh(string(body.Refresh)); err != nil {
		httpx.WriteError(c, err)
		return
	}
	kind := querybuilder.NodeKind(body.Query)
	switch {
	case querybuilder.IsInsightNode(kind):
		s.insightQuery(c, p, body)
	case kind == "ActorsQuery":
		s.actorsQuery(c, p, body.Query)
	case querybuilder.IsHogQLNode(kind) || kind == "EventsQuery":
		// client_query_id names the statement, so insights/cancel stops
		// it, as it stops an insight node's.
		queryID, err := analysisQueryID(c, p.ID, clientQueryParams(body))
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		if kind != "EventsQuery" {
			s.hogqlQuery(c, p, body.Query, queryID)
		} else {
			s.eventsQuery(c, p, body.Query, queryID)
		}
	default:
		httpx.WriteError(c, httpx.Invalid("query.kind", fmt.Sprintf("query.kind %q is not supported; use %s.", kind, querybuilder.SupportedNodeKinds())))
	}
}

// clientQueryParams holds the body's client_query_id, as analysisQueryID
// reads it.
func clientQueryParams(body queryBody) querybuilder.Params {
	if httpx.IsJSONNull(body.ClientQueryID) || len(body.ClientQueryID) == 0 {
		return querybuilder.Params{}
	}
	return querybuilder.Params{"client_query_id": body.ClientQueryID}
}

// insightQuery answers an insight node as its legacy request.
func (s *Server) insightQuery(c *gin.Context, p *metadata.Project, body queryBody) {
	queryID, err := analysisQueryID(c, p.ID, clientQueryParams(body))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	mode, _ := analysis.AnalysisRefresh(string(body.Refresh)) // checked by query
	r, err := s.analysis.Run(c.Request.Context(), analysis.Request{Project: p, Node: body.Query, Refresh: mode, QueryID: queryID})
	if errors.Is(err, analysis.ErrNotComputed) {
		err = httpx.Invalid("query", "query is not an analysis insightd computes.")
	}
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	env := queryEnvelope{Results: json.RawMessage("null"), Timezone: r.Timezone, CacheKey: r.Key}
	if r.Raw != nil {
		at := r.ComputedAt.UTC()
		env.Results, env.IsCached, env.LastRefresh = r.Raw, r.Cached, &at
	}
	c.JSON(http.StatusOK, env)
}

// hogqlQuery runs a HogQLQuery, or the DataVisualizationNode around one
// (answered as the HogQLQuery is, as PostHog does), uncached: the
// statement is the client's own, run as it asks.
func (s *Server) hogqlQuery(c *gin.Context, p *metadata.Project, raw json.RawMessage, queryID string) {
	st, text, attr, err := s.compileHogQL(c.Request.Context(), p, raw, "query")
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.runHogQL(c, p, st, nil, text, attr, queryID)
}

// compileHogQL compiles a HogQLQuery node (at attr of the body): its
// statement, its text and the field its refusal names.
func (s *Server) compileHogQL(ctx context.Context, p *metadata.Project, raw json.RawMessage, attr string) (querybuilder.HogQLStatement, string, string, error) {
	node, err := querybuilder.TranslateHogQLNode(raw, attr)
	if err != nil {
		return querybuilder.HogQLStatement{}, "", "", err
	}
	// The cohorts its filters (and the test-account filters) name.
	env, err := s.analysis.Entities(ctx, p, node.Params)
	if err != nil {
		return querybuilder.HogQLStatement{}, "", "", err
	}
	q, err := querybuilder.ParseHogQL(node.Params, env)
	if err != nil {
		return querybuilder.HogQLStatement{}, "", "", querybuilder.NodeErrors(node, err)
	}
	hq := q.(*querybuilder.HogQLQuery)
	return hq.Statement(), hq.Text, node.Origins[querybuilder.HogQLTextParam], nil
}

// eventsQuery runs an EventsQuery.
func (s *Server) eventsQuery(c *gin.Context, p *metadata.Project, raw json.RawMessage, queryID string) {
	// The cohorts its conditions (and the test-account filters) name.
	var n struct {
		Properties json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(raw, &n) // a node that is not an object is BuildEventsQuery's 400
	params := querybuilder.Params{}
	if len(n.Properties) > 0 {
		params["properties"] = n.Properties
	}
	env, err := s.analysis.Entities(c.Request.Context(), p, params)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	st, err := querybuilder.BuildEventsQuery(raw, "query", env)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.runHogQL(c, p, st.HogQLStatement, st.Star, "", eventsQueryAttr(raw), queryID)
}

// runHogQL runs a compiled statement in the project's share of the
// engine and answers its first Limit rows; star marks columns that are
// an event ("*"), answered as objects; queryID names it (cancel).
func (s *Server) runHogQL(c *gin.Context, p *metadata.Project, st querybuilder.HogQLStatement, star []bool, text, attr, queryID string) {
	env, err := s.hogqlResult(c.Request.Context(), p, st, star, text, attr, queryID)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, env)
}

// hogqlResult is runHogQL's answer.
func (s *Server) hogqlResult(ctx context.Context, p *metadata.Project, st querybuilder.HogQLStatement, star []bool, text, attr, queryID string) (*hogqlEnvelope, error) {
	rows, err := s.analysis.QueryAs(ctx, p.ID, queryID, st.Statement)
	if err != nil {
		return nil, statementError(err, attr)
	}
	types := make([]string, len(rows.Columns))
	for i, col := range rows.Columns {
		types[i] = col.Type
	}
	res := querybuilder.ShapeHogQL(st, types, rows.Data)
	env := &hogqlEnvelope{Columns: res.Columns, Types: res.Types, Results: res.Results, HasMore: res.HasMore, Limit: res.Limit,
		LastRefresh: time.Now().UTC().Format(time.RFC3339Nano), Timezone: s.analysis.Env(p).Project.Timezone, Query: text}
	if env.Timezone == "" {
		env.Timezone = "UTC"
	}
	for i, isStar := range star {
		if !isStar {
			continue
		}
		for _, row := range env.Results {
			row[i] = starObject(row[i])
		}
	}
	return env, nil
}

// starObject is a "*" column's tuple as the event object PostHog answers.
func starObject(v any) any {
	items, ok := v.([]any)
	if !ok || len(items) != len(querybuilder.EventsStar) {
		return v
	}
	out := map[string]any{}
	for i, k := range querybuilder.EventsStar {
		out[k] = items[i]
		if s, ok := items[i].(string); ok && k == "properties" {
			var props map[string]any
			if json.Unmarshal([]byte(s), &props) == nil {
				out[k] = props
			}
		}
	}
	return out
}

// statementCodes are the ClickHouse error codes of a statement that is
// wrong as written: what a user's HogQL can get wrong and the compiler
// cannot see (types, aggregation, values that do not parse). Every other
// code stays the server's error.
var statementCodes = map[int32]bool{
	6:   true, // CANNOT_PARSE_TEXT
	12:  true, // PARAMETER_OUT_OF_BOUND
	25:  true, // CANNOT_PARSE_ESCAPE_SEQUENCE
	26:  true, // CANNOT_PARSE_QUOTED_STRING
	27:  true, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
	34:  true, // TOO_MANY_ARGUMENTS_FOR_FUNCTION
	35:  true, // TOO_FEW_ARGUMENTS_FOR_FUNCTION
	36:  true, // BAD_ARGUMENTS
	38:  true, // CANNOT_PARSE_DATE
	41:  true, // CANNOT_PARSE_DATETIME
	42:  true, // NUMBER_OF_ARGUMENTS_DOESNT_MATCH
	43:  true, // ILLEGAL_TYPE_OF_ARGUMENT
	44:  true, // ILLEGAL_COLUMN
	47:  true, // UNKNOWN_IDENTIFIER
	50:  true, // UNKNOWN_TYPE
	53:  true, // TYPE_MISMATCH
	59:  true, // ILLEGAL_TYPE_OF_COLUMN_FOR_FILTER (WHERE event)
	69:  true, // ARGUMENT_OUT_OF_BOUND
	70:  true, // CANNOT_CONVERT_TYPE
	72:  true, // CANNOT_PARSE_NUMBER
	117: true, // INCORRECT_DATA
	125: true, // INCORRECT_RESULT_OF_SCALAR_SUBQUERY
	128: true, // TOO_LARGE_ARRAY_SIZE
	130: true, // CANNOT_READ_ARRAY_FROM_TEXT
	131: true, // TOO_LARGE_STRING_SIZE
	153: true, // ILLEGAL_DIVISION
	179: true, // MULTIPLE_EXPRESSIONS_FOR_ALIAS
	184: true, // ILLEGAL_AGGREGATION
	190: true, // SIZES_OF_ARRAYS_DONT_MATCH
	215: true, // NOT_AN_AGGREGATE
	321: true, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
	352: true, // AMBIGUOUS_COLUMN_NAME
	376: true, // CANNOT_PARSE_UUID
	386: true, // NO_COMMON_TYPE
	395: true, // FUNCTION_THROW_IF_VALUE_IS_NON_ZERO
	403: true, // INVALID_JOIN_ON_EXPRESSION
	407: true, // DECIMAL_OVERFLOW
	427: true, // CANNOT_COMPILE_REGEXP (a pattern of the statement, not of filters)
	467: true, // CANNOT_PARSE_BOOL
	691: true, // UNKNOWN_ELEMENT_OF_ENUM
}

// statementError answers the engine's refusal of a user's statement (a
// code of statementCodes) as a 400 naming attr, with the engine's message
// as the detail, cut before what names the compiled statement. Only the
// query API does this: an analysis's statement is insightd's, so its
// refusal is insightd's bug.
func statementError(err error, attr string) error {
	code, ok := olap.ErrorCode(err)
	if errors.Is(err, context.DeadlineExceeded) {
		// The server's query timeout ended it before the engine's own
		// max_execution_time did: the same budget.
		code, ok = olap.CodeTimeoutExceeded, true
	}
	if detail, over := budgetCodes[code]; ok && over {
		return &httpx.Error{Kind: httpx.KindInvalid, Code: "query_over_budget", Attr: attr, Err: err, Detail: detail}
	}
	if !ok || !statementCodes[code] {
		return err
	}
	return &httpx.Error{Kind: httpx.KindInvalid, Code: "invalid_input", Attr: attr, Err: err, Detail: engineMessage(err)}
}

// budgetCodes are the engine's codes of a user's statement past one of
// the server's budgets (querybuilder.Limits, set on every statement), and
// what the user is told: the statement asks for more than the server
// gives one query, so it is refused as written, not retried.
var budgetCodes = map[int32]string{
	olap.CodeTooManyRowsRead: "The query would read more rows than the server allows one query: " + // TOO_MANY_ROWS (max_rows_to_read)
		"filter the events it reads (a timestamp range, an event name) or read fewer tables.",
	olap.CodeTooManyBytesRead: "The query would read more data than the server allows one query: " + // TOO_MANY_BYTES
		"filter the events it reads (a timestamp range, an event name) or read fewer tables.",
	olap.CodeTimeoutExceeded: "The query would run longer than the server allows one query: " +
		"filter the events it reads (a timestamp range, an event name), or join and group fewer rows.",
	olap.CodeMemoryLimitExceeded: "The query needs more memory than the server allows one query: " +
		"join, group or sort fewer rows, or filter the events it reads.",
	olap.CodeTooManyRows: "The query would return more rows than the server allows one query: " + // TOO_MANY_ROWS_OR_BYTES (max_result_rows)
		"aggregate, or add a LIMIT.",
	olap.CodeSetSizeLimitExceeded: "A join of the query would hold more rows than the server allows one query: " + // SET_SIZE_LIMIT_EXCEEDED (max_rows_in_join, max_bytes_in_join)
		"join a smaller, filtered subquery (a self-join of the events multiplies every person's events).",
}

// engineMessage is an engine error's message for the user: without the
// code's prefix and name and cut before the engine quotes the compiled
// statement (the project's id, its generated names and settings), with
// the generated table aliases dropped from column names.
func engineMessage(err error) string {
	msg := err.Error()
	var ce *chdb.Exception
	var se *clickhouse.Exception
	switch {
	case errors.As(err, &ce):
		msg = ce.Message
	case errors.As(err, &se):
		msg = se.Message
	}
	msg = engineMessagePrefix.ReplaceAllString(msg, "")
	if i := engineMessageTail.FindStringIndex(msg); i != nil {
		msg = msg[:i[0]]
	}
	msg = engineMessageName.ReplaceAllString(msg, "")
	msg = generatedAlias.ReplaceAllString(msg, "")
	msg = strings.TrimRight(strings.TrimSpace(msg), ":.")
	if msg == "" {
		return "The query could not be run as written."
	}
	return msg + "."
}

// What engineMessage removes: the "Code: N. DB::Exception: " prefix,
// everything from where the engine quotes the statement or its stack, the
// code's name and version at the end, and the compiler's table aliases.
var (
	engineMessagePrefix = regexp.MustCompile(`^(?:Code: \d+\. )?(?:DB::Exception: )?`)
	engineMessageTail   = regexp.MustCompile(`(?:\.|:)? ?(?:In query |In scope |While processing |Stack trace)`)
	engineMessageName   = regexp.MustCompile(`\s*\([A-Z][A-Z0-9_]+\)(?: \(version [^)]*\))?\s*$`)
	generatedAlias      = regexp.MustCompile(`\bhq_t_[a-z]+\.`)
)

// eventsQueryAttr is the field an EventsQuery's refused statement names:
// its select when it has no where (the engine does not say which
// expression it refused), else the query as a whole.
func eventsQueryAttr(raw json.RawMessage) string {
	var n struct {
		Where []string `json:"where"`
	}
	if json.Unmarshal(raw, &n) == nil && len(n.Where) == 0 {
		return "query.select"
	}
	return "query"
}
