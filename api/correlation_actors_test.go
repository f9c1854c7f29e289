package api

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// followIDs is every page of a people URL's actors by id (a person's
// uuid, a group's key), sorted.
func (p *funnelProject) followIDs(t *testing.T, link string) []string {
	t.Helper()
	var ids []string
	for link != "" {
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		st, out := call(t, p.env.h, "GET", u.RequestURI(), p.key, nil)
		results, _ := out["results"].([]any)
		if st != 200 || len(results) != 1 {
			t.Fatalf("GET %s: %d %v", link, st, out)
		}
		for _, a := range results[0].(map[string]any)["people"].([]any) {
			ids = append(ids, fmt.Sprint(a.(map[string]any)["id"]))
		}
		link, _ = out["next"].(string)
	}
	slices.Sort(ids)
	return ids
}

// actorsIDs is every page of an ActorsQuery's actors by id, sorted.
func (p *funnelProject) actorsIDs(t *testing.T, query map[string]any) []string {
	t.Helper()
	query["select"] = []any{"id"}
	var ids []string
	for offset := 0; ; offset += 100 {
		query["offset"] = offset
		_, rows, more := p.actorsRows(t, query)
		for _, r := range rows {
			ids = append(ids, fmt.Sprint(r[0]))
		}
		if !more {
			break
		}
	}
	slices.Sort(ids)
	return ids
}

// correlationActors is the ActorsQuery of one correlation item's
// successful or failed actors: the item's event (with a property for
// event_with_properties) or its person property value.
func correlationActors(funnel map[string]any, c reference.Correlation, item string, converted bool) map[string]any {
	corr := map[string]any{"kind": "FunnelCorrelationQuery", "funnelCorrelationType": "events",
		"source": map[string]any{"kind": "FunnelsActorsQuery", "source": funnel}}
	if c.Type != "" {
		corr["funnelCorrelationType"] = c.Type
	}
	names := append([]string{}, c.Names...)
	if c.AllNames {
		names = append(names, "$all")
	}
	for field, v := range map[string][]string{"funnelCorrelationNames": names, "funnelCorrelationExcludeNames": c.ExcludeNames,
		"funnelCorrelationEventNames": c.EventNames, "funnelCorrelationEventExcludePropertyNames": c.ExcludeEventProperties,
		"funnelCorrelationExcludeEventNames": c.ExcludeEvents} {
		if len(v) > 0 {
			corr[field] = v
		}
	}
	src := map[string]any{"kind": "FunnelCorrelationActorsQuery", "source": corr, "funnelCorrelationPersonConverted": converted}
	parts := strings.SplitN(item, "::", 3)
	switch c.Type {
	case "properties":
		src["funnelCorrelationPropertyValues"] = []any{map[string]any{"key": parts[0], "value": parts[1], "operator": "exact", "type": "person"}}
	case "event_with_properties":
		src["funnelCorrelationPersonEntity"] = map[string]any{"kind": "EventsNode", "event": parts[0],
			"properties": []any{map[string]any{"key": parts[1], "value": parts[2], "operator": "exact", "type": "event"}}}
	default:
		src["funnelCorrelationPersonEntity"] = map[string]any{"kind": "EventsNode", "event": item}
	}
	return actorsOf(src, nil)
}

// funnelNode is the FunnelsQuery of a reference funnel of event steps.
func funnelNode(f reference.Funnel) map[string]any {
	var series []any
	for _, s := range f.Steps {
		series = append(series, map[string]any{"kind": "EventsNode", "event": s.Event})
	}
	n := map[string]any{"kind": "FunnelsQuery", "series": series, "dateRange": map[string]any{"date_from": f.DateFrom, "date_to": f.DateTo},
		"funnelsFilter": map[string]any{"funnelOrderType": f.Order, "funnelWindowInterval": f.WindowInterval, "funnelWindowIntervalUnit": f.WindowUnit}}
	if f.GroupIndex > 0 {
		n["aggregation_group_type_index"] = f.GroupIndex
	}
	return n
}

