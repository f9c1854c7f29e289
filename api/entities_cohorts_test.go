package api

// Cohorts in analyses, against numbers worked out by hand from the
// events below (cohortEvents): static, property and behavioural cohorts
// as filters (with and without negation) and as breakdowns, in trends
// and funnels; a person leaving a cohort on recalculation; merged persons;
// test account filters holding cohorts.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder/reference"
)

// cohortEvents are five persons' events, hours before now (behavioural
// reference.Conditions count back from now):
//
//	a  plan pro, email a@corp.com  pageviews -72h -48h -24h; purchase -23h
//	b  plan pro                    pageview -50h; purchases -49h -25h
//	c  plan free                   pageviews -120h -26h; purchase -192h (8 days)
//	d  plan free, email d@corp.com pageview -96h
//	e  no properties               pageviews -47h -22h; purchase -144h (6 days)
//
// Pageviews per person: a 3, b 1, c 2, d 1, e 2 (9). A funnel pageview
// then purchase converts a and b only (c's and e's purchases come before
// their pageviews).
func cohortEvents(now time.Time) []reference.Event {
	at := func(who, name string, hours int, props map[string]any) reference.Event {
		if props == nil {
			props = map[string]any{}
		}
		return reference.Event{UUID: uuid.NewString(), DistinctID: who, Event: name, At: now.Add(-time.Duration(hours) * time.Hour), Props: props}
	}
	set := func(p map[string]any) map[string]any { return map[string]any{"$set": p} }
	return []reference.Event{
		at("a", "$pageview", 72, set(map[string]any{"plan": "pro", "email": "a@corp.com"})),
		at("a", "$pageview", 48, nil), at("a", "$pageview", 24, nil), at("a", "purchase", 23, nil),
		at("b", "$pageview", 50, set(map[string]any{"plan": "pro"})), at("b", "purchase", 49, nil), at("b", "purchase", 25, nil),
		at("c", "purchase", 192, set(map[string]any{"plan": "free"})), at("c", "$pageview", 120, nil), at("c", "$pageview", 26, nil),
		at("d", "$pageview", 96, set(map[string]any{"plan": "free", "email": "d@corp.com"})),
		at("e", "purchase", 144, nil), at("e", "$pageview", 47, nil), at("e", "$pageview", 22, nil),
	}
}

// cohortOf creates a cohort through the API and waits for its first
// calculation; it returns the cohort's id.
func (p *funnelProject) cohortOf(t *testing.T, body map[string]any) int64 {
	t.Helper()
	st, out := call(t, p.env.h, "POST", fmt.Sprintf("/api/projects/%d/cohorts/", p.id), p.key, body)
	if st != http.StatusCreated {
		t.Fatalf("create cohort %v: %d %v", body["name"], st, out)
	}
	id := int64(out["id"].(float64))
	p.waitCohort(t, id, 1)
	return id
}

// waitCohort waits until the cohort's computed version is at least
// version and returns the cohort.
func (p *funnelProject) waitCohort(t *testing.T, id, version int64) map[string]any {
	t.Helper()
	path := fmt.Sprintf("/api/projects/%d/cohorts/%d/", p.id, id)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, out := call(t, p.env.h, "GET", path, p.key, nil)
		if st != 200 {
			t.Fatalf("cohort %d: %d %v", id, st, out)
		}
		if v, _ := out["version"].(float64); int64(v) >= version && out["is_calculating"] == false {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("cohort %d not calculated (version %d) in 30s: %v", id, version, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cohortCond(id int64, negation bool) []any {
	return []any{map[string]any{"type": "cohort", "key": "id", "value": id, "negation": negation}}
}

// pageviews is the trend total of pageviews over the last ten days with
// extra parameters.
func (p *funnelProject) pageviews(t *testing.T, extra map[string]any) float64 {
	t.Helper()
	filter := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "-10d"}
	for k, v := range extra {
		filter[k] = v
	}
	var got []struct{ Count float64 }
	p.result(t, "trend", filter, &got)
	if len(got) != 1 {
		t.Fatalf("%d series: %+v", len(got), got)
	}
	return got[0].Count
}

// conversions are the counts of the pageview-then-purchase funnel.
func (p *funnelProject) conversions(t *testing.T, extra map[string]any) [2]int {
	t.Helper()
	filter := map[string]any{"events": []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "purchase", "order": 1}},
		"date_from": "-10d"}
	for k, v := range extra {
		filter[k] = v
	}
	var got []struct{ Count int }
	p.result(t, "funnel", filter, &got)
	if len(got) != 2 {
		t.Fatalf("%d steps: %+v", len(got), got)
	}
	return [2]int{got[0].Count, got[1].Count}
}

