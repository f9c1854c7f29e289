package querybuilder

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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

// Kind is one analysis kind: the endpoint, saved insights and query node
// that ask for it, and how its requests parse. Everything else that
// names kinds (the insight kinds an insight may store, the node kinds
// the query API answers, the insight list's filter) reads the registry.
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
	// Claims): lifecycle and stickiness share insights/trend. Claims of
	// one route do not overlap, so which kind answers does not depend on
	// the registry's order.
	Claims func(Params) bool
	// Parse reads and validates a request.
	Parse func(Params, Env) (Query, error)
	// Node is the insight node PostHog names the kind's requests
	// (TrendsQuery), "" for none. TranslateNode reads one into the legacy
	// request of the kind's Insight, which a saved insight's query is
	// listed under too.
	Node string
	// translate reads a Node's fields into the legacy parameters
	// (insight aside, which TranslateNode sets). It reads through the
	// package's nodeReader, so only this package's kinds have nodes.
	translate func(r *nodeReader, out Params)
}

// registry is every analysis kind, in the order messages list them
// (InsightKinds, SupportedNodeKinds): a snapshot replaced whole by
// Register, so that lookups read it without a lock.
var registry atomic.Pointer[[]*Kind]

// init registers insightd's kinds. A new kind adds its line here; its
// files define the Kind (see README.md, "Adding an analysis kind"). The
// list is stored by init, not by an initializer, because node
// translations reach the registry (a PathsQuery's funnelSource is
// translated by TranslateNode), which an initializer would make a cycle.
func init() {
	registry.Store(&[]*Kind{&trendsKind, &funnelKind, &timingKind, &retentionKind, &pathsKind, &stickinessKind, &lifecycleKind,
		&correlationKind})
}

// kinds is the registry's current snapshot, which no one modifies.
func kinds() []*Kind { return *registry.Load() }

// Routes lists the endpoints the registered kinds answer, sorted.
func Routes() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range kinds() {
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
	for _, k := range kinds() {
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
	for _, k := range kinds() {
		if k.Insight != "" && strings.EqualFold(k.Insight, insight) {
			return k, true
		}
	}
	return nil, false
}

// ByName is the kind named name.
func ByName(name string) (*Kind, bool) {
	for _, k := range kinds() {
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
	for _, k := range kinds() {
		if k.Persons != "" && k.Persons == route {
			return k, true
		}
	}
	return nil, false
}

// PersonsRoutes lists the persons routes of the registered kinds.
func PersonsRoutes() []string {
	var out []string
	for _, k := range kinds() {
		if k.Persons != "" {
			out = append(out, k.Persons)
		}
	}
	sort.Strings(out)
	return out
}

// InsightKinds lists the filters.insight values of the registered kinds
// (upper case, as PostHog stores them), in the registry's order: what a
// saved insight's filters may name.
func InsightKinds() []string {
	var out []string
	for _, k := range kinds() {
		if k.Insight != "" && !slices.Contains(out, k.Insight) {
			out = append(out, k.Insight)
		}
	}
	return out
}

// NodeInsights lists the registered kinds' insight nodes and, at the same
// index, the filters.insight each computes: how a saved insight's query
// node is classified.
func NodeInsights() (nodes, insights []string) {
	for _, k := range kinds() {
		if k.Node != "" {
			nodes, insights = append(nodes, k.Node), append(insights, k.Insight)
		}
	}
	return nodes, insights
}

// registering serializes Register's writers; readers take the snapshot.
var registering sync.Mutex

// Register adds k to the registry, after the kinds there, until
// unregister is called: for tests that need a kind of their own, and for
// kinds defined outside this package (which have no Node: translations
// read through the package's node reader). It refuses a kind that would
// make a lookup ambiguous (a name, insight, node or persons route taken,
// a second default for a route) or that lacks what its fields promise.
// Lookups see the kind at once; a server lists its routes when it is
// built (Routes, PersonsRoutes), so register before building one.
func Register(k *Kind) (unregister func(), err error) {
	registering.Lock()
	defer registering.Unlock()
	current := kinds()
	if err := k.check(current); err != nil {
		return nil, err
	}
	next := append(slices.Clip(current), k)
	registry.Store(&next)
	return func() {
		registering.Lock()
		defer registering.Unlock()
		rest := slices.DeleteFunc(slices.Clone(kinds()), func(o *Kind) bool { return o == k })
		registry.Store(&rest)
	}, nil
}

// check reports what keeps k from joining the kinds others: every lookup
// of the registry finds at most one kind.
func (k *Kind) check(others []*Kind) error {
	switch {
	case k.Name == "" || k.Route == "" || k.Parse == nil:
		return fmt.Errorf("kind %q: a kind needs a Name, a Route and Parse", k.Name)
	case k.Insight != strings.ToUpper(k.Insight):
		return fmt.Errorf("kind %s: Insight %q is upper case, as saved insights store it", k.Name, k.Insight)
	case (k.Node == "") != (k.translate == nil):
		return fmt.Errorf("kind %s: a Node and its translation come together", k.Name)
	case k.Node != "" && (k.Insight == "" || k.Node == "InsightVizNode"):
		return fmt.Errorf("kind %s: node %q needs an Insight to translate to, and a name of its own", k.Name, k.Node)
	}
	for _, o := range others {
		taken := func(a, b string) bool { return a != "" && strings.EqualFold(a, b) }
		switch {
		case o == k || o.Name == k.Name:
			return fmt.Errorf("kind %s is registered already", k.Name)
		case taken(k.Insight, o.Insight):
			return fmt.Errorf("kind %s: insight %s is kind %s's", k.Name, k.Insight, o.Name)
		case taken(k.Node, o.Node):
			return fmt.Errorf("kind %s: node %s is kind %s's", k.Name, k.Node, o.Name)
		case taken(k.Persons, o.Persons):
			return fmt.Errorf("kind %s: persons route %s is kind %s's", k.Name, k.Persons, o.Name)
		case k.Claims == nil && o.Claims == nil && k.Route == o.Route:
			return fmt.Errorf("kind %s: route %s answers kind %s unless claimed", k.Name, k.Route, o.Name)
		}
	}
	return nil
}
