package analysis

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// dashboardParams is an insight's filter as dashboard d computes it: the
// dashboard's date range, when it sets date_from, replaces the insight's
// (date_to too, now when unset), as PostHog applies it; its properties
// are ANDed with the insight's. The cache key is the one of the filter
// computed, so the same filter written into an insight shares it.
func dashboardParams(params querybuilder.Params, d *metadata.Dashboard) querybuilder.Params {
	var f map[string]json.RawMessage
	if json.Unmarshal(d.Filters, &f) != nil || len(f) == 0 {
		return params
	}
	out := maps.Clone(params)
	if from, ok := f["date_from"]; ok && !isJSONNull(from) {
		out["date_from"] = from
		delete(out, "date_to")
		if to, ok := f["date_to"]; ok && !isJSONNull(to) {
			out["date_to"] = to
		}
	} else if to, ok := f["date_to"]; ok && !isJSONNull(to) {
		out["date_to"] = to
	}
	if props, ok := f["properties"]; ok && !emptyDocument(props) {
		own := params["properties"]
		var text string
		if json.Unmarshal(own, &text) == nil { // a document sent as a JSON string
			own = json.RawMessage(text)
		}
		if emptyDocument(own) {
			out["properties"] = props
		} else {
			// By structure, not by pasting texts into a list: either side
			// may be a group or the oldest form's object.
			out["properties"] = querybuilder.AndProperties(own, props)
		}
	}
	return out
}

// emptyDocument reports a properties value that holds no condition.
func emptyDocument(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "[]", "{}", `""`:
		return true
	}
	return false
}

func isJSONNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }
