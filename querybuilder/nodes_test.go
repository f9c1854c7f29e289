package querybuilder

import (
	"encoding/json"
	"testing"
)

// Each node kind translates to exactly its legacy filter.
func TestNodesTranslateToTheirLegacyFilters(t *testing.T) {
	for _, tc := range []struct{ name, node, want string }{
		{"trends", `{"kind": "InsightVizNode", "source": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview", "math": "dau"}, {"kind": "ActionsNode", "id": 7, "custom_name": "Buy"}], "dateRange": {"date_from": "-7d"}, "interval": "week", "filterTestAccounts": true, "breakdownFilter": {"breakdowns": [{"property": "$os", "type": "event"}]}, "compareFilter": {"compare": true, "compare_to": "-1w"}, "trendsFilter": {"formulas": ["A/B"], "display": "ActionsTable"}, "aggregation_group_type_index": 1}}`,
			`{"actions":[{"custom_name":"Buy","id":7,"order":1,"type":"actions"}],"aggregation_group_type_index":1,"breakdowns":[{"property":"$os","type":"event"}],"compare":true,"compare_to":"-1w","date_from":"-7d","display":"ActionsTable","events":[{"id":"$pageview","math":"dau","order":0,"type":"events"}],"filter_test_accounts":true,"formula":"A/B","insight":"TRENDS","interval":"week"}`},
		{"funnels with an exclusion", `{"kind": "FunnelsQuery", "series": [{"kind": "EventsNode", "event": "a"}, {"kind": "EventsNode", "event": "b"}], "funnelsFilter": {"funnelVizType": "trends", "binCount": 5, "exclusions": [{"kind": "EventsNode", "event": "x", "funnelFromStep": 0, "funnelToStep": 1}], "breakdownAttributionType": "step", "breakdownAttributionValue": 1}}`,
			`{"bin_count":5,"breakdown_attribution_type":"step","breakdown_attribution_value":1,"events":[{"id":"a","order":0,"type":"events"},{"id":"b","order":1,"type":"events"}],"exclusions":[{"funnel_from_step":0,"funnel_to_step":1,"id":"x","type":"events"}],"funnel_viz_type":"trends","insight":"FUNNELS"}`},
		{"retention", `{"kind": "RetentionQuery", "retentionFilter": {"period": "Week", "totalIntervals": 8, "targetEntity": {"id": 3, "type": "actions"}}}`,
			`{"insight":"RETENTION","period":"Week","target_entity":{"id":3,"type":"actions"},"total_intervals":8}`},
		{"retention entities by kind alone", `{"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"kind": "ActionsNode", "id": 12}, "returningEntity": {"kind": "EventsNode", "id": "$pageview"}}}`,
			`{"insight":"RETENTION","returning_entity":{"id":"$pageview","type":"events"},"target_entity":{"id":12,"type":"actions"}}`},
		{"paths after a funnel step", `{"kind": "PathsQuery", "pathsFilter": {"includeEventTypes": ["$pageview"], "edgeLimit": 20, "excludeEvents": ["/x"]}, "funnelPathsFilter": {"funnelPathType": "funnel_path_after_step", "funnelStep": 1, "funnelSource": {"kind": "FunnelsQuery", "series": [{"kind": "EventsNode", "event": "a"}, {"kind": "EventsNode", "event": "b"}]}}}`,
			`{"edge_limit":20,"exclude_events":["/x"],"funnel_filter":{"events":[{"id":"a","order":0,"type":"events"},{"id":"b","order":1,"type":"events"}],"insight":"FUNNELS"},"funnel_paths":"funnel_path_after_step","funnel_step":1,"include_event_types":["$pageview"],"insight":"PATHS"}`},
		{"stickiness", `{"kind": "StickinessQuery", "series": [{"kind": "EventsNode", "event": null}], "stickinessFilter": {"stickinessCriteria": {"operator": "gte", "value": 1}}}`,
			`{"events":[{"id":null,"order":0,"type":"events"}],"insight":"STICKINESS"}`},
		{"lifecycle", `{"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "event": "a", "properties": [{"key": "k", "value": "v"}]}], "lifecycleFilter": {"toggledLifecycles": ["new", "dormant"]}}`,
			`{"events":[{"id":"a","order":0,"properties":[{"key":"k","value":"v"}],"type":"events"}],"insight":"LIFECYCLE"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := TranslateNode(json.RawMessage(tc.node), "query")
			if err != nil {
				t.Fatal(err)
			}
			var canon map[string]any
			b, _ := json.Marshal(n.Params)
			json.Unmarshal(b, &canon)
			got, _ := json.Marshal(canon)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// What PostHog's UI adds to a saved node: display flags, sampling and
// optional steps are accepted; fields that change the answer are refused
// naming their path.
func TestNodesAsTheUISavesThem(t *testing.T) {
	n, err := TranslateNode(json.RawMessage(`{"kind": "InsightVizNode", "full": true, "showHeader": true, "version": 1, "vizSpecificOptions": null,
		"source": {"kind": "FunnelsQuery", "samplingFactor": 0.1, "series": [{"kind": "EventsNode", "event": "a", "math_multiplier": null},
		{"kind": "EventsNode", "event": "b", "optionalInFunnel": true}, {"kind": "EventsNode", "event": "c", "optionalInFunnel": false}]}}`), "query")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(mustMarshal(n.Params["events"])); got != `[{"id":"a","order":0,"type":"events"},{"id":"b","optionalInFunnel":true,"order":1,"type":"events"},{"id":"c","optionalInFunnel":false,"order":2,"type":"events"}]` {
		t.Errorf("events %s", got)
	}
	for _, tc := range []struct{ node, attr string }{
		{`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "a", "math_multiplier": 2}]}`, "query.series[0].math_multiplier"},
		{`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "a"}], "breakdownFilter": {"breakdown": "$os", "breakdown_hide_other_aggregation": true}}`, "query.breakdownFilter.breakdown_hide_other_aggregation"},
		{`{"kind": "StickinessQuery", "series": [{"kind": "EventsNode", "event": "a"}], "stickinessFilter": {"stickinessCriteria": {"value": 2, "operator": "gte"}}}`, "query.stickinessFilter.stickinessCriteria"},
	} {
		_, err := TranslateNode(json.RawMessage(tc.node), "query")
		if ves := ValidationErrors(err); len(ves) != 1 || ves[0].Attr != tc.attr {
			t.Errorf("%s: %v, want one problem at %s", tc.node, err, tc.attr)
		}
	}
	// The default criteria, keys in any order as a stored document has them.
	if _, err := TranslateNode(json.RawMessage(`{"kind": "StickinessQuery", "series": [{"kind": "EventsNode", "event": "a"}], "stickinessFilter": {"stickinessCriteria": {"value": 1, "operator": "gte"}}}`), "query"); err != nil {
		t.Error(err)
	}
}

// A retention entity whose kind and type disagree, or of a kind that is no
// entity, is refused naming it.
func TestRetentionEntityKindsMustAgree(t *testing.T) {
	for node, attr := range map[string]string{
		`{"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"kind": "ActionsNode", "id": 12, "type": "events"}}}`: "query.retentionFilter.targetEntity.type",
		`{"kind": "RetentionQuery", "retentionFilter": {"returningEntity": {"kind": "DataWarehouseNode", "id": "x"}}}`:         "query.retentionFilter.returningEntity.kind",
	} {
		_, err := TranslateNode(json.RawMessage(node), "query")
		if ves := ValidationErrors(err); len(ves) != 1 || ves[0].Attr != attr {
			t.Errorf("%s: %v", node, err)
		}
	}
}
