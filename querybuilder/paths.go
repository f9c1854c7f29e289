package querybuilder

import (
	"encoding/json"
	"errors"
	"strings"
)

// PathsQuery is a validated paths request (insights/path): the most taken
// steps between the items (pages, screens, events) of actors' paths,
// following analytics.md's Paths section step by step (paths_sql.go).
type PathsQuery struct {
	Common

	// Pageviews, Screens and AllCustom are include_event_types;
	// CustomEvents include_custom_events. None of them: every event.
	Pageviews, Screens, AllCustom bool
	CustomEvents                  []string
	// Exclude drops items equal to one of these, after cleaning.
	Exclude []string
	// Cleaning is the replace-all rules applied in order: the project's
	// path_cleaning_filters (with path_replacements), then the request's
	// local_path_cleaning_filters. Groupings are path_groupings.
	Cleaning  []PathCleaning
	Groupings []string
	// Start and End are start_point and end_point ("" for none).
	Start, End string
	// StepLimit bounds a path's items; EdgeLimit the edges answered.
	StepLimit, EdgeLimit int
	// MinWeight and MaxWeight filter edges by value (0: no bound).
	MinWeight, MaxWeight int64

	// Funnel, with FunnelPaths and FunnelStep, limits the paths to a
	// funnel step's actors and to the time around their step events.
	Funnel      *FunnelQuery
	FunnelPaths string
	FunnelStep  int

	AggregationGroupTypeIndex int
}

// PathCleaning is one cleaning rule: every match of Regex in an item is
// replaced by Alias, taken literally.
type PathCleaning struct {
	Regex string `json:"regex"`
	Alias string `json:"alias"`
}

// Paths parameters and their defaults, from PostHog's legacy API.
const (
	defaultStepLimit   = 5
	minStepLimit       = 2
	maxStepLimit       = 20
	defaultEdgeLimit   = 50
	maxEdgeLimit       = 10_000
	maxPathRules       = 100
	maxPathRuleLength  = 1000
	pathEllipsis       = "..."
	pathSessionGapMins = 30

	FunnelPathAfterStep    = "funnel_path_after_step"
	FunnelPathBeforeStep   = "funnel_path_before_step"
	FunnelPathBetweenSteps = "funnel_path_between_steps"
)

// pathsKind answers insights/path and computes PATHS insights.
var pathsKind = Kind{Name: "paths", Route: "path", Insight: "PATHS", Persons: "path",
	Parse: func(p Params, env Env) (Query, error) { return ParsePaths(p, env) },
	Node:  "PathsQuery", translate: pathsNode}

// ParsePaths reads a paths request from its parameters in env.
func ParsePaths(p Params, env Env) (*PathsQuery, error) {
	pr := &problems{}
	q := &PathsQuery{Common: newCommon(env, pr), StepLimit: defaultStepLimit, EdgeLimit: defaultEdgeLimit}
	q.parse(p, pr)
	q.Interval = IntervalDay // paths have no buckets; the range is whole days
	for _, t := range stringList(p, "include_event_types", pr) {
		switch t {
		case "$pageview":
			q.Pageviews = true
		case "$screen":
			q.Screens = true
		case "custom_event":
			q.AllCustom = true
		default:
			pr.add("include_event_types", "include_event_types holds $pageview, $screen or custom_event; got %q", t)
		}
	}
	q.CustomEvents = stringList(p, "include_custom_events", pr)
	q.Exclude = stringList(p, "exclude_events", pr)
	q.Start, _ = p.str("start_point", pr)
	q.End, _ = p.str("end_point", pr)
	if n, ok := p.integer("step_limit", pr); ok {
		if n < minStepLimit || n > maxStepLimit {
			pr.add("step_limit", "step_limit must be between %d and %d, got %d", minStepLimit, maxStepLimit, n)
		} else {
			q.StepLimit = int(n)
		}
	}
	if n, ok := p.integer("edge_limit", pr); ok {
		if n < 1 || n > maxEdgeLimit {
			pr.add("edge_limit", "edge_limit must be between 1 and %d, got %d", maxEdgeLimit, n)
		} else {
			q.EdgeLimit = int(n)
		}
	}
	for _, w := range []struct {
		name string
		to   *int64
	}{{"min_edge_weight", &q.MinWeight}, {"max_edge_weight", &q.MaxWeight}} {
		if n, ok := p.integer(w.name, pr); ok {
			if n < 1 {
				pr.add(w.name, "%s must be 1 or more, got %d", w.name, n)
			} else {
				*w.to = n
			}
		}
	}
	if q.MinWeight > 0 && q.MaxWeight > 0 && q.MinWeight > q.MaxWeight {
		pr.add("min_edge_weight", "min_edge_weight %d is above max_edge_weight %d", q.MinWeight, q.MaxWeight)
	}
	if p.boolean("path_replacements", pr) && len(q.Project.PathCleaningFilters) > 0 {
		q.useSetting("path_cleaning_filters", q.Project.PathCleaningFilters)
		q.Cleaning = append(q.Cleaning, parseCleaning(q.Project.PathCleaningFilters, "path_cleaning_filters", pr)...)
	}
	if raw, ok := p.document("local_path_cleaning_filters"); ok {
		q.Cleaning = append(q.Cleaning, parseCleaning(raw, "local_path_cleaning_filters", pr)...)
	}
	q.Groupings = stringList(p, "path_groupings", pr)
	for _, g := range q.Groupings {
		if len(g) > maxPathRuleLength {
			pr.add("path_groupings", "a path grouping is at most %d bytes", maxPathRuleLength)
			break
		}
	}
	if len(q.Groupings) > maxPathRules {
		pr.add("path_groupings", "at most %d path groupings", maxPathRules)
	}
	if n, ok := p.integer("aggregation_group_type_index", pr); ok {
		q.AggregationGroupTypeIndex = int(n)
	}
	q.parseFunnelPaths(p, env, pr)
	return q, errors.Join(pr.err(), q.Validate())
}