// PostHog's test_funnel_correlation_with_events_and_groups, with the
// organization at group type 1 (aggregation_group_type_index 0 is
// persons here): ten organizations of one person each sign up and pay,
// the even ones doing positively_related in the organization and
// positively_related_without_group outside any; org:5 signs up and does
// not pay, org:7 signs up and pays, and both have a negatively_related
// that user_19 sent (a person whose own organization is org:19). The
// event counts for the organization it names, not its sender's: S = 11,
// F = 1; negatively_related s=1 f=1, odds (2·1)/(11·2) = 1/11;
// positively_related s=5 f=0, odds (6·2)/(7·1) = 12/7; the event without
// a group is no organization's and makes no item.
func TestCorrelationByGroupsWorkedByHand(t *testing.T) {
	env := newFunnelEnv(t)
	day := func(d, h int) time.Duration {
		return time.Date(2026, 5, d, h, 0, 0, 0, time.UTC).Sub(analysistest.Fday)
	}
	events := []reference.Event{
		gident("company", "c", day(1, 9), map[string]any{}),
		gident("organization", "org:5", day(1, 9), map[string]any{"industry": "finance"}),
		gident("organization", "org:7", day(1, 9), map[string]any{"industry": "finance"}),
	}
	for i := 10; i < 20; i++ {
		who, org := fmt.Sprintf("user_%d", i), fmt.Sprintf("organization=org:%d", i)
		events = append(events, gev(who, "user signed up", day(2, 14), org))
		if i%2 == 0 {
			events = append(events, gev(who, "positively_related", day(3, 14), org), gev(who, "positively_related_without_group", day(3, 14), ""))
		}
		events = append(events, gev(who, "paid", day(4, 14), org))
	}
	events = append(events,
		gev("user_fail", "user signed up", day(2, 14), "organization=org:5"),
		gev("user_19", "negatively_related", day(3, 14), "organization=org:5"),
		gev("user_succ", "user signed up", day(2, 14), "organization=org:7"),
		gev("user_19", "negatively_related", day(3, 14), "organization=org:7"),
		gev("user_succ", "paid", day(4, 14), "organization=org:7"))
	p := env.project(t, events)
	f := reference.Funnel{Steps: []reference.Step{{Event: "user signed up"}, {Event: "paid"}}, DateFrom: "2026-05-01", DateTo: "2026-05-14",
		Order: "ordered", WindowInterval: 14, WindowUnit: "day", GroupIndex: 1}
	c := reference.Correlation{Funnel: f}
	got := analysistest.CheckCorrelation(t, p, events, c)
	var have []string
	for _, e := range got.Events {
		have = append(have, fmt.Sprintf("%s s=%d f=%d %s", e.Event.Event, e.SuccessCount, e.FailureCount, e.CorrelationType))
	}
	want := []string{"positively_related s=5 f=0 success", "negatively_related s=1 f=1 failure"}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", have, want)
	}
	if math.Abs(got.Events[0].OddsRatio-12.0/7) > 1e-9 || math.Abs(got.Events[1].OddsRatio-1.0/11) > 1e-9 {
		t.Fatalf("odds %v and %v, want 12/7 and 1/11", got.Events[0].OddsRatio, got.Events[1].OddsRatio)
	}

	t.Run("the funnel by groups counts the organizations the events name", func(t *testing.T) {
		var steps []analysistest.APIStep
		p.result(t, "funnel", f.Filter(nil), &steps)
		if len(steps) != 2 || steps[0].Count == nil || steps[1].Count == nil || *steps[0].Count != 12 || *steps[1].Count != 11 {
			t.Fatalf("steps %+v, want 12 then 11", steps)
		}
	})

	t.Run("people URLs and ActorsQuery list the organizations", func(t *testing.T) {
		neg := got.Events[1]
		for _, side := range []struct {
			link      string
			converted bool
			want      string
		}{{neg.SuccessPeopleURL, true, "org:7"}, {neg.FailurePeopleURL, false, "org:5"}} {
			if ids := p.followIDs(t, side.link); fmt.Sprint(ids) != "["+side.want+"]" {
				t.Fatalf("%s lists %v, want %s", side.link, ids, side.want)
			}
			q := correlationActors(funnelNode(f), c, "negatively_related", side.converted)
			if ids := p.actorsIDs(t, q); fmt.Sprint(ids) != "["+side.want+"]" {
				t.Fatalf("ActorsQuery converted=%v lists %v, want %s", side.converted, ids, side.want)
			}
		}
		pos := correlationActors(funnelNode(f), c, "positively_related", true)
		if ids := p.actorsIDs(t, pos); fmt.Sprint(ids) != "[org:10 org:12 org:14 org:16 org:18]" {
			t.Fatalf("positively_related: %v", ids)
		}
		none := correlationActors(funnelNode(f), c, "positively_related_without_group", true)
		if ids := p.actorsIDs(t, none); len(ids) != 0 {
			t.Fatalf("positively_related_without_group lists %v, want no organization", ids)
		}
	})
}

// Every item's ActorsQuery (FunnelCorrelationActorsQuery) lists the
// actors its people URL lists, which TestCorrelationItemPeopleOnRandomEvents
// holds against the reference: events, person properties and events with
// properties by persons, and events and events with properties by groups,
// on random events.
func TestCorrelationActorsQueriesListThePeopleOfTheItemURLs(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.CorrelationEvents(5)
	p := env.project(t, events)
	f := reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "B"}, {Event: "C"}}, DateFrom: "2026-05-04", DateTo: "2026-05-06",
		Order: "ordered", WindowInterval: 12, WindowUnit: "hour"}
	byGroup := f
	byGroup.GroupIndex = 1
	checked := 0
	for _, c := range []reference.Correlation{
		{Funnel: f},
		{Funnel: f, Type: "properties", Names: []string{"tier"}},
		{Funnel: f, Type: "event_with_properties", EventNames: []string{"X", "Y"}, ExcludeEventProperties: []string{"$ip"}},
		{Funnel: byGroup, ExcludeEvents: []string{"Y"}},
		{Funnel: byGroup, Type: "event_with_properties", EventNames: []string{"X"}, ExcludeEventProperties: []string{"$ip"}},
	} {
		got := analysistest.CheckCorrelation(t, p, events, c)
		for _, item := range got.Events {
			for _, side := range []struct {
				link      string
				converted bool
				shown     int64
			}{{item.SuccessPeopleURL, true, item.SuccessCount}, {item.FailurePeopleURL, false, item.FailureCount}} {
				want := p.followIDs(t, side.link)
				if len(want) != int(side.shown) {
					t.Fatalf("%s %s: the URL lists %d, the item shows %d", c.Type, item.Event.Event, len(want), side.shown)
				}
				q := correlationActors(funnelNode(c.Funnel), c, item.Event.Event, side.converted)
				if got := p.actorsIDs(t, q); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s %s group %d converted=%v: ActorsQuery lists %v, the people URL %v", c.Type, item.Event.Event,
						c.Funnel.GroupIndex, side.converted, got, want)
				}
				checked += len(want)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no one to check")
	}
}

