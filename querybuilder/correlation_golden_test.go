package querybuilder

import (
	"errors"
	"path/filepath"
	"testing"
)

const goldenCorrelationFunnel = `"events": [{"id": "$pageview", "order": 0}, {"id": "signup", "order": 1}, {"id": "buy", "order": 2}], "date_from": "-30d"`

// One statement per correlation type, with exclusions, group actors and
// each funnel order.
func TestCorrelationGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "correlation"), map[string]string{
		"events":           `{` + goldenCorrelationFunnel + `, "funnel_correlation_exclude_event_names": ["$autocapture"]}`,
		"events_strict":    `{` + goldenCorrelationFunnel + `, "funnel_order_type": "strict", "funnel_window_interval": 2, "funnel_window_interval_unit": "hour"}`,
		"events_groups":    `{` + goldenCorrelationFunnel + `, "funnel_order_type": "unordered", "aggregation_group_type_index": 2}`,
		"properties":       `{` + goldenCorrelationFunnel + `, "funnel_correlation_type": "properties", "funnel_correlation_names": ["plan", "$browser"]}`,
		"properties_all":   `{` + goldenCorrelationFunnel + `, "funnel_correlation_type": "properties", "funnel_correlation_names": ["$all"], "funnel_correlation_exclude_names": ["email"]}`,
		"event_with_props": `{` + goldenCorrelationFunnel + `, "funnel_correlation_type": "event_with_properties", "funnel_correlation_event_names": ["purchase"], "funnel_correlation_event_exclude_property_names": ["$ip"], "exclusions": [{"id": "logout", "funnel_from_step": 0, "funnel_to_step": 1}]}`,
	}, buildKind(&correlationKind))
}

// Every name a correlation request carries reaches the engine as a
// parameter.
func TestCorrelationHostileValuesNeverReachTheSQLText(t *testing.T) {
	for _, typ := range []string{"events", "properties", "event_with_properties"} {
		t.Run(typ, func(t *testing.T) {
			checkHostile(t, func(t *testing.T, v string) Statement {
				s := quoted(t, v)
				p, err := ParseBody([]byte(`{"events": [{"id": ` + s + `}, {"id": ` + s + `, "properties": [{"key": ` + s + `, "value": ` + s + `}]}],
					"funnel_correlation_type": "` + typ + `", "funnel_correlation_names": [` + s + `], "funnel_correlation_exclude_names": [` + s + `],
					"funnel_correlation_event_names": [` + s + `], "funnel_correlation_event_exclude_property_names": [` + s + `],
					"funnel_correlation_exclude_event_names": [` + s + `], "properties": [{"key": ` + s + `, "value": ` + s + `}]}`))
				if err != nil {
					t.Fatal(err)
				}
				stmt, err := buildKind(&correlationKind)(p)
				if err != nil {
					t.Fatal(err)
				}
				return stmt
			})
		})
	}
}

func TestCorrelationRefusesWhatCannotRun(t *testing.T) {
	for body, attr := range map[string]string{
		`{` + goldenCorrelationFunnel + `, "funnel_correlation_type": "vibes"}`:                                                                            "funnel_correlation_type",
		`{` + goldenCorrelationFunnel + `, "funnel_correlation_type": "properties"}`:                                                                       "funnel_correlation_names",
		`{` + goldenCorrelationFunnel + `, "funnel_correlation_type": "event_with_properties"}`:                                                            "funnel_correlation_event_names",
		`{` + goldenCorrelationFunnel + `, "breakdown": "$browser"}`:                                                                                       "breakdown",
		`{` + goldenCorrelationFunnel + `, "funnel_correlation_names": 5, "funnel_correlation_type": "properties"}`:                                        "funnel_correlation_names",
		`{` + goldenCorrelationFunnel + `, "funnel_correlation_type": "properties", "funnel_correlation_names": ["a"], "aggregation_group_type_index": 1}`: "aggregation_group_type_index",
		`{"events": [{"id": "a"}]}`: "events",
	} {
		p, err := ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseCorrelation(p, Env{Project: goldenProject, Now: testNow})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Attr != attr {
			t.Errorf("%s: %v, want a ValidationError naming %s", body, err, attr)
		}
	}
}

// An item's parts survive the statement's text whatever they hold: "::",
// digits and colons, nothing at all.
func TestCorrelationItemTextKeepsItsParts(t *testing.T) {
	for _, parts := range [][]string{
		{"a::b", "c"}, {"a", "b::c"}, {"", ""}, {"3:x", "::"}, {"12:", "7::8:"},
		{"ev::il", "k::", "::v"}, {"", "", ""}, {"1:", "2::", "3"},
	} {
		q := &CorrelationQuery{Type: CorrelationProperties}
		if len(parts) == 3 {
			q.Type = CorrelationEventWithProperties
		}
		text := itemText(parts...)
		got, err := q.itemParts(text)
		if err != nil || len(got) != len(parts) {
			t.Fatalf("%q: %q %v", parts, got, err)
		}
		for i := range parts {
			if got[i] != parts[i] {
				t.Fatalf("%q read back as %q (text %q)", parts, got, text)
			}
		}
	}
	q := &CorrelationQuery{Type: CorrelationProperties}
	for _, bad := range []string{"plan::pro", "9:a::b", "x:a::b", "-1:a::b"} {
		if _, err := q.itemParts(bad); err == nil {
			t.Errorf("%q was read as an item", bad)
		}
	}
}
