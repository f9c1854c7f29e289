package querybuilder

// webCommon reads what both web analytics nodes have.
func webCommon(r *nodeReader, out Params) {
	if d := r.object("dateRange"); d != nil {
		d.copy("date_from", "date_from", out)
		d.copy("date_to", "date_to", out)
		d.copy("explicitDate", "explicit_date", out)
		d.done()
	}
	r.copy("properties", "properties", out)
	r.copy("filterTestAccounts", "filter_test_accounts", out)
	r.compare(out)
	r.refuse("conversionGoal", "conversion goals are not answered yet")
	r.refuse("doPathCleaning", "the project's path cleaning is not applied to web analytics yet")
	r.refuse("includeScrollDepth", "scroll depth is not answered")
	r.ignore("samplingFactor", "sampling", "response", "modifiers", "tags", "version", "useSessionsTable")
}

// webOverviewNode translates a WebOverviewQuery.
func webOverviewNode(r *nodeReader, out Params) { webCommon(r, out) }

// webStatsNode translates a WebStatsTableQuery.
func webStatsNode(r *nodeReader, out Params) {
	webCommon(r, out)
	r.copy("breakdownBy", "breakdown_by", out)
	r.copy("includeBounceRate", "include_bounce_rate", out)
	r.copy("limit", "limit", out)
	r.copy("offset", "offset", out)
}
