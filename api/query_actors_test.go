package api

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// actorsRows posts an ActorsQuery and returns its columns and rows, and
// whether it says it has more.
func (p *funnelProject) actorsRows(t *testing.T, query map[string]any) ([]string, [][]any, bool) {
	t.Helper()
	st, out := call(t, p.env.h, "POST", fmt.Sprintf("/api/projects/%d/query/", p.id), p.key, map[string]any{"query": query})
	if st != 200 {
		t.Fatalf("ActorsQuery %s: %d %v", mustJSON(t, query), st, out)
	}
	var cols []string
	for _, c := range out["columns"].([]any) {
		cols = append(cols, c.(string))
	}
	var rows [][]any
	for _, r := range out["results"].([]any) {
		rows = append(rows, r.([]any))
	}
	return cols, rows, out["hasMore"] == true
}

// actorsPeople is every page of an ActorsQuery's actors (column 0), each
// as its sorted distinct ids joined, sorted: as follow lists a people
// URL's.
func (p *funnelProject) actorsPeople(t *testing.T, query map[string]any) []string {
	t.Helper()
	var people []string
	for offset := 0; ; offset += 100 {
		query["offset"] = offset
		_, rows, more := p.actorsRows(t, query)
		for _, r := range rows {
			var ids []string
			for _, id := range r[0].(map[string]any)["distinct_ids"].([]any) {
				ids = append(ids, id.(string))
			}
			slices.Sort(ids)
			people = append(people, strings.Join(ids, ","))
		}
		if !more {
			break
		}
	}
	slices.Sort(people)
	return people
}

func actorsOf(source map[string]any, extra map[string]any) map[string]any {
	q := map[string]any{"kind": "ActorsQuery", "source": source, "select": []any{"actor"}}
	for k, v := range extra {
		q[k] = v
	}
	return q
}

