package querybuilder

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ActorsNode is a translated ActorsQuery: the insight request whose
// number it lists the actors of (Source, computed by Kind), the selection
// of that number in the persons endpoint's parameters, and the columns,
// order and page to answer.
type ActorsNode struct {
	Kind      *Kind
	Source    *InsightNode
	Selection Params
	Select    []ActorsColumn
	Order     []ActorsOrder
	Limit     int
	Offset    int
}

// Params is the source's request with the selection beside it, as a
// people URL carries both.
func (n *ActorsNode) Params() Params {
	out := Params{}
	for k, v := range n.Source.Params {
		out[k] = v
	}
	for k, v := range n.Selection {
		out[k] = v
	}
	return out
}

// ActorsColumn is one column an actors query selects.
type ActorsColumn struct {
	// Name is the column as the client named it (its header).
	Name string
	// What is its value: "actor" (the person or group object), "id",
	// "created_at", "event_count", "matched_recordings", or
	// "appearance" (retention's: Interval's 0 or 1).
	What     string
	Interval int
}

// ActorsPageMax is the most actors one page of an actors query holds
// (PostHog's own cap on an actors query's limit is higher; a page is
// what the persons endpoints page by, so the two list alike).
const ActorsPageMax = 100

// retentionColumn is a retention actor's appearance column: day_0,
// week_3 (the period and the interval).
var retentionColumn = regexp.MustCompile(`^(hour|day|week|month)_([0-9]{1,2})$`)

// TranslateActorsNode reads an ActorsQuery found at path (query) whose
// source is an InsightActorsQuery (over a TrendsQuery, StickinessQuery,
// LifecycleQuery or RetentionQuery), a FunnelsActorsQuery or a
// FunnelCorrelationActorsQuery (nodes_correlation.go).
func TranslateActorsNode(raw json.RawMessage, path string) (*ActorsNode, error) {
	pr := &problems{}
	r := newNodeReader(raw, path, pr)
	if r == nil {
		return nil, pr.err()
	}
	r.ignore("modifiers", "response", "tags", "version")
	r.refuse("search", "insightd lists every actor of the number; search the persons list instead")
	r.refuse("properties", "an actors query over an insight lists the insight's actors; filter the insight instead")
	r.refuse("fixedProperties", "an actors query over an insight lists the insight's actors; filter the insight instead")
	out := &ActorsNode{Limit: ActorsPageMax, Selection: Params{}}
	src := r.object("source")
	if src == nil {
		if pr.ok() {
			pr.add(r.at("source"), "%s is required: an InsightActorsQuery, FunnelsActorsQuery or FunnelCorrelationActorsQuery", r.at("source"))
		}
		r.done()
		return nil, pr.err()
	}
	out.Source, out.Kind = src.actorsSource(out.Selection)
	out.Select = r.actorsSelect(out.Kind)
	out.Order = r.actorsOrder()
	for name, v := range map[string]*int{"limit": &out.Limit, "offset": &out.Offset} {
		if raw := r.raw(name); raw != nil {
			n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil || n < 0 {
				pr.add(r.at(name), "%s must be a whole number, 0 or more", r.at(name))
			}
			*v = n
		}
	}
	if out.Limit == 0 || out.Limit > ActorsPageMax {
		out.Limit = ActorsPageMax
	}
	r.done()
	if !pr.ok() {
		return nil, pr.err()
	}
	return out, nil
}

