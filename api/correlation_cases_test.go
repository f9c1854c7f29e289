package api

// Funnel correlation cases worked by hand: no successes, the CSV, GET,
// hostile names and names holding "::" (items and their people URLs),
// action steps, and the project's correlation_config.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// corrFunnel is A then C within an hour, on analysistest.CorrT0's day.
var corrFunnel = reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "C"}}, DateFrom: "2026-05-04", DateTo: "2026-05-04", WindowInterval: 1, WindowUnit: "hour"}

// corrHandEvents are TestCorrelationWorkedByHand's events: S=3, F=3;
// items Y (0, 1), W (1, 1), X (1, 1). Successes have X strictly between
// the steps (at the very step times X does not count: s1 has it at A's
// and C's instants only); for failures the window ends 60 minutes after
// A, strictly.
func corrHandEvents() []reference.Event {
	var events []reference.Event
	events = append(events, corrPerson("s1", "A", 0, "X", 0, "X", 10, "C", 10)...)
	events = append(events, corrPerson("s2", "A", 0, "X", 5, "C", 10)...)
	events = append(events, corrPerson("s3", "A", 0, "W", 5, "C", 10)...)
	events = append(events, corrPerson("f1", "A", 0, "X", 59, "Y", 60)...)
	events = append(events, corrPerson("f2", "A", 0, "Y", 30)...)
	events = append(events, corrPerson("f3", "A", 0, "W", 1)...)
	return events
}

// itemsText is each item as "name s f type".
func itemsText(got analysistest.APICorrelation) []string {
	out := []string{}
	for _, e := range got.Events {
		out = append(out, fmt.Sprintf("%s %d %d %s", e.Event.Event, e.SuccessCount, e.FailureCount, e.CorrelationType))
	}
	return out
}

// peopleOf follows a people URL and gives the distinct ids of the persons
// it lists, sorted, checking that count says as many.
func peopleOf(t *testing.T, env *funnelEnv, p *funnelProject, url string) []string {
	t.Helper()
	st, out := call(t, env.h, "GET", url, p.key, nil)
	if st != http.StatusOK {
		t.Fatalf("%s: %d %v", url, st, out)
	}
	var body struct {
		Results []struct {
			People []struct {
				DistinctIDs []string `json:"distinct_ids"`
			} `json:"people"`
			Count int `json:"count"`
		} `json:"results"`
	}
	b, _ := json.Marshal(out)
	if err := json.Unmarshal(b, &body); err != nil || len(body.Results) != 1 {
		t.Fatalf("%s: %s", url, b)
	}
	ids := []string{}
	for _, person := range body.Results[0].People {
		ids = append(ids, person.DistinctIDs...)
	}
	sort.Strings(ids)
	if body.Results[0].Count != len(body.Results[0].People) {
		t.Fatalf("%s: count %d for %d people", url, body.Results[0].Count, len(body.Results[0].People))
	}
	return ids
}

func TestCorrelationWithoutSuccessesIsEmptyAndSkewed(t *testing.T) {
	env := newFunnelEnv(t)
	// Nobody reaches C: S=0, F=3, though X is done by every failure.
	var ev []reference.Event
	for _, who := range []string{"n1", "n2", "n3"} {
		ev = append(ev, corrPerson(who, "A", 0, "X", 5)...)
	}
	p := env.project(t, ev)
	for _, typ := range []reference.Correlation{{Funnel: corrFunnel}, {Funnel: corrFunnel, Type: "event_with_properties", EventNames: []string{"X"}}} {
		got := analysistest.CheckCorrelation(t, p, ev, typ)
		if len(got.Events) != 0 || !got.Skewed {
			t.Fatalf("%s: %+v, want no items and skewed", typ.Type, got)
		}
	}
	// The same persons with one success give X its item: the empty
	// answer above came from S=0, not from missing data.
	ev = append(ev, corrPerson("n4", "A", 0, "X", 5, "C", 10)...)
	got := analysistest.CheckCorrelation(t, env.project(t, ev), ev, reference.Correlation{Funnel: corrFunnel})
	// X: s 1, f 3 of S 1, F 3: (2*1)/(1*4) = 0.5.
	if want := []string{"X 1 3 failure"}; !reflect.DeepEqual(itemsText(got), want) {
		t.Fatalf("with one success: %v, want %v", itemsText(got), want)
	}
}

func TestCorrelationCSVIsOneRowPerItem(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, corrHandEvents())
	rows := p.funnelCSV(t, "funnel/correlation", reference.Correlation{Funnel: corrFunnel}.Params())
	// Y: (1*3)/(4*2) = 0.375; W and X: (2*3)/(3*2) = 1.
	want := [][]string{
		{"item", "correlation_type", "success_count", "failure_count", "odds_ratio"},
		{"Y", "failure", "0", "1", "0.375"},
		{"W", "failure", "1", "1", "1"},
		{"X", "failure", "1", "1", "1"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got %q\nwant %q", rows, want)
	}
}