// TestActorsQueriesListThePeopleOfThePersonsURLs asks each kind's
// ActorsQuery for every number a legacy answer shows and compares the
// actors with those its people URL lists (which the persons tests hold
// against the reference).
func TestActorsQueriesListThePeopleOfThePersonsURLs(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.PeriodEvents(7)
	p := env.project(t, events)
	analysistest.SetCalendar(t, p, "Europe/Paris", 1)
	dates := map[string]any{"date_from": "2026-03-01", "date_to": "2026-03-06"}
	checked := 0
	same := func(what, link string, query map[string]any) {
		t.Helper()
		want, _ := p.follow(t, link)
		if got := p.actorsPeople(t, query); strings.Join(got, ";") != strings.Join(want, ";") {
			t.Fatalf("%s: ActorsQuery lists %v, the people URL %v", what, got, want)
		}
		checked += len(want)
	}

	t.Run("trends by day, breakdown and compare", func(t *testing.T) {
		trend := map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "A", "math": "dau"}},
			"breakdownFilter": map[string]any{"breakdown": "browser", "breakdown_limit": 2}, "dateRange": dates,
			"compareFilter": map[string]any{"compare": true}}
		var series []struct {
			Days           []string            `json:"days"`
			BreakdownValue any                 `json:"breakdown_value"`
			Compare        string              `json:"compare_label"`
			PersonsURLs    []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "A", "math": "dau"}}, "breakdown": "browser",
			"breakdown_limit": 2, "date_from": "2026-03-01", "date_to": "2026-03-06", "compare": true}, &series)
		for _, s := range series {
			for k, u := range s.PersonsURLs {
				src := map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": s.Days[k], "series": 0,
					"breakdown": s.BreakdownValue, "compare": s.Compare}
				same(fmt.Sprintf("%v %s %s", s.BreakdownValue, s.Compare, s.Days[k]), u["url"], actorsOf(src, nil))
			}
		}
	})

	t.Run("lifecycle statuses", func(t *testing.T) {
		node := map[string]any{"kind": "LifecycleQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "A"}}, "dateRange": dates}
		var series []struct {
			Days        []string            `json:"days"`
			Status      string              `json:"status"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", map[string]any{"insight": "LIFECYCLE", "events": []any{map[string]any{"id": "A"}},
			"date_from": "2026-03-01", "date_to": "2026-03-06"}, &series)
		for _, s := range series {
			for k, u := range s.PersonsURLs {
				src := map[string]any{"kind": "InsightActorsQuery", "source": node, "day": s.Days[k], "status": s.Status}
				same(s.Status+" "+s.Days[k], u["url"], actorsOf(src, nil))
			}
		}
	})

	t.Run("stickiness days", func(t *testing.T) {
		node := map[string]any{"kind": "StickinessQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "A"}}, "dateRange": dates}
		var series []struct {
			Days        []int               `json:"days"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", map[string]any{"insight": "STICKINESS", "events": []any{map[string]any{"id": "A"}},
			"date_from": "2026-03-01", "date_to": "2026-03-06"}, &series)
		for _, s := range series {
			for k, u := range s.PersonsURLs {
				src := map[string]any{"kind": "InsightActorsQuery", "source": node, "day": s.Days[k], "series": 0}
				same(fmt.Sprint("day ", s.Days[k]), u["url"], actorsOf(src, nil))
			}
		}
	})

	t.Run("retention rows with their appearances", func(t *testing.T) {
		node := map[string]any{"kind": "RetentionQuery", "dateRange": map[string]any{"date_to": "2026-03-08"},
			"retentionFilter": map[string]any{"period": "Day", "totalIntervals": 5,
				"targetEntity": map[string]any{"id": "A", "type": "events"}, "returningEntity": map[string]any{"id": "B", "type": "events"}}}
		var rows []struct {
			People string `json:"people_url"`
		}
		p.result(t, "retention", map[string]any{"target_entity": map[string]any{"id": "A", "type": "events"},
			"returning_entity": map[string]any{"id": "B", "type": "events"}, "period": "Day", "total_intervals": 5, "date_to": "2026-03-08"}, &rows)
		for k, r := range rows {
			src := map[string]any{"kind": "InsightActorsQuery", "source": node, "interval": k}
			same(fmt.Sprint("row ", k), r.People, actorsOf(src, nil))
			want, _ := p.followAppearances(t, r.People)
			_, got, _ := p.actorsRows(t, actorsOf(src, map[string]any{"select": []any{"person", "day_0", "day_1", "day_2"}}))
			for _, row := range got {
				var ids []string
				for _, id := range row[0].(map[string]any)["distinct_ids"].([]any) {
					ids = append(ids, id.(string))
				}
				slices.Sort(ids)
				w := want[strings.Join(ids, ",")]
				for i := 0; i < 3 && i < len(w); i++ {
					if int(row[1+i].(float64)) != w[i] {
						t.Fatalf("row %d %v: day_%d %v, the people URL's appearances %v", k, ids, i, row[1+i], w)
					}
				}
			}
		}
	})

	t.Run("funnel steps and drop-offs", func(t *testing.T) {
		node := map[string]any{"kind": "FunnelsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "A"},
			map[string]any{"kind": "EventsNode", "event": "B"}}, "dateRange": dates,
			"funnelsFilter": map[string]any{"funnelWindowInterval": 2, "funnelWindowIntervalUnit": "day"}}
		var steps []analysistest.APIStep
		p.result(t, "funnel", map[string]any{"insight": "FUNNELS", "events": []any{map[string]any{"id": "A", "order": 0}, map[string]any{"id": "B", "order": 1}},
			"date_from": "2026-03-01", "date_to": "2026-03-06", "funnel_window_interval": 2, "funnel_window_interval_unit": "day"}, &steps)
		for i, st := range steps {
			src := map[string]any{"kind": "FunnelsActorsQuery", "source": node, "funnelStep": i + 1}
			same(fmt.Sprint("step ", i+1), st.ConvertedURL.(string), actorsOf(src, nil))
			if i > 0 {
				src := map[string]any{"kind": "FunnelsActorsQuery", "source": node, "funnelStep": -(i + 1)}
				same(fmt.Sprint("dropped before ", i+1), st.DroppedURL.(string), actorsOf(src, nil))
			}
		}
	})
	if checked == 0 {
		t.Fatal("no one to check")
	}
}

// TestActorsQueryEventCountsPagesAndOrder holds a trend's event_count
// against the events counted by hand, and pages ordered by it against
// the whole list.
func TestActorsQueryEventCountsPagesAndOrder(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.PeriodEvents(8)
	p := env.project(t, events)
	trend := map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "A"}},
		"dateRange": map[string]any{"date_from": "2026-02-20", "date_to": "2026-03-12"}, "trendsFilter": map[string]any{"display": "ActionsTable"}}
	src := map[string]any{"kind": "InsightActorsQuery", "source": trend}
	byPerson := reference.EventsByPerson(events)
	from, to := time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC)
	want := map[string]int64{} // a person's distinct ids -> their A events
	for _, evs := range byPerson {
		var n int64
		ids := map[string]bool{}
		for _, e := range evs {
			ids[e.DistinctID] = true
			if e.Event == "A" && !e.At.Before(from) && e.At.Before(to) {
				n++
			}
		}
		if n > 0 {
			want[sortedKeys(ids)] = n
		}
	}
	query := actorsOf(src, map[string]any{"select": []any{"actor", "event_count", "id", "created_at"},
		"orderBy": []any{"event_count DESC", "actor_id DESC"}, "limit": 100})
	cols, all, more := p.actorsRows(t, query)
	if strings.Join(cols, ",") != "actor,event_count,id,created_at" || more || len(all) != len(want) {
		t.Fatalf("columns %v, %d rows (more %v), want %d actors", cols, len(all), more, len(want))
	}
	var last float64 = -1
	lastID := ""
	for _, r := range all {
		a := r[0].(map[string]any)
		var ids []string
		for _, id := range a["distinct_ids"].([]any) {
			ids = append(ids, id.(string))
		}
		slices.Sort(ids)
		key := strings.Join(ids, ",")
		n := r[1].(float64)
		if int64(n) != want[key] || r[2] != a["id"] || r[3] != a["created_at"] {
			t.Fatalf("%s: event_count %v id %v created_at %v, want %d, %v, %v", key, n, r[2], r[3], want[key], a["id"], a["created_at"])
		}
		if last >= 0 && (n > last || n == last && r[2].(string) > lastID) {
			t.Fatalf("not in event_count DESC, actor_id DESC order at %s", key)
		}
		last, lastID = n, r[2].(string)
	}
	var paged [][]any
	for offset := 0; ; offset += 4 {
		query["limit"], query["offset"] = 4, offset
		_, rows, more := p.actorsRows(t, query)
		paged = append(paged, rows...)
		if !more {
			break
		}
	}
	if fmt.Sprint(paged) != fmt.Sprint(all) {
		t.Fatal("pages of 4 differ from the whole list")
	}
}

