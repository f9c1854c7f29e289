package analysistest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/insightd/insightd/querybuilder/reference"
)

// CheckPaths compares the API's edges with the reference's and returns
// how many there are.
func CheckPaths(t testing.TB, p Project, events []reference.Event, q reference.Paths) int {
	t.Helper()
	var got []APIPathEdge
	Result(t, p, "path", q.Params(), &got)
	want := q.Edges(events)
	same := len(got) == len(want)
	for i := 0; same && i < len(want); i++ {
		g, w := got[i], want[i]
		same = g.Source == w.Source && g.Target == w.Target && g.Value == w.Value && math.Abs(g.Avg-w.Avg) <= 1e-6*math.Max(1, math.Abs(w.Avg))
	}
	if !same {
		var gs, ws []string
		for _, e := range got {
			gs = append(gs, fmt.Sprintf("%s -> %s %d %.3f", e.Source, e.Target, e.Value, e.Avg))
		}
		for _, e := range want {
			ws = append(ws, fmt.Sprintf("%s -> %s %d %.3f", e.Source, e.Target, e.Value, e.Avg))
		}
		t.Fatalf("request %v\n got %d edges:\n  %s\nwant %d:\n  %s", q.Params(), len(got), strings.Join(gs, "\n  "), len(want), strings.Join(ws, "\n  "))
	}
	return len(want)
}

// NotVacuous fails when too few requests had any edge to compare.
func NotVacuous(t testing.TB, withEdges, requests int) {
	t.Helper()
	if withEdges*2 < requests {
		t.Fatalf("only %d of %d requests had edges: the random requests test little", withEdges, requests)
	}
	t.Logf("%d of %d requests had edges", withEdges, requests)
}