func TestCorrelationByGetEqualsPost(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.CorrelationEvents(3)
	p := env.project(t, events)
	for _, c := range []reference.Correlation{
		{Funnel: corrFunnel, ExcludeEvents: []string{"Y"}},
		{Funnel: corrFunnel, Type: "properties", Names: []string{"tier"}},
		{Funnel: corrFunnel, Type: "event_with_properties", EventNames: []string{"X", "Y", "Z"}, ExcludeEventProperties: []string{"$ip"}},
	} {
		c.Funnel = reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "B"}}, DateFrom: "2026-05-04", DateTo: "2026-05-06", WindowInterval: 24, WindowUnit: "hour"}
		want := analysistest.CheckCorrelation(t, p, events, c)
		code, body := p.Ask(t, "GET", "funnel/correlation", c.Params())
		if code != 200 {
			t.Fatalf("GET %s: %d %s", c.Type, code, mustJSON(t, body))
		}
		var got analysistest.APICorrelation
		if err := json.Unmarshal(body["result"], &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("GET %s: %+v\nPOST: %+v", c.Type, got, want)
		}
		if c.Type != "properties" && len(want.Events) == 0 {
			t.Fatalf("%s: no items, the comparison tests little", c.Type)
		}
	}
}

// Names and values that are hostile text, or hold "::" (the separator of
// an item's parts), come back as items exactly, and each item's people
// URLs list its people.
func TestCorrelationHostileAndSeparatorNamesAreData(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	evil := "ev::il " + hostileText
	evKey, evValue := "k::"+hostileText, "v::"+hostileText
	pKey, pValue := "p::"+hostileText, "q::"+hostileText
	var events []reference.Event
	person := func(who string, converted, didEvil bool, props map[string]any) {
		props[pKey] = pValue
		events = append(events, reference.Event{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", len(events)), DistinctID: who, Event: "A", At: analysistest.CorrT0,
			Props: map[string]any{"$set": props}})
		more := []any{}
		if didEvil {
			more = append(more, evil, 5)
		}
		if converted {
			more = append(more, "C", 10)
		}
		for _, e := range corrPerson(who, more...) {
			if e.Event == evil {
				e.Props = map[string]any{evKey: evValue}
			}
			events = append(events, e)
		}
	}
	// Successes have a::b = c, failures a = b::c: both items read
	// "a::b::c", and their URLs must still tell them apart.
	for i, who := range []string{"s1", "s2", "s3"} {
		person(who, true, i < 2, map[string]any{"a::b": "c"})
	}
	for i, who := range []string{"f1", "f2", "f3"} {
		person(who, false, i < 1, map[string]any{"a": "b::c"})
	}
	p := env.project(t, events)
	success, failure := []string{"s1", "s2"}, []string{"f1"}
	everyS, everyF := []string{"s1", "s2", "s3"}, []string{"f1", "f2", "f3"}
	none := []string{}
	for _, tc := range []struct {
		name  string
		c     reference.Correlation
		items []string
		// people are the success and failure URLs' distinct ids, per item.
		people [][2][]string
	}{
		{"events", reference.Correlation{Funnel: corrFunnel}, []string{evil + " 2 1 success"}, [][2][]string{{success, failure}}},
		{"event_with_properties", reference.Correlation{Funnel: corrFunnel, Type: "event_with_properties", EventNames: []string{evil}, ExcludeEventProperties: []string{"$ip"}},
			[]string{evil + "::" + evKey + "::" + evValue + " 2 1 success"}, [][2][]string{{success, failure}}},
		// a:: (s 3, f 0) and a::b::c of a::b (3, 0): ratio 16, by name;
		// a::b:: (0, 3) and a::b::c of a (0, 3): 1/16; then p (3, 3): 1.
		{"properties", reference.Correlation{Funnel: corrFunnel, Type: "properties", Names: []string{"a::b", "a", pKey}},
			[]string{"a:: 3 0 success", "a::b::c 3 0 success", "a::b:: 0 3 failure", "a::b::c 0 3 failure", pKey + "::" + pValue + " 3 3 failure"},
			[][2][]string{{everyS, none}, {everyS, none}, {none, everyF}, {none, everyF}, {everyS, everyF}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got analysistest.APICorrelation
			p.result(t, "funnel/correlation", tc.c.Params(), &got)
			if !reflect.DeepEqual(itemsText(got), tc.items) {
				t.Fatalf("got %q\nwant %q", itemsText(got), tc.items)
			}
			for i, e := range got.Events {
				for k, url := range []string{e.SuccessPeopleURL, e.FailurePeopleURL} {
					if who := peopleOf(t, env, p, url); !reflect.DeepEqual(who, tc.people[i][k]) {
						t.Errorf("item %d (%q) %s people: %v, want %v", i, e.Event.Event, []string{"success", "failure"}[k], who, tc.people[i][k])
					}
				}
			}
		})
	}
}

