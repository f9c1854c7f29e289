package api

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestSessionPropertiesReadWholeSessions: worked examples of session
// conditions and breakdowns, with a session crossing midnight and the
// range's edge, read whole.
func TestSessionPropertiesReadWholeSessions(t *testing.T) {
	env := newFunnelEnv(t)
	pv := func(who, session, url string, d int, hour, minute int) refEvent {
		e := fev(who, "$pageview", mar(d, hour)+time.Duration(minute)*mi, "$session_id", session, "$current_url", url)
		return e
	}
	events := []refEvent{
		// s1 starts on 1 March and ends on 2 March: 30 minutes, entered on /a.
		pv("u1", "s1", "/a", 1, 23, 50), pv("u1", "s1", "/b", 2, 0, 10), pv("u1", "s1", "/c", 2, 0, 20),
		// s2: one event on 2 March, entered and left on /b.
		pv("u2", "s2", "/b", 2, 10, 0),
		// s3: 2 March, 5 minutes, entered on /a.
		pv("u3", "s3", "/a", 2, 12, 0), pv("u3", "s3", "/c", 2, 12, 5),
		// An event without a session.
		fev("u4", "$pageview", mar(2, 13), "$current_url", "/a"),
	}
	p := env.project(t, events)
	trend := func(extra map[string]any) map[string]float64 {
		t.Helper()
		body := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-02", "date_to": "2026-03-02", "display": "ActionsTable"}
		for k, v := range extra {
			body[k] = v
		}
		var series []struct {
			BreakdownValue *string  `json:"breakdown_value"`
			Value          *float64 `json:"aggregated_value"`
		}
		p.result(t, "trend", body, &series)
		out := map[string]float64{}
		for _, s := range series {
			k := ""
			if s.BreakdownValue != nil {
				k = *s.BreakdownValue
			}
			out[k] = *s.Value
		}
		return out
	}
	for name, tc := range map[string]struct {
		extra map[string]any
		want  map[string]float64
	}{
		"by entry URL, the session begun the day before keeps its entry": {map[string]any{"breakdown": "$entry_current_url", "breakdown_type": "session"},
			map[string]float64{"/a": 4, "/b": 1, refNull: 1}},
		"by exit URL": {map[string]any{"breakdown": "$exit_current_url", "breakdown_type": "session"},
			map[string]float64{"/c": 4, "/b": 1, refNull: 1}},
		"by duration in seconds": {map[string]any{"breakdown": "$session_duration", "breakdown_type": "session"},
			map[string]float64{"1800": 2, "300": 2, "0": 1, refNull: 1}},
		"sessions longer than 10 minutes": {map[string]any{"properties": []any{map[string]any{"key": "$session_duration", "value": 600,
			"operator": "gt", "type": "session"}}}, map[string]float64{"": 2}},
		"sessions of at most 2 pageviews": {map[string]any{"properties": []any{map[string]any{"key": "$pageview_count", "value": 2,
			"operator": "lte", "type": "session"}}}, map[string]float64{"": 3}},
		"events without a session have no session properties": {map[string]any{"properties": []any{map[string]any{"key": "$session_duration",
			"operator": "is_not_set", "type": "session"}}}, map[string]float64{"": 1}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := trend(tc.extra); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("a session property that does not exist is a 400", func(t *testing.T) {
		p.wantInvalid(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "breakdown": "$session_colour",
			"breakdown_type": "session"}, "breakdown")
		p.wantInvalid(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}},
			"properties": []any{map[string]any{"key": "x", "value": 1, "type": "session"}}}, "properties")
	})
	t.Run("a funnel of sessions entered on /a", func(t *testing.T) {
		f := funnelOf("ordered", "$pageview", "$pageview").hours(24)
		var steps []apiStep
		p.result(t, "funnel", f.filter(map[string]any{"properties": []any{map[string]any{"key": "$entry_current_url", "value": "/a", "type": "session"}}}), &steps)
		if got := fmt.Sprint(*steps[0].Count, *steps[1].Count); got != "2 2" {
			t.Fatalf("steps %s", got)
		}
	})
}
