package api

// Funnel correlation on random events (each type, the three order types,
// exclusions, merged persons, groups) against the reference
// (correlation_reference_test.go), and cases worked by hand.

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

var corrT0 = time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)

// correlationEvents are seeded random events of 60 persons over 3 days:
// the steps A, B, C, other events, event and person properties, merges
// and group keys.
func correlationEvents(seed int64) []refEvent {
	r := rand.New(rand.NewSource(seed))
	id := func() string { return uuid.Must(uuid.NewRandomFromReader(r)).String() }
	var out []refEvent
	for i := range 60 {
		user := fmt.Sprintf("c%d-user-%d", seed, i)
		anon := ""
		if r.Intn(4) == 0 {
			anon = user + "-anon"
		}
		at := corrT0.Add(time.Duration(r.Intn(48*60)) * time.Minute)
		n := 2 + r.Intn(10)
		for k := range n {
			who := user
			if anon != "" && k < n/2 {
				who = anon
			}
			if anon != "" && k == n/2 {
				out = append(out, refEvent{UUID: id(), DistinctID: user, Event: "$identify", At: at, Props: map[string]any{"$anon_distinct_id": anon}})
			}
			props := map[string]any{}
			if r.Intn(2) == 0 {
				props["plan"] = []string{"free", "pro"}[r.Intn(2)]
			}
			if r.Intn(3) == 0 {
				props["n"] = float64(1 + r.Intn(2))
			}
			if r.Intn(3) == 0 {
				props["$group_1"] = fmt.Sprintf("org-%d", r.Intn(5))
			}
			if r.Intn(5) == 0 {
				props["$set"] = map[string]any{"tier": []string{"gold", "silver"}[r.Intn(2)], "age": float64(20 + r.Intn(3))}
			}
			name := []string{"A", "B", "C", "X", "Y", "Z", "A", "B"}[r.Intn(8)]
			out = append(out, refEvent{UUID: id(), DistinctID: who, Event: name, At: at, Props: props})
			if r.Intn(6) != 0 {
				at = at.Add(time.Duration(1+r.Intn(180)) * time.Minute)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out
}

func TestCorrelationMatchesTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	nonEmpty, requests := 0, 0
	for seed := int64(1); seed <= 4; seed++ {
		events := correlationEvents(seed)
		p := env.project(t, events)
		r := rand.New(rand.NewSource(seed * 7))
		for i := range 18 {
			f := refFunnel{Steps: []refStep{{Event: "A"}, {Event: "B"}, {Event: "C"}}, DateFrom: "2026-05-04", DateTo: "2026-05-06",
				Order: []string{"ordered", "strict", "unordered"}[(i/3)%3], WindowInterval: 1 + r.Intn(24), WindowUnit: "hour"}
			if r.Intn(4) == 0 {
				f.Exclusions = []refExclusion{{Event: "Z", From: 0, To: 1}}
			}
			if r.Intn(5) == 0 {
				f.GroupIndex = 1
			}
			// The type is i%3 and the order (i/3)%3: each seed runs every
			// type with every order type twice.
			c := refCorrelation{Funnel: f}
			switch i % 3 {
			case 0:
				if r.Intn(2) == 0 {
					c.ExcludeEvents = []string{"Y"}
				}
			case 1:
				if f.GroupIndex > 0 {
					f.GroupIndex = 0
					c.Funnel = f
				}
				c.Type = "properties"
				c.Names = []string{"tier", "missing"}
				if r.Intn(2) == 0 {
					c.Names, c.AllNames, c.ExcludeNames = nil, true, []string{"age"}
				}
			default:
				// Capture adds $ip, which the reference does not know.
				c.Type, c.EventNames, c.ExcludeEventProperties = "event_with_properties", []string{"X", "Y"}, []string{"$ip"}
				if r.Intn(2) == 0 {
					c.ExcludeEventProperties = append(c.ExcludeEventProperties, "n")
				}
			}
			t.Run(fmt.Sprintf("seed %d request %d %s %s", seed, i, c.Type, f.Order), func(t *testing.T) {
				requests++
				if got := checkCorrelation(t, p, events, c); len(got.Events) > 0 {
					nonEmpty++
				}
			})
		}
	}
	if nonEmpty*2 < requests {
		t.Fatalf("only %d of %d requests had items: the random requests test little", nonEmpty, requests)
	}
}

// corrPerson is one person's events at minutes after corrT0.
func corrPerson(who string, evs ...any) []refEvent {
	var out []refEvent
	for i := 0; i+1 < len(evs); i += 2 {
		out = append(out, refEvent{UUID: uuid.NewString(), DistinctID: who, Event: evs[i].(string),
			At: corrT0.Add(time.Duration(evs[i+1].(int)) * time.Minute), Props: map[string]any{}})
	}
	return out
}

func TestCorrelationWorkedByHand(t *testing.T) {
	env := newFunnelEnv(t)
	funnel := refFunnel{Steps: []refStep{{Event: "A"}, {Event: "C"}}, DateFrom: "2026-05-04", DateTo: "2026-05-04", WindowInterval: 1, WindowUnit: "hour"}
	var events []refEvent
	// Successes: X strictly between the steps; at the very step times X
	// does not count (s1 has it at A's and C's instants only).
	events = append(events, corrPerson("s1", "A", 0, "X", 0, "X", 10, "C", 10)...)
	events = append(events, corrPerson("s2", "A", 0, "X", 5, "C", 10)...)
	events = append(events, corrPerson("s3", "A", 0, "W", 5, "C", 10)...)
	// Failures: the window ends 60 minutes after A, strictly.
	events = append(events, corrPerson("f1", "A", 0, "X", 59, "Y", 60)...)
	events = append(events, corrPerson("f2", "A", 0, "Y", 30)...)
	events = append(events, corrPerson("f3", "A", 0, "W", 1)...)
	p := env.project(t, events)
	got := checkCorrelation(t, p, events, refCorrelation{Funnel: funnel})
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
		got := checkCorrelation(t, q, ev, refCorrelation{Funnel: funnel})
		if len(got.Events) != 0 || !got.Skewed {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("the threshold at its edge", func(t *testing.T) {
		// 100 persons: items need s + f >= 2. Half convert.
		var ev []refEvent
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
		got := checkCorrelation(t, q, ev, refCorrelation{Funnel: funnel})
		if len(got.Events) != 1 || got.Events[0].Event.Event != "TWO" {
			t.Fatalf("%+v", got)
		}
	})
}

func containsDistinctID(out map[string]any, who string) bool {
	b, _ := json.Marshal(out["results"])
	return strings.Contains(string(b), `"`+who+`"`)
}
