package analysis_test

// Paths on random events (ties, merged persons, sessions across midnight,
// gaps of exactly 30 minutes, repeats, pages with and without trailing
// slashes, screens and custom events mixed, cleaning rules and groupings
// that collide), compared with the reference (paths_reference_test.go).

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestPathsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	withEdges, requests := 0, 0
	for seed := int64(1); seed <= 4; seed++ {
		events := analysistest.PathEvents(seed)
		p := env.project(t, events)
		analysistest.SetPathsSettings(t, p)
		r := rand.New(rand.NewSource(seed * 31))
		for i := range 30 {
			q := analysistest.RandomPaths(r, events)
			t.Run(fmt.Sprintf("seed %d request %d", seed, i), func(t *testing.T) {
				requests++
				if analysistest.CheckPaths(t, p, events, q) > 0 {
					withEdges++
				}
			})
		}
	}
	analysistest.NotVacuous(t, withEdges, requests)
}

func TestFunnelPathsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	withEdges, requests := 0, 0
	for seed := int64(5); seed <= 7; seed++ {
		events := analysistest.PathEvents(seed)
		p := env.project(t, events)
		analysistest.SetPathsSettings(t, p)
		r := rand.New(rand.NewSource(seed))
		for i := range 18 {
			f := reference.Funnel{Steps: []reference.Step{{Event: "$pageview"}, {Event: "signup"}, {Event: "buy"}},
				DateFrom: "2026-03-01", DateTo: "2026-03-05", WindowInterval: 1 + r.Intn(48), WindowUnit: "hour",
				Order: []string{"ordered", "strict", "unordered"}[i%3]}
			q := reference.Paths{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC),
				Funnel: &f, StepLimit: []int{0, 3, 6}[r.Intn(3)]}
			switch r.Intn(3) {
			case 0:
				q.FunnelPaths, q.FunnelStep = "funnel_path_after_step", []int{1, 2, 3, -2, -3}[r.Intn(5)]
			case 1:
				q.FunnelPaths, q.FunnelStep = "funnel_path_before_step", []int{1, 2, 3, -2, -3}[r.Intn(5)]
			default:
				q.FunnelPaths, q.FunnelStep = "funnel_path_between_steps", 2+r.Intn(2)
			}
			t.Run(fmt.Sprintf("seed %d %s %s %d", seed, f.Order, q.FunnelPaths, q.FunnelStep), func(t *testing.T) {
				requests++
				if analysistest.CheckPaths(t, p, events, q) > 0 {
					withEdges++
				}
			})
		}
	}
	analysistest.NotVacuous(t, withEdges, requests)
}