// TestCorrelationActorsQueryRefusesWhatItCannotAnswer: each bad field of
// a FunnelCorrelationActorsQuery is a 400 naming it; a hostile event name
// is data.
func TestCorrelationActorsQueryRefusesWhatItCannotAnswer(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.CorrelationEvents(3)
	p := env.project(t, events)
	f := reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "B"}}, DateFrom: "2026-05-04", DateTo: "2026-05-06",
		Order: "ordered", WindowInterval: 12, WindowUnit: "hour"}
	// with is the ActorsQuery of X's successes with change applied to its
	// FunnelCorrelationActorsQuery (src) and FunnelCorrelationQuery (corr).
	with := func(change func(src, corr, fa map[string]any)) map[string]any {
		q := correlationActors(funnelNode(f), reference.Correlation{Funnel: f}, "X", true)
		src := q["source"].(map[string]any)
		corr := src["source"].(map[string]any)
		change(src, corr, corr["source"].(map[string]any))
		return q
	}
	for name, tc := range map[string]struct {
		query map[string]any
		attr  string
	}{
		"converted missing": {with(func(src, _, _ map[string]any) { delete(src, "funnelCorrelationPersonConverted") }),
			"query.source.funnelCorrelationPersonConverted"},
		"converted not a boolean": {with(func(src, _, _ map[string]any) { src["funnelCorrelationPersonConverted"] = "yes" }),
			"query.source.funnelCorrelationPersonConverted"},
		"an action as the item": {with(func(src, _, _ map[string]any) {
			src["funnelCorrelationPersonEntity"] = map[string]any{"kind": "ActionsNode", "id": 1}
		}), "query.source.funnelCorrelationPersonEntity.kind"},
		"no item": {with(func(src, _, _ map[string]any) { delete(src, "funnelCorrelationPersonEntity") }),
			"query.source.funnelCorrelationPersonEntity"},
		"two property values": {with(func(src, corr, _ map[string]any) {
			corr["funnelCorrelationType"], corr["funnelCorrelationNames"] = "properties", []any{"tier"}
			src["funnelCorrelationPropertyValues"] = []any{map[string]any{"key": "tier", "value": "gold"}, map[string]any{"key": "tier", "value": "silver"}}
		}), "query.source.funnelCorrelationPropertyValues"},
		"no correlation type": {with(func(_, corr, _ map[string]any) { delete(corr, "funnelCorrelationType") }),
			"query.source.source.funnelCorrelationType"},
		"properties without names": {with(func(_, corr, _ map[string]any) { corr["funnelCorrelationType"] = "properties" }),
			"query.source.source.funnelCorrelationNames"},
		"a step of the funnel": {with(func(_, _, fa map[string]any) { fa["funnelStep"] = 1 }), "query.source.source.source.funnelStep"},
		"not a correlation":    {with(func(src, _, _ map[string]any) { src["source"] = map[string]any{"kind": "FunnelsQuery"} }), "query.source.source"},
		"a trend's funnel": {with(func(_, _, fa map[string]any) {
			fa["source"] = map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "A"}}}
		}), "query.source.source.source.source.kind"},
		"an unknown field": {with(func(_, corr, _ map[string]any) { corr["nope"] = 1 }), "query.source.source.nope"},
	} {
		t.Run(name, func(t *testing.T) {
			st, out := call(t, p.env.h, "POST", fmt.Sprintf("/api/projects/%d/query/", p.id), p.key, map[string]any{"query": tc.query})
			if st != 400 || out["attr"] != tc.attr || out["detail"] == nil {
				t.Fatalf("want 400 naming %s, got %d %v", tc.attr, st, out)
			}
		})
	}
	t.Run("a hostile event name is data", func(t *testing.T) {
		q := correlationActors(funnelNode(f), reference.Correlation{Funnel: f}, `X'); DROP TABLE events --`, false)
		if ids := p.actorsIDs(t, q); len(ids) != 0 {
			t.Fatalf("an event no one did lists %v", ids)
		}
	})
}