// actorsSource reads an InsightActorsQuery, FunnelsActorsQuery or
// FunnelCorrelationActorsQuery: its insight query and the selection of
// one of its numbers.
func (r *nodeReader) actorsSource(sel Params) (*InsightNode, *Kind) {
	kind := r.kind()
	if kind != "InsightActorsQuery" && kind != "FunnelsActorsQuery" && kind != "FunnelCorrelationActorsQuery" {
		r.pr.add(r.at("kind"), "%s %q is not an actors source insightd answers; use InsightActorsQuery, FunnelsActorsQuery or FunnelCorrelationActorsQuery", r.at("kind"), kind)
		return nil, nil
	}
	r.ignore("modifiers", "response", "version", "includeRecordings")
	// PostHog's tools page on the ActorsQuery (they move these there).
	r.refuse("limit", "page with the ActorsQuery's limit", "100")
	r.refuse("offset", "page with the ActorsQuery's offset")
	if kind == "FunnelCorrelationActorsQuery" {
		return r.correlationActorsSource(sel)
	}
	raw := r.raw("source")
	if raw == nil {
		r.pr.add(r.at("source"), "%s is required: the insight query whose actors to list", r.at("source"))
		r.done()
		return nil, nil
	}
	node, err := TranslateNode(raw, r.at("source"))
	if err != nil {
		r.pr.errs = append(r.pr.errs, err)
		r.ignore("day", "series", "breakdown", "compare", "status", "interval", "funnelStep", "funnelStepBreakdown",
			"funnelCustomSteps", "funnelTrendsDropOff", "funnelTrendsEntrancePeriodStart")
		r.done()
		return nil, nil
	}
	k, _ := nodeKind(node.Kind)
	if node.Origins == nil {
		node.Origins = map[string]string{}
	}
	// A problem with the selection names the field it came from, as
	// one with the source's request does (NodeErrors with node.Origins).
	for field, param := range map[string]string{"day": "", "series": "series", "breakdown": "breakdown_value",
		"compare": "period", "status": "lifecycle_type", "interval": "selected_interval", "funnelStep": "funnel_step",
		"funnelStepBreakdown": "funnel_step_breakdown"} {
		if param != "" {
			node.Origins[param] = r.at(field)
		}
	}
	for _, param := range []string{"bucket", "stickiness_days", "target_date"} {
		node.Origins[param] = r.at("day")
	}
	text := func(field, param string) {
		if v := r.raw(field); v != nil {
			sel[param] = json.RawMessage(v)
		}
	}
	switch {
	case kind == "FunnelsActorsQuery":
		if node.Kind != "FunnelsQuery" {
			r.pr.add(r.at("source.kind"), "a FunnelsActorsQuery's source is a FunnelsQuery, got %q", node.Kind)
		}
		if r.raw("funnelStep") == nil {
			r.pr.add(r.at("funnelStep"), "%s is required: the step (1 = the first) whose actors to list, negative for those who dropped before it", r.at("funnelStep"))
		}
		text("funnelStep", "funnel_step")
		r.stepBreakdown(sel)
		r.refuse("funnelCustomSteps", "list the actors of one step (funnelStep)")
		r.refuse("funnelTrendsDropOff", "the actors of a funnel trend's point are not listed yet; list a step's (funnelStep)")
		r.refuse("funnelTrendsEntrancePeriodStart", "the actors of a funnel trend's point are not listed yet; list a step's (funnelStep)")
	case node.Kind == "TrendsQuery":
		sel["series"] = json.RawMessage("0")
		text("series", "series")
		text("day", "bucket")
		r.selectionValue("breakdown", "breakdown_value", sel)
		r.comparePeriod(sel)
	case node.Kind == "StickinessQuery":
		sel["series"] = json.RawMessage("0")
		text("series", "series")
		text("day", "stickiness_days")
		r.comparePeriod(sel)
	case node.Kind == "LifecycleQuery":
		text("day", "target_date")
		text("status", "lifecycle_type")
		r.ignore("series")
	case node.Kind == "RetentionQuery":
		text("interval", "selected_interval")
		r.selectionValue("breakdown", "breakdown_value", sel)
	default:
		r.pr.add(r.at("source.kind"), "the actors of a %s are not listed by an InsightActorsQuery; use TrendsQuery, StickinessQuery, LifecycleQuery or RetentionQuery", node.Kind)
	}
	r.done()
	return node, k
}