func TestCohortsInAnalysesWorkedByHand(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	now := time.Now().UTC()
	p := env.project(t, cohortEvents(now))
	behaviour := func(kind string, extra map[string]any) map[string]any {
		c := map[string]any{"type": "behavioral", "key": "purchase", "value": kind, "time_value": 7, "time_interval": "day"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	filters := func(conds ...any) map[string]any {
		return map[string]any{"properties": map[string]any{"type": "AND", "values": conds}}
	}
	static := p.cohortOf(t, map[string]any{"name": "Listed", "is_static": true, "persons": []string{"a", "c"}})
	pro := p.cohortOf(t, map[string]any{"name": "Pro", "groups": []any{map[string]any{"properties": []any{map[string]any{"key": "plan", "value": "pro", "type": "person"}}}}})
	buyers := p.cohortOf(t, map[string]any{"name": "Bought this week", "filters": filters(behaviour("performed_event", nil))})
	repeat := p.cohortOf(t, map[string]any{"name": "Bought twice", "filters": filters(behaviour("performed_event_multiple",
		map[string]any{"operator": "gte", "operator_value": 2}))})
	recent := p.cohortOf(t, map[string]any{"name": "Bought in 5 days", "filters": filters(behaviour("performed_event",
		map[string]any{"time_value": 5}))})

	for _, tc := range []struct {
		name          string
		id            int64
		in, out       float64 // pageviews of members, of the others
		funnelIn      [2]int
		funnelNegated [2]int
	}{
		// {a, c}: 3+2 pageviews; b, d, e 1+1+2. Funnel: a converts;
		// b converts of the others.
		{"a static cohort", static, 5, 4, [2]int{2, 1}, [2]int{3, 1}},
		// {a, b}: 3+1; c, d, e 2+1+2 (e has no plan: not pro).
		{"a property cohort", pro, 4, 5, [2]int{2, 2}, [2]int{3, 0}},
		// Purchases in 7 days: a, b, e (c's is 8 days old).
		{"performed_event in 7 days", buyers, 6, 3, [2]int{3, 2}, [2]int{2, 0}},
		// At least 2 purchases in 7 days: b.
		{"performed_event_multiple gte 2", repeat, 1, 8, [2]int{1, 1}, [2]int{4, 1}},
		// Purchases in 5 days: a, b (e's is 6 days old).
		{"performed_event in 5 days", recent, 4, 5, [2]int{2, 2}, [2]int{3, 0}},
	} {
		t.Run(tc.name+" filters trends and funnels, negated too", func(t *testing.T) {
			if got := p.pageviews(t, map[string]any{"properties": cohortCond(tc.id, false)}); got != tc.in {
				t.Errorf("trend of members: %v, want %v", got, tc.in)
			}
			if got := p.pageviews(t, map[string]any{"properties": cohortCond(tc.id, true)}); got != tc.out {
				t.Errorf("trend of the others: %v, want %v", got, tc.out)
			}
			if got := p.conversions(t, map[string]any{"properties": cohortCond(tc.id, false)}); got != tc.funnelIn {
				t.Errorf("funnel of members: %v, want %v", got, tc.funnelIn)
			}
			if got := p.conversions(t, map[string]any{"properties": cohortCond(tc.id, true)}); got != tc.funnelNegated {
				t.Errorf("funnel of the others: %v, want %v", got, tc.funnelNegated)
			}
		})
	}
	t.Run("a negated property cohort beside another person condition", func(t *testing.T) {
		// Not pro and plan set: c and d, 2+1.
		props := append(cohortCond(pro, true), map[string]any{"key": "plan", "operator": "is_set", "type": "person"})
		if got := p.pageviews(t, map[string]any{"properties": props}); got != 3 {
			t.Fatalf("%v, want 3", got)
		}
	})

	t.Run("trend breakdowns by a list of cohorts and all", func(t *testing.T) {
		var got []struct {
			Count          float64
			BreakdownValue any `json:"breakdown_value"`
			Label          string
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "-10d",
			"breakdown_type": "cohort", "breakdown": []any{static, pro, buyers, "all"}}, &got)
		want := map[string]float64{fmt.Sprint(static): 5, fmt.Sprint(pro): 4, fmt.Sprint(buyers): 6, "all": 9}
		if len(got) != len(want) {
			t.Fatalf("%d series: %+v", len(got), got)
		}
		for _, s := range got {
			if w, ok := want[fmt.Sprint(s.BreakdownValue)]; !ok || s.Count != w {
				t.Errorf("series %v (%s): %v, want %v", s.BreakdownValue, s.Label, s.Count, w)
			}
		}
		// Renaming a cohort keeps its version (its members are the same)
		// but changes its series' label: not the cached answer's.
		if st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/cohorts/%d/", p.id, static), p.key, map[string]any{"name": "Renamed"}); st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "-10d",
			"breakdown_type": "cohort", "breakdown": []any{static, pro, buyers, "all"}}, &got)
		for _, s := range got {
			if fmt.Sprint(s.BreakdownValue) == fmt.Sprint(static) && !strings.Contains(s.Label, "Renamed") {
				t.Errorf("after the rename: %+v", s)
			}
		}
	})
	t.Run("funnel breakdowns by cohorts", func(t *testing.T) {
		var got [][]struct {
			Count          int
			BreakdownValue any `json:"breakdown_value"`
		}
		p.result(t, "funnel", map[string]any{"events": []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "purchase", "order": 1}},
			"date_from": "-10d", "breakdown_type": "cohort", "breakdown": []any{static, repeat, "all"}}, &got)
		want := map[string][2]int{fmt.Sprint(static): {2, 1}, fmt.Sprint(repeat): {1, 1}, "all": {5, 2}}
		if len(got) != len(want) {
			t.Fatalf("%d series: %+v", len(got), got)
		}
		for _, steps := range got {
			v := fmt.Sprint(steps[0].BreakdownValue)
			if w, ok := want[v]; !ok || len(steps) != 2 || steps[0].Count != w[0] || steps[1].Count != w[1] {
				t.Errorf("series %v: %+v, want %v", v, steps, w)
			}
		}
	})
	t.Run("a cohort naming a behavioural cohort", func(t *testing.T) {
		// Pro and bought twice: b.
		both := p.cohortOf(t, map[string]any{"name": "Pro repeat", "filters": filters(
			map[string]any{"key": "plan", "value": "pro", "type": "person"},
			map[string]any{"key": "id", "value": repeat, "type": "cohort"})})
		if got := p.pageviews(t, map[string]any{"properties": cohortCond(both, false)}); got != 1 {
			t.Fatalf("%v, want 1", got)
		}
	})
	t.Run("test account filters holding cohorts", func(t *testing.T) {
		internal := p.cohortOf(t, map[string]any{"name": "Internal", "groups": []any{map[string]any{"properties": []any{
			map[string]any{"key": "email", "value": "corp.com", "operator": "icontains", "type": "person"}}}}})
		st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/", p.id), p.key, map[string]any{"test_account_filters": []any{
			map[string]any{"type": "cohort", "key": "id", "value": internal, "negation": true},
			map[string]any{"type": "cohort", "key": "id", "value": repeat, "negation": true}}})
		if st != 200 {
			t.Fatalf("project: %d %v", st, out)
		}
		// Internal is a and d; bought twice is b: c and e are left, 2+2.
		if got := p.pageviews(t, map[string]any{"filter_test_accounts": true}); got != 4 {
			t.Errorf("filtered: %v, want 4", got)
		}
		if got := p.conversions(t, map[string]any{"filter_test_accounts": true}); got != [2]int{2, 0} {
			t.Errorf("funnel filtered: %v, want [2 0]", got)
		}
		if got := p.pageviews(t, map[string]any{"filter_test_accounts": false}); got != 9 {
			t.Errorf("unfiltered: %v, want 9", got)
		}
	})
}