// parseFunnelPaths reads funnel_paths, funnel_filter and funnel_step.
func (q *PathsQuery) parseFunnelPaths(p Params, env Env, pr *problems) {
	q.FunnelPaths, _ = p.str("funnel_paths", pr)
	if q.FunnelPaths == "" {
		return
	}
	switch q.FunnelPaths {
	case FunnelPathAfterStep, FunnelPathBeforeStep, FunnelPathBetweenSteps:
	default:
		pr.add("funnel_paths", "funnel_paths must be one of %s, %s, %s; got %q",
			FunnelPathAfterStep, FunnelPathBeforeStep, FunnelPathBetweenSteps, q.FunnelPaths)
		return
	}
	raw, ok := p.document("funnel_filter")
	var fp Params
	if !ok || json.Unmarshal(raw, &fp) != nil || fp == nil {
		pr.add("funnel_filter", "funnel_paths needs funnel_filter, the funnel request (an object)")
		return
	}
	f, err := ParseFunnel(fp, env)
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			pr.add("funnel_filter", "funnel_filter.%s: %s", ve.Attr, ve.Detail)
		} else {
			pr.add("funnel_filter", "funnel_filter: %v", err)
		}
		return
	}
	// Paths follow the step's actors, one each, whatever chart the funnel
	// was drawn as (funnel trends would give one per entry period).
	f.Viz = VizSteps
	q.Funnel = f
	q.keyedByFunnel(f)
	step, ok := fp.integer("funnel_step", pr)
	if s, ok2 := p.integer("funnel_step", pr); ok2 {
		step, ok = s, true
	}
	n := int64(len(f.Steps))
	switch {
	case !ok || step == 0:
		pr.add("funnel_step", "funnel_paths needs funnel_step: a step 1 to %d, or -2 to -%d for those who dropped off before it", n, n)
	case step > n || step < -n || step == -1:
		pr.add("funnel_step", "funnel_step must be 1 to %d, or -2 to -%d; got %d", n, n, step)
	case q.FunnelPaths == FunnelPathBetweenSteps && (step < 2):
		pr.add("funnel_step", "%s needs a step reached after another (2 to %d); got %d", FunnelPathBetweenSteps, n, step)
	}
	q.FunnelStep = int(step)
}

// keyedByFunnel makes what the inner funnel's answer depends on beyond
// its filter part of the paths request's scope, so that a cached paths
// answer is keyed by it: the versions and definitions of the actions and
// cohorts it names, the project settings it applied, its test-account
// filters, what relative dates in its conditions resolved to, and its own
// resolved range (which need not move with the paths range).
func (q *PathsQuery) keyedByFunnel(f *FunnelQuery) {
	for name, v := range f.settings {
		q.useSetting("funnel_filter "+name, v)
	}
	if f.FilterTestAccounts && len(f.Project.TestAccountFilters) > 0 {
		q.useSetting("funnel_filter test_account_filters", f.Project.TestAccountFilters)
	}
	q.relative = append(q.relative, f.relative...)
	if !f.FromAll() {
		q.relative = append(q.relative, f.Range.From, f.Range.To)
	}
}

// stringList reads a list of strings (a JSON list, or one as JSON text);
// a single string is a list of one.
func stringList(p Params, name string, pr *problems) []string {
	raw, ok := p.document(name)
	if !ok {
		return nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			pr.add(name, "%s must be a list of strings", name)
			return nil
		}
		if one == "" {
			return nil
		}
		list = []string{one}
	}
	return list
}

// CheckPathCleaning checks a project's path_cleaning_filters as paths
// will read them ([{"regex", "alias"}], each regex RE2 that compiles,
// within the bounds on rules), so that a project setting paths would
// refuse is refused when it is set. The errors are *ValidationErrors
// naming path_cleaning_filters.
func CheckPathCleaning(raw json.RawMessage) error {
	pr := &problems{}
	parseCleaning(raw, "path_cleaning_filters", pr)
	return pr.err()
}

