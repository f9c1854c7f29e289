package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// Every correlation item's people URLs on random events: the success URL
// lists the persons who converted and have the item, the failure URL those
// who did not, as the reference counts them (events, properties, and
// events with properties, with merged persons; events by groups).
func TestCorrelationItemPeopleOnRandomEvents(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	checked := 0
	for seed := int64(5); seed <= 6; seed++ {
		events := analysistest.CorrelationEvents(seed)
		p := env.project(t, events)
		f := reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "B"}, {Event: "C"}}, DateFrom: "2026-05-04", DateTo: "2026-05-06",
			Order: "ordered", WindowInterval: 12, WindowUnit: "hour"}
		byGroup := f
		byGroup.GroupIndex = 1
		for _, c := range []reference.Correlation{
			{Funnel: f},
			{Funnel: byGroup},
			{Funnel: f, Type: "properties", Names: []string{"tier"}},
			{Funnel: f, Type: "event_with_properties", EventNames: []string{"X", "Y"}, ExcludeEventProperties: []string{"$ip"}},
		} {
			got := analysistest.CheckCorrelation(t, p, events, c)
			want, _ := c.Answer(events)
			for i, item := range got.Events {
				for _, side := range []struct {
					link  string
					shown int64
					roots map[string]bool
				}{{item.SuccessPeopleURL, item.SuccessCount, want[i].Success}, {item.FailurePeopleURL, item.FailureCount, want[i].Failure}} {
					if c.Funnel.GroupIndex > 0 {
						// Groups: listed by key, as the reference names them.
						if ids := p.followIDs(t, side.link); len(ids) != int(side.shown) || sortedKeys(side.roots) != strings.Join(ids, ",") {
							t.Fatalf("seed %d groups %s: shows %d, lists %v, want %s", seed, item.Event.Event, side.shown, ids, sortedKeys(side.roots))
						}
						checked += int(side.shown)
						continue
					}
					people, count := p.follow(t, side.link)
					samePeople(t, fmt.Sprintf("seed %d %s %s", seed, c.Type, item.Event.Event), people, count, int(side.shown), personKeys(events, side.roots))
					checked += len(people)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no one to check")
	}
}
