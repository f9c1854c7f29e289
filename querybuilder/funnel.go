package querybuilder

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// FunnelQuery is a validated funnel request (insights/funnel) or timing
// request (insights/timing): persons who do the steps in order inside
// the conversion window, counted at the furthest step each reaches.
type FunnelQuery struct {
	Common

	// Steps are the entities in order, 2 to MaxFunnelSteps.
	Steps []Entity

	// Window is the conversion window: a step counts when its event is
	// at most this long after the attempt's first step.
	Window time.Duration
	// Order is ordered, strict or unordered.
	Order string
	// Exclusions remove persons who did an event between two steps.
	Exclusions []Exclusion

	Breakdown *Breakdown
	// Attribution picks which step's event gives an event breakdown its
	// value: first_touch, last_touch or step (AttributionStep, 0-based).
	Attribution     string
	AttributionStep int

	// Viz is steps, trends or time_to_convert; timing requests are
	// VizTiming. FromStep and ToStep (0-based) bound the conversion that
	// trends, time_to_convert and timing measure.
	Viz              string
	FromStep, ToStep int
	// BinCount is time_to_convert's number of bins; 0 chooses it from
	// the number of persons.
	BinCount int

	AggregationGroupTypeIndex int

	// peopleBaseURL is the people URL of the request, made once per
	// result.
	peopleBaseURL string
}

// Exclusion is an event that, done between two steps of a person's
// counted attempt, removes the person from the funnel.
type Exclusion struct {
	Entity
	FromStep, ToStep int
}

// Funnel parameters and their defaults, from PostHog's legacy API.
const (
	MaxFunnelSteps        = 20
	funnelBreakdownLimit  = 10
	defaultFunnelWindow   = 14 * 24 * time.Hour
	maxFunnelWindow       = 10 * 366 * 24 * time.Hour
	maxFunnelBins         = 90
	maxFunnelExclusions   = 20
	orderOrdered          = "ordered"
	orderStrict           = "strict"
	orderUnordered        = "unordered"
	VizSteps              = "steps"
	VizTrends             = "trends"
	VizTimeToConvert      = "time_to_convert"
	VizTiming             = "timing"
	attributionFirstTouch = "first_touch"
	attributionLastTouch  = "last_touch"
	attributionStep       = "step"
)

// windowUnits are funnel_window_interval_unit's units. Weeks and months
// are fixed lengths (7 and 30 days), so the window does not depend on
// where in the calendar an attempt starts.
var windowUnits = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
	"week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour,
}

// funnelKind answers insights/funnel and computes FUNNELS insights;
// timingKind answers insights/timing.
var (
	funnelKind = Kind{Name: "funnel", Route: "funnel", Insight: "FUNNELS", Persons: "funnel",
		Parse: func(p Params, env Env) (Query, error) { return ParseFunnel(p, env) },
		Node:  "FunnelsQuery", translate: funnelsNode}
	timingKind = Kind{Name: "timing", Route: "timing",
		Parse: func(p Params, env Env) (Query, error) { return ParseTiming(p, env) }}
)

// ParseFunnel reads a funnel request (insights/funnel) from its
// parameters in env.
func ParseFunnel(p Params, env Env) (*FunnelQuery, error) {
	return parseFunnel(p, env, false)
}

// ParseTiming reads a timing request (insights/timing): a funnel whose
// answer is the distribution of the time persons take from
// funnel_from_step to funnel_to_step.
func ParseTiming(p Params, env Env) (*FunnelQuery, error) {
	return parseFunnel(p, env, true)
}

