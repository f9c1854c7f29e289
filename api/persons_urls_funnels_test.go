package api

// People URLs of funnels followed by identity: each entry day of funnel
// trends (converted and dropped), each breakdown value's steps; and the
// persons routes' boundaries: another project's person, another
// organization's people, recent events' property values.

import (
	"fmt"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestFunnelPeopleURLsByIdentity(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.PeriodEvents(8)
	p := env.project(t, events)

	t.Run("each entry day of funnel trends: who converted and who dropped", func(t *testing.T) {
		f := analysistest.FunnelOf("ordered", "A", "B").Hours(48)
		f.DateFrom, f.DateTo = "2026-02-25", "2026-03-08"
		filter := f.Filter(map[string]any{"funnel_viz_type": "trends"})
		var trends []struct {
			Data []float64 `json:"data"`
			Days []string  `json:"days"`
		}
		p.result(t, "funnel", filter, &trends)
		q := url.Values{}
		for k, v := range filter {
			q.Set(k, string(mustJSON(t, v)))
		}
		base := fmt.Sprintf("/api/projects/%d/persons/funnel/?%s", p.id, q.Encode())
		people := 0
		for i, d := range trends[0].Days {
			day, err := time.ParseInLocation("2006-01-02", d[:10], f.Location())
			if err != nil {
				t.Fatal(err)
			}
			wantConverted, wantDropped := f.TrendPeople(events, day, day.AddDate(0, 0, 1))
			converted, c1 := p.follow(t, base+"&entrance_period_start="+d)
			dropped, c2 := p.follow(t, base+"&entrance_period_start="+d+"&drop_off=true")
			samePeople(t, d+" converted", converted, c1, len(wantConverted), personKeys(events, wantConverted))
			samePeople(t, d+" dropped", dropped, c2, len(wantDropped), personKeys(events, wantDropped))
			if n := len(converted) + len(dropped); n > 0 && !analysistest.CloseTo(100*float64(len(converted))/float64(n), trends[0].Data[i]) {
				t.Fatalf("%s: rate %v shown for %d of %d", d, trends[0].Data[i], len(converted), n)
			}
			people += len(converted) + len(dropped)
		}
		if people == 0 {
			t.Fatal("no one to check")
		}
	})

	t.Run("each step of each breakdown value", func(t *testing.T) {
		f := analysistest.FunnelOf("ordered", "A", "B", "X").Hours(72)
		f.DateFrom, f.DateTo, f.Breakdown = "2026-02-20", "2026-03-12", "browser"
		var series [][]analysistest.APIStep
		p.result(t, "funnel", f.Filter(nil), &series)
		byValue := map[string][]*reference.Person{}
		for _, rp := range f.Persons(events) {
			byValue[rp.Value] = append(byValue[rp.Value], rp)
		}
		checked := 0
		for _, steps := range series {
			value := fmt.Sprint(steps[0].BreakdownValue)
			if list, ok := steps[0].BreakdownValue.([]any); ok && len(list) == 1 {
				value = fmt.Sprint(list[0])
			}
			if _, ok := byValue[value]; !ok {
				t.Fatalf("breakdown value %q (%v) is not the reference's", value, steps[0].BreakdownValue)
			}
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
		if checked == 0 || len(series) < 2 {
			t.Fatalf("%d values, %d people checked", len(series), checked)
		}
	})
}

func TestPersonsRoutesKeepToTheirProject(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	a := env.project(t, []reference.Event{analysistest.Fev("ada", "A", analysistest.Mar(1, 9))})
	b := env.project(t, []reference.Event{analysistest.Fev("bob", "A", analysistest.Mar(1, 9))})
	_, body := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/?distinct_id=bob", b.id), b.key, nil)
	results, _ := body["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("bob: %v", body)
	}
	bob := results[0].(map[string]any)["uuid"].(string)

	t.Run("another project's person through one's own project is 404", func(t *testing.T) {
		if st, _ := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/%s/", a.id, bob), a.key, nil); st != 404 {
			t.Fatalf("%d", st)
		}
		if st, _ := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/%s/", b.id, bob), b.key, nil); st != 200 {
			t.Fatalf("bob through his own project: %d", st)
		}
	})

	t.Run("another organization's people of a number are 404", func(t *testing.T) {
		q := url.Values{"events": {`[{"id": "A", "math": "dau"}]`}, "date_from": {"2026-03-01"}, "date_to": {"2026-03-02"},
			"series": {"0"}, "bucket": {"2026-03-01"}}
		for _, format := range []string{"json", "csv"} {
			q.Set("format", format)
			path := fmt.Sprintf("/api/projects/%d/persons/trends/?%s", b.id, q.Encode())
			if st, _ := call(t, env.h, "GET", path, a.key, nil); st != 404 {
				t.Fatalf("%s: %d", format, st)
			}
			if format == "json" {
				if st, body := call(t, env.h, "GET", path, b.key, nil); st != 200 || fmt.Sprint(body["results"]) == "[]" {
					t.Fatalf("own project: %d %v", st, body)
				}
			}
		}
	})

	t.Run("events/values lists the values of the last week's events", func(t *testing.T) {
		now := time.Now().UTC()
		var recent []reference.Event
		for i, c := range []string{"red", "blue", "red", "green", "red", "blue"} {
			e := analysistest.Fev(fmt.Sprintf("u%d", i), "recent", 0, "color", c)
			e.At = now.Add(-time.Duration(i+1) * time.Hour)
			recent = append(recent, e)
		}
		old := analysistest.Fev("u9", "recent", 0, "color", "mauve")
		old.At = now.AddDate(0, 0, -9)
		other := analysistest.Fev("u8", "elsewhere", 0, "color", "teal")
		other.At = now.Add(-time.Hour)
		p := env.project(t, append(recent, old, other))
		st, values := callList(t, env, p, fmt.Sprintf("/api/projects/%d/events/values/?key=color&event=recent", p.id))
		if st != 200 || fmt.Sprint(values) != "[map[count:3 name:red] map[count:2 name:blue] map[count:1 name:green]]" {
			t.Fatalf("%d %v", st, values)
		}
		st, values = callList(t, env, p, fmt.Sprintf("/api/projects/%d/events/values/?key=color", p.id))
		var names []string
		for _, v := range values {
			names = append(names, v.(map[string]any)["name"].(string))
		}
		sort.Strings(names)
		if st != 200 || fmt.Sprint(names) != "[blue green red teal]" {
			t.Fatalf("any event: %d %v", st, values)
		}
	})
}
