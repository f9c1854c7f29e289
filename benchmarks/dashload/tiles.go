package main

import (
	"bytes"
	"io"
)

// tile is one insight of the dashboard.
type tile struct {
	name    string
	filters map[string]any
}

// dashboardTiles are the 12 tiles over the range: trends with
// breakdowns, funnels and retention, three of them repeated (9 distinct
// computations), as dashboards repeat an insight with another color or
// layout.
func dashboardTiles(from, to string) []tile {
	pv := []any{map[string]any{"id": "$pageview", "type": "events"}}
	trend := func(extra map[string]any) map[string]any {
		f := map[string]any{"insight": "TRENDS", "events": pv, "date_from": from, "date_to": to, "interval": "day"}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	funnel := func(extra map[string]any) map[string]any {
		var steps []any
		for i, e := range []string{"$pageview", "signup", "purchase"} {
			steps = append(steps, map[string]any{"id": e, "type": "events", "order": i})
		}
		f := map[string]any{"insight": "FUNNELS", "events": steps, "date_from": from, "date_to": to,
			"funnel_window_interval": 14, "funnel_window_interval_unit": "day"}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	retention := map[string]any{"insight": "RETENTION", "target_entity": pv[0], "returning_entity": pv[0],
		"total_intervals": 11, "date_to": to}
	ts := []tile{
		{"pageviews", trend(nil)},
		{"daily active users", trend(map[string]any{"events": []any{map[string]any{"id": "$pageview", "type": "events", "math": "dau"}}})},
		{"pageviews by $browser", trend(map[string]any{"breakdown": "$browser"})},
		{"pageviews by $os", trend(map[string]any{"breakdown": "$os"})},
		{"users by $browser", trend(map[string]any{"breakdown": "$browser",
			"events": []any{map[string]any{"id": "$pageview", "type": "events", "math": "dau"}}})},
		{"signup funnel", funnel(nil)},
		{"signup funnel by $browser", funnel(map[string]any{"breakdown": "$browser", "breakdown_type": "event"})},
		{"signup funnel, strict", funnel(map[string]any{"funnel_order_type": "strict"})},
		{"retention, 11 days", retention},
	}
	// Repeated tiles: the same filters as earlier ones.
	ts = append(ts, tile{"pageviews by $browser (again)", ts[2].filters}, tile{"signup funnel (again)", ts[5].filters},
		tile{"retention (again)", ts[8].filters})
	return ts
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
