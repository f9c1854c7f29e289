package querybuilder

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// CorrelationQuery is a funnel correlation request
// (insights/funnel/correlation): which events, person properties or event
// properties go with converting in a funnel (analytics.md, Funnel
// correlation). The funnel is a whole funnel request.
type CorrelationQuery struct {
	*FunnelQuery

	// Type is events, properties or event_with_properties.
	Type string
	// Names are the person properties (properties; AllNames for $all),
	// EventNames the events whose properties are items
	// (event_with_properties); Exclude* are left out.
	Names, EventNames                                   []string
	AllNames                                            bool
	ExcludeNames, ExcludeEvents, ExcludeEventProperties []string

	// stepEvents are the names of the funnel's step events, and
	// stepConds the conditions of the action steps that name no event
	// (stepEventsOf): events correlation leaves both out.
	stepEvents []string
	stepConds  []*PropertyFilter
}

// Correlation types.
const (
	CorrelationEvents              = "events"
	CorrelationProperties          = "properties"
	CorrelationEventWithProperties = "event_with_properties"
	correlationTop                 = 10
	maxCorrelationNames            = 100
)

// correlationKind answers insights/funnel/correlation.
var correlationKind = Kind{Name: "correlation", Route: "funnel/correlation", Persons: "funnel/correlation",
	Parse: func(p Params, env Env) (Query, error) { return ParseCorrelation(p, env) }}

// ParseCorrelation reads a correlation request: a funnel request (without
// a breakdown) and the correlation's parameters.
func ParseCorrelation(p Params, env Env) (*CorrelationQuery, error) {
	f, err := ParseFunnel(p, env)
	if f != nil {
		// The correlation splits the funnel's actors by whether they
		// converted: one row each, whatever chart the funnel was drawn
		// as (funnel trends would give one per entry period).
		f.Viz = VizSteps
	}
	pr := &problems{}
	q := &CorrelationQuery{FunnelQuery: f, Type: CorrelationEvents}
	if s, ok := p.str("funnel_correlation_type", pr); ok && s != "" {
		switch s {
		case CorrelationEvents, CorrelationProperties, CorrelationEventWithProperties:
			q.Type = s
		default:
			pr.add("funnel_correlation_type", "funnel_correlation_type must be events, properties or event_with_properties; got %q", s)
		}
	}
	if p.present("breakdown") || p.present("breakdowns") {
		pr.add("breakdown", "funnel correlation takes a funnel without a breakdown")
	}
	if f != nil && len(f.Steps) == 1 {
		// Everyone who entered a one-step funnel converted.
		pr.add("events", "funnel correlation compares the actors who converted with those who dropped off: a one-step funnel has no drop-off; add a step")
	}
	list := func(name string) []string {
		l := stringList(p, name, pr)
		if len(l) > maxCorrelationNames {
			pr.add(name, "%s holds at most %d names", name, maxCorrelationNames)
		}
		return l
	}
	for _, n := range list("funnel_correlation_names") {
		if n == "$all" {
			q.AllNames = true
		} else {
			q.Names = append(q.Names, n)
		}
	}
	q.ExcludeNames = list("funnel_correlation_exclude_names")
	q.EventNames = list("funnel_correlation_event_names")
	q.ExcludeEventProperties = list("funnel_correlation_event_exclude_property_names")
	q.ExcludeEvents = list("funnel_correlation_exclude_event_names")
	if f != nil {
		q.projectExclusions(pr)
		q.stepEventsOf(pr)
	}
	switch {
	case q.Type == CorrelationProperties && !q.AllNames && len(q.Names) == 0:
		pr.add("funnel_correlation_names", "property correlation needs funnel_correlation_names: person properties, or $all")
	case q.Type == CorrelationEventWithProperties && len(q.EventNames) == 0:
		pr.add("funnel_correlation_event_names", "event_with_properties correlation needs funnel_correlation_event_names")
	case q.Type == CorrelationProperties && f != nil && f.AggregationGroupTypeIndex > 0:
		pr.add("aggregation_group_type_index", "property correlation reads person properties; groups have none here")
	}
	return q, errors.Join(err, pr.err())
}

