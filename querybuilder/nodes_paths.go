package querybuilder

// pathsNode translates a PathsQuery: pathsFilter's fields, and
// funnelPathsFilter, whose funnelSource is a FunnelsQuery translated to
// the legacy funnel_filter.
func pathsNode(r *nodeReader, out Params) {
	r.common(out)
	if f := r.object("pathsFilter"); f != nil {
		for field, param := range map[string]string{
			"includeEventTypes": "include_event_types", "startPoint": "start_point", "endPoint": "end_point",
			"pathGroupings": "path_groupings", "excludeEvents": "exclude_events", "stepLimit": "step_limit",
			"pathReplacements": "path_replacements", "localPathCleaningFilters": "local_path_cleaning_filters",
			"edgeLimit": "edge_limit", "minEdgeWeight": "min_edge_weight", "maxEdgeWeight": "max_edge_weight",
		} {
			f.copy(field, param, out)
		}
		f.refuse("pathsHogQLExpression", "paths read event names, screens and pathnames", `"event"`)
		// The keys of a path a persons list was opened for.
		f.ignore("pathStartKey", "pathEndKey", "pathDropoffKey")
		f.done()
	}
	fp := r.object("funnelPathsFilter")
	if fp == nil {
		return
	}
	fp.copy("funnelPathType", "funnel_paths", out)
	fp.copy("funnelStep", "funnel_step", out)
	if src := fp.raw("funnelSource"); src != nil {
		path := fp.at("funnelSource")
		n, err := TranslateNode(src, path)
		if err != nil {
			r.pr.errs = append(r.pr.errs, err)
		} else if n.Kind != "FunnelsQuery" {
			r.pr.add(path+".kind", "%s must be a FunnelsQuery, got %s", path, n.Kind)
		} else {
			out["funnel_filter"] = mustMarshal(n.Params)
			fp.origin("funnel_filter", "funnelSource")
		}
	}
	fp.done()
}
