package querybuilder

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const goldenFunnelFilter = `{"events": [{"id": "$pageview", "order": 0}, {"id": "signup", "order": 1}, {"id": "buy", "order": 2}], "funnel_window_interval": 1, "funnel_window_interval_unit": "hour", "date_from": "-7d"}`

// One statement per mode of paths: no point, a start point, an end point,
// both (the ... item), cleaning and groupings with exclusions, weights,
// event types, groups, and each kind of funnel paths.
func TestPathsGoldenSQL(t *testing.T) {
	funnel := func(mode string, step int) string {
		return `{"funnel_paths": "` + mode + `", "funnel_step": ` + strings.TrimSpace(string(mustJSON(step))) + `, "funnel_filter": ` + goldenFunnelFilter + `}`
	}
	checkGolden(t, filepath.Join("testdata", "paths"), map[string]string{
		"default":        `{}`,
		"pageviews":      `{"include_event_types": ["$pageview"], "date_from": "-30d", "step_limit": 5}`,
		"start":          `{"include_event_types": ["$pageview", "$screen"], "start_point": "https://shop.test/home", "step_limit": 10}`,
		"end":            `{"include_event_types": ["custom_event"], "include_custom_events": ["$autocapture"], "end_point": "buy"}`,
		"start_end":      `{"start_point": "/home", "end_point": "/pay", "step_limit": 4}`,
		"cleaning":       `{"path_replacements": true, "local_path_cleaning_filters": [{"regex": "/item/\\d+", "alias": "/item/:id"}], "path_groupings": ["/item/*", "*/cart*"], "exclude_events": ["/item/*"]}`,
		"weights":        `{"min_edge_weight": 2, "max_edge_weight": 50, "edge_limit": 200, "filter_test_accounts": true}`,
		"groups":         `{"aggregation_group_type_index": 1, "properties": [{"key": "plan", "value": "pro", "type": "person"}]}`,
		"funnel_after":   funnel(FunnelPathAfterStep, 2),
		"funnel_drop":    funnel(FunnelPathBeforeStep, -3),
		"funnel_between": funnel(FunnelPathBetweenSteps, 3),
	}, buildKind(&pathsKind))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Every string a paths request carries reaches the engine as a parameter:
// points, exclusions, custom events, groupings, cleaning rules (as a
// regex matching the value literally) and their aliases, properties, the
// funnel's events.
func TestPathsHostileValuesNeverReachTheSQLText(t *testing.T) {
	checkHostile(t, func(t *testing.T, v string) Statement {
		// The regex and alias differ from the other fields' value, so
		// that parameters shared by equal values stay shared alike.
		s, re, alias := quoted(t, v), quoted(t, "^"+regexp.QuoteMeta(v)), quoted(t, v+"!")
		body := `{"start_point": ` + s + `, "end_point": ` + s + `, "exclude_events": [` + s + `], "include_custom_events": [` + s + `],
			"path_groupings": [` + s + `], "local_path_cleaning_filters": [{"regex": ` + re + `, "alias": ` + alias + `}],
			"properties": [{"key": ` + s + `, "value": ` + s + `}], "funnel_paths": "funnel_path_after_step", "funnel_step": 1,
			"funnel_filter": {"events": [{"id": ` + s + `}, {"id": ` + s + `, "properties": [{"key": ` + s + `, "value": ` + s + `}]}]}}`
		p, err := ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := buildKind(&pathsKind)(p)
		if err != nil {
			t.Fatal(err)
		}
		return stmt
	})
}

// Without start and end points (the hashed statement and its text
// fallback), the names' scan reads the same strings: custom events,
// cleaning rules and aliases, groupings; exclusions and properties.
func TestHashedPathsHostileValuesNeverReachTheSQLText(t *testing.T) {
	checkHostile(t, func(t *testing.T, v string) Statement {
		s, re, alias := quoted(t, v), quoted(t, "^"+regexp.QuoteMeta(v)), quoted(t, v+"!")
		p, err := ParseBody([]byte(`{"include_event_types": ["$pageview", "custom_event"], "include_custom_events": [` + s + `],
			"exclude_events": [` + s + `], "path_groupings": [` + s + `], "local_path_cleaning_filters": [{"regex": ` + re + `, "alias": ` + alias + `}],
			"properties": [{"key": ` + s + `, "value": ` + s + `}]}`))
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := buildKind(&pathsKind)(p)
		if err != nil {
			t.Fatal(err)
		}
		if stmt.Fallback == nil {
			t.Fatal("not the hashed statement")
		}
		return stmt
	})
}

func TestPathsRefuseWhatCannotRun(t *testing.T) {
	for body, attr := range map[string]string{
		`{"step_limit": 1}`:                                "step_limit",
		`{"step_limit": 21}`:                               "step_limit",
		`{"edge_limit": 0}`:                                "edge_limit",
		`{"edge_limit": 10001}`:                            "edge_limit",
		`{"min_edge_weight": 5, "max_edge_weight": 2}`:     "min_edge_weight",
		`{"include_event_types": ["$pageview", "$click"]}`: "include_event_types",
		`{"local_path_cleaning_filters": [{"regex": "(unclosed", "alias": "x"}]}`:                                      "local_path_cleaning_filters",
		`{"local_path_cleaning_filters": [{"regex": "", "alias": "x"}]}`:                                               "local_path_cleaning_filters",
		`{"local_path_cleaning_filters": "not a list"}`:                                                                "local_path_cleaning_filters",
		`{"path_groupings": [1, 2]}`:                                                                                   "path_groupings",
		`{"funnel_paths": "funnel_path_sideways"}`:                                                                     "funnel_paths",
		`{"funnel_paths": "funnel_path_after_step"}`:                                                                   "funnel_filter",
		`{"funnel_paths": "funnel_path_after_step", "funnel_filter": ` + goldenFunnelFilter + `}`:                      "funnel_step",
		`{"funnel_paths": "funnel_path_after_step", "funnel_step": -1, "funnel_filter": ` + goldenFunnelFilter + `}`:   "funnel_step",
		`{"funnel_paths": "funnel_path_after_step", "funnel_step": 4, "funnel_filter": ` + goldenFunnelFilter + `}`:    "funnel_step",
		`{"funnel_paths": "funnel_path_between_steps", "funnel_step": 1, "funnel_filter": ` + goldenFunnelFilter + `}`: "funnel_step",
		`{"funnel_paths": "funnel_path_after_step", "funnel_step": 1, "funnel_filter": {"events": []}}`:                "funnel_filter",
		`{"aggregation_group_type_index": 9}`:                                                                          "aggregation_group_type_index",
	} {
		p, err := ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParsePaths(p, Env{Project: goldenProject, Now: testNow})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Attr != attr {
			t.Errorf("%s: %v, want a ValidationError naming %s", body, err, attr)
		}
	}
}

// The actors behind paths, one statement per selection: an edge, a start
// key alone, a drop-off, and everyone, with a funnel too.
func TestPathsActorsGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "paths"), map[string]string{
		"actors_edge":    `{"include_event_types": ["$pageview"], "start_point": "/home", "path_start_key": "1_/home", "path_end_key": "2_/cart"}`,
		"actors_start":   `{"path_start_key": "2_/cart", "path_groupings": ["/item/*"]}`,
		"actors_dropoff": `{"end_point": "/pay", "step_limit": 4, "path_dropoff_key": "3_/pay"}`,
		"actors_all":     `{"funnel_paths": "funnel_path_after_step", "funnel_step": 2, "funnel_filter": ` + goldenFunnelFilter + `}`,
	}, func(p Params) (Statement, error) {
		q, err := ParsePaths(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			return Statement{}, err
		}
		return q.Actors(p, Facts{}, Page{Limit: 100, Offset: 200})
	})
}

