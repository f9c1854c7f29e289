package querybuilder

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tally is an analysis kind defined in this file alone: the number of
// events of one name in the range. Registered for a test, it must be
// served by everything that names kinds (routes, saved insights, query
// nodes, the lists in messages) with no edit outside this file, which is
// what README.md's "Adding an analysis kind" promises.
type tallyQuery struct {
	Common
	Event string
}

func parseTally(p Params, env Env) (Query, error) {
	pr := &problems{}
	q := &tallyQuery{Common: newCommon(env, pr)}
	q.parse(p, pr)
	if q.Event, _ = p.str("event", pr); q.Event == "" {
		pr.add("event", "event is required")
	}
	q.resolveRange(pr)
	return q, pr.err()
}

func (q *tallyQuery) Needs() Needs { return Needs{FirstEvent: q.FromAll()} }

func (q *tallyQuery) Build(f Facts) (Statement, error) {
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	s := newEventSource(&q.Common, f)
	where := []string{"e.team_id = {team:Int64}", s.rangeSpan().sql(), s.eventIs(Entity{ID: q.Event})}
	return s.statement(s.selectFrom([]string{"count() AS n"}, joins{}, where)), nil
}

func (q *tallyQuery) Shape(rows [][]any) (Result, error) {
	if len(rows) != 1 || len(rows[0]) != 1 {
		return nil, fmt.Errorf("tally: want one row of one column, got %v", rows)
	}
	n, ok := rows[0][0].(uint64)
	if !ok {
		return nil, fmt.Errorf("tally: count is %T", rows[0][0])
	}
	return tallyResult{Count: n}, nil
}

func (q *tallyQuery) Decode(raw json.RawMessage) (Result, error) {
	var r tallyResult
	return r, json.Unmarshal(raw, &r)
}

type tallyResult struct {
	Count uint64 `json:"count"`
}

func (r tallyResult) Table() ([]string, [][]string) {
	return []string{"count"}, [][]string{{strconv.FormatUint(r.Count, 10)}}
}

