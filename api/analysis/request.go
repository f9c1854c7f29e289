package analysis

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// Request is one analysis to answer. Exactly one of Filter, Node and
// Insight says what to compute:
//   - Filter, a legacy filter: of the kind Route claims (a legacy
//     endpoint's insights/<route>/), or without Route of the kind its
//     filters.insight names;
//   - Node, a query node (TrendsQuery, InsightVizNode...), translated to
//     its legacy filter, so both share a cached result;
//   - Insight, a saved insight: its query node when it has one, else its
//     filters.
type Request struct {
	Project *metadata.Project
	Route   string
	Filter  querybuilder.Params
	Node    json.RawMessage
	Insight *metadata.Insight
	// Dashboard, when set, overrides the filter's date range and adds
	// its properties (a tile, or from_dashboard).
	Dashboard *metadata.Dashboard
	Refresh   Refresh
	// QueryID is the engine query id the computation runs under
	// (ProjectQueryID of a client's client_query_id, so insights/cancel
	// finds it); empty, a fresh one.
	QueryID string
	// Debug asks for the statement beside the result.
	Debug bool
}

// params is the legacy filter the request computes, with the dashboard's
// overrides, and the node it was translated from, if any.
func (r Request) params() (querybuilder.Params, *querybuilder.InsightNode, error) {
	var params querybuilder.Params
	var node *querybuilder.InsightNode
	switch {
	case r.Node != nil:
		n, err := translateNode(r.Node)
		if err != nil {
			return nil, nil, err
		}
		params, node = n.Params, n
	case r.Insight != nil:
		var err error
		if params, node, err = savedParams(r.Insight); err != nil || params == nil {
			return nil, nil, err
		}
	default:
		params = r.Filter
	}
	if r.Dashboard != nil {
		params = dashboardParams(params, r.Dashboard)
	}
	return params, node, nil
}

// kind is the kind the request computes: the registry's, or HogQL's
// for a HogQL node.
func (r Request) kind(params querybuilder.Params, node *querybuilder.InsightNode) (*querybuilder.Kind, bool) {
	if params == nil {
		return nil, false
	}
	if node != nil && querybuilder.IsHogQLNode(node.Kind) {
		return querybuilder.HogQLKind, true
	}
	if r.Route != "" {
		return querybuilder.ForRoute(r.Route, params)
	}
	return querybuilder.ForSavedInsight(params)
}

func (r Request) queryID() string {
	if r.QueryID != "" {
		return r.QueryID
	}
	return ProjectQueryID(r.Project.ID, uuid.NewString())
}

// translateNode reads a query node: an insight node as its legacy
// filter, a HogQL node (HogQLQuery, DataVisualizationNode) as a request
// of HogQLKind.
func translateNode(raw json.RawMessage) (*querybuilder.InsightNode, error) {
	if querybuilder.IsHogQLNode(querybuilder.NodeKind(raw)) {
		return querybuilder.TranslateHogQLNode(raw, "query")
	}
	return querybuilder.TranslateNode(raw, "query")
}

// savedParams is a saved insight's filter: its query node's, when it has
// an insight or HogQL node (it wins over filters, as in PostHog), else
// its filters; nil when neither is an analysis. The node is returned
// when the filter came from one.
func savedParams(i *metadata.Insight) (querybuilder.Params, *querybuilder.InsightNode, error) {
	if q := json.RawMessage(i.Query.JSONText); i.Query.Valid {
		if kind := querybuilder.NodeKind(q); querybuilder.IsInsightNode(kind) || querybuilder.IsHogQLNode(kind) {
			node, err := translateNode(q)
			if err != nil {
				return nil, nil, err
			}
			return node.Params, node, nil
		}
	}
	var filters map[string]json.RawMessage
	if json.Unmarshal(i.Filters, &filters) != nil {
		return nil, nil, nil
	}
	return querybuilder.Params(filters), nil, nil
}

// Analysis is a parsed request of one kind and how its result is cached.
// Preparing one reads no store but PostgreSQL: a cached answer needs
// nothing else.
type Analysis struct {
	kind      *querybuilder.Kind
	q         querybuilder.Query
	projectID int64
	pol       cachePolicy
	refresh   Refresh
	queryID   string
	debug     bool
}

// Key is the name of the analysis' cached result: requests with the same
// key have the same answer.
func (a *Analysis) Key() string { return a.pol.key }

// Open reports whether events could still change a result of a computed
// at computedAt (its range had not ended an hour before).
func (a *Analysis) Open(computedAt time.Time) bool { return a.pol.open(computedAt) }

// Result is an analysis' answer and where it came from.
type Result struct {
	a *Analysis
	// Raw is the result as JSON; nil when RefreshNever found nothing
	// cached.
	Raw json.RawMessage
	// Cached is true when the result was read from the cache rather than
	// computed for this request (or the request it joined).
	Cached bool
	// ComputedAt is when the result was computed, StaleAt when any
	// request recomputes it (cache_target_age), NextRefresh when
	// refresh=true may (next_allowed_client_refresh).
	ComputedAt, StaleAt, NextRefresh time.Time
	// Key names the cached result (the query API's cache_key).
	Key string
	// Timezone is the project's, which the result's dates are in.
	Timezone string
	// Debug is the statement, when the request asked for it.
	Debug *Debug
}

// Tabular reports a result that is a HogQL statement's rows
// (querybuilder.HogQLResult): a saved insight answers its rows as
// result and its columns beside them, as PostHog does.
func (r *Result) Tabular() bool {
	_, ok := r.a.q.(querybuilder.ColumnShaper)
	return ok
}

// Table is the result as its kind's CSV table (nothing for no result).
func (r *Result) Table() ([]string, [][]string, error) {
	if r.Raw == nil {
		return nil, nil, nil
	}
	res, err := r.a.q.Decode(r.Raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s csv: %w", r.a.kind.Name, err)
	}
	header, rows := res.Table()
	return header, rows, nil
}

// Debug is the statement as the engine ran it (or would run it, for a
// cached answer), so a user can see and rerun what was asked of
// ClickHouse; Err says why it could not be built.
type Debug struct {
	SQL    string
	Params map[string]any
	Err    error
}
