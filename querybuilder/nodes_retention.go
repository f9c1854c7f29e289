package querybuilder

import "encoding/json"

// retentionNode translates a RetentionQuery: retentionFilter's period,
// intervals, type and entities.
func retentionNode(r *nodeReader, out Params) {
	r.common(out)
	r.breakdown(out)
	f := r.object("retentionFilter")
	if f == nil {
		return
	}
	f.copy("period", "period", out)
	f.copy("totalIntervals", "total_intervals", out)
	f.copy("retentionType", "retention_type", out)
	for field, param := range map[string]string{"targetEntity": "target_entity", "returningEntity": "returning_entity"} {
		e := f.object(field)
		if e == nil {
			continue
		}
		ent := Params{}
		e.copyAll(ent, "id", "type", "name", "custom_name", "order", "properties")
		// PostHog's RetentionEntity may say what it is by kind alone.
		if kind, ok := map[string]string{"EventsNode": "events", "ActionsNode": "actions"}[e.kind()]; ok {
			var typ string
			if json.Unmarshal(ent["type"], &typ); typ == "" {
				ent["type"] = mustMarshal(kind)
			} else if typ != kind {
				r.pr.add(e.at("type"), "%s is %q but its kind %q", e.at("type"), typ, e.kind())
			}
		} else if e.kind() != "" {
			r.pr.add(e.at("kind"), "%s %q is not supported; use EventsNode or ActionsNode", e.at("kind"), e.kind())
		}
		e.ignore("uuid")
		e.done()
		out[param] = mustMarshal(ent)
		f.origin(param, field)
	}
	f.refuse("cumulative", "retention is answered per interval, not cumulative")
	f.refuse("minimumOccurrences", "every returning event counts (minimum 1)", "1")
	f.refuse("timeWindowMode", "periods are calendar periods", `"strict_calendar_dates"`)
	f.refuse("aggregationType", "retention counts actors", `"count"`)
	f.refuse("aggregationProperty", "retention counts actors; no property is summed")
	f.refuse("aggregationPropertyType", "retention counts actors; no property is summed", `"event"`)
	f.refuse("retentionCustomBrackets", "intervals are single periods (period, totalIntervals)")
	// How a chart draws and averages the answer.
	f.ignore("retentionReference", "showMean", "meanRetentionCalculation", "display", "dashboardDisplay",
		"hideLineGraph", "hideSizeColumn", "selectedInterval", "showTrendLines")
	f.done()
}
