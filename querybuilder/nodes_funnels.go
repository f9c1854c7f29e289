package querybuilder

import "fmt"

// funnelsNode translates a FunnelsQuery: its series are the steps,
// funnelsFilter the legacy funnel_* fields.
func funnelsNode(r *nodeReader, out Params) {
	r.series(out)
	r.common(out)
	r.breakdown(out)
	f := r.object("funnelsFilter")
	if f == nil {
		return
	}
	for field, param := range map[string]string{
		"funnelVizType": "funnel_viz_type", "funnelOrderType": "funnel_order_type",
		"funnelWindowInterval": "funnel_window_interval", "funnelWindowIntervalUnit": "funnel_window_interval_unit",
		"breakdownAttributionType": "breakdown_attribution_type", "breakdownAttributionValue": "breakdown_attribution_value",
		"binCount": "bin_count", "funnelFromStep": "funnel_from_step", "funnelToStep": "funnel_to_step",
	} {
		f.copy(field, param, out)
	}
	if items := f.list("exclusions"); len(items) > 0 {
		var list []Params
		for i, raw := range items {
			path := fmt.Sprintf("%s[%d]", f.at("exclusions"), i)
			x := newNodeReader(raw, path, r.pr)
			if x == nil {
				continue
			}
			// An exclusion is a series node with its steps: read the
			// steps here, the rest as an entity.
			steps := Params{}
			x.copy("funnelFromStep", "funnel_from_step", steps)
			x.copy("funnelToStep", "funnel_to_step", steps)
			delete(x.m, "funnelFromStep")
			delete(x.m, "funnelToStep")
			e, _ := r.entity(mustMarshal(x.m), path)
			if e == nil {
				continue
			}
			for k, v := range steps {
				e[k] = v
			}
			list = append(list, e)
		}
		out["exclusions"] = mustMarshal(list)
		f.origin("exclusions", "exclusions")
	}
	f.refuse("funnelAggregateByHogQL", "HogQL aggregation is not supported; use aggregation_group_type_index", `"person_id"`)
	// funnelStepReference picks which step a chart's percentages are of:
	// the answer holds the counts of both.
	f.ignore("funnelStepReference", "layout", "hiddenLegendBreakdowns", "hiddenLegendKeys", "useUdf", "showValuesOnSeries",
		"resultCustomizations", "goals", "breakdownSorting")
	f.done()
}