// Funnel paths and correlation follow the funnel's actors one by one: a
// funnel drawn as trends (one row per actor and entry period) reads as
// its steps, or each actor would count once per period.
func TestFunnelPathsAndCorrelationIgnoreTheFunnelsChart(t *testing.T) {
	env := Env{Project: goldenProject, Now: testNow}
	build := func(body string, correlation bool) string {
		t.Helper()
		p, err := ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		var st Statement
		if correlation {
			q, err := ParseCorrelation(p, env)
			if err != nil {
				t.Fatal(err)
			}
			st, err = q.Build(Facts{})
			if err != nil {
				t.Fatal(err)
			}
		} else {
			q, err := ParsePaths(p, env)
			if err != nil {
				t.Fatal(err)
			}
			st, err = BuildPaths(q, Facts{})
			if err != nil {
				t.Fatal(err)
			}
		}
		return st.String()
	}
	funnel := func(viz string) string {
		return `{"events": [{"id": "a", "order": 0}, {"id": "b", "order": 1}], "funnel_viz_type": "` + viz + `"}`
	}
	paths := func(viz string) string {
		return `{"funnel_paths": "funnel_path_after_step", "funnel_step": 1, "funnel_filter": ` + funnel(viz) + `}`
	}
	if build(paths("trends"), false) != build(paths("steps"), false) {
		t.Error("funnel paths: a trends funnel reads otherwise than its steps")
	}
	if build(funnel("trends"), true) != build(funnel("steps"), true) {
		t.Error("correlation: a trends funnel reads otherwise than its steps")
	}
}
