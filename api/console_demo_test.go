package api

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/insightd/insightd/olap/synth"
)

// consoleDemo is a served demo project with a saved insight of every kind
// the console draws and a dashboard holding some of them.
type consoleDemo struct {
	f         *fixture
	url       string // the server's base URL
	key       string
	project   int64
	insights  map[string]map[string]any // by the names below
	dashboard map[string]any
}

// consoleInsights are the saved insights of the demo, one per chart the
// console draws, as PostHog's legacy filters.
var consoleInsights = []struct {
	name    string
	filters map[string]any
}{
	{"Daily pageviews and signups", map[string]any{"insight": "TRENDS", "date_from": "-14d", "interval": "day",
		"events": []any{map[string]any{"id": "$pageview", "math": "total"}, map[string]any{"id": "signup", "math": "dau"}}}},
	{"Pageviews by browser, compared", map[string]any{"insight": "TRENDS", "date_from": "-7d", "interval": "day",
		"display": "ActionsBar", "compare": true, "breakdown": "$browser", "breakdown_type": "event",
		"events": []any{map[string]any{"id": "$pageview", "math": "total"}}}},
	{"Purchases this month", map[string]any{"insight": "TRENDS", "date_from": "-30d", "display": "BoldNumber",
		"events": []any{map[string]any{"id": "purchase", "math": "total"}}}},
	{"Visit to purchase", map[string]any{"insight": "FUNNELS", "date_from": "-30d", "funnel_window_interval": 14,
		"funnel_window_interval_unit": "day",
		"events": []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "signup", "order": 1},
			map[string]any{"id": "purchase", "order": 2}}}},
	{"Time from signup to purchase", map[string]any{"insight": "FUNNELS", "date_from": "-30d", "funnel_viz_type": "time_to_convert",
		"funnel_window_interval": 14, "funnel_window_interval_unit": "day",
		"events": []any{map[string]any{"id": "signup", "order": 0}, map[string]any{"id": "purchase", "order": 1}}}},
	{"Signup retention", map[string]any{"insight": "RETENTION", "date_from": "-14d", "period": "Day", "total_intervals": 8,
		"retention_type":   "retention_first_time",
		"target_entity":    map[string]any{"id": "signup", "type": "events"},
		"returning_entity": map[string]any{"id": "$pageview", "type": "events"}}},
	{"Page paths", map[string]any{"insight": "PATHS", "date_from": "-30d", "include_event_types": []any{"$pageview"}, "step_limit": 4}},
	{"Pageview lifecycle", map[string]any{"insight": "LIFECYCLE", "date_from": "-14d", "interval": "day", "shown_as": "Lifecycle",
		"events": []any{map[string]any{"id": "$pageview", "type": "events"}}}},
	{"Pageview stickiness", map[string]any{"insight": "STICKINESS", "date_from": "-14d", "interval": "day", "shown_as": "Stickiness",
		"events": []any{map[string]any{"id": "$pageview", "type": "events"}}}},
}

// newConsoleDemo serves a fresh server whose project holds the demo
// product (300 persons over 30 days) and the insights above.
func newConsoleDemo(t *testing.T) *consoleDemo {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	cfg := synth.DemoConfig{Team: f.a.ProjectID, Persons: 300, Days: 30, Seed: 1, End: time.Now().UTC().Truncate(time.Second)}
	st, err := GenerateDemo(ctx, f.s.store, f.s.writer, quietLog(), cfg)
	if err != nil || st.Events < 1000 || st.Purchases == 0 {
		t.Fatalf("demo data: %+v %v", st, err)
	}
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	d := &consoleDemo{f: f, url: srv.URL, key: f.a.PersonalAPIKey, project: f.a.ProjectID, insights: map[string]map[string]any{}}
	d.dashboard = f.newDashboard(t, map[string]any{"name": "Product overview", "description": "The demo's main numbers"})
	for i, in := range consoleInsights {
		body := map[string]any{"name": in.name, "filters": in.filters, "saved": true}
		if i < 4 {
			body["dashboards"] = []any{d.dashboard["id"]}
		}
		d.insights[in.name] = f.newInsight(t, body)
	}
	return d
}