// An action step leaves out the events its steps name and, for a step
// that names no event, the events it matches; an event named after the
// action's id is an ordinary item.
func TestCorrelationLeavesOutTheEventsOfActionSteps(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, nil)
	st, out := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/actions/", p.id), p.key, map[string]any{"name": "Considered",
		"steps": []any{map[string]any{"event": "B"}, map[string]any{"url": "/pricing", "url_matching": "contains"}}})
	if st != http.StatusCreated {
		t.Fatalf("create the action: %d %v", st, out)
	}
	id := int64(out["id"].(float64))
	named := strconv.FormatInt(id, 10)
	page := func(who string, minute int, url string) reference.Event {
		e := corrPerson(who, "$pageview", minute)[0]
		e.Props = map[string]any{"$current_url": "https://shop.test" + url}
		return e
	}
	var events []reference.Event
	events = append(events, corrPerson("s1", "A", 0)...)
	events = append(events, page("s1", 2, "/pricing"), page("s1", 4, "/home"))
	events = append(events, corrPerson("s1", "B", 3, named, 5, "C", 10)...)
	events = append(events, corrPerson("s2", "A", 0, "B", 2, named, 5, "C", 10)...)
	events = append(events, corrPerson("f1", "A", 0)...)
	events = append(events, page("f1", 3, "/home"))
	events = append(events, corrPerson("f1", "B", 4, named, 5)...)
	events = append(events, corrPerson("f2", "A", 0)...)
	events = append(events, page("f2", 2, "/pricing"))
	p.Capture(t, events)
	filter := corrFunnel.Filter(nil)
	filter["events"] = []any{map[string]any{"id": "A", "type": "events", "order": 0}, map[string]any{"id": "C", "type": "events", "order": 2}}
	filter["actions"] = []any{map[string]any{"id": id, "type": "actions", "order": 1}}
	var got analysistest.APICorrelation
	p.result(t, "funnel/correlation", filter, &got)
	// S=2 (s1, s2), F=2 (f1 reached the action, f2 too by its pricing
	// page). B and the pricing pages are the action's; the id-named
	// event: s 2, f 1, (3*2)/(1*2) = 3; /home's $pageview: s 1, f 1, 1.
	want := []string{named + " 2 1 success", "$pageview 1 1 failure"}
	if !reflect.DeepEqual(itemsText(got), want) {
		t.Fatalf("got %v, want %v", itemsText(got), want)
	}
	if r := got.Events[0].OddsRatio; math.Abs(r-3) > 1e-9 {
		t.Fatalf("odds ratio %v, want 3", r)
	}
	if who := peopleOf(t, env, p, got.Events[1].FailurePeopleURL); !reflect.DeepEqual(who, []string{"f1"}) {
		t.Fatalf("$pageview's failures: %v, want f1", who)
	}
}

// The project's correlation_config exclusions leave out what the
// request's own exclusions would.
func TestCorrelationAppliesTheProjectsExclusions(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.CorrelationEvents(2)
	p := env.project(t, events)
	f := reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "B"}}, DateFrom: "2026-05-04", DateTo: "2026-05-06", WindowInterval: 12, WindowUnit: "hour"}
	cases := []struct {
		plain, excluded reference.Correlation
		gone            string // an item prefix the exclusion removes
	}{
		{reference.Correlation{Funnel: f}, reference.Correlation{Funnel: f, ExcludeEvents: []string{"X"}}, "X"},
		{reference.Correlation{Funnel: f, Type: "properties", AllNames: true}, reference.Correlation{Funnel: f, Type: "properties", AllNames: true, ExcludeNames: []string{"tier"}}, "tier::"},
		// Few enough X items that all are shown: plan's two values.
		{reference.Correlation{Funnel: f, Type: "event_with_properties", EventNames: []string{"X"}, ExcludeEventProperties: []string{"$ip", "$set", "$group_1", "n"}},
			reference.Correlation{Funnel: f, Type: "event_with_properties", EventNames: []string{"X"}, ExcludeEventProperties: []string{"$ip", "$set", "$group_1", "n", "plan"}}, "X::plan::"},
	}
	has := func(got analysistest.APICorrelation, prefix string) bool {
		for _, e := range got.Events {
			if len(e.Event.Event) >= len(prefix) && e.Event.Event[:len(prefix)] == prefix {
				return true
			}
		}
		return false
	}
	// Before the project excludes anything, each removed item is there.
	for _, c := range cases {
		if got := analysistest.CheckCorrelation(t, p, events, c.plain); !has(got, c.gone) {
			t.Fatalf("%s: no %s item without exclusions: the case tests nothing", c.plain.Type, c.gone)
		}
	}
	st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/", p.id), p.key, map[string]any{"correlation_config": map[string]any{
		"excluded_event_names": []string{"X"}, "excluded_person_property_names": []string{"tier"}, "excluded_event_property_names": []string{"plan"}}})
	if st != http.StatusOK {
		t.Fatalf("PATCH correlation_config: %d %v", st, out)
	}
	for _, c := range cases {
		var got analysistest.APICorrelation
		p.result(t, "funnel/correlation", c.plain.Params(), &got)
		want, skewed := c.excluded.Answer(events)
		if has(got, c.gone) || len(got.Events) != len(want) || got.Skewed != skewed {
			t.Fatalf("%s with the project's exclusions: %v, want %d items without %s", c.plain.Type, itemsText(got), len(want), c.gone)
		}
		for i, w := range want {
			if g := got.Events[i]; g.Event.Event != w.Name || g.SuccessCount != w.S || g.FailureCount != w.F {
				t.Fatalf("%s item %d: %v, want %+v", c.plain.Type, i, itemsText(got), w)
			}
		}
	}
}

