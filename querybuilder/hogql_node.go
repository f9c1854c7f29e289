package querybuilder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// A HogQLQuery node, alone or as the source of a DataVisualizationNode
// (what PostHog's MCP server and SQL editor send), reads as a request of
// HogQLKind: the statement's text and values, and its filters under the
// legacy names (date_from, date_to, properties, filter_test_accounts),
// so that a dashboard's overrides, the entities it names and the cache
// key treat it as every other request. It answers the HogQL response
// (HogQLResult), the same through /query/, a saved insight and a
// dashboard tile.

// HogQLTextParam and hogqlValuesParam hold a HogQLQuery's text and
// values in its request: names no legacy filter has. A refusal of the
// statement names the node field Origins maps HogQLTextParam to.
const (
	HogQLTextParam   = "hogql"
	hogqlValuesParam = "hogql_values"
)

// IsHogQLNode reports whether kind names a node answered as a HogQL
// statement: HogQLQuery, or the DataVisualizationNode around one.
func IsHogQLNode(kind string) bool { return kind == "HogQLQuery" || kind == "DataVisualizationNode" }

// TranslateHogQLNode reads a HogQLQuery or DataVisualizationNode found at
// path into its request; Origins name the node's fields, so problems
// name what the client sent (NodeErrors). Every problem is returned.
func TranslateHogQLNode(raw json.RawMessage, path string) (*InsightNode, error) {
	pr := &problems{}
	r := newNodeReader(raw, path, pr)
	if r == nil {
		return nil, pr.err()
	}
	r.origins = map[string]string{}
	if r.kind() == "DataVisualizationNode" {
		// How a client draws the rows, not which rows.
		r.ignore("display", "chartSettings", "tableSettings", "version")
		src := r.object("source")
		r.done()
		if src == nil {
			if pr.ok() {
				pr.add(path+".source", "%s.source is required: a HogQLQuery", path)
			}
			return nil, pr.err()
		}
		if k := src.kind(); k != "HogQLQuery" {
			pr.add(src.path+".kind", "%s.kind %q is not supported; a DataVisualizationNode's source is a HogQLQuery", src.path, k)
			return nil, pr.err()
		}
		r = src
	}
	out := Params{}
	r.top = out
	var text string
	if v := r.raw("query"); v == nil || json.Unmarshal(v, &text) != nil || strings.TrimSpace(text) == "" {
		pr.add(r.at("query"), "%s must be the HogQL text of a SELECT", r.at("query"))
	} else {
		out[HogQLTextParam] = mustMarshal(text)
		r.origin(HogQLTextParam, "query")
	}
	r.copy("values", hogqlValuesParam, out)
	if v := r.raw("placeholders"); v != nil && strings.TrimSpace(string(v)) != "{}" {
		pr.add(r.at("placeholders"), "%s (expressions) are not supported; bind values with %s", r.at("placeholders"), r.at("values"))
	}
	if f := r.object("filters"); f != nil {
		if d := f.object("dateRange"); d != nil {
			d.copy("date_from", "date_from", out)
			d.copy("date_to", "date_to", out)
			// PostHog's {filters} reads the dates as sent either way.
			d.ignore("explicitDate")
			d.done()
		}
		f.copy("properties", "properties", out)
		f.copy("filterTestAccounts", "filter_test_accounts", out)
		// {filters} reads neither (PostHog's replace_filters): they
		// are a dashboard's settings the statement may not use.
		f.ignore("interval", "breakdownFilter")
		f.done()
	}
	r.refuse("variables", "SQL variables are not supported; bind values with "+r.at("values"))
	r.refuse("connectionId", "only the project's events and persons can be queried")
	r.refuse("sendRawQuery", "the statement is always compiled from HogQL")
	// explain and modifiers change how PostHog reports or plans the
	// statement, not its rows; the others label the request.
	r.ignore("explain", "modifiers", "name", "response", "tags", "version")
	r.done()
	if !pr.ok() {
		return nil, pr.err()
	}
	return &InsightNode{Kind: "HogQLQuery", Params: out, Origins: r.origins}, nil
}

// hogqlFilterParams are the request's parameters that came from the
// node's filters.
var hogqlFilterParams = []string{"date_from", "date_to", "properties", "filter_test_accounts"}

// HogQLQuery is a parsed HogQL request: its statement is compiled when
// it is parsed (it depends on no fact of the engine).
type HogQLQuery struct {
	Common
	Text string
	stmt HogQLStatement
}

// HogQLKind computes HogQL requests (TranslateHogQLNode's) for saved
// insights and dashboard tiles. It is no kind of the registry: it has
// no legacy route, and its node answers the HogQL response rather than
// an insight node's envelope.
var HogQLKind = &Kind{Name: "hogql", Parse: ParseHogQL}

