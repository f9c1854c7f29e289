package querybuilder

import (
	"strings"
	"testing"
	"time"
)

func parseFunnelBody(t *testing.T, body string) (*FunnelQuery, error) {
	t.Helper()
	p, err := ParseBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return ParseFunnel(p, Env{Project: fuzzProject, Now: testNow})
}

func TestFunnelWindows(t *testing.T) {
	const steps = `"events": [{"id": "a"}, {"id": "b"}]`
	for body, want := range map[string]time.Duration{
		`{` + steps + `}`: 14 * 24 * time.Hour,
		`{` + steps + `, "funnel_window_interval": 90, "funnel_window_interval_unit": "second"}`:                       90 * time.Second,
		`{` + steps + `, "funnel_window_interval": 3, "funnel_window_interval_unit": "minute"}`:                        3 * time.Minute,
		`{` + steps + `, "funnel_window_interval": 6, "funnel_window_interval_type": "HOUR"}`:                          6 * time.Hour,
		`{` + steps + `, "funnel_window_interval": 2, "funnel_window_interval_unit": "week"}`:                          14 * 24 * time.Hour,
		`{` + steps + `, "funnel_window_interval": 1, "funnel_window_interval_unit": "month"}`:                         30 * 24 * time.Hour,
		`{` + steps + `, "funnel_window_interval": 5}`:                                                                 5 * 24 * time.Hour,
		`{` + steps + `, "funnel_window_days": 3, "funnel_window_interval": 1, "funnel_window_interval_unit": "hour"}`: 3 * 24 * time.Hour,
	} {
		q, err := parseFunnelBody(t, body)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if q.Window != want {
			t.Errorf("%s: window %v, want %v", body, q.Window, want)
		}
	}
}

func TestFunnelProblemsNameTheirParameter(t *testing.T) {
	const steps = `"events": [{"id": "a"}, {"id": "b"}, {"id": "c"}]`
	for body, attr := range map[string]string{
		`{"events": []}`: "events", // one step is a funnel (funnel_one_step_test.go), none is not
		`{"events": [{"id":"1"},{"id":"2"},{"id":"3"},{"id":"4"},{"id":"5"},{"id":"6"},{"id":"7"},{"id":"8"},{"id":"9"},{"id":"10"},{"id":"11"},{"id":"12"},{"id":"13"},{"id":"14"},{"id":"15"},{"id":"16"},{"id":"17"},{"id":"18"},{"id":"19"},{"id":"20"},{"id":"21"}]}`: "events",
		`{` + steps + `, "funnel_window_interval": 0}`:                                                              "funnel_window_interval",
		`{` + steps + `, "funnel_window_interval": 1, "funnel_window_interval_unit": "fortnight"}`:                  "funnel_window_interval_unit",
		`{` + steps + `, "funnel_window_interval_type": "year"}`:                                                    "funnel_window_interval_type",
		`{` + steps + `, "funnel_window_days": 100000}`:                                                             "funnel_window_days",
		`{` + steps + `, "funnel_window_days": 1125899906842624}`:                                                   "funnel_window_days",
		`{` + steps + `, "funnel_to_step": -3}`:                                                                     "funnel_to_step",
		`{` + steps + `, "funnel_order_type": "random"}`:                                                            "funnel_order_type",
		`{` + steps + `, "funnel_viz_type": "pie"}`:                                                                 "funnel_viz_type",
		`{` + steps + `, "exclusions": [{"id": "x", "funnel_from_step": 1, "funnel_to_step": 1}]}`:                  "exclusions",
		`{` + steps + `, "exclusions": [{"id": "x", "funnel_from_step": 0, "funnel_to_step": 3}]}`:                  "exclusions",
		`{` + steps + `, "exclusions": [{"id": "b", "funnel_from_step": 0, "funnel_to_step": 2}]}`:                  "exclusions",
		`{` + steps + `, "exclusions": [{"id": "x"}]}`:                                                              "exclusions",
		`{` + steps + `, "exclusions": "x"}`:                                                                        "exclusions",
		`{` + steps + `, "breakdown": "k", "breakdown_attribution_type": "all_events"}`:                             "breakdown_attribution_type",
		`{` + steps + `, "breakdown": "k", "breakdown_attribution_type": "step", "breakdown_attribution_value": 3}`: "breakdown_attribution_value",
		`{` + steps + `, "funnel_from_step": 2}`:                                                                    "funnel_from_step",
		`{` + steps + `, "funnel_from_step": 1, "funnel_to_step": 1}`:                                               "funnel_to_step",
		`{` + steps + `, "bin_count": 91}`:                                                                          "bin_count",
		`{` + steps + `, "aggregation_group_type_index": 5}`:                                                        "aggregation_group_type_index",
		`{` + steps + `, "date_from": "-7d", "date_to": "-30d"}`:                                                    "date_from",
	} {
		_, err := parseFunnelBody(t, body)
		ves := ValidationErrors(err)
		if len(ves) == 0 || ves[0].Attr != attr {
			t.Errorf("%s: got %v, want a problem with %s", body, err, attr)
		}
	}
}