// parseCleaning reads cleaning rules, each regex checked.
func parseCleaning(raw json.RawMessage, attr string, pr *problems) []PathCleaning {
	var rules []PathCleaning
	if err := json.Unmarshal(unwrapDocument(raw), &rules); err != nil {
		pr.add(attr, `%s must be a list of {"regex", "alias"} objects`, attr)
		return nil
	}
	if len(rules) > maxPathRules {
		pr.add(attr, "at most %d cleaning rules", maxPathRules)
		return nil
	}
	for i, r := range rules {
		switch {
		case r.Regex == "":
			pr.add(attr, "%s[%d].regex is empty", attr, i)
		case len(r.Regex) > maxPathRuleLength || len(r.Alias) > maxPathRuleLength:
			pr.add(attr, "%s[%d]: a regex and an alias are at most %d bytes", attr, i, maxPathRuleLength)
		default:
			if err := checkRegex(r.Regex); err != nil {
				pr.add(attr, "%s[%d].regex: %v", attr, i, err)
			}
		}
	}
	return rules
}

// Validate checks the request as a whole and resolves its range.
func (q *PathsQuery) Validate() error {
	pr := &problems{}
	if q.clock.loc == nil {
		return &ValidationError{Attr: "timezone", Detail: "the request was not built by ParsePaths"}
	}
	if q.AggregationGroupTypeIndex < 0 || q.AggregationGroupTypeIndex > maxGroupTypeIndex {
		pr.add("aggregation_group_type_index", "aggregation_group_type_index must be 0 (persons) or a group type 1 to %d, got %d",
			maxGroupTypeIndex, q.AggregationGroupTypeIndex)
	}
	if q.StepLimit < minStepLimit || q.StepLimit > maxStepLimit {
		pr.add("step_limit", "step_limit must be between %d and %d", minStepLimit, maxStepLimit)
	}
	if q.Funnel != nil && q.Funnel.AggregationGroupTypeIndex != q.AggregationGroupTypeIndex {
		pr.add("funnel_filter", "the funnel must count the same actors as the paths (aggregation_group_type_index)")
	}
	if q.Funnel != nil && q.Funnel.hasOptional() {
		// The funnel's attempts give the step times paths slice between;
		// an optional step has no time in an attempt that skipped it.
		pr.add("funnel_filter", "funnel paths of a funnel with optional steps (optionalInFunnel) are not supported; make the steps required")
	}
	q.resolveRange(pr)
	if !pr.ok() {
		return pr.err()
	}
	return budget(q.EdgeLimit, "paths", "edge_limit")
}

// groupingPatterns are the groupings as LIKE patterns: * matches any run
// of characters, everything else is literal (%, _ and \ escaped), and a
// grouping matches anywhere in an item. LIKE rather than a regular
// expression: the engine matches it faster (benchmarks/results/paths.md).
func (q *PathsQuery) groupingPatterns() []string {
	escape := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	out := make([]string, len(q.Groupings))
	for i, g := range q.Groupings {
		// Empty parts (a leading, trailing or doubled *) are left out:
		// "%%" would cost the engine its substring search.
		var parts []string
		for _, part := range strings.Split(g, "*") {
			if part != "" {
				parts = append(parts, escape.Replace(part))
			}
		}
		out[i] = "%" + strings.Join(parts, "%") + "%"
		if len(parts) == 0 {
			out[i] = "%"
		}
	}
	return out
}

// Needs implements Query.
func (q *PathsQuery) Needs() Needs {
	n := Needs{FirstEvent: q.FromAll(), PersonOverrides: q.AggregationGroupTypeIndex == 0 || q.read().persons}
	if q.Funnel != nil {
		fn := q.Funnel.Needs()
		n.FirstEvent = n.FirstEvent || fn.FirstEvent
		n.PersonOverrides = n.PersonOverrides || fn.PersonOverrides
	}
	return n
}

// read is what the statement's read of events joins.
func (q *PathsQuery) read() joins {
	f := andFilters(q.Properties, q.TestAccounts)
	persons := f.usesPersons()
	return joins{overrides: q.AggregationGroupTypeIndex == 0 || persons, persons: persons, sessions: f.usesSessions()}
}

// Build implements Query.
func (q *PathsQuery) Build(f Facts) (Statement, error) { return BuildPaths(q, f) }

// Shape implements Query.
func (q *PathsQuery) Shape(rows [][]any) (Result, error) { return ShapePaths(q, rows) }

// Decode implements Query.
func (q *PathsQuery) Decode(raw json.RawMessage) (Result, error) {
	var r PathsResult
	return r, json.Unmarshal(raw, &r)
}