func parseFunnel(p Params, env Env, timing bool) (*FunnelQuery, error) {
	pr := &problems{}
	q := &FunnelQuery{Common: newCommon(env, pr), Window: defaultFunnelWindow,
		Order: orderOrdered, Viz: VizSteps, Attribution: attributionFirstTouch, FromStep: 0, ToStep: -1}
	pp := q.properties(pr)
	q.Steps = parseEntities(p, pp)
	q.parse(p, pr)
	q.Window = parseWindow(p, pr)
	if s, ok := p.str("funnel_order_type", pr); ok && s != "" {
		switch s = strings.ToLower(s); s {
		case orderOrdered, orderStrict, orderUnordered:
			q.Order = s
		default:
			pr.add("funnel_order_type", "funnel_order_type must be one of ordered, strict, unordered; got %q", s)
		}
	}
	q.Exclusions = parseExclusions(p, pp)
	q.Breakdown = parseBreakdown(p, breakdownOptions{defaultLimit: funnelBreakdownLimit, multi: true, pp: pp}, pr)
	if s, ok := p.str("breakdown_attribution_type", pr); ok && s != "" {
		switch s {
		case attributionFirstTouch, attributionLastTouch, attributionStep:
			q.Attribution = s
		case "all_events":
			pr.add("breakdown_attribution_type", "breakdown_attribution_type all_events is not supported; use first_touch, last_touch or step")
		default:
			pr.add("breakdown_attribution_type", "breakdown_attribution_type must be one of first_touch, last_touch, step; got %q", s)
		}
	}
	if n, ok := p.integer("breakdown_attribution_value", pr); ok {
		q.AttributionStep = int(n)
	}
	if timing {
		q.Viz = VizTiming
	} else if s, ok := p.str("funnel_viz_type", pr); ok && s != "" {
		switch s {
		case VizSteps, VizTrends, VizTimeToConvert:
			q.Viz = s
		default:
			pr.add("funnel_viz_type", "funnel_viz_type must be one of steps, trends, time_to_convert; got %q", s)
		}
	}
	if n, ok := p.integer("funnel_from_step", pr); ok {
		q.FromStep = int(n)
	}
	if n, ok := p.integer("funnel_to_step", pr); ok {
		if n < 0 {
			pr.add("funnel_to_step", "funnel_to_step must be a step index (0 or more), got %d", n)
		} else {
			q.ToStep = int(n)
		}
	}
	if n, ok := p.integer("bin_count", pr); ok {
		if n < 1 || n > maxFunnelBins {
			pr.add("bin_count", "bin_count must be between 1 and %d, got %d", maxFunnelBins, n)
		} else {
			q.BinCount = int(n)
		}
	}
	if n, ok := p.integer("aggregation_group_type_index", pr); ok {
		q.AggregationGroupTypeIndex = int(n)
	}
	return q, errors.Join(pr.err(), q.Validate())
}

// parseWindow reads the conversion window: funnel_window_days
// (deprecated) wins over funnel_window_interval and its unit.
func parseWindow(p Params, pr *problems) time.Duration {
	if n, ok := p.integer("funnel_window_days", pr); ok {
		if n < 1 || n > int64(maxFunnelWindow/(24*time.Hour)) {
			pr.add("funnel_window_days", "funnel_window_days must be between 1 and %d, got %d", int(maxFunnelWindow/(24*time.Hour)), n)
			return defaultFunnelWindow
		}
		return time.Duration(n) * 24 * time.Hour
	}
	unit, unitAttr := 24*time.Hour, "funnel_window_interval_unit"
	for _, name := range []string{"funnel_window_interval_unit", "funnel_window_interval_type"} {
		s, ok := p.str(name, pr)
		if !ok || s == "" {
			continue
		}
		u, known := windowUnits[strings.ToLower(s)]
		if !known {
			pr.add(name, "%s must be one of second, minute, hour, day, week, month; got %q", name, s)
			return defaultFunnelWindow
		}
		unit, unitAttr = u, name
		break
	}
	n, ok := p.integer("funnel_window_interval", pr)
	if !ok {
		n = 14
	}
	if n < 1 || n > int64(maxFunnelWindow/unit) {
		pr.add("funnel_window_interval", "funnel_window_interval must be between 1 and %d %ss (%s), got %d",
			int64(maxFunnelWindow/unit), unitName(unit), unitAttr, n)
		return defaultFunnelWindow
	}
	return time.Duration(n) * unit
}

func unitName(d time.Duration) string {
	for name, u := range windowUnits {
		if u == d {
			return name
		}
	}
	return "day"
}

