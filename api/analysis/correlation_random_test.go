package analysis_test

// Funnel correlation on random events (each type, the three order types,
// exclusions, merged persons, groups, and the funnel by groups) against
// the reference (querybuilder/reference/correlation.go).

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestCorrelationMatchesTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	nonEmpty, requests, byGroups := 0, 0, 0
	for seed := int64(1); seed <= 4; seed++ {
		events := analysistest.CorrelationEvents(seed)
		p := env.project(t, events)
		r := rand.New(rand.NewSource(seed * 7))
		for i := range 18 {
			f := reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "B"}, {Event: "C"}}, DateFrom: "2026-05-04", DateTo: "2026-05-06",
				Order: []string{"ordered", "strict", "unordered"}[(i/3)%3], WindowInterval: 1 + r.Intn(24), WindowUnit: "hour"}
			if r.Intn(4) == 0 {
				f.Exclusions = []reference.Exclusion{{Event: "Z", From: 0, To: 1}}
			}
			// The type is i%3 and the order (i/3)%3: each seed runs every
			// type with every order type twice, the second time (events
			// and event properties) by groups of type 1.
			if i >= 9 && i%3 != 1 {
				f.GroupIndex = 1
			}
			c := reference.Correlation{Funnel: f}
			switch i % 3 {
			case 0:
				if r.Intn(2) == 0 {
					c.ExcludeEvents = []string{"Y"}
				}
			case 1:
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
				if f.GroupIndex > 0 && i%3 == 0 {
					// The funnel by groups, whose actors the correlation
					// splits, follows the same rule.
					analysistest.CheckSteps(t, p, events, f, nil, nil)
				}
				if got := analysistest.CheckCorrelation(t, p, events, c); len(got.Events) > 0 {
					nonEmpty++
					if f.GroupIndex > 0 {
						byGroups++
					}
				}
			})
		}
	}
	if nonEmpty*2 < requests || byGroups < 8 {
		t.Fatalf("only %d of %d requests had items, %d by groups: the random requests test little", nonEmpty, requests, byGroups)
	}
}
