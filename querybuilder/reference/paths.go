package reference

// A brute-force paths reference, written from analytics.md's Paths
// section without looking at the SQL: every event read, cleaned, grouped
// and excluded in Go; each person's events sorted, split, compacted, cut
// and counted as edges; then weights, order, limit and reachability.

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Paths is a paths request as the reference reads it.
type Paths struct {
	Pageviews, Screens, AllCustom bool
	Custom, Exclude               []string
	Cleaning                      [][2]string // regex, alias
	// ProjectCleaning is the project's path_cleaning_filters, applied
	// first when Replacements (path_replacements); the project must hold
	// them (setPathSettings).
	ProjectCleaning [][2]string
	Replacements    bool
	// Properties are exact-match event property conditions;
	// TestAccounts applies the project's test-account filter
	// (PathsTestAccounts: $browser is not "Bot").
	Properties   map[string]string
	TestAccounts bool
	// GroupIndex k > 0 makes the actor the event's $group_k value
	// (events without one are not read).
	GroupIndex           int
	Groupings            []string
	Start, End           string
	StepLimit, EdgeLimit int
	MinWeight, MaxWeight int64
	From, To             time.Time // [From, To)
	// Funnel limits the paths to a funnel step's persons (FunnelPaths,
	// FunnelStep as the API takes them).
	Funnel      *Funnel
	FunnelPaths string
	FunnelStep  int
}

type Edge struct {
	Source, Target string
	Value          int64
	Avg            float64
}

