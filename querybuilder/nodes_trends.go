package querybuilder

import (
	"encoding/json"
	"strings"
)

// trendsNode translates a TrendsQuery: trendsFilter's display and
// formula, compareFilter, breakdownFilter.
func trendsNode(r *nodeReader, out Params) {
	r.series(out)
	r.common(out)
	r.breakdown(out)
	r.compare(out)
	f := r.object("trendsFilter")
	if f == nil {
		return
	}
	f.copy("display", "display", out)
	f.copy("formula", "formula", out)
	// formulas (and formulaNodes) are the newer list of formulas: one is
	// the legacy formula, several would be several results.
	formulas := f.list("formulas")
	for _, n := range f.list("formulaNodes") {
		var node struct {
			Formula json.RawMessage `json:"formula"`
		}
		json.Unmarshal(n, &node)
		formulas = append(formulas, node.Formula)
	}
	switch {
	case len(formulas) == 1 && out["formula"] == nil:
		out["formula"] = formulas[0]
		f.origin("formula", "formulas")
		if f.raw("formulaNodes") != nil {
			f.origin("formula", "formulaNodes")
		}
	case len(formulas) > 0:
		r.pr.add(f.at("formulas"), "%s: one formula is supported (formula, or formulas holding one)", f.at("formulas"))
	}
	// compare sat in trendsFilter before compareFilter existed.
	f.copy("compare", "compare", out)
	f.refuse("smoothingIntervals", "smoothing is not supported", "1")
	f.ignore("showLegend", "showValuesOnSeries", "showPercentStackView", "showLabelsOnSeries", "showAlertThresholdLines",
		"showMultipleYAxes", "aggregationAxisFormat", "aggregationAxisPrefix", "aggregationAxisPostfix", "decimalPlaces",
		"hiddenLegendIndexes", "hiddenLegendBreakdowns", "yAxisScaleType", "breakdown_histogram_bin_count",
		"resultCustomizationBy", "resultCustomizations", "goalLines", "minDecimalPlaces", "detailedResultsAggregationType",
		"showConfidenceIntervals", "confidenceLevel", "showTrendLines", "showMovingAverage", "movingAverageIntervals",
		"metricSummary", "metricShowChange", "metricColorByDirection", "metricChangeDecreaseColor", "metricChangeIncreaseColor",
		"metricLineDecreaseColor", "metricLineIncreaseColor", "xAxisLabel", "yAxisLabel")
	f.done()
}

// stickinessNode translates a StickinessQuery: a trends request of
// insight STICKINESS.
func stickinessNode(r *nodeReader, out Params) {
	r.series(out)
	r.common(out)
	r.compare(out)
	// intervalCount groups intervals (2 = every two days) before counting.
	r.refuse("intervalCount", "stickiness counts single intervals", "1")
	f := r.object("stickinessFilter")
	if f == nil {
		return
	}
	f.copy("display", "display", out)
	f.refuse("computedAs", "stickiness is computed non-cumulative", `"non_cumulative"`)
	// The default criteria compared by value: a stored document's keys
	// come back in any order.
	var criteria struct {
		Operator string          `json:"operator"`
		Value    json.RawMessage `json:"value"`
	}
	if v := f.raw("stickinessCriteria"); v != nil && (json.Unmarshal(v, &criteria) != nil || criteria.Operator != "gte" ||
		strings.TrimSpace(string(criteria.Value)) != "1") {
		f.pr.add(f.at("stickinessCriteria"), "%s is not supported: stickiness counts every active interval (criteria gte 1)",
			f.at("stickinessCriteria"))
	}
	f.ignore("showLegend", "showValuesOnSeries", "hiddenLegendIndexes", "showMultipleYAxes", "resultCustomizationBy",
		"resultCustomizations")
	f.done()
}

// lifecycleNode translates a LifecycleQuery: a trends request of insight
// LIFECYCLE. toggledLifecycles only hides statuses in a chart: every
// status is answered.
func lifecycleNode(r *nodeReader, out Params) {
	r.series(out)
	r.common(out)
	f := r.object("lifecycleFilter")
	if f == nil {
		return
	}
	f.ignore("toggledLifecycles", "showLegend", "showValuesOnSeries", "stacked")
	f.done()
}
