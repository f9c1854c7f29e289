package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

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
	var events []reference.Event
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
