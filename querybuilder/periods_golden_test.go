package querybuilder

import (
	"path/filepath"
	"testing"
)

// buildKind parses with kind and builds with no facts, for golden files.
func buildKind(k *Kind) func(p Params) (Statement, error) {
	return func(p Params) (Statement, error) {
		q, err := k.Parse(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			return Statement{}, err
		}
		return q.Build(Facts{})
	}
}

func TestRetentionGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "retention"), map[string]string{
		"recurring_day":        `{"total_intervals": 11}`,
		"recurring_two_events": `{"target_entity": {"id": "signup"}, "returning_entity": {"id": "$pageview", "properties": [{"key": "$browser", "value": "Chrome"}]}, "period": "Week", "total_intervals": 6, "date_to": "2026-03-01"}`,
		"first_time_week":      `{"retention_type": "retention_first_time", "period": "Week", "total_intervals": 12}`,
		"hour_128_bits":        `{"period": "Hour", "total_intervals": 100, "properties": [{"key": "plan", "value": "pro", "type": "person"}], "filter_test_accounts": true}`,
		"event_breakdown":      `{"breakdown": "$browser", "breakdown_limit": 5}`,
		"first_time_breakdown": `{"retention_type": "retention_first_time", "breakdown": "utm_source"}`,
		"person_breakdown":     `{"breakdown": "plan", "breakdown_type": "person", "period": "Month", "total_intervals": 3}`,
		"groups":               `{"aggregation_group_type_index": 2, "period": "Day", "total_intervals": 4}`,
	}, buildKind(&retentionKind))
}

func TestLifecycleGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "lifecycle"), map[string]string{
		"days_bits": `{"insight": "LIFECYCLE", "events": [{"id": "$pageview"}], "date_from": "-30d"}`,
		"hours":     `{"insight": "LIFECYCLE", "events": [{"id": "$pageview", "properties": [{"key": "plan", "value": "pro", "type": "person"}]}], "date_from": "-4d", "interval": "hour"}`,
		"weeks":     `{"shown_as": "Lifecycle", "events": [{"id": "signup"}], "date_from": "-8w", "interval": "week", "filter_test_accounts": true}`,
		"groups":    `{"insight": "LIFECYCLE", "events": [{"id": "$pageview"}], "aggregation_group_type_index": 1}`,
	}, buildKind(&lifecycleKind))
}

func TestStickinessGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "stickiness"), map[string]string{
		"days":         `{"insight": "STICKINESS", "events": [{"id": "$pageview"}, {"id": "signup", "math": "unique_group", "math_group_type_index": 0}], "date_from": "-30d"}`,
		"compare":      `{"insight": "STICKINESS", "events": [{"id": "$pageview"}], "compare": true, "date_from": "-7d"}`,
		"hours_set":    `{"shown_as": "Stickiness", "events": [{"id": "$pageview"}], "date_from": "-4d", "interval": "hour"}`,
		"person_props": `{"insight": "STICKINESS", "events": [{"id": "$pageview"}], "properties": [{"key": "plan", "value": "pro", "type": "person"}], "aggregation_group_type_index": 3}`,
	}, buildKind(&stickinessKind))
}

// The strings a retention, lifecycle or stickiness request carries reach
// the engine as parameters only: event names, custom names, property keys
// and values of the request and of each entity (returning_entity's too),
// breakdown keys of each type.
func TestPeriodKindsHostileValuesNeverReachTheSQLText(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind *Kind
		body func(s string) string
	}{
		{"retention by an event property", &retentionKind, func(s string) string {
			return `{"target_entity": {"id": ` + s + `, "name": ` + s + `, "custom_name": ` + s + `, "properties": [{"key": ` + s + `, "value": ` + s + `}]},
				"returning_entity": {"id": ` + s + `, "custom_name": ` + s + `, "properties": [{"key": ` + s + `, "value": [` + s + `, ` + s + `], "operator": "is_not"},
				{"key": ` + s + `, "value": ` + s + `, "operator": "icontains", "type": "person"}]},
				"breakdown": ` + s + `, "properties": [{"key": ` + s + `, "value": [` + s + `], "operator": "is_not", "type": "person"}]}`
		}},
		{"first-time retention by a person property", &retentionKind, func(s string) string {
			return `{"retention_type": "retention_first_time", "target_entity": {"id": ` + s + `, "custom_name": ` + s + `},
				"returning_entity": {"id": ` + s + `, "properties": [{"key": ` + s + `, "value": ` + s + `, "operator": "is_not"}]},
				"breakdown": ` + s + `, "breakdown_type": "person", "period": "Hour", "total_intervals": 70,
				"properties": {"type": "OR", "values": [{"key": ` + s + `, "value": ` + s + `, "operator": "not_icontains"}]}}`
		}},
		{"lifecycle", &lifecycleKind, func(s string) string {
			return `{"insight": "LIFECYCLE", "events": [{"id": ` + s + `, "name": ` + s + `, "custom_name": ` + s + `, "properties": [{"key": ` + s + `, "value": ` + s + `}]}],
				"properties": [{"key": ` + s + `, "value": ` + s + `, "operator": "icontains", "type": "person"},
				{"key": ` + s + `, "value": [` + s + `], "operator": "exact", "type": "group", "group_type_index": 1}], "aggregation_group_type_index": 1}`
		}},
		{"stickiness", &stickinessKind, func(s string) string {
			return `{"insight": "STICKINESS", "events": [{"id": ` + s + `, "custom_name": ` + s + `, "properties": [{"key": ` + s + `, "value": ` + s + `, "operator": "not_icontains"}]},
				{"id": ` + s + `, "name": ` + s + `, "math": "unique_group", "math_group_type_index": 2, "properties": [{"key": ` + s + `, "value": [` + s + `], "operator": "is_not", "type": "person"}]}],
				"properties": [{"key": ` + s + `, "value": ` + s + `}], "compare": true}`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkHostile(t, func(t *testing.T, v string) Statement {
				p, err := ParseBody([]byte(tc.body(quoted(t, v))))
				if err != nil {
					t.Fatal(err)
				}
				stmt, err := buildKind(tc.kind)(p)
				if err != nil {
					t.Fatal(err)
				}
				return stmt
			})
		})
	}
}