func sortedKeys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// TestActorsQueryRefusesWhatItCannotAnswer: each bad field is a 400
// naming it; hostile strings are data.
func TestActorsQueryRefusesWhatItCannotAnswer(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, analysistest.PeriodEvents(9))
	trend := map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "A"}},
		"dateRange": map[string]any{"date_from": "2026-03-01", "date_to": "2026-03-06"}}
	retention := map[string]any{"kind": "RetentionQuery", "retentionFilter": map[string]any{"targetEntity": map[string]any{"id": "A", "type": "events"}}}
	for name, tc := range map[string]struct {
		query map[string]any
		attr  string
	}{
		"no source":                {map[string]any{"kind": "ActorsQuery"}, "query.source"},
		"unknown source":           {map[string]any{"kind": "ActorsQuery", "source": map[string]any{"kind": "EventsQuery"}}, "query.source.kind"},
		"unknown column":           {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "2026-03-02"}, map[string]any{"select": []any{"properties.email"}}), "query.select[0]"},
		"event_count of retention": {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": retention, "interval": 0}, map[string]any{"select": []any{"actor", "event_count"}}), "query.select[1]"},
		"unknown order":            {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "2026-03-02"}, map[string]any{"orderBy": []any{"person.properties.email; DROP"}}), "query.orderBy[0]"},
		"a day not in range":       {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "2027-01-01"}, nil), "query.source.day"},
		"a hostile day":            {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "'); DROP TABLE events --"}, nil), "query.source.day"},
		"a series too far":         {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "2026-03-02", "series": 3}, nil), "query.source.series"},
		"bad compare":              {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "2026-03-02", "compare": "both"}, nil), "query.source.compare"},
		"a funnel without step": {actorsOf(map[string]any{"kind": "FunnelsActorsQuery", "source": map[string]any{"kind": "FunnelsQuery",
			"series": []any{map[string]any{"kind": "EventsNode", "event": "A"}, map[string]any{"kind": "EventsNode", "event": "B"}}}}, nil), "query.source.funnelStep"},
		"a search":         {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "2026-03-02"}, map[string]any{"search": "x"}), "query.search"},
		"a negative limit": {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "2026-03-02"}, map[string]any{"limit": -1}), "query.limit"},
		"an unknown field": {actorsOf(map[string]any{"kind": "InsightActorsQuery", "source": trend, "day": "2026-03-02", "nope": 1}, nil), "query.source.nope"},
	} {
		t.Run(name, func(t *testing.T) {
			st, out := call(t, p.env.h, "POST", fmt.Sprintf("/api/projects/%d/query/", p.id), p.key, map[string]any{"query": tc.query})
			if st != 400 || out["attr"] != tc.attr || out["detail"] == nil {
				t.Fatalf("want 400 naming %s, got %d %v", tc.attr, st, out)
			}
		})
	}
	t.Run("a hostile breakdown value is data", func(t *testing.T) {
		src := map[string]any{"kind": "InsightActorsQuery", "day": "2026-03-02", "breakdown": "'); DROP TABLE events --",
			"source": map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "A"}},
				"dateRange": map[string]any{"date_from": "2026-03-01", "date_to": "2026-03-06"}, "breakdownFilter": map[string]any{"breakdown": "browser"}}}
		if _, rows, _ := p.actorsRows(t, actorsOf(src, nil)); len(rows) != 0 {
			t.Fatalf("a value no event has lists %d actors", len(rows))
		}
	})
}
