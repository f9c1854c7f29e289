package querybuilder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Query nodes are PostHog's second generation of insight requests (an
// insight's `query`, the body of /query/): an InsightVizNode around a
// TrendsQuery, FunnelsQuery, RetentionQuery, PathsQuery, StickinessQuery
// or LifecycleQuery. Each translates to the legacy filter its kind
// already parses (nodes_<kind>.go), so that a node and its legacy
// equivalent are one request: the same statement, the same result and
// the same cache entry. A field the translation does not know, or one
// whose value would change the answer in a way the legacy request
// cannot say, is a *ValidationError whose Attr is its JSON path: a node
// is never answered as something other than what it asked.

// InsightNode is a translated insight node: the kind computing it and
// the legacy filter it is equivalent to.
type InsightNode struct {
	// Kind is the node's kind as PostHog names it (TrendsQuery, ...).
	Kind   string
	Params Params
	// Origins maps a legacy parameter to the node field it came from
	// (interval: query.interval, events: query.series), so that a
	// problem the kind finds names what the client sent (NodeErrors).
	Origins map[string]string
}

// NodeErrors is err with each validation problem's Attr, a legacy
// parameter, replaced by the node field it came from (node.Origins);
// other errors are returned as they are.
func NodeErrors(node *InsightNode, err error) error {
	ves := ValidationErrors(err)
	if len(ves) == 0 {
		return err
	}
	out := make([]error, len(ves))
	for i, ve := range ves {
		attr := ve.Attr
		if o, ok := node.Origins[attr]; ok {
			attr = o
		}
		out[i] = &ValidationError{Attr: attr, Detail: ve.Detail}
	}
	return errors.Join(out...)
}

// nodeKind is the registered kind whose insight node is named node.
func nodeKind(node string) (*Kind, bool) {
	for _, k := range kinds() {
		if k.Node != "" && k.Node == node {
			return k, true
		}
	}
	return nil, false
}

// IsInsightNode reports whether kind names an insight node (or the
// InsightVizNode around one).
func IsInsightNode(kind string) bool {
	_, ok := nodeKind(kind)
	return ok || kind == "InsightVizNode"
}

// SupportedNodeKinds lists the node kinds POST query/ answers, as an
// error message names them: HogQL and events queries, the viz node and
// every registered insight node.
func SupportedNodeKinds() string {
	nodes, _ := NodeInsights()
	all := append([]string{"HogQLQuery", "EventsQuery", "InsightVizNode"}, nodes...)
	return strings.Join(all[:len(all)-1], ", ") + " or " + all[len(all)-1]
}

// nodeKindList is the insight nodes for a message, sorted.
func nodeKindList() string {
	nodes, _ := NodeInsights()
	return strings.Join(slices.Sorted(slices.Values(nodes)), ", ")
}

// NodeKind reads a node's kind ("" when raw is not an object with one).
func NodeKind(raw json.RawMessage) string {
	var n struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(raw, &n) != nil {
		return ""
	}
	return n.Kind
}

// TranslateNode reads an insight node found at path (query, for an
// insight's or a /query/ body's) into the legacy filter of its kind.
// Every problem is returned, joined.
func TranslateNode(raw json.RawMessage, path string) (*InsightNode, error) {
	pr := &problems{}
	r := newNodeReader(raw, path, pr)
	if r == nil {
		return nil, pr.err()
	}
	r.origins = map[string]string{}
	if r.kind() == "InsightVizNode" {
		// The viz node's other fields say how a client shows the
		// result, not what it is.
		r.ignore("full", "showHeader", "showTable", "showCorrelationTable", "showLastComputation",
			"showLastComputationRefresh", "showFilters", "showResults", "showTimings", "showCorrelationTable",
			"embedded", "hidePersonsModal", "hideTooltipOnScroll", "vizSpecificOptions", "suppressSessionAnalysisWarning", "version")
		src := r.object("source")
		r.done()
		if src == nil {
			if pr.ok() {
				pr.add(path+".source", "%s.source is required: the insight query (TrendsQuery, FunnelsQuery, ...)", path)
			}
			return nil, pr.err()
		}
		r = src
	}
	kind := r.kind()
	k, ok := nodeKind(kind)
	if !ok {
		pr.add(r.path+".kind", "%s.kind %q is not an insight query; use one of %s", r.path, kind, nodeKindList())
		return nil, pr.err()
	}
	out := Params{"insight": mustMarshal(k.Insight)}
	r.top = out
	k.translate(r, out)
	r.done()
	if !pr.ok() {
		return nil, pr.err()
	}
	return &InsightNode{Kind: kind, Params: out, Origins: r.origins}, nil
}

