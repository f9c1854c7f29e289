package api

// The people behind paths (persons/path/): for every edge answered, the
// people of its start and end keys are those of the paths its value
// counts (computed by the reference), as many as its value unless a person
// took the edge in more than one path; drop-off keys give the people whose
// path ended at a node.

import (
	"fmt"
	"math/rand"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// pathsPeopleURL is the people URL of a paths request and a selection,
// as a client builds it (PostHog's paths answer no URL per edge): the
// request's parameters, JSON text but for strings, and the keys.
func pathsPeopleURL(t *testing.T, p *funnelProject, q reference.Paths, sel map[string]string) string {
	t.Helper()
	v := url.Values{}
	for k, x := range q.Params() {
		if s, ok := x.(string); ok {
			v.Set(k, s)
		} else {
			v.Set(k, string(mustJSON(t, x)))
		}
	}
	for k, x := range sel {
		v.Set(k, x)
	}
	return fmt.Sprintf("/api/projects/%d/persons/path/?%s", p.id, v.Encode())
}

func rootsOf(actors map[string]int) map[string]bool {
	out := map[string]bool{}
	for a := range actors {
		out[a] = true
	}
	return out
}

// checkPathPeople follows the people URL of every edge the request
// answers and of every node's drop-off, and compares them with the
// reference; it returns how many edges had a person taking them twice.
func checkPathPeople(t *testing.T, p *funnelProject, events []reference.Event, q reference.Paths) (edges, repeated int) {
	t.Helper()
	var got []analysistest.APIPathEdge
	p.result(t, "path", q.Params(), &got)
	nodes := map[string]bool{}
	for _, e := range got {
		nodes[e.Source], nodes[e.Target] = true, true
		want := q.EdgeActors(events, e.Source, e.Target)
		paths := 0
		for _, n := range want {
			paths += n
		}
		if int64(paths) != e.Value {
			t.Fatalf("the reference counts %d paths over %s -> %s, the answer %d", paths, e.Source, e.Target, e.Value)
		}
		people, count := p.follow(t, pathsPeopleURL(t, p, q, map[string]string{"path_start_key": e.Source, "path_end_key": e.Target}))
		samePeople(t, fmt.Sprintf("%s -> %s (value %d)", e.Source, e.Target, e.Value), people, count, len(want), personKeys(events, rootsOf(want)))
		if int64(count) != e.Value {
			repeated++ // fewer people than paths: someone took it twice
		}
		edges++
	}
	keys := make([]string, 0, len(nodes))
	for n := range nodes {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	for _, n := range keys {
		want := q.DropoffActors(events, n)
		people, count := p.follow(t, pathsPeopleURL(t, p, q, map[string]string{"path_dropoff_key": n}))
		samePeople(t, "drop-off at "+n, people, count, len(want), personKeys(events, rootsOf(want)))
	}
	return edges, repeated
}

func TestPathPeopleMatchTheReferenceOnRandomEvents(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	edges, repeated := 0, 0
	for seed := int64(11); seed <= 12; seed++ {
		events := analysistest.PathEvents(seed)
		p := env.project(t, events)
		analysistest.SetPathsSettings(t, p)
		r := rand.New(rand.NewSource(seed))
		for i := range 3 {
			q := analysistest.RandomPaths(r, events)
			q.GroupIndex, q.EdgeLimit, q.MinWeight, q.MaxWeight = 0, 0, 0, 0
			if i == 2 {
				f := reference.Funnel{Steps: []reference.Step{{Event: "$pageview"}, {Event: "signup"}}, DateFrom: "2026-03-01", DateTo: "2026-03-05",
					WindowInterval: 6, WindowUnit: "hour"}
				q.Funnel, q.FunnelPaths, q.FunnelStep = &f, "funnel_path_after_step", 1
			}
			t.Run(fmt.Sprintf("seed %d request %d", seed, i), func(t *testing.T) {
				n, rep := checkPathPeople(t, p, events, q)
				edges, repeated = edges+n, repeated+rep
			})
		}
	}
	if edges < 30 {
		t.Fatalf("only %d edges had their people checked", edges)
	}
	t.Logf("%d edges' people checked, %d with a person taking the edge twice", edges, repeated)
}

// By hand: u1 takes A -> B -> C, then after an hour A -> B again; u2
// takes A -> B. The edge 1_A -> 2_B counts three paths and two people.
func TestPathPeopleWorkedByHand(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := []reference.Event{analysistest.Ev("u1", "A", 0), analysistest.Ev("u1", "B", 1), analysistest.Ev("u1", "C", 2), analysistest.Ev("u1", "A", 62), analysistest.Ev("u1", "B", 63),
		analysistest.Ev("u2", "A", 0), analysistest.Ev("u2", "B", 4)}
	p := env.project(t, events)
	q := reference.Paths{From: time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 11, 0, 0, 0, 0, time.UTC)}
	var got []analysistest.APIPathEdge
	p.result(t, "path", q.Params(), &got)
	if want := []analysistest.APIPathEdge{analysistest.Edge("1_A", "2_B", 3, 2), analysistest.Edge("2_B", "3_C", 1, 1)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("edges %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name string
		sel  map[string]string
		want []string
	}{
		{"an edge: each person once, however many paths", map[string]string{"path_start_key": "1_A", "path_end_key": "2_B"}, []string{"u1", "u2"}},
		{"the edge on from B", map[string]string{"path_start_key": "2_B", "path_end_key": "3_C"}, []string{"u1"}},
		{"a start key alone: any edge from it", map[string]string{"path_start_key": "2_B"}, []string{"u1"}},
		{"an end key alone: any edge into it", map[string]string{"path_end_key": "2_B"}, []string{"u1", "u2"}},
		{"drop-off after B at step 2: paths that ended there", map[string]string{"path_dropoff_key": "2_B"}, []string{"u1", "u2"}},
		{"drop-off after C at step 3", map[string]string{"path_dropoff_key": "3_C"}, []string{"u1"}},
		{"no one drops off at a node no path ends at", map[string]string{"path_dropoff_key": "1_A"}, nil},
		{"an item with underscores is one key", map[string]string{"path_dropoff_key": "2_B_2"}, nil},
		{"no key: everyone with a path", map[string]string{}, []string{"u1", "u2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			people, count := p.follow(t, pathsPeopleURL(t, p, q, tc.sel))
			samePeople(t, tc.name, people, count, len(tc.want), tc.want)
		})
	}
	for _, tc := range []struct {
		sel  map[string]string
		attr string
	}{
		{map[string]string{"path_dropoff_key": "2_B", "path_start_key": "1_A"}, "path_dropoff_key"},
		{map[string]string{"path_start_key": "A"}, "path_start_key"},
		{map[string]string{"path_end_key": "0_B"}, "path_end_key"},
		{map[string]string{"path_dropoff_key": "02_B"}, "path_dropoff_key"},
	} {
		st, out := call(t, env.h, "GET", pathsPeopleURL(t, p, q, tc.sel), p.key, nil)
		if st != 400 || out["attr"] != tc.attr {
			t.Errorf("%v: %d %v, want a 400 naming %s", tc.sel, st, out, tc.attr)
		}
	}
}