// corrPerson is one person's events at minutes after analysistest.CorrT0.
func corrPerson(who string, evs ...any) []reference.Event {
	var out []reference.Event
	for i := 0; i+1 < len(evs); i += 2 {
		out = append(out, reference.Event{UUID: uuid.NewString(), DistinctID: who, Event: evs[i].(string),
			At: analysistest.CorrT0.Add(time.Duration(evs[i+1].(int)) * time.Minute), Props: map[string]any{}})
	}
	return out
}

func TestCorrelationWorkedByHand(t *testing.T) {
	env := newFunnelEnv(t)
	funnel := reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "C"}}, DateFrom: "2026-05-04", DateTo: "2026-05-04", WindowInterval: 1, WindowUnit: "hour"}
	events := corrHandEvents()
	p := env.project(t, events)
	got := analysistest.CheckCorrelation(t, p, events, reference.Correlation{Funnel: funnel})
	// S=3, F=3. X: s=1 (s2), f=1 (f1): ratio 1, a failure item. W: s=1, f=1.
	// Y: s=0, f=1 (f2; f1's is at the window's end): (1*3)/(4*2)=0.375.
	var have []string
	for _, e := range got.Events {
		have = append(have, fmt.Sprintf("%s %d %d %s", e.Event.Event, e.SuccessCount, e.FailureCount, e.CorrelationType))
	}
	// Failure items: ascending ratio, ties by name: Y (0.375), then W
	// and X (1.0) by name.
	want := []string{"Y 0 1 failure", "W 1 1 failure", "X 1 1 failure"}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", have, want)
	}
	// The people URLs list those persons.
	for _, e := range got.Events {
		if e.Event.Event != "X" {
			continue
		}
		for url, who := range map[string]string{e.SuccessPeopleURL: "s2", e.FailurePeopleURL: "f1"} {
			st, out := call(t, env.h, "GET", url, p.key, nil)
			b, _ := json.Marshal(out)
			if st != http.StatusOK || !containsDistinctID(out, who) {
				t.Fatalf("%s: %d %s; want %s", url, st, b, who)
			}
		}
	}
	t.Run("no failures: nothing, skewed", func(t *testing.T) {
		ev := append(corrPerson("x1", "A", 0, "X", 1, "C", 2), corrPerson("x2", "A", 0, "C", 1)...)
		q := env.project(t, ev)
		got := analysistest.CheckCorrelation(t, q, ev, reference.Correlation{Funnel: funnel})
		if len(got.Events) != 0 || !got.Skewed {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("the threshold at its edge", func(t *testing.T) {
		// 100 persons: items need s + f >= 2. Half convert.
		var ev []reference.Event
		for i := range 100 {
			who := fmt.Sprintf("t%d", i)
			if i%2 == 0 {
				ev = append(ev, corrPerson(who, "A", 0, "C", 5)...)
			} else {
				ev = append(ev, corrPerson(who, "A", 0)...)
			}
		}
		ev = append(ev, corrPerson("t1", "TWO", 3)...)
		ev = append(ev, corrPerson("t3", "TWO", 3)...)
		ev = append(ev, corrPerson("t5", "ONE", 3)...)
		q := env.project(t, ev)
		got := analysistest.CheckCorrelation(t, q, ev, reference.Correlation{Funnel: funnel})
		if len(got.Events) != 1 || got.Events[0].Event.Event != "TWO" {
			t.Fatalf("%+v", got)
		}
	})
}

func containsDistinctID(out map[string]any, who string) bool {
	b, _ := json.Marshal(out["results"])
	return strings.Contains(string(b), `"`+who+`"`)
}