// selectionValue reads a breakdown value (text, a number, or a list for
// a multiple breakdown) into the selection as the persons endpoint takes
// it.
func (r *nodeReader) selectionValue(field, param string, sel Params) {
	v := r.raw(field)
	if v == nil {
		return
	}
	if s, err := scalarText(v); err == nil {
		sel[param] = mustMarshal(s)
		return
	}
	sel[param] = mustMarshal(string(v)) // a list: its JSON text, as people URLs carry it
}

// stepBreakdown is selectionValue for a funnel step's breakdown value.
func (r *nodeReader) stepBreakdown(sel Params) {
	r.selectionValue("funnelStepBreakdown", "funnel_step_breakdown", sel)
}

// comparePeriod reads compare: current (the default) or previous.
func (r *nodeReader) comparePeriod(sel Params) {
	v := r.raw("compare")
	if v == nil {
		return
	}
	var s string
	json.Unmarshal(v, &s)
	switch s {
	case "current":
		sel["period"] = json.RawMessage("0")
	case "previous":
		sel["period"] = json.RawMessage("1")
	default:
		r.pr.add(r.at("compare"), "%s must be current or previous", r.at("compare"))
	}
}

// actorsSelect reads select: the columns PostHog's actors queries name
// (actor or person, id, created_at, event_count, matched_recordings,
// retention's period_N); by default actor alone.
func (r *nodeReader) actorsSelect(k *Kind) []ActorsColumn {
	items := r.list("select")
	if len(items) == 0 {
		return []ActorsColumn{{Name: "actor", What: "actor"}}
	}
	var out []ActorsColumn
	for i, raw := range items {
		var name string
		if json.Unmarshal(raw, &name) != nil {
			r.pr.add(fmt.Sprintf("%s[%d]", r.at("select"), i), "%s[%d] must be a column name", r.at("select"), i)
			continue
		}
		c := ActorsColumn{Name: name}
		switch m := retentionColumn.FindStringSubmatch(name); {
		case name == "actor" || name == "person":
			c.What = "actor"
		case name == "id" || name == "actor_id" || name == "person_id":
			c.What = "id"
		case name == "created_at" || name == "matched_recordings":
			c.What = name
		case name == "event_count":
			if k != nil && k != &trendsKind {
				r.pr.add(fmt.Sprintf("%s[%d]", r.at("select"), i), "event_count is counted for the actors of a trend; a %s's actors have none", kindLabel(k))
			}
			c.What = name
		case m != nil && k == &retentionKind:
			c.What = "appearance"
			c.Interval, _ = strconv.Atoi(m[2])
		default:
			r.pr.add(fmt.Sprintf("%s[%d]", r.at("select"), i), "%s[%d] %q is not a column insightd lists; use actor, person, id, created_at, event_count, matched_recordings or (retention) day_N",
				r.at("select"), i, name)
		}
		out = append(out, c)
	}
	return out
}

// actorsOrders are the orderBy terms actors queries may send, as
// PostHog's tools write them.
var actorsOrders = map[string]ActorsOrder{
	"event_count DESC":           OrderEventCountDesc,
	"actor_id":                   OrderActor,
	"actor_id ASC":               OrderActor,
	"actor_id DESC":              OrderActorDesc,
	"id":                         OrderActor,
	"id DESC":                    OrderActorDesc,
	"person_id":                  OrderActor,
	"person_id DESC":             OrderActorDesc,
	"length(appearances) DESC":   OrderAppearancesDesc,
	"arraySum(appearances) DESC": OrderAppearancesDesc,
}

func (r *nodeReader) actorsOrder() []ActorsOrder {
	var out []ActorsOrder
	for i, raw := range r.list("orderBy") {
		var term string
		json.Unmarshal(raw, &term)
		o, ok := actorsOrders[strings.Join(strings.Fields(term), " ")]
		if !ok {
			r.pr.add(fmt.Sprintf("%s[%d]", r.at("orderBy"), i), "%s[%d] %q is not an order insightd lists actors by; use event_count DESC, actor_id [DESC] or length(appearances) DESC",
				r.at("orderBy"), i, term)
			continue
		}
		out = append(out, o)
	}
	return out
}
