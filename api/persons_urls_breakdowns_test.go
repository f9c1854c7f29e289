package api

// People URLs of multiple breakdowns and histogram bins followed by
// identity: each series' point lists the persons whose events that day
// carry the series' values (or fall in its bin).

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// breakdownEvents are A events of 30 persons over 1 to 5 March with a
// browser, an os (either may be missing) and an amount from 1 to 10.
func breakdownEvents(seed int64) []reference.Event {
	r := rand.New(rand.NewSource(seed))
	var out []reference.Event
	for i := range 30 {
		for range 1 + r.Intn(5) {
			props := map[string]any{"amount": 1 + r.Intn(10)}
			if v := []string{"Chrome", "Safari", ""}[r.Intn(3)]; v != "" {
				props["browser"] = v
			}
			if v := []string{"Mac", "Windows", ""}[r.Intn(3)]; v != "" {
				props["os"] = v
			}
			at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Intn(5*24*4)) * 15 * time.Minute)
			out = append(out, reference.Event{UUID: uuid.Must(uuid.NewRandomFromReader(r)).String(), DistinctID: fmt.Sprintf("b%d-%d", seed, i),
				Event: "A", At: at, Props: props})
		}
	}
	return out
}

func TestBreakdownPeopleURLsByIdentity(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := breakdownEvents(3)
	p := env.project(t, events)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	// who are the persons with an event on day k (0-based from 1 March)
	// that keep says yes to.
	who := func(k int, keep func(reference.Event) bool) map[string]bool {
		roots := map[string]bool{}
		for _, e := range events {
			if !e.At.Before(day(1+k)) && e.At.Before(day(2+k)) && keep(e) {
				roots[e.DistinctID] = true
			}
		}
		return roots
	}
	type series struct {
		Data           []float64           `json:"data"`
		BreakdownValue json.RawMessage     `json:"breakdown_value"`
		PersonsURLs    []map[string]string `json:"persons_urls"`
	}
	base := map[string]any{"events": []any{map[string]any{"id": "A", "math": "dau"}}, "date_from": "2026-03-01", "date_to": "2026-03-05"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	t.Run("browser and os: each pair's points", func(t *testing.T) {
		var result []series
		p.result(t, "trend", with(map[string]any{"breakdowns": []any{map[string]any{"property": "browser"}, map[string]any{"property": "os"}},
			"breakdown_limit": 25}), &result)
		checked := 0
		for _, s := range result {
			var pair []string
			if err := json.Unmarshal(s.BreakdownValue, &pair); err != nil || len(pair) != 2 {
				t.Fatalf("breakdown value %s", s.BreakdownValue)
			}
			for k, u := range s.PersonsURLs {
				roots := who(k, func(e reference.Event) bool {
					b, o := reference.String(e.Props["browser"]), reference.String(e.Props["os"])
					if b == "" {
						b = reference.Null
					}
					if o == "" {
						o = reference.Null
					}
					return b == pair[0] && o == pair[1]
				})
				got, count := p.follow(t, u["url"])
				samePeople(t, fmt.Sprintf("%v day %d", pair, k), got, count, int(s.Data[k]), personKeys(events, roots))
				checked += len(got)
			}
		}
		if len(result) < 5 || checked == 0 {
			t.Fatalf("%d series, %d people checked", len(result), checked)
		}
	})

	t.Run("amount in 3 bins: each bin's points", func(t *testing.T) {
		var result []series
		p.result(t, "trend", with(map[string]any{"breakdown": "amount", "breakdown_histogram_bin_count": 3}), &result)
		bins := make([][2]float64, len(result))
		bottom := 1e9
		for i, s := range result {
			var text string
			if err := json.Unmarshal(s.BreakdownValue, &text); err != nil || json.Unmarshal([]byte(text), &bins[i]) != nil {
				t.Fatalf("breakdown value %s", s.BreakdownValue)
			}
			bottom = min(bottom, bins[i][0])
		}
		checked := 0
		for i, s := range result {
			bin := bins[i]
			for k, u := range s.PersonsURLs {
				roots := who(k, func(e reference.Event) bool {
					x := float64(e.Props["amount"].(int))
					// A bin holds (lo, hi], the lowest one its lo too.
					return x <= bin[1] && (x > bin[0] || bin[0] == bottom)
				})
				got, count := p.follow(t, u["url"])
				samePeople(t, fmt.Sprintf("bin %v day %d", bin, k), got, count, int(s.Data[k]), personKeys(events, roots))
				checked += len(got)
			}
		}
		if len(result) != 3 || checked == 0 {
			t.Fatalf("%d bins, %d people checked", len(result), checked)
		}
	})
	t.Run("a funnel by browser and os: each pair's steps", func(t *testing.T) {
		f := analysistest.FunnelOf("ordered", "A", "A").Hours(96)
		f.DateFrom, f.DateTo = "2026-03-01", "2026-03-05"
		var lists [][]analysistest.APIStep
		p.result(t, "funnel", f.Filter(map[string]any{"breakdowns": []any{map[string]any{"property": "browser"}, map[string]any{"property": "os"}},
			"breakdown_limit": 25}), &lists)
		// The value is the step-1 event's (first touch).
		byValue := map[string][]*reference.Person{}
		for _, rp := range f.Persons(events) {
			first := rp.Events[rp.Path[0]]
			pair := []string{reference.String(first.Props["browser"]), reference.String(first.Props["os"])}
			for i := range pair {
				if pair[i] == "" {
					pair[i] = reference.Null
				}
			}
			byValue[fmt.Sprint(pair)] = append(byValue[fmt.Sprint(pair)], rp)
		}
		checked := 0
		for _, steps := range lists {
			value := fmt.Sprint(steps[0].BreakdownValue)
			for i, st := range steps {
				roots := map[string]bool{}
				for _, rp := range byValue[value] {
					if rp.Level() >= i+1 {
						roots[rp.ID] = true
					}
				}
				got, count := p.follow(t, st.ConvertedURL.(string))
				samePeople(t, fmt.Sprintf("%s step %d", value, i+1), got, count, int(*st.Count), personKeys(events, roots))
				checked += len(got)
			}
		}
		if len(lists) != len(byValue) || checked == 0 {
			t.Fatalf("%d values shown, %d in the reference, %d people checked", len(lists), len(byValue), checked)
		}
	})
}