// parseExclusions reads exclusions: events with funnel_from_step and
// funnel_to_step.
func parseExclusions(p Params, pp *propertyParser) []Exclusion {
	raw, ok := p.document("exclusions")
	if !ok {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		pp.pr.add("exclusions", "exclusions must be a list of {id, funnel_from_step, funnel_to_step}")
		return nil
	}
	if len(list) > maxFunnelExclusions {
		pp.pr.add("exclusions", "at most %d exclusions, got %d", maxFunnelExclusions, len(list))
		return nil
	}
	var out []Exclusion
	for i, item := range list {
		path := fmt.Sprintf("exclusions[%d]", i)
		local := &problems{}
		ep := &propertyParser{common: pp.common, clock: pp.clock, pr: local, relative: pp.relative}
		e, ok := parseEntity(item, "events", path, i, ep)
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(item, &fields) // parseEntity checked it is an object
		fp := Params(fields)
		from, fromOK := fp.integer("funnel_from_step", local)
		to, toOK := fp.integer("funnel_to_step", local)
		if !fromOK || !toOK {
			local.add("exclusions", "%s needs funnel_from_step and funnel_to_step (0-based step indexes)", path)
		}
		for _, err := range local.errs {
			var ve *ValidationError
			if errors.As(err, &ve) {
				pp.pr.add("exclusions", "%s", strings.Replace(ve.Detail, "events", "exclusions", 1))
			}
		}
		if ok && fromOK && toOK {
			out = append(out, Exclusion{Entity: e, FromStep: int(from), ToStep: int(to)})
		}
	}
	return out
}

// Validate checks the request as a whole: the steps, the exclusions'
// ranges and the steps the visualisations measure between.
func (q *FunnelQuery) Validate() error {
	pr := &problems{}
	if q.clock.loc == nil {
		return &ValidationError{Attr: "timezone", Detail: "the request was not built by ParseFunnel"}
	}
	n := len(q.Steps)
	switch {
	case n < 1:
		pr.add("events", "a funnel needs at least 1 step (events), got none")
	case n > MaxFunnelSteps:
		pr.add("events", "a funnel has at most %d steps, got %d", MaxFunnelSteps, n)
	}
	last := n - 1
	for i, x := range q.Exclusions {
		switch {
		case x.FromStep < 0 || x.ToStep > last || x.FromStep >= x.ToStep:
			pr.add("exclusions", "exclusions[%d]: funnel_from_step (%d) must be less than funnel_to_step (%d), both steps of the funnel (0 to %d)",
				i, x.FromStep, x.ToStep, last)
		default:
			for s := x.FromStep; s <= x.ToStep; s++ {
				if sameDefinition(x.Entity, q.Steps[s]) {
					pr.add("exclusions", "exclusions[%d]: the excluded event %q is step %d of the funnel, which it excludes", i, x.Label(), s)
					break
				}
			}
		}
	}
	if q.ToStep < 0 {
		q.ToStep = last
	}
	if n == 1 {
		q.validateOneStep(pr)
	}
	if n >= 2 && (q.FromStep < 0 || q.FromStep >= last) {
		pr.add("funnel_from_step", "funnel_from_step must be a step before the last (0 to %d), got %d", last-1, q.FromStep)
	} else if n >= 2 && (q.ToStep <= q.FromStep || q.ToStep > last) {
		pr.add("funnel_to_step", "funnel_to_step must be a step after funnel_from_step (%d) and at most %d, got %d", q.FromStep, last, q.ToStep)
	}
	if q.Breakdown != nil && q.Attribution == attributionStep && (q.AttributionStep < 0 || q.AttributionStep > last) {
		pr.add("breakdown_attribution_value", "breakdown_attribution_value must be a step of the funnel (0 to %d) with breakdown_attribution_type step, got %d",
			last, q.AttributionStep)
	}
	if q.AggregationGroupTypeIndex < 0 || q.AggregationGroupTypeIndex > maxGroupTypeIndex {
		pr.add("aggregation_group_type_index", "aggregation_group_type_index must be 0 (persons) or a group type 1 to %d, got %d",
			maxGroupTypeIndex, q.AggregationGroupTypeIndex)
	}
	q.validateOptional(pr)
	q.resolveRange(pr)
	if pr.ok() {
		if err := q.budget(); err != nil {
			pr.errs = append(pr.errs, err)
		}
	}
	return pr.err()
}