// nodeReader reads one JSON object of a node: each field it reads or
// ignores is marked, and done reports the rest as unknown.
type nodeReader struct {
	path string
	m    map[string]json.RawMessage
	used map[string]bool
	pr   *problems
	// origins records the field each parameter of top, the legacy
	// request, was copied from (InsightNode.Origins); copies into other
	// maps (an entity's) are not the request's parameters.
	origins map[string]string
	top     Params
}

func newNodeReader(raw json.RawMessage, path string, pr *problems) *nodeReader {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		pr.add(path, "%s must be a JSON object", path)
		return nil
	}
	return &nodeReader{path: path, m: m, used: map[string]bool{"kind": true}, pr: pr}
}

func (r *nodeReader) at(field string) string { return r.path + "." + field }

func (r *nodeReader) kind() string {
	var k string
	json.Unmarshal(r.m["kind"], &k)
	return k
}

// raw is a field's value, nil when absent or null; the field is read.
func (r *nodeReader) raw(field string) json.RawMessage {
	r.used[field] = true
	v, ok := r.m[field]
	if !ok || isNull(v) {
		return nil
	}
	return v
}

// copy puts a field, when present, into out under a legacy name as it
// was written (numbers as written, so keys of equal requests are equal).
func (r *nodeReader) copy(field, param string, out Params) {
	if v := r.raw(field); v != nil {
		out[param] = bytes.TrimSpace(v)
		if r.top != nil && reflect.ValueOf(out).UnsafePointer() == reflect.ValueOf(r.top).UnsafePointer() {
			r.origin(param, field)
		}
	}
}

// copyAll copies fields named alike in both shapes.
func (r *nodeReader) copyAll(out Params, fields ...string) {
	for _, f := range fields {
		r.copy(f, f, out)
	}
}

// ignore marks fields that change how a client shows a result, not the
// result.
func (r *nodeReader) ignore(fields ...string) {
	for _, f := range fields {
		r.used[f] = true
	}
}

// object is a nested object field, nil when absent or null.
func (r *nodeReader) object(field string) *nodeReader {
	v := r.raw(field)
	if v == nil {
		return nil
	}
	o := newNodeReader(v, r.at(field), r.pr)
	if o != nil {
		o.origins, o.top = r.origins, r.top
	}
	return o
}

// origin records that the request's param came from field (one the
// translation builds rather than copies).
func (r *nodeReader) origin(param, field string) {
	if r.origins != nil {
		r.origins[param] = r.at(field)
	}
}

// list is a field holding a list, its items' raw values.
func (r *nodeReader) list(field string) []json.RawMessage {
	v := r.raw(field)
	if v == nil {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		r.pr.add(r.at(field), "%s must be a list", r.at(field))
	}
	return items
}

// refuse reports a field sent with a value that means something (not
// null, false, empty, or the default given): one insightd cannot honour
// without answering something else.
func (r *nodeReader) refuse(field, why string, defaults ...string) {
	v := r.raw(field)
	if v == nil {
		return
	}
	s := strings.TrimSpace(string(v))
	for _, d := range append([]string{"false", `""`, "[]", "{}", "0"}, defaults...) {
		if s == d {
			return
		}
	}
	r.pr.add(r.at(field), "%s is not supported: %s", r.at(field), why)
}

// done reports the fields nothing read.
func (r *nodeReader) done() {
	var unknown []string
	for k := range r.m {
		if !r.used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		r.pr.add(r.at(k), "%s is not a field insightd knows; remove it or send the legacy filter", r.at(k))
	}
}

// common reads what every insight query has: the range, the property
// filters, test accounts, groups, sampling and what only labels the
// request.
func (r *nodeReader) common(out Params) {
	if d := r.object("dateRange"); d != nil {
		d.copy("date_from", "date_from", out)
		d.copy("date_to", "date_to", out)
		d.copy("explicitDate", "explicit_date", out)
		d.done()
	}
	r.copy("interval", "interval", out)
	r.copy("properties", "properties", out)
	r.copy("filterTestAccounts", "filter_test_accounts", out)
	r.copy("aggregation_group_type_index", "aggregation_group_type_index", out)
	// samplingFactor asks for an estimate from a sample: the events table
	// has no sampling key, so every answer is exact, which is what a
	// sample estimates (PostHog answers exactly too where it cannot sample).
	r.ignore("samplingFactor", "response", "modifiers", "tags", "version", "dataColorTheme", "name", "conversionGoal")
}

