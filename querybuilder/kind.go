package querybuilder

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// Env is what a request is parsed in: the project's settings, the clock
// and the tables. The caller resolves it from its stores; nothing in it
// needs the events engine, so a request can be parsed, and its cached
// answer found, without touching ClickHouse.
type Env struct {
	Project Project
	// Now is the instant relative dates are taken from.
	Now time.Time
	// Schema names the tables; the zero value is DefaultSchema.
	Schema Schema
	// Actions and Cohorts are the project's saved definitions the request
	// names (References), by id; deleted ones included, so that naming
	// one is told apart from naming nothing.
	Actions map[int64]Action
	Cohorts map[int64]Cohort
}

// Facts are what a statement depends on that only the events engine
// knows (chsql.Facts, so that olap.ReadFacts needs no compiler). The
// caller reads them after a cache miss, and only those the query Needs.
type Facts = chsql.Facts

// Needs says which Facts a query's statement depends on.
type Needs = chsql.Needs

// Query is a parsed, validated analysis request of one kind.
type Query interface {
	// Base is what every request has: the project, the clock, the
	// filters on every event and the resolved range.
	Base() *Common
	// Needs says which Facts Build reads.
	Needs() Needs
	// Build compiles the request to one statement. It first resolves
	// what depends on the facts (date_from=all's range), which can still
	// find the request invalid (a *ValidationError).
	Build(f Facts) (Statement, error)
	// Shape turns the statement's rows into the result.
	Shape(rows [][]any) (Result, error)
	// Decode reads back a result of this query that was encoded as JSON
	// (a cached answer), typed as Shape types it.
	Decode(raw json.RawMessage) (Result, error)
}

// Result is an analysis result: JSON as the API answers it, and its
// natural table for format=csv.
type Result interface {
	Table() (header []string, rows [][]string)
}

// Kind is one analysis kind: the endpoint and saved insights that ask for
// it, and how its requests parse.
type Kind struct {
	// Name identifies the kind in cache keys and logs.
	Name string
	// Route is the endpoint under /api/projects/:id/insights/ that
	// answers it.
	Route string
	// Insight is the filters.insight value of saved insights computed
	// by this kind, "" for none.
	Insight string
	// Persons is the route under /api/projects/:id/persons/ that lists
	// the actors behind its numbers ("" for none); the kind's queries are
	// ActorsListers.
	Persons string
	// Claims, when set, says whether the kind answers a request on a
	// route it shares with the route's default kind (the one without
	// Claims): lifecycle and stickiness share insights/trend.
	Claims func(Params) bool
	// Parse reads and validates a request.
	Parse func(Params, Env) (Query, error)
}

// registry is every analysis kind. A new kind adds its line here; its
// file defines the Kind (see README.md, "Adding an analysis kind").
var registry = []*Kind{&trendsKind, &funnelKind, &timingKind, &retentionKind, &lifecycleKind, &stickinessKind, &pathsKind, &correlationKind}

// Routes lists the endpoints the registered kinds answer, sorted.
func Routes() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range registry {
		if !seen[k.Route] {
			seen[k.Route] = true
			out = append(out, k.Route)
		}
	}
	sort.Strings(out)
	return out
}

// ForRoute is the kind that answers a request on route: a kind claiming
// the parameters, else the route's default.
func ForRoute(route string, p Params) (*Kind, bool) {
	var def *Kind
	for _, k := range registry {
		switch {
		case k.Route != route:
		case k.Claims == nil:
			def = k
		case k.Claims(p):
			return k, true
		}
	}
	return def, def != nil
}

// ForInsight is the kind computing saved insights whose filters.insight
// is insight (any case).
func ForInsight(insight string) (*Kind, bool) {
	for _, k := range registry {
		if k.Insight != "" && strings.EqualFold(k.Insight, insight) {
			return k, true
		}
	}
	return nil, false
}

// ByName is the kind named name.
func ByName(name string) (*Kind, bool) {
	for _, k := range registry {
		if k.Name == name {
			return k, true
		}
	}
	return nil, false
}

// ForSavedInsight is the kind that computes a saved insight's filters:
// filters.insight, else trends when they name events or actions (PostHog's
// default); false when they ask for no analysis insightd computes.
func ForSavedInsight(p Params) (*Kind, bool) {
	var insight string
	if raw, ok := p["insight"]; ok && json.Unmarshal(raw, &insight) == nil && insight != "" {
		k, ok := ForInsight(insight)
		if !ok {
			return nil, false
		}
		// A kind sharing the route may claim the filters (a TRENDS
		// insight shown_as Stickiness).
		return ForRoute(k.Route, p)
	}
	for _, k := range []string{"events", "actions"} {
		var list []json.RawMessage
		if raw, ok := p.document(k); ok && json.Unmarshal(raw, &list) == nil && len(list) > 0 {
			return ForRoute(trendsKind.Route, p)
		}
	}
	return nil, false
}

// ForPersons is the kind whose actors /api/projects/:id/persons/<route>/
// lists.
func ForPersons(route string) (*Kind, bool) {
	for _, k := range registry {
		if k.Persons != "" && k.Persons == route {
			return k, true
		}
	}
	return nil, false
}

// PersonsRoutes lists the persons routes of the registered kinds.
func PersonsRoutes() []string {
	var out []string
	for _, k := range registry {
		if k.Persons != "" {
			out = append(out, k.Persons)
		}
	}
	sort.Strings(out)
	return out
}