// validateOneStep checks what a one-step funnel can answer: it counts
// the actors who did the step (funnel trends: 100% of each bucket's
// entrants), and has no conversion between two steps to time, as PostHog
// says too ("funnel_to_step can only be one of" no step for time to
// convert).
func (q *FunnelQuery) validateOneStep(pr *problems) {
	switch {
	case q.Viz == VizTimeToConvert:
		pr.add("funnel_viz_type", "time_to_convert times the conversion between two steps: a one-step funnel has none; add a step or use steps")
	case q.Viz == VizTiming:
		pr.add("events", "timing measures the conversion between two steps: a one-step funnel has none; add a step")
	case q.FromStep != 0:
		pr.add("funnel_from_step", "a one-step funnel measures from step 0, its only step; got %d", q.FromStep)
	case q.ToStep != 0:
		pr.add("funnel_to_step", "a one-step funnel measures to step 0, its only step; got %d", q.ToStep)
	}
}

// sameDefinition reports whether two entities select the same events.
func sameDefinition(a, b Entity) bool {
	if a.AllEvents != b.AllEvents || a.ID != b.ID || a.Type != b.Type {
		return false
	}
	ja, _ := json.Marshal(a.Properties.JSON())
	jb, _ := json.Marshal(b.Properties.JSON())
	return string(ja) == string(jb)
}

// Needs implements Query: date_from=all needs the first event, and a
// funnel of persons, or one reading person properties, the overrides of
// merged persons.
func (q *FunnelQuery) Needs() Needs {
	return Needs{FirstEvent: q.FromAll(), PersonOverrides: q.AggregationGroupTypeIndex == 0 || q.usesPersons()}
}

// Build implements Query.
func (q *FunnelQuery) Build(f Facts) (Statement, error) { return BuildFunnel(q, f) }

// Shape implements Query.
func (q *FunnelQuery) Shape(rows [][]any) (Result, error) { return ShapeFunnel(q, rows) }

// Decode implements Query: the result type Shape gives this request.
func (q *FunnelQuery) Decode(raw json.RawMessage) (Result, error) {
	switch {
	case q.Viz == VizTrends:
		var r FunnelTrends
		return r, json.Unmarshal(raw, &r)
	case q.Viz == VizTimeToConvert || q.Viz == VizTiming:
		var r FunnelTimes
		return r, json.Unmarshal(raw, &r)
	case q.Breakdown != nil:
		var r FunnelBreakdown
		return r, json.Unmarshal(raw, &r)
	}
	var r FunnelSteps
	return r, json.Unmarshal(raw, &r)
}

// budget refuses a result past MaxResultCells: steps (funnel trends:
// buckets) x breakdown values.
func (q *FunnelQuery) budget() error {
	switch q.Viz {
	case VizTrends:
		return budget(q.Range.count()*q.Breakdown.values(), "funnel trend", "interval", "date_from", "date_to", "breakdown_limit")
	case VizSteps:
		return budget(len(q.Steps)*q.Breakdown.values(), "funnel", "breakdown_limit")
	case VizTimeToConvert, VizTiming:
		return q.timesBudget()
	}
	return nil
}

// usesSessions reports whether any filter or the breakdown reads session
// properties.
func (q *FunnelQuery) usesSessions() bool {
	fs := []*PropertyFilter{q.Properties, q.TestAccounts}
	for _, s := range q.Steps {
		fs = append(fs, s.Properties)
	}
	for _, x := range q.Exclusions {
		fs = append(fs, x.Properties)
	}
	return andFilters(fs...).usesSessions() || q.Breakdown.uses("session")
}

// usesPersons reports whether any filter or the breakdown reads person
// properties.
func (q *FunnelQuery) usesPersons() bool {
	if andFilters(q.Properties, q.TestAccounts).usesPersons() || q.Breakdown.uses("person") {
		return true
	}
	for _, s := range q.Steps {
		if s.Properties.usesPersons() {
			return true
		}
	}
	for _, x := range q.Exclusions {
		if x.Properties.usesPersons() {
			return true
		}
	}
	return false
}
