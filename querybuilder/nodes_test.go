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