// projectExclusions adds the project's correlation_config exclusions
// (excluded_person_property_names, excluded_event_names,
// excluded_event_property_names) to the request's.
func (q *CorrelationQuery) projectExclusions(pr *problems) {
	raw := q.Project.CorrelationConfig
	if len(raw) == 0 || isNull(raw) {
		return
	}
	var cfg struct {
		Persons []string `json:"excluded_person_property_names"`
		Events  []string `json:"excluded_event_names"`
		Props   []string `json:"excluded_event_property_names"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		pr.add("correlation_config", "the project's correlation_config is not an object of name lists")
		return
	}
	if len(cfg.Persons)+len(cfg.Events)+len(cfg.Props) == 0 {
		return
	}
	q.useSetting("correlation_config", raw)
	q.ExcludeNames = append(q.ExcludeNames, cfg.Persons...)
	q.ExcludeEvents = append(q.ExcludeEvents, cfg.Events...)
	q.ExcludeEventProperties = append(q.ExcludeEventProperties, cfg.Props...)
}

// Needs implements Query.
func (q *CorrelationQuery) Needs() Needs { return q.FunnelQuery.Needs() }

// Build implements Query.
func (q *CorrelationQuery) Build(f Facts) (Statement, error) { return BuildCorrelation(q, f) }

// Shape implements Query.
func (q *CorrelationQuery) Shape(rows [][]any) (Result, error) { return ShapeCorrelation(q, rows) }

// Decode implements Query.
func (q *CorrelationQuery) Decode(raw json.RawMessage) (Result, error) {
	var r CorrelationResult
	return r, json.Unmarshal(raw, &r)
}

// CorrelationResult is a correlation's items and whether the funnel's
// successes and failures are too lopsided to trust them.
type CorrelationResult struct {
	Events []CorrelationItem `json:"events"`
	Skewed bool              `json:"skewed"`
}

// CorrelationItem is one event, property value or event property value.
type CorrelationItem struct {
	Event            CorrelationEvent `json:"event"`
	SuccessCount     int64            `json:"success_count"`
	FailureCount     int64            `json:"failure_count"`
	OddsRatio        float64          `json:"odds_ratio"`
	CorrelationType  string           `json:"correlation_type"`
	SuccessPeopleURL string           `json:"success_people_url"`
	FailurePeopleURL string           `json:"failure_people_url"`
}

// CorrelationEvent names an item as PostHog did: its name in event.
type CorrelationEvent struct {
	Event      string         `json:"event"`
	Properties map[string]any `json:"properties"`
	Elements   []any          `json:"elements"`
}

// Table implements Result: one row per item.
func (r CorrelationResult) Table() ([]string, [][]string) {
	rows := make([][]string, len(r.Events))
	for i, e := range r.Events {
		rows[i] = []string{e.Event.Event, e.CorrelationType, strconv.FormatInt(e.SuccessCount, 10), strconv.FormatInt(e.FailureCount, 10),
			strconv.FormatFloat(e.OddsRatio, 'f', -1, 64)}
	}
	return []string{"item", "correlation_type", "success_count", "failure_count", "odds_ratio"}, rows
}

// ShapeCorrelation turns the statement's rows (correlationColumns: the
// totals row first, item NULL) into the result: odds ratios, the 10
// strongest items each way.
func ShapeCorrelation(q *CorrelationQuery, rows [][]any) (CorrelationResult, error) {
	var total [2]int64
	type counted struct {
		name string
		s, f int64
	}
	var items []counted
	for _, r := range rows {
		if len(r) != len(correlationColumns) {
			return CorrelationResult{}, fmt.Errorf("querybuilder: a correlation row has %d columns, want %d", len(r), len(correlationColumns))
		}
		s, err1 := asInt(r[1])
		f, err2 := asInt(r[2])
		if err := errors.Join(err1, err2); err != nil {
			return CorrelationResult{}, err
		}
		if r[0] == nil {
			total = [2]int64{int64(s), int64(f)}
			continue
		}
		items = append(items, counted{fmt.Sprint(r[0]), int64(s), int64(f)})
	}
	S, F := total[0], total[1]
	if S == 0 || F == 0 {
		return CorrelationResult{Events: []CorrelationItem{}, Skewed: true}, nil
	}
	res := CorrelationResult{Skewed: float64(S)/float64(F) > 10 || float64(F)/float64(S) > 10, Events: []CorrelationItem{}}
	threshold := math.Min(25, 0.02*float64(S+F))
	var success, failure []CorrelationItem
	base := q.peopleBase("funnel/correlation")
	for _, it := range items {
		if float64(it.s+it.f) < threshold || (q.Type == CorrelationEventWithProperties && it.s+it.f <= 2) {
			continue
		}
		ratio := (float64(it.s+1) * float64(F-it.f+1)) / (float64(S-it.s+1) * float64(it.f+1))
		parts, err := q.itemParts(it.name)
		if err != nil {
			return CorrelationResult{}, err
		}
		c := CorrelationItem{Event: CorrelationEvent{Event: strings.Join(parts, "::"), Properties: map[string]any{}, Elements: []any{}},
			SuccessCount: it.s, FailureCount: it.f, OddsRatio: ratio, CorrelationType: "failure"}
		sel := q.selection(parts)
		sel["funnel_correlation_person_converted"] = "true"
		c.SuccessPeopleURL = withSelection(base, sel)
		sel["funnel_correlation_person_converted"] = "false"
		c.FailurePeopleURL = withSelection(base, sel)
		if ratio > 1 {
			c.CorrelationType = "success"
			success = append(success, c)
		} else {
			failure = append(failure, c)
		}
	}
	sort.SliceStable(success, func(i, j int) bool {
		if success[i].OddsRatio != success[j].OddsRatio {
			return success[i].OddsRatio > success[j].OddsRatio
		}
		return success[i].Event.Event < success[j].Event.Event
	})
	sort.SliceStable(failure, func(i, j int) bool {
		if failure[i].OddsRatio != failure[j].OddsRatio {
			return failure[i].OddsRatio < failure[j].OddsRatio
		}
		return failure[i].Event.Event < failure[j].Event.Event
	})
	res.Events = append(res.Events, success[:min(len(success), correlationTop)]...)
	res.Events = append(res.Events, failure[:min(len(failure), correlationTop)]...)
	return res, nil
}

// selection is the persons endpoint's selection of an item (its parts,
// itemParts): the event (events), the property value (properties), or the
// event with its property value (event_with_properties), as PostHog's
// URLs named them.
func (q *CorrelationQuery) selection(parts []string) map[string]string {
	switch q.Type {
	case CorrelationProperties:
		b, _ := json.Marshal([]map[string]any{{"key": parts[0], "value": parts[1], "operator": "exact", "type": "person"}})
		return map[string]string{"funnel_correlation_property_values": string(b)}
	case CorrelationEventWithProperties:
		b, _ := json.Marshal(map[string]any{"id": parts[0], "type": "events",
			"properties": []map[string]any{{"key": parts[1], "value": parts[2], "operator": "exact", "type": "event"}}})
		return map[string]string{"funnel_correlation_person_entity": string(b)}
	}
	b, _ := json.Marshal(map[string]any{"id": parts[0], "type": "events"})
	return map[string]string{"funnel_correlation_person_entity": string(b)}
}

// Items as the statement holds them. An item is shown as its parts
// joined by "::" (PostHog's key::value and event::key::value), but a name
// or value may itself hold "::", so the statement's item text starts
// with the byte lengths of every part but the last, each followed by ':'
// ("4:plan::pro"): read back, the parts are exact. An event item is the
// event's name alone.
func (q *CorrelationQuery) partCount() int {
	switch q.Type {
	case CorrelationProperties:
		return 2
	case CorrelationEventWithProperties:
		return 3
	}
	return 1
}

// itemText is the statement's text of an item of these parts.
func itemText(parts ...string) string {
	var b strings.Builder
	for _, p := range parts[:len(parts)-1] {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
	}
	b.WriteString(strings.Join(parts, "::"))
	return b.String()
}

// itemParts reads an item's parts back from the statement's text.
func (q *CorrelationQuery) itemParts(item string) ([]string, error) {
	n := q.partCount()
	bad := fmt.Errorf("querybuilder: a correlation item %q does not hold %d parts", item, n)
	lens := make([]int, n-1)
	rest := item
	for i := range lens {
		digits, after, ok := strings.Cut(rest, ":")
		l, err := strconv.Atoi(digits)
		if !ok || err != nil || l < 0 {
			return nil, bad
		}
		lens[i], rest = l, after
	}
	parts := make([]string, 0, n)
	for _, l := range lens {
		if len(rest) < l+2 || rest[l:l+2] != "::" {
			return nil, bad
		}
		parts, rest = append(parts, rest[:l]), rest[l+2:]
	}
	return append(parts, rest), nil
}

// itemOf reads an item back from a persons selection, as the
// statement's text.
func (q *CorrelationQuery) itemOf(sel Params, pr *problems) string {
	if q.Type == CorrelationProperties {
		raw, ok := sel.document("funnel_correlation_property_values")
		var vals []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		}
		if !ok || json.Unmarshal(raw, &vals) != nil || len(vals) != 1 {
			pr.add("funnel_correlation_property_values", "funnel_correlation_property_values must hold one {key, value}")
			return ""
		}
		return itemText(vals[0].Key, refText(vals[0].Value))
	}
	raw, ok := sel.document("funnel_correlation_person_entity")
	var ent struct {
		ID         any `json:"id"`
		Properties []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"properties"`
	}
	if !ok || json.Unmarshal(raw, &ent) != nil || ent.ID == nil {
		pr.add("funnel_correlation_person_entity", "funnel_correlation_person_entity must be an event: {\"id\": name}")
		return ""
	}
	name := fmt.Sprint(ent.ID)
	if q.Type == CorrelationEventWithProperties {
		if len(ent.Properties) != 1 {
			pr.add("funnel_correlation_person_entity", "funnel_correlation_person_entity must hold one property {key, value}")
			return ""
		}
		return itemText(name, ent.Properties[0].Key, refText(ent.Properties[0].Value))
	}
	return name
}