// TestCohortRecalculation: a person leaves a dynamic cohort when it is
// recalculated after its properties change; analyses read the membership
// as last computed until then.
func TestCohortRecalculation(t *testing.T) {
	env := newFunnelEnv(t)
	now := time.Now().UTC()
	p := env.project(t, cohortEvents(now))
	// Pro and bought in 7 days: a and b (behaviour makes it computed).
	id := p.cohortOf(t, map[string]any{"name": "Paying pro", "filters": map[string]any{"properties": map[string]any{"type": "AND", "values": []any{
		map[string]any{"key": "plan", "value": "pro", "type": "person"},
		map[string]any{"type": "behavioral", "key": "purchase", "value": "performed_event", "time_value": 7, "time_interval": "day"}}}}})
	if got := p.pageviews(t, map[string]any{"properties": cohortCond(id, false)}); got != 4 {
		t.Fatalf("before: %v, want 4", got)
	}
	st, out := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/?distinct_id=b", p.id), p.key, nil)
	results, _ := out["results"].([]any)
	if st != 200 || len(results) != 1 {
		t.Fatalf("person b: %d %v", st, out)
	}
	personB := results[0].(map[string]any)["id"]
	if st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/persons/%v/", p.id, personB), p.key,
		map[string]any{"properties": map[string]any{"plan": "free"}}); st != 200 {
		t.Fatalf("patch b: %d %v", st, out)
	}
	if got := p.pageviews(t, map[string]any{"properties": cohortCond(id, false)}); got != 4 {
		t.Fatalf("before recalculating: %v, want 4 (the membership as computed)", got)
	}
	if st, out := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/cohorts/%d/calculate/", p.id, id), p.key, nil); st != http.StatusAccepted {
		t.Fatalf("calculate: %d %v", st, out)
	}
	co := p.waitCohort(t, id, 2)
	if co["count"] != float64(1) {
		t.Fatalf("count after: %v", co["count"])
	}
	if got := p.pageviews(t, map[string]any{"properties": cohortCond(id, false)}); got != 3 {
		t.Fatalf("after recalculating: %v, want 3 (a only)", got)
	}
	if got := p.conversions(t, map[string]any{"properties": cohortCond(id, true)}); got != [2]int{4, 1} {
		t.Fatalf("funnel of the others after: %v, want [4 1] (b converts)", got)
	}

	t.Run("new events bring a person in on recalculation", func(t *testing.T) {
		// d buys now, and is made pro: a and d.
		p.Capture(t, []reference.Event{{UUID: uuid.NewString(), DistinctID: "d", Event: "purchase", At: now.Add(-time.Hour),
			Props: map[string]any{"$set": map[string]any{"plan": "pro"}}}})
		if st, _ := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/cohorts/%d/calculate/", p.id, id), p.key, nil); st != http.StatusAccepted {
			t.Fatalf("calculate: %d", st)
		}
		p.waitCohort(t, id, 3)
		if got := p.pageviews(t, map[string]any{"properties": cohortCond(id, false)}); got != 4 {
			t.Fatalf("%v, want 4 (a 3, d 1)", got)
		}
	})
}