func TestUnorderedStepsShareBitsByDefinition(t *testing.T) {
	q, err := parseFunnelBody(t, `{"events": [{"id": "a"}, {"id": "b"}, {"id": "a"}, {"id": "a", "properties": [{"key": "k", "value": "v"}]}],
		"funnel_order_type": "unordered"}`)
	if err != nil {
		t.Fatal(err)
	}
	fb := &funnelBuilder{q: q, n: len(q.Steps)}
	fb.definitions()
	if got := []int{fb.bit[0], fb.bit[1], fb.bit[2], fb.bit[3]}; got[0] != 0 || got[1] != 1 || got[2] != 0 || got[3] != 2 {
		t.Fatalf("bits %v, want [0 1 0 2]", got)
	}
	if fb.mult[0] != 2 || fb.mult[1] != 1 || fb.mult[2] != 1 {
		t.Fatalf("multiplicities %v, want [2 1 1]", fb.mult)
	}
}

func checkFunnel(t *testing.T, p Params) {
	for _, parse := range []func(Params, Env) (*FunnelQuery, error){ParseFunnel, ParseTiming} {
		q, err := parse(p, Env{Project: fuzzProject, Now: testNow})
		if err != nil {
			checkValidation(t, err)
			continue
		}
		stmt, err := BuildFunnel(q, fuzzFacts)
		if err != nil {
			// Only date_from=all resolves its range with the facts.
			if !q.FromAll() {
				t.Fatalf("a valid request does not build: %v", err)
			}
			checkValidation(t, err)
			continue
		}
		if strings.Contains(stmt.SQL, "\x00") {
			t.Fatal("the person join marker was left in the SQL")
		}
		if _, err := ShapeFunnel(q, nil); err != nil {
			t.Fatalf("a valid request does not shape: %v", err)
		}
	}
}

func FuzzParseFunnel(f *testing.F) {
	for _, s := range []string{
		`{"events": [{"id": "a"}, {"id": "b"}]}`,
		`{"events": [{"id": "a"}, {"id": "b"}, {"id": "a"}], "funnel_order_type": "unordered", "funnel_viz_type": "trends", "interval": "week"}`,
		`{"events": [{"id": "a"}, {"id": null}], "funnel_order_type": "strict", "exclusions": [{"id": "x", "funnel_from_step": 0, "funnel_to_step": 1}]}`,
		`{"events": [{"id": "a"}, {"id": "b"}], "breakdown": "$browser", "breakdown_attribution_type": "step", "breakdown_attribution_value": 1}`,
		`{"events": [{"id": "a"}, {"id": "b"}], "funnel_viz_type": "time_to_convert", "bin_count": 7, "funnel_window_days": 2}`,
		`{"filters": {"events": [{"id": "a", "properties": [{"key": "plan", "value": "pro", "type": "person"}]}, {"id": "b"}], "aggregation_group_type_index": 2}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p, err := ParseBody([]byte(body))
		if err != nil {
			return
		}
		checkFunnel(t, p)
	})
}