// ParseHogQL reads a HogQL request in env: the statement, its values
// and its filters, which fill the {filters} placeholder (hogql_filters.go).
// Problems name the request's parameters.
func ParseHogQL(p Params, env Env) (Query, error) {
	pr := &problems{}
	q := &HogQLQuery{Common: newCommon(env, pr)}
	q.raw = p
	text, _ := p.str(HogQLTextParam, pr)
	if strings.TrimSpace(text) == "" {
		pr.add(HogQLTextParam, "the HogQL text of a SELECT is required")
	}
	q.Text = text
	values, err := HogQLValues(p[hogqlValuesParam], hogqlValuesParam)
	if err != nil {
		pr.errs = append(pr.errs, err)
	}
	filters := q.parseFilters(p, values, pr)
	// The answer is the day's, as PostHog caches SQL: open, so new events
	// make it stale, and keyed by the day and the filters' instants.
	now := q.clock.now
	q.Range = DateRange{From: q.clock.startOf('d', now), To: q.clock.endOf('d', now), Interval: IntervalDay, clock: q.clock}
	if !pr.ok() {
		return nil, pr.err()
	}
	st, err := buildHogQL(text, values, env, HogQLTextParam, filters)
	if err != nil {
		return nil, err
	}
	q.stmt = st
	return q, nil
}

// Statement is the compiled statement.
func (q *HogQLQuery) Statement() HogQLStatement { return q.stmt }

// Needs implements Query: the statement reads no fact.
func (q *HogQLQuery) Needs() Needs { return Needs{} }

// Build implements Query.
func (q *HogQLQuery) Build(Facts) (Statement, error) { return q.stmt.Statement, nil }

// Shape implements Query for rows whose column types are unknown
// (nothing is formatted by type); callers that know them call
// ShapeColumns.
func (q *HogQLQuery) Shape(rows [][]any) (Result, error) { return q.ShapeColumns(nil, rows) }

// ShapeColumns implements ColumnShaper.
func (q *HogQLQuery) ShapeColumns(types []string, rows [][]any) (Result, error) {
	return ShapeHogQL(q.stmt, types, rows), nil
}

// UserWritten implements UserStatement.
func (q *HogQLQuery) UserWritten() {}

// Decode implements Query.
func (q *HogQLQuery) Decode(raw json.RawMessage) (Result, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var r HogQLResult
	if err := d.Decode(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ColumnShaper is a Query whose result depends on the types of its
// statement's columns, which only the engine knows (a HogQL statement's):
// a caller holding them shapes with ShapeColumns rather than Shape.
type ColumnShaper interface {
	ShapeColumns(types []string, rows [][]any) (Result, error)
}

// UserStatement is a Query whose statement a user wrote (HogQL): the
// engine refusing it is the request's fault, not insightd's.
type UserStatement interface{ UserWritten() }

// HogQLResult is PostHog's answer to a HogQL statement: the columns as
// the statement names them, their engine types, the first Limit rows
// and whether there are more.
type HogQLResult struct {
	Columns []string `json:"columns"`
	Types   []string `json:"types"`
	Results [][]any  `json:"results"`
	HasMore bool     `json:"hasMore"`
	Limit   int      `json:"limit"`
}

// ShapeHogQL is the answer of st from the engine's rows and their
// column types: the first st.Limit rows (the statement asks for one
// more, which says there are more), dates as days, as PostHog answers.
func ShapeHogQL(st HogQLStatement, types []string, rows [][]any) *HogQLResult {
	out := &HogQLResult{Columns: st.Columns, Types: types, Results: rows, Limit: st.Limit}
	if out.Types == nil {
		out.Types = []string{}
	}
	if out.Columns == nil {
		out.Columns = []string{}
	}
	if len(out.Results) > st.Limit {
		out.Results, out.HasMore = out.Results[:st.Limit], true
	}
	if out.Results == nil {
		out.Results = [][]any{}
	}
	for i, typ := range types {
		if typ != "Date" && typ != "Date32" && typ != "Nullable(Date)" && typ != "Nullable(Date32)" {
			continue
		}
		for _, row := range out.Results {
			if i < len(row) {
				if t, ok := row[i].(time.Time); ok {
					row[i] = t.Format(time.DateOnly)
				}
			}
		}
	}
	return out
}

// Table implements Result: the columns and the rows as text (lists and
// objects as JSON).
func (r *HogQLResult) Table() ([]string, [][]string) {
	rows := make([][]string, len(r.Results))
	for i, row := range r.Results {
		rows[i] = make([]string, len(row))
		for j, v := range row {
			switch x := v.(type) {
			case nil:
			case string:
				rows[i][j] = x
			case json.Number, bool, int64, float64, int:
				rows[i][j] = fmt.Sprint(x)
			default:
				b, err := json.Marshal(x)
				if err != nil {
					b = []byte(fmt.Sprint(x))
				}
				rows[i][j] = strings.Trim(string(b), `"`)
			}
		}
	}
	return r.Columns, rows
}