// item is an event's path item, or false when the event is not read.
func (q Paths) Item(e Event) (string, bool) {
	if q.Pageviews || q.Screens || q.AllCustom || len(q.Custom) > 0 {
		ok := (q.Pageviews && e.Event == "$pageview") || (q.Screens && e.Event == "$screen") ||
			(q.AllCustom && !strings.HasPrefix(e.Event, "$"))
		for _, c := range q.Custom {
			ok = ok || e.Event == c
		}
		if !ok {
			return "", false
		}
	}
	item := e.Event
	switch e.Event {
	case "$pageview":
		item = String(e.Props["$current_url"])
		if len(item) > 1 && strings.HasSuffix(item, "/") {
			item = item[:len(item)-1]
		}
	case "$screen":
		item = String(e.Props["$screen_name"])
	}
	var rules [][2]string
	if q.Replacements {
		rules = append(rules, q.ProjectCleaning...)
	}
	for _, c := range append(rules, q.Cleaning...) {
		item = regexp.MustCompile(c[0]).ReplaceAllLiteralString(item, c[1])
	}
	for _, g := range q.Groupings {
		parts := strings.Split(g, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		if regexp.MustCompile("(?s)" + strings.Join(parts, ".*")).MatchString(item) {
			item = g
			break
		}
	}
	for _, x := range q.Exclude {
		if item == x {
			return "", false
		}
	}
	return item, true
}

type Stop struct {
	item string
	at   time.Time
}

// bounds are each funnel person's time bounds, by person.
func (q Paths) Bounds(all []Event) map[string][2]time.Time {
	lo, hi := time.Unix(-1<<40, 0), time.Unix(1<<40, 0)
	out := map[string][2]time.Time{}
	for _, p := range q.Funnel.Persons(all) {
		if p.Excluded {
			continue
		}
		n := q.FunnelStep
		at := func(step int) time.Time { return p.Events[p.Path[step-1]].At }
		if n > 0 && p.Level() < n || n < 0 && p.Level() != -n-1 {
			continue
		}
		step := n
		if n < 0 {
			step = -n - 1
		}
		switch q.FunnelPaths {
		case "funnel_path_after_step":
			out[p.ID] = [2]time.Time{at(step), hi}
		case "funnel_path_before_step":
			end := at(step)
			if n < 0 {
				end = end.Add(q.Funnel.Window())
			}
			out[p.ID] = [2]time.Time{lo, end}
		case "funnel_path_between_steps":
			out[p.ID] = [2]time.Time{at(step - 1), at(step)}
		}
	}
	return out
}

// PathsTestAccounts is the test-account filter of the projects paths
// tests run in, and IsTestAccount the reference's reading of it.
var PathsTestAccounts = []any{map[string]any{"key": "$browser", "value": "Bot", "operator": "is_not", "type": "event"}}

func IsTestAccount(e Event) bool { return String(e.Props["$browser"]) == "Bot" }

// walk calls visit with each path as answered (compacted and cut), and
// its actor: a person (root distinct id) or a group key.
func (q Paths) Walk(all []Event, visit func(actor string, p []Stop)) {
	personOf, _ := Identities(all)
	var bounds map[string][2]time.Time
	if q.Funnel != nil {
		bounds = q.Bounds(all)
	}
	byPerson := map[string][]Event{}
	for _, e := range all {
		if e.At.Before(q.From) || !e.At.Before(q.To) {
			continue
		}
		if (q.TestAccounts && IsTestAccount(e)) || !(Step{Any: true, Props: q.Properties}).Matches(e) {
			continue
		}
		id := personOf(e.DistinctID)
		if q.GroupIndex > 0 {
			if id = String(e.Props[fmt.Sprintf("$group_%d", q.GroupIndex)]); id == "" {
				continue
			}
		}
		if bounds != nil {
			b, ok := bounds[id]
			if !ok || e.At.Before(b[0]) || e.At.After(b[1]) {
				continue
			}
		}
		if _, ok := q.Item(e); ok {
			byPerson[id] = append(byPerson[id], e)
		}
	}
	for id, evs := range byPerson {
		sort.Slice(evs, func(a, b int) bool {
			if !evs[a].At.Equal(evs[b].At) {
				return evs[a].At.Before(evs[b].At)
			}
			return strings.ToLower(evs[a].UUID) < strings.ToLower(evs[b].UUID)
		})
		var path []Stop
		flush := func() {
			if p := q.Cut(compact(path)); len(p) > 0 {
				visit(id, p)
			}
			path = nil
		}
		for i, e := range evs {
			if i > 0 && e.At.Sub(evs[i-1].At) >= 30*time.Minute {
				flush()
			}
			item, _ := q.Item(e)
			path = append(path, Stop{item, e.At})
		}
		flush()
	}
}

// edges is the answer: edges ordered, limited and pruned.
func (q Paths) Edges(all []Event) []Edge {
	type acc struct {
		n   int64
		sum float64
	}
	counts := map[[2]string]*acc{}
	q.Walk(all, func(_ string, p []Stop) {
		for i := 0; i+1 < len(p); i++ {
			k := [2]string{PathKey(i, p), PathKey(i+1, p)}
			if counts[k] == nil {
				counts[k] = &acc{}
			}
			counts[k].n++
			counts[k].sum += float64(p[i+1].at.Sub(p[i].at).Microseconds()) / 1000
		}
	})
	var out []Edge
	for k, a := range counts {
		if (q.MinWeight > 0 && a.n < q.MinWeight) || (q.MaxWeight > 0 && a.n > q.MaxWeight) {
			continue
		}
		out = append(out, Edge{k[0], k[1], a.n, a.sum / float64(a.n)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return out[i].Value > out[j].Value
		}
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Target < out[j].Target
	})
	limit := q.EdgeLimit
	if limit == 0 {
		limit = 50
	}
	if len(out) > limit {
		out = out[:limit]
	}
	if q.MinWeight > 0 || q.MaxWeight > 0 {
		return out
	}
	// Reachability: sources by position, a first item or a kept target.
	reached := map[string]bool{}
	keep := map[int]bool{}
	for pos := 1; pos <= 21; pos++ {
		for i, e := range out {
			if strings.HasPrefix(e.Source, fmt.Sprintf("%d_", pos)) && (pos == 1 || reached[e.Source]) {
				keep[i] = true
				reached[e.Target] = true
			}
		}
	}
	var kept []Edge
	for i, e := range out {
		if keep[i] {
			kept = append(kept, e)
		}
	}
	return kept
}

// PathKey is the edge end of a path's i-th item (0-based).
func PathKey(i int, p []Stop) string { return fmt.Sprintf("%d_%s", i+1, p[i].item) }

// edgeActors are the actors of the paths taking the edge from start to
// end ("" for either: any), each with the number of those paths.
func (q Paths) EdgeActors(all []Event, start, end string) map[string]int {
	out := map[string]int{}
	q.Walk(all, func(actor string, p []Stop) {
		for i := 0; i+1 < len(p); i++ {
			if (start == "" || PathKey(i, p) == start) && (end == "" || PathKey(i+1, p) == end) {
				out[actor]++
			}
		}
	})
	return out
}

// dropoffActors are the actors of a path ending at key.
func (q Paths) DropoffActors(all []Event, key string) map[string]int {
	out := map[string]int{}
	q.Walk(all, func(actor string, p []Stop) {
		if PathKey(len(p)-1, p) == key {
			out[actor]++
		}
	})
	return out
}

// compact keeps the last event of each run of one item.
func compact(path []Stop) []Stop {
	var out []Stop
	for i, s := range path {
		if i+1 < len(path) && path[i+1].item == s.item {
			continue
		}
		out = append(out, s)
	}
	return out
}

// cut applies the start and end points and the step limit.
func (q Paths) Cut(p []Stop) []Stop {
	k := q.StepLimit
	if k == 0 {
		k = 5
	}
	first := func(p []Stop, item string) int {
		for i, s := range p {
			if s.item == item {
				return i
			}
		}
		return -1
	}
	switch {
	case q.Start != "" && q.End != "":
		s := first(p, q.Start)
		if s < 0 {
			return nil
		}
		e := first(p[s+1:], q.End)
		if e < 0 {
			return nil
		}
		full := p[s : s+1+e+1]
		if len(full) <= k {
			return full
		}
		h := k / 2
		out := append([]Stop{}, full[:h]...)
		out = append(out, Stop{"...", full[h].at})
		return append(out, full[len(full)-h:]...)
	case q.Start != "":
		s := first(p, q.Start)
		if s < 0 {
			return nil
		}
		return p[s:min(len(p), s+k)]
	case q.End != "":
		e := first(p, q.End)
		if e < 0 {
			return nil
		}
		return p[max(0, e+1-k) : e+1]
	}
	return p[:min(len(p), k)]
}

// params is the request the API takes.
func (q Paths) Params() map[string]any {
	m := map[string]any{"insight": "PATHS", "date_from": q.From.Format("2006-01-02T15:04:05Z"),
		"date_to": q.To.Add(-time.Microsecond).Format("2006-01-02T15:04:05.999999Z")}
	var types []string
	if q.Pageviews {
		types = append(types, "$pageview")
	}
	if q.Screens {
		types = append(types, "$screen")
	}
	if q.AllCustom {
		types = append(types, "custom_event")
	}
	if len(types) > 0 {
		m["include_event_types"] = types
	}
	if len(q.Custom) > 0 {
		m["include_custom_events"] = q.Custom
	}
	if len(q.Exclude) > 0 {
		m["exclude_events"] = q.Exclude
	}
	if len(q.Cleaning) > 0 {
		var rules []map[string]string
		for _, c := range q.Cleaning {
			rules = append(rules, map[string]string{"regex": c[0], "alias": c[1]})
		}
		m["local_path_cleaning_filters"] = rules
	}
	if len(q.Groupings) > 0 {
		m["path_groupings"] = q.Groupings
	}
	if q.Replacements {
		m["path_replacements"] = true
	}
	if len(q.Properties) > 0 {
		m["properties"] = Conditions(q.Properties)
	}
	if q.TestAccounts {
		m["filter_test_accounts"] = true
	}
	if q.GroupIndex > 0 {
		m["aggregation_group_type_index"] = q.GroupIndex
	}
	if q.Start != "" {
		m["start_point"] = q.Start
	}
	if q.End != "" {
		m["end_point"] = q.End
	}
	if q.StepLimit > 0 {
		m["step_limit"] = q.StepLimit
	}
	if q.EdgeLimit > 0 {
		m["edge_limit"] = q.EdgeLimit
	}
	if q.MinWeight > 0 {
		m["min_edge_weight"] = q.MinWeight
	}
	if q.MaxWeight > 0 {
		m["max_edge_weight"] = q.MaxWeight
	}
	if q.Funnel != nil {
		f := q.Funnel.Filter(nil)
		f["funnel_step"] = q.FunnelStep
		m["funnel_filter"] = f
		m["funnel_paths"] = q.FunnelPaths
	}
	return m
}