// TestCohortsAndMergedPersons: a static cohort lists distinct ids; its
// members are the persons those ids belong to now. A person merged after
// the calculation ($identify of an anonymous member into a known user)
// is counted whole at once (cohort_people is read through the person
// overrides), and stays so after a recalculation.
func TestCohortsAndMergedPersons(t *testing.T) {
	env := newFunnelEnv(t)
	now := time.Now().UTC()
	ev := func(who, name string, hours int, props map[string]any) reference.Event {
		if props == nil {
			props = map[string]any{}
		}
		return reference.Event{UUID: uuid.NewString(), DistinctID: who, Event: name, At: now.Add(-time.Duration(hours) * time.Hour), Props: props}
	}
	p := env.project(t, []reference.Event{
		ev("anon-m", "$pageview", 30, nil),
		ev("user-m", "$pageview", 28, map[string]any{"$set": map[string]any{"plan": "pro"}}), ev("user-m", "$pageview", 27, nil),
		ev("other", "$pageview", 20, nil),
	})
	anon := p.cohortOf(t, map[string]any{"name": "Anonymous visitor", "is_static": true, "persons": []string{"anon-m"}})
	known := p.cohortOf(t, map[string]any{"name": "Known user", "is_static": true, "persons": []string{"user-m"}})
	if got := p.pageviews(t, map[string]any{"properties": cohortCond(anon, false)}); got != 1 {
		t.Fatalf("before the merge: %v, want 1", got)
	}
	both := p.cohortOf(t, map[string]any{"name": "Both ids", "is_static": true, "persons": []string{"anon-m", "user-m"}})
	p.Capture(t, []reference.Event{ev("user-m", "$identify", 10, map[string]any{"$anon_distinct_id": "anon-m"})})
	t.Run("the members page lists the merged person once, as they are now", func(t *testing.T) {
		for id, want := range map[int64]int{anon: 1, both: 1} {
			st, out := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/cohorts/%d/persons/", p.id, id), p.key, nil)
			results, _ := out["results"].([]any)
			if st != 200 || len(results) != want || out["count"] != float64(want) {
				t.Fatalf("cohort %d: %d %v", id, st, out)
			}
			if ids := fmt.Sprint(results[0].(map[string]any)["distinct_ids"]); ids != "[user-m anon-m]" && ids != "[anon-m user-m]" {
				t.Fatalf("cohort %d lists %v", id, results[0])
			}
		}
	})
	for name, id := range map[string]int64{"the anonymous id": anon, "the known id": known} {
		t.Run("a cohort listing "+name+" counts the merged person at once", func(t *testing.T) {
			if got := p.pageviews(t, map[string]any{"properties": cohortCond(id, false)}); got != 3 {
				t.Fatalf("%v, want 3", got)
			}
			if got := p.pageviews(t, map[string]any{"properties": cohortCond(id, true)}); got != 1 {
				t.Fatalf("negated: %v, want 1 (other)", got)
			}
		})
	}
	if st, _ := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/cohorts/%d/calculate/", p.id, anon), p.key, nil); st != http.StatusAccepted {
		t.Fatalf("calculate: %d", st)
	}
	co := p.waitCohort(t, anon, 2)
	if co["count"] != float64(1) {
		t.Fatalf("count after recalculating: %v", co["count"])
	}
	if got := p.pageviews(t, map[string]any{"properties": cohortCond(anon, false)}); got != 3 {
		t.Fatalf("after recalculating: %v, want 3", got)
	}
}