func TestRegistryNamesAndRoutesAreUnique(t *testing.T) {
	defaults := map[string]int{}
	for i, k := range kinds() {
		if err := k.check(kinds()[:i]); err != nil {
			t.Fatal(err)
		}
		if k.Claims == nil {
			defaults[k.Route]++
		}
	}
	for _, r := range Routes() {
		if defaults[r] != 1 {
			t.Fatalf("route %s has %d default kinds", r, defaults[r])
		}
	}
	for body, want := range map[string]string{
		`{"events": [{"id": "a"}]}`:                                "trends",
		`{"insight": "LIFECYCLE", "events": [{"id": "a"}]}`:        "lifecycle",
		`{"insight": "TRENDS", "shown_as": "Stickiness"}`:          "stickiness",
		`{"insight": "funnels", "events": [{"id": "a"}]}`:          "funnel",
		`{"insight": "RETENTION"}`:                                 "retention",
		`{"insight": "TRENDS", "shown_as": "Lifecycle", "x": "y"}`: "lifecycle",
		// Lifecycle's claim wins over stickiness's, whatever the
		// registry's order.
		`{"insight": "LIFECYCLE", "shown_as": "Stickiness"}`: "lifecycle",
		`{"insight": "STICKINESS", "shown_as": "Lifecycle"}`: "lifecycle",
	} {
		p, _ := ParseBody([]byte(body))
		if k, ok := ForSavedInsight(p); !ok || k.Name != want {
			t.Errorf("%s: %v, want %s", body, k, want)
		}
	}
	if _, ok := ForSavedInsight(Params{"insight": []byte(`"PATHS_UNKNOWN"`)}); ok {
		t.Error("an unknown insight has a kind")
	}
}

func TestSessionGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "sessions"), map[string]string{
		"trend_breakdown_entry_url": `{"events": [{"id": "$pageview"}], "breakdown": "$entry_current_url", "breakdown_type": "session", "date_from": "-7d"}`,
		"trend_duration_filter":     `{"events": [{"id": "$pageview", "math": "dau"}], "properties": [{"key": "$session_duration", "value": 60, "operator": "gt", "type": "session"}], "date_from": "-7d"}`,
	}, buildKind(&trendsKind))
	checkGolden(t, filepath.Join("testdata", "sessions"), map[string]string{
		"funnel_exit_url": `{"events": [{"id": "$pageview"}, {"id": "signup"}], "properties": [{"key": "$exit_current_url", "value": "/thanks", "type": "session"}]}`,
	}, buildKind(&funnelKind))
}

func TestBreakdownGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "breakdowns"), map[string]string{
		"trend_two_properties":  `{"events": [{"id": "$pageview", "math": "dau"}], "breakdowns": [{"property": "$browser"}, {"property": "plan", "type": "person"}], "date_from": "-7d"}`,
		"trend_normalized_url":  `{"events": [{"id": "$pageview"}], "breakdown": "$current_url", "breakdown_normalize_url": true, "date_from": "-7d"}`,
		"trend_histogram_bins":  `{"events": [{"id": "purchase"}], "breakdown": "amount", "breakdown_histogram_bin_count": 4, "date_from": "-7d"}`,
		"trend_session_and_url": `{"events": [{"id": "$pageview"}], "breakdowns": [{"property": "$entry_current_url", "type": "session"}, {"property": "$current_url", "normalize_url": true}], "date_from": "-7d"}`,
	}, buildKind(&trendsKind))
	checkGolden(t, filepath.Join("testdata", "breakdowns"), map[string]string{
		"funnel_two_properties": `{"events": [{"id": "$pageview"}, {"id": "signup"}], "breakdowns": [{"property": "$browser"}, {"property": "$os"}]}`,
	}, buildKind(&funnelKind))
}