// stepEventsOf finds the funnel's step events, which events correlation
// leaves out (analytics.md): an event step's name (whatever its property
// conditions, as PostHog did); for an action step, the event each of the
// action's steps names (PostHog's get_step_events), and for an action step
// that names no event but matches by URL, properties or elements, the
// events that match it: no name identifies them, and leaving every event
// out would leave nothing. A step of any event (or an action step with no
// conditions) excludes nothing.
func (q *CorrelationQuery) stepEventsOf(pr *problems) {
	pp := &propertyParser{common: &q.Common, clock: q.clock, pr: pr}
	for _, e := range q.Steps {
		switch {
		case e.AllEvents:
		case e.Type == "actions":
			id, _ := refID(e.ID)
			var steps []actionStep
			if json.Unmarshal(q.actions[id].Steps, &steps) != nil {
				continue // reported when the action was read
			}
			for i, st := range steps {
				if st.Event != nil && *st.Event != "" {
					if !contains(q.stepEvents, *st.Event) {
						q.stepEvents = append(q.stepEvents, *st.Event)
					}
					continue
				}
				if f, ok := pp.actionStep(st, "events", fmt.Sprintf("action %d step %d", id, i)); ok && f != nil {
					q.stepConds = append(q.stepConds, f)
				}
			}
		default:
			if !contains(q.stepEvents, e.ID) {
				q.stepEvents = append(q.stepEvents, e.ID)
			}
		}
	}
}

// refText is a selection value as items hold it: a string as is, other
// values as their JSON text.
func refText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