// TestCohortFirstCalculationRetried: a cohort whose first calculation
// fails is tried again by the schedule after a backoff, and a behavioural
// cohort never computed is due on the schedule.
func TestCohortFirstCalculationRetried(t *testing.T) {
	env := newFunnelEnv(t)
	now := time.Now().UTC()
	p := env.project(t, cohortEvents(now))
	ctx := context.Background()
	proj, err := env.s.store.ProjectByID(ctx, p.id)
	if err != nil {
		t.Fatal(err)
	}
	st, me := call(t, env.h, "GET", "/api/users/@me/", p.key, nil)
	if st != 200 {
		t.Fatalf("me: %d %v", st, me)
	}
	user := int64(me["id"].(float64))
	// Stored straight, as a cohort created before a restart: a static
	// cohort not calculated yet, and a cohort naming it, whose
	// calculation fails while the static one has no members.
	inner, err := env.s.store.CreateCohort(ctx, proj, user, cohortInput(t, map[string]any{"name": "Listed", "is_static": true}), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	outer, err := env.s.store.CreateCohort(ctx, proj, user, cohortInput(t, map[string]any{"name": "Listed and pro",
		"filters": map[string]any{"properties": []any{map[string]any{"key": "id", "value": inner.ID, "type": "cohort"},
			map[string]any{"key": "plan", "value": "pro", "type": "person"}}}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.s.cohorts.Calculate(ctx, p.id, outer.ID); err == nil {
		t.Fatal("the first calculation should fail: the cohort it names is not calculated")
	}
	co, _ := env.s.store.GetCohort(ctx, p.id, outer.ID)
	if co.Version != 0 || co.ErrorsCalculating != 1 || co.IsCalculating || !co.LastError.Valid {
		t.Fatalf("after the failure: %+v", co)
	}
	if err := env.s.cohorts.Calculate(ctx, p.id, inner.ID); err != nil {
		t.Fatal(err)
	}
	// Within the backoff (a minute after one failure) nothing is due.
	env.s.cohorts.Tick(ctx, time.Now().Add(30*time.Second))
	if co, _ = env.s.store.GetCohort(ctx, p.id, outer.ID); co.Version != 0 {
		t.Fatalf("retried within the backoff: %+v", co)
	}
	env.s.cohorts.Tick(ctx, time.Now().Add(2*time.Minute))
	if co, _ = env.s.store.GetCohort(ctx, p.id, outer.ID); co.Version != 1 || co.Count.Int64 != 2 || co.ErrorsCalculating != 0 {
		t.Fatalf("after the retry: version %d count %v errors %d", co.Version, co.Count, co.ErrorsCalculating)
	}

	t.Run("every dynamic cohort is recalculated on the schedule, a static one is not", func(t *testing.T) {
		// outer names a cohort and a person property: neither is behaviour,
		// yet what it names changes (it was computed once, then never).
		env.s.cohorts.Tick(ctx, time.Now().Add(20*time.Minute))
		if co, _ := env.s.store.GetCohort(ctx, p.id, outer.ID); co.Version != 2 {
			t.Fatalf("outer: version %d", co.Version)
		}
		if co, _ := env.s.store.GetCohort(ctx, p.id, inner.ID); co.Version != 1 {
			t.Fatalf("the static cohort: version %d", co.Version)
		}
	})
	t.Run("a static cohort's failed recalculation is retried after the backoff", func(t *testing.T) {
		co, err := env.s.store.RequestCohortCalculation(ctx, p.id, inner.ID)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Now()
		if err := env.s.store.CohortCalculationFailed(ctx, inner.ID, co.PendingVersion, "engine gone", at); err != nil {
			t.Fatal(err)
		}
		env.s.cohorts.Tick(ctx, at.Add(2*time.Minute))
		if co, _ := env.s.store.GetCohort(ctx, p.id, inner.ID); co.Version != 2 || co.ErrorsCalculating != 0 {
			t.Fatalf("not retried: version %d errors %d", co.Version, co.ErrorsCalculating)
		}
	})
	t.Run("a behavioural cohort never calculated is due on the schedule", func(t *testing.T) {
		b, err := env.s.store.CreateCohort(ctx, proj, user, cohortInput(t, map[string]any{"name": "Buyers",
			"filters": map[string]any{"properties": []any{map[string]any{"type": "behavioral", "key": "purchase",
				"value": "performed_event", "time_value": 7, "time_interval": "day"}}}}), nil)
		if err != nil {
			t.Fatal(err)
		}
		// As after a failed first calculation long ago.
		if err := env.s.store.CohortCalculationFailed(ctx, b.ID, 1, "engine gone", now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		env.s.cohorts.Tick(ctx, now.Add(20*time.Minute))
		if co, _ := env.s.store.GetCohort(ctx, p.id, b.ID); co.Version != 1 || co.Count.Int64 != 3 {
			t.Fatalf("not recalculated: %+v", co)
		}
	})
}

func cohortInput(t *testing.T, body map[string]any) metadata.CohortInput {
	t.Helper()
	raw := map[string]json.RawMessage{}
	for k, v := range body {
		raw[k] = mustJSON(t, v)
	}
	in, err := metadata.ParseCohortInput(raw)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