// breakdown reads breakdownFilter into the legacy breakdown fields.
func (r *nodeReader) breakdown(out Params) {
	b := r.object("breakdownFilter")
	if b == nil {
		return
	}
	b.copyAll(out, "breakdown", "breakdown_type", "breakdown_limit", "breakdown_normalize_url",
		"breakdown_histogram_bin_count", "breakdown_group_type_index")
	if items := b.list("breakdowns"); len(items) > 0 {
		var list []map[string]json.RawMessage
		for i, raw := range items {
			br := newNodeReader(raw, fmt.Sprintf("%s[%d]", b.at("breakdowns"), i), r.pr)
			if br == nil {
				continue
			}
			item := Params{}
			br.copyAll(item, "property", "type", "normalize_url", "histogram_bin_count", "group_type_index")
			br.done()
			list = append(list, item)
		}
		out["breakdowns"] = mustMarshal(list)
		b.origin("breakdowns", "breakdowns")
	}
	b.refuse("breakdown_hide_other_aggregation", "the other series is always answered")
	b.refuse("breakdown_path_cleaning", "breakdown values are answered as sent; the project's path cleaning is not applied to them")
	b.done()
}

// compare reads compareFilter (compare, compare_to).
func (r *nodeReader) compare(out Params) {
	c := r.object("compareFilter")
	if c == nil {
		return
	}
	c.copyAll(out, "compare", "compare_to")
	c.done()
}

// series reads the node's series (EventsNode, ActionsNode) into the
// legacy events and actions lists, each keeping its place as order.
func (r *nodeReader) series(out Params) {
	var events, actions []Params
	for i, raw := range r.list("series") {
		e, kind := r.entity(raw, fmt.Sprintf("%s[%d]", r.at("series"), i))
		if e == nil {
			continue
		}
		e["order"] = json.RawMessage(strconv.Itoa(i))
		if kind == "ActionsNode" {
			actions = append(actions, e)
		} else {
			events = append(events, e)
		}
	}
	if events != nil {
		out["events"] = mustMarshal(events)
	}
	if actions != nil {
		out["actions"] = mustMarshal(actions)
	}
	r.origin("events", "series")
	r.origin("actions", "series")
}

// entity reads one EventsNode or ActionsNode at path as a legacy entity.
func (r *nodeReader) entity(raw json.RawMessage, path string) (Params, string) {
	e := newNodeReader(raw, path, r.pr)
	if e == nil {
		return nil, ""
	}
	out := Params{}
	kind := e.kind()
	switch kind {
	case "EventsNode":
		out["type"] = json.RawMessage(`"events"`)
		if v := e.raw("event"); v != nil {
			out["id"] = bytes.TrimSpace(v)
		} else {
			out["id"] = json.RawMessage("null")
		}
	case "ActionsNode":
		out["type"] = json.RawMessage(`"actions"`)
		e.copy("id", "id", out)
	default:
		r.pr.add(path+".kind", "%s.kind %q is not supported; use EventsNode or ActionsNode", path, kind)
		return nil, ""
	}
	// optionalInFunnel keeps its name in the legacy entity, as PostHog's
	// legacy filters have it; kinds other than funnels ignore it.
	e.copyAll(out, "name", "custom_name", "math", "math_property", "math_group_type_index", "properties", "optionalInFunnel")
	e.refuse("math_multiplier", "series multipliers are not supported", "1", "1.0")
	e.refuse("math_property_revenue_currency", "revenue currency conversion is not supported")
	e.refuse("math_hogql", "HogQL math is not supported; use math and math_property")
	e.refuse("fixedProperties", "fixed properties are not supported; use properties")
	e.refuse("limit", "series limits are not supported")
	e.refuse("orderBy", "series ordering is not supported")
	e.ignore("response", "version", "math_property_type")
	e.done()
	return out, kind
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Only maps of raw JSON values reach here, which always encode.
		return json.RawMessage("null")
	}
	return b
}