// registerTally registers a fresh tally kind until the test ends.
func registerTally(t *testing.T) (k *Kind, unregister func()) {
	t.Helper()
	k = &Kind{Name: "tally", Route: "tally", Insight: "TALLY", Parse: parseTally, Node: "TallyQuery",
		translate: func(r *nodeReader, out Params) {
			r.common(out)
			r.copy("event", "event", out)
		}}
	unregister, err := Register(k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
	return k, unregister
}

func TestAKindRegisteredFromOneFileIsServedWhereKindsAreNamed(t *testing.T) {
	k, _ := registerTally(t)
	env := Env{Project: goldenProject, Now: testNow}
	p, err := ParseBody([]byte(`{"event": "signup", "date_from": "2026-03-01", "date_to": "2026-03-07"}`))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("its route is served and answers its requests", func(t *testing.T) {
		if got, ok := ForRoute("tally", p); !ok || got != k || !slices.Contains(Routes(), "tally") {
			t.Fatalf("ForRoute: %v %v; Routes: %v", got, ok, Routes())
		}
		if got, ok := ByName("tally"); !ok || got != k {
			t.Fatalf("ByName: %v %v", got, ok)
		}
	})
	t.Run("a saved insight of its insight kind, any case, is computed by it", func(t *testing.T) {
		if got, ok := ForSavedInsight(Params{"insight": json.RawMessage(`"tally"`), "event": json.RawMessage(`"signup"`)}); !ok || got != k {
			t.Fatalf("%v %v", got, ok)
		}
	})
	t.Run("its node, bare or in a viz node, translates to its legacy request", func(t *testing.T) {
		if !IsInsightNode("TallyQuery") {
			t.Fatal("TallyQuery is not an insight node")
		}
		for raw, origin := range map[string]string{
			`{"kind": "TallyQuery", "event": "signup", "dateRange": {"date_from": "2026-03-01", "date_to": "2026-03-07"}}`: "query.event",
			`{"kind": "InsightVizNode", "source": {"kind": "TallyQuery", "event": "signup",
				"dateRange": {"date_from": "2026-03-01", "date_to": "2026-03-07"}}}`: "query.source.event",
		} {
			n, err := TranslateNode(json.RawMessage(raw), "query")
			if err != nil {
				t.Fatal(err)
			}
			want := Params{"insight": json.RawMessage(`"TALLY"`), "event": json.RawMessage(`"signup"`),
				"date_from": json.RawMessage(`"2026-03-01"`), "date_to": json.RawMessage(`"2026-03-07"`)}
			if n.Kind != "TallyQuery" || !reflect.DeepEqual(n.Params, want) || n.Origins["event"] != origin {
				t.Fatalf("%s: %+v", raw, n)
			}
			if got, ok := ForSavedInsight(n.Params); !ok || got != k {
				t.Fatalf("the translated node is computed by %v %v", got, ok)
			}
		}
		_, err := TranslateNode(json.RawMessage(`{"kind": "TallyQuery", "event": "signup", "colour": "red"}`), "query")
		if ves := ValidationErrors(err); len(ves) != 1 || ves[0].Attr != "query.colour" {
			t.Fatalf("an unknown field of its node: %v", err)
		}
	})
	t.Run("its request builds one statement and shapes its rows", func(t *testing.T) {
		q, err := k.Parse(p, env)
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := q.Build(Facts{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(stmt.SQL, "SELECT count() AS n\nFROM events AS e") || !strings.Contains(stmt.SQL, "e.event = {p0:String}") ||
			stmt.Params["p0"] != "signup" || stmt.Params["team"] != goldenProject.ID {
			t.Fatalf("%s", stmt)
		}
		res, err := q.Shape([][]any{{uint64(3)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, rows := res.Table(); !reflect.DeepEqual(rows, [][]string{{"3"}}) {
			t.Fatalf("%v", rows)
		}
		b, _ := json.Marshal(res)
		if back, err := q.Decode(b); err != nil || back != res {
			t.Fatalf("decoded %v %v", back, err)
		}
		if _, err := k.Parse(Params{}, env); len(ValidationErrors(err)) != 1 || ValidationErrors(err)[0].Attr != "event" {
			t.Fatalf("a request without event: %v", err)
		}
	})
	t.Run("the lists that name kinds name it, after the built-in ones", func(t *testing.T) {
		if ik := InsightKinds(); ik[len(ik)-1] != "TALLY" {
			t.Fatalf("InsightKinds: %v", ik)
		}
		if nodes, insights := NodeInsights(); nodes[len(nodes)-1] != "TallyQuery" || insights[len(insights)-1] != "TALLY" {
			t.Fatalf("NodeInsights: %v %v", nodes, insights)
		}
		if s := SupportedNodeKinds(); !strings.HasSuffix(s, ", LifecycleQuery or TallyQuery") {
			t.Fatalf("SupportedNodeKinds: %s", s)
		}
		_, err := TranslateNode(json.RawMessage(`{"kind": "PieQuery"}`), "query")
		if err == nil || !strings.Contains(err.Error(), "StickinessQuery, TallyQuery, TrendsQuery") {
			t.Fatalf("an unknown node: %v", err)
		}
	})
}

func TestAnUnregisteredKindIsGoneAndTheBuiltInListsAreAsBefore(t *testing.T) {
	_, unregister := registerTally(t)
	unregister()
	p := Params{"insight": json.RawMessage(`"TALLY"`), "event": json.RawMessage(`"signup"`)}
	if _, ok := ForRoute("tally", p); ok || slices.Contains(Routes(), "tally") || IsInsightNode("TallyQuery") {
		t.Fatal("the route or node is still served")
	}
	if _, ok := ForSavedInsight(p); ok {
		t.Fatal("a TALLY insight still has a kind")
	}
	// The texts of messages that list kinds (filters.insight must be one
	// of..., query.kind ... is not supported) are the API's answers.
	if got := InsightKinds(); !reflect.DeepEqual(got, []string{"TRENDS", "FUNNELS", "RETENTION", "PATHS", "STICKINESS", "LIFECYCLE"}) {
		t.Fatalf("InsightKinds: %v", got)
	}
	if got := SupportedNodeKinds(); got != "HogQLQuery, EventsQuery, InsightVizNode, TrendsQuery, FunnelsQuery, RetentionQuery, "+
		"PathsQuery, StickinessQuery or LifecycleQuery" {
		t.Fatalf("SupportedNodeKinds: %s", got)
	}
	if got := nodeKindList(); got != "FunnelsQuery, LifecycleQuery, PathsQuery, RetentionQuery, StickinessQuery, TrendsQuery" {
		t.Fatalf("nodeKindList: %s", got)
	}
}

func TestRegisterRefusesAKindThatALookupCouldNotTellApart(t *testing.T) {
	parse := func(Params, Env) (Query, error) { return nil, nil }
	translate := func(*nodeReader, Params) {}
	for name, k := range map[string]*Kind{
		"a taken name":                         {Name: "trends", Route: "tally", Parse: parse},
		"a taken insight, in any case":         {Name: "tally", Route: "tally", Insight: "Funnels", Parse: parse},
		"a lower-case insight":                 {Name: "tally", Route: "tally", Insight: "tally", Parse: parse},
		"a taken node":                         {Name: "tally", Route: "tally", Insight: "TALLY", Node: "TrendsQuery", translate: translate, Parse: parse},
		"a taken persons route":                {Name: "tally", Route: "tally", Persons: "funnel", Parse: parse},
		"a second default of a route":          {Name: "tally", Route: "trend", Parse: parse},
		"a node without its translation":       {Name: "tally", Route: "tally", Insight: "TALLY", Node: "TallyQuery", Parse: parse},
		"a translation without its node":       {Name: "tally", Route: "tally", Insight: "TALLY", translate: translate, Parse: parse},
		"a node without an insight":            {Name: "tally", Route: "tally", Node: "TallyQuery", translate: translate, Parse: parse},
		"the viz node's name":                  {Name: "tally", Route: "tally", Insight: "TALLY", Node: "InsightVizNode", translate: translate, Parse: parse},
		"no parser":                            {Name: "tally", Route: "tally"},
		"no route":                             {Name: "tally", Parse: parse},
		"a built-in kind registered once more": &trendsKind,
	} {
		t.Run(name+" is refused", func(t *testing.T) {
			before := len(kinds())
			if unregister, err := Register(k); err == nil {
				unregister()
				t.Fatal("registered")
			}
			if len(kinds()) != before {
				t.Fatal("the registry changed")
			}
		})
	}
	t.Run("a claiming kind may share a default's route", func(t *testing.T) {
		unregister, err := Register(&Kind{Name: "tally", Route: "trend", Claims: func(p Params) bool { return p.present("tally") }, Parse: parse})
		if err != nil {
			t.Fatal(err)
		}
		defer unregister()
		if k, _ := ForRoute("trend", Params{"tally": json.RawMessage("1")}); k.Name != "tally" {
			t.Fatalf("claimed by %s", k.Name)
		}
		if k, _ := ForRoute("trend", Params{}); k != &trendsKind {
			t.Fatalf("unclaimed: %s", k.Name)
		}
	})
}
