package reference

// The request bodies of the funnels the reference evaluates, as the
// legacy endpoints take them.

// Conditions are exact-match event property filters.
func Conditions(props map[string]string) []any {
	var out []any
	for k, v := range props {
		out = append(out, map[string]any{"key": k, "value": v, "operator": "exact", "type": "event"})
	}
	return out
}

// Filter is the request body for f; extra is merged last (a nil value
// removes the key).
func (f Funnel) Filter(extra map[string]any) map[string]any {
	var events []any
	for i, s := range f.Steps {
		e := map[string]any{"id": s.Event, "type": "events", "order": i, "name": s.Event}
		if s.Any {
			e["id"], e["name"] = nil, "All events"
		}
		if len(s.Props) > 0 {
			e["properties"] = Conditions(s.Props)
		}
		if s.Optional {
			e["optionalInFunnel"] = true
		}
		events = append(events, e)
	}
	m := map[string]any{"insight": "FUNNELS", "events": events, "date_from": f.DateFrom, "date_to": f.DateTo, "interval": "day"}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("funnel_order_type", f.Order, f.Order != "")
	set("funnel_window_interval", f.WindowInterval, f.WindowInterval != 0)
	set("funnel_window_interval_unit", f.WindowUnit, f.WindowUnit != "")
	set("funnel_window_days", f.WindowDays, f.WindowDays != 0)
	set("properties", Conditions(f.Properties), len(f.Properties) > 0)
	set("breakdown", f.Breakdown, f.Breakdown != "")
	set("breakdown_type", f.BreakdownType, f.BreakdownType != "")
	set("breakdown_attribution_type", f.Attribution, f.Attribution != "")
	set("breakdown_attribution_value", f.AttributionStep, f.Attribution == "step")
	set("breakdown_limit", f.BreakdownLimit, f.BreakdownLimit != 0)
	set("funnel_from_step", f.FromStep, f.FromStep != 0)
	set("funnel_to_step", f.ToStep, f.ToStep != 0)
	set("aggregation_group_type_index", f.GroupIndex, f.GroupIndex != 0)
	if len(f.Exclusions) > 0 {
		var xs []any
		for _, x := range f.Exclusions {
			xs = append(xs, map[string]any{"id": x.Event, "type": "events", "name": x.Event,
				"funnel_from_step": x.From, "funnel_to_step": x.To})
		}
		m["exclusions"] = xs
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// Hours is f with a window of n hours.
func (f Funnel) Hours(n int) Funnel {
	f.WindowInterval, f.WindowUnit = n, "hour"
	return f
}
