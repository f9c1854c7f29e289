package querybuilder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/insightd/insightd/querybuilder/hogql"
)

// The breakdown values PostHog clients know: the series that folds every
// value past the limit, and the series of events without the property.
const (
	BreakdownOther = "$$_posthog_breakdown_other_$$"
	BreakdownNull  = "$$_posthog_breakdown_null_$$"
)

// Breakdown splits each series by a property's value, or with multiple
// breakdowns by the list of several properties' values.
type Breakdown struct {
	// Property and Type are the (first) property's key and whose it is:
	// event, person or session.
	Property string
	Type     string
	// Props are every property broken down by, Props[0] being Property.
	Props []BreakdownProp
	// Limit is how many values by volume get their own series; the rest
	// fold into BreakdownOther.
	Limit int
	// Cohorts are a cohort breakdown's series (breakdown_type cohort):
	// an event counts in each of its person's cohorts.
	Cohorts []cohortSeries
}

// cohortSeries is one cohort of a cohort breakdown: its value (the id, or
// "all"), its label and its membership condition (nil for all users).
type cohortSeries struct {
	value, label string
	cond         *PropertyFilter
}

// BreakdownProp is one property of a breakdown.
type BreakdownProp struct {
	Property string `json:"property"`
	Type     string `json:"type"`
	// NormalizeURL drops a URL's trailing /, ? and # (a bare / stays).
	NormalizeURL bool `json:"normalize_url,omitempty"`
	// Bins splits a numeric property into that many bins of about as
	// many events each (trends only); 0 for none.
	Bins int `json:"histogram_bin_count,omitempty"`
	// expr is a hogql breakdown's parsed expression (Property its text);
	// readsPerson says it reads the event's person, perEvent a field
	// nearly unique per event (breakdownResolver). fewValues says it
	// reads only columns of few distinct values (fewValueProperties, the
	// event name).
	expr                             hogql.Expr
	readsPerson, perEvent, fewValues bool
	// GroupTypeIndex is the group type of a group property.
	GroupTypeIndex *int `json:"group_type_index,omitempty"`
}

// Breakdown bounds.
const (
	// maxBreakdownLimit keeps a request from asking for a series per value
	// of a high-cardinality property.
	maxBreakdownLimit = 1000
	maxBreakdowns     = 3
	maxHistogramBins  = 100
)

// Breakdown types PostHog defines that insightd cannot compute yet.
var unsupportedBreakdownTypes = map[string]bool{"data_warehouse": true}

// breakdownOptions say what a kind can break down by.
type breakdownOptions struct {
	defaultLimit int
	// multi allows breakdowns (a list); bins breakdown_histogram_bin_count;
	// hogql expression breakdowns.
	multi, bins, hogql bool
	// pp, when set, allows cohort breakdowns (their conditions are read
	// with it).
	pp *propertyParser
}

// parseBreakdown reads breakdown (or breakdowns), breakdown_type,
// breakdown_normalize_url, breakdown_histogram_bin_count and
// breakdown_limit; nil means no breakdown.
func parseBreakdown(p Params, o breakdownOptions, pr *problems) *Breakdown {
	b := &Breakdown{Limit: o.defaultLimit}
	// Checked with or without a breakdown: a bad value is never silently
	// ignored.
	if n, present := p.integer("breakdown_limit", pr); present {
		if n < 1 || n > maxBreakdownLimit {
			pr.add("breakdown_limit", "breakdown_limit must be between 1 and %d, got %d", maxBreakdownLimit, n)
		} else {
			b.Limit = int(n)
		}
	}
	if raw, ok := p.document("breakdowns"); ok {
		if !o.multi {
			pr.add("breakdowns", "breakdowns (a list of properties) are not supported here; send one breakdown")
			return nil
		}
		var list []map[string]json.RawMessage
		if json.Unmarshal(raw, &list) != nil || len(list) == 0 || len(list) > maxBreakdowns {
			pr.add("breakdowns", "breakdowns must be a list of 1 to %d objects {property, type}", maxBreakdowns)
			return nil
		}
		for i, item := range list {
			prop := parseBreakdownProp(Params(item), fmt.Sprintf("breakdowns[%d].", i), "property", "type", "normalize_url", "histogram_bin_count", o, pr)
			b.Props = append(b.Props, prop)
		}
	} else {
		raw, ok := p["breakdown"]
		if !ok || isNull(raw) {
			return nil
		}
		if t, _ := p.str("breakdown_type", &problems{}); t == "cohort" {
			return o.cohortBreakdown(unwrapDocument(raw), pr)
		}
		if t := bytes.TrimSpace(raw); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
			pr.add("breakdown", "breakdown must be one property name; cohort lists are not supported yet (use breakdowns for several properties)")
			return nil
		}
		if key, _ := p.str("breakdown", pr); key == "" {
			return nil
		}
		b.Props = append(b.Props, parseBreakdownProp(p, "", "breakdown", "breakdown_type", "breakdown_normalize_url", "breakdown_histogram_bin_count", o, pr))
	}
	b.Property, b.Type = b.Props[0].Property, b.Props[0].Type
	if len(b.Props) > 1 {
		for i, prop := range b.Props {
			if prop.Bins > 0 {
				pr.add("breakdowns", "breakdowns[%d].histogram_bin_count: bins need a single breakdown", i)
			}
		}
	}
	return b
}

// parseBreakdownProp reads one property under the given parameter names
// (prefix locates them inside breakdowns).
func parseBreakdownProp(p Params, prefix, keyName, typeName, normName, binsName string, o breakdownOptions, pr *problems) BreakdownProp {
	attr := keyName
	if prefix != "" {
		attr = "breakdowns"
	}
	prop := BreakdownProp{Type: "event"}
	local := &problems{}
	prop.Property, _ = p.str(keyName, local)
	if prop.Property == "" {
		pr.add(attr, "%s%s must be a property name", prefix, keyName)
	}
	if t, present := p.str(typeName, local); present && t != "" {
		switch {
		case t == "event" || t == "person":
			prop.Type = t
		case t == "hogql" && o.hogql:
			prop.Type = t
			if prop.Property != "" {
				if err := parseBreakdownExpr(&prop); err != nil {
					pr.add(attr, "%s%s: %s", prefix, keyName, hogqlMessage(err))
				}
			}
		case t == "hogql":
			pr.add(attrOr(prefix, typeName), "%s%s hogql is not supported here; expression breakdowns are for trends", prefix, typeName)
		case t == "session":
			prop.Type = t
			if _, known := sessionKeys[prop.Property]; !known {
				pr.add(attr, "%s%s %q is not a session property; use one of %s", prefix, keyName, prop.Property, sessionKeyList())
			}
		case t == condGroup:
			prop.Type = t
			prop.GroupTypeIndex = parseBreakdownGroup(p, prefix, pr)
		case unsupportedBreakdownTypes[t]:
			pr.add(attrOr(prefix, typeName), "%s%s %s is not supported yet; use event, person, group or session", prefix, typeName, t)
		default:
			pr.add(attrOr(prefix, typeName), "%s%s must be one of event, person, cohort, group, session, hogql; got %q", prefix, typeName, t)
		}
	}
	if prop.Type == "event" {
		prop.fewValues = fewValueProperties[prop.Property]
	}
	prop.NormalizeURL = p.boolean(normName, local)
	if n, present := p.integer(binsName, local); present && n != 0 {
		switch {
		case prop.Type == "hogql":
			pr.add(attrOr(prefix, binsName), "%s%s: bins are for property breakdowns, not expressions", prefix, binsName)
		case !o.bins:
			pr.add(attrOr(prefix, binsName), "%s%s: bins are only for trends", prefix, binsName)
		case n < 1 || n > maxHistogramBins:
			pr.add(attrOr(prefix, binsName), "%s%s must be between 1 and %d, got %d", prefix, binsName, maxHistogramBins, n)
		default:
			prop.Bins = int(n)
		}
	}
	for _, ve := range ValidationErrors(local.err()) {
		pr.add(attrOr(prefix, ve.Attr), "%s%s", prefix, ve.Detail)
	}
	return prop
}

// attrOr is the attr of a problem: breakdowns inside the list, the
// parameter itself otherwise.
func attrOr(prefix, name string) string {
	if prefix != "" {
		return "breakdowns"
	}
	return name
}

// cohortBreakdown reads breakdown_type cohort: breakdown a list of
// cohort ids or "all" (one, or a list). Every listed cohort gets a series.
func (o breakdownOptions) cohortBreakdown(raw json.RawMessage, pr *problems) *Breakdown {
	if o.pp == nil {
		pr.add("breakdown_type", "cohort breakdowns are for trends and funnels")
		return nil
	}
	v, err := decodeValue(raw)
	list, isList := v.([]any)
	if err != nil {
		pr.add("breakdown", "breakdown must be a list of cohort ids or \"all\"")
		return nil
	}
	if !isList {
		list = []any{v}
	}
	if len(list) == 0 || len(list) > maxBreakdownLimit {
		pr.add("breakdown", "breakdown must list 1 to %d cohorts", maxBreakdownLimit)
		return nil
	}
	b := &Breakdown{Property: "cohort", Type: "cohort", Limit: len(list)}
	b.Props = []BreakdownProp{{Property: "cohort", Type: "cohort"}}
	seen := map[string]bool{}
	for i, item := range list {
		if s, ok := item.(string); ok && s == "all" {
			if !seen["all"] {
				seen["all"] = true
				b.Cohorts = append(b.Cohorts, cohortSeries{value: "all", label: "all users"})
			}
			continue
		}
		id, ok := refID(item)
		if !ok {
			pr.add("breakdown", "breakdown[%d] must be a cohort id or \"all\"", i)
			return nil
		}
		cond := o.pp.cohortCondition(&PropertyFilter{}, map[string]any{"type": "cohort", "value": json.Number(fmt.Sprint(id))},
			"breakdown", fmt.Sprintf("breakdown[%d]", i))
		if cond == nil {
			return nil
		}
		value := fmt.Sprint(id)
		if !seen[value] {
			seen[value] = true
			label := cohortLabel(o.pp.saved().cohorts[id])
			// The label is in the answer: a renamed cohort (its version
			// unchanged) is a new cache entry, not the old name answered.
			name, _ := json.Marshal(label)
			o.pp.saved().useSetting(fmt.Sprintf("cohort %d label", id), name)
			b.Cohorts = append(b.Cohorts, cohortSeries{value: value, label: label, cond: cond})
		}
	}
	b.Limit = len(b.Cohorts)
	return b
}

// cohortValues is an event's cohorts as a list of values (cohort
// breakdowns).
func (bd *Breakdown) cohortValues(sc *scope) string {
	items := make([]string, len(bd.Cohorts))
	for i, c := range bd.Cohorts {
		cond := "1"
		if c.cond != nil {
			cond = c.cond.sql(sc)
		}
		items[i] = "if(" + cond + ", " + sc.str(c.value) + ", '')"
	}
	return "arrayFilter(x -> x != '', [" + strings.Join(items, ", ") + "])"
}

// uses reports whether a property of the breakdown is of typ.
func (bd *Breakdown) uses(typ string) bool {
	if bd == nil {
		return false
	}
	if typ == "person" && bd.Cohorts != nil {
		return true // membership reads the event's person
	}
	for _, p := range bd.Props {
		if p.Type == typ || (typ == "person" && p.readsPerson) {
			return true
		}
	}
	return false
}

// fewValues reports whether every property of the breakdown has few
// distinct values (BreakdownProp.fewValues).
func (bd *Breakdown) fewValues() bool {
	if bd == nil {
		return false
	}
	for _, p := range bd.Props {
		if !p.fewValues {
			return false
		}
	}
	return true
}

// multi reports a breakdown by several properties, whose value is their
// list.
func (bd *Breakdown) multi() bool { return bd != nil && len(bd.Props) > 1 }

// plain reports a breakdown by one property as it is: its raw text can be
// grouped on and made the null value afterwards.
func (bd *Breakdown) plain() bool {
	return bd != nil && bd.Cohorts == nil && len(bd.Props) == 1 && !bd.Props[0].NormalizeURL && bd.Props[0].Bins == 0 &&
		bd.Props[0].expr == nil
}

// bins is a single breakdown's number of histogram bins, 0 for none.
func (bd *Breakdown) bins() int {
	if bd == nil || len(bd.Props) != 1 {
		return 0
	}
	return bd.Props[0].Bins
}

// rawSQL is the first property's text as stored (plain breakdowns).
func (bd *Breakdown) rawSQL(sc *scope) string {
	return bd.Props[0].text(sc)
}

// valueSQL is an event's breakdown value: the property as text (a URL
// normalized), a missing or empty value as BreakdownNull; with several
// properties the JSON text of their list. Histogram bins are the trends
// builder's (they need the series' values).
func (bd *Breakdown) valueSQL(sc *scope) string {
	if bd.Cohorts != nil {
		// An event counts once per cohort of its person: the same
		// arrayJoin written twice is joined once.
		return "arrayJoin(" + bd.cohortValues(sc) + ")"
	}
	values := make([]string, len(bd.Props))
	for i, p := range bd.Props {
		var x string
		if p.expr != nil {
			x = p.exprSQL(sc, nil)
		} else {
			x = p.text(sc)
		}
		values[i] = p.value(x, sc.binder)
	}
	return joinValues(values)
}

// value is the property's breakdown value from its text x: a URL
// normalized, an empty text BreakdownNull.
func (p BreakdownProp) value(x string, b *binder) string {
	if p.NormalizeURL {
		// PostHog's normalisation: trailing /, ? and # go; / alone stays.
		x = "if(empty(trim(TRAILING '/?#' FROM " + x + ")), if(empty(" + x + "), '', '/'), trim(TRAILING '/?#' FROM " + x + "))"
	}
	return nullBreakdown(x, b)
}

// joinValues is the breakdown value of the properties' values: the one
// value, or the JSON text of their list.
func joinValues(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return "toJSONString([" + strings.Join(values, ", ") + "])"
}

// nullBreakdown is a raw property text x as a breakdown value: an empty
// one is BreakdownNull.
func nullBreakdown(x string, b *binder) string {
	return "if(empty(" + x + "), " + b.named("breakdown_null", "String", BreakdownNull) + ", " + x + ")"
}

// breakdownLabel is a series label under a breakdown value (as the
// statement gives it): a cohort's name for cohort breakdowns.
func (bd *Breakdown) breakdownLabel(label, value string) string {
	for _, c := range bd.Cohorts {
		if c.value == value {
			return label + " - " + c.label
		}
	}
	return label + " - " + displayValue(value)
}

// displayValue is a value as labels show it: a list's values joined by
// "::".
func displayValue(value string) string {
	if list, ok := valueList(value); ok {
		return strings.Join(list, "::")
	}
	return value
}

// valueList decodes the value of a multiple breakdown (the JSON text of
// a list); false for any other value.
func valueList(value string) ([]string, bool) {
	if !strings.HasPrefix(value, "[") {
		return nil, false
	}
	var list []string
	if json.Unmarshal([]byte(value), &list) != nil {
		return nil, false
	}
	return list, true
}

// breakdownJSON is a value as results answer it: the list itself for a
// multiple breakdown, the text otherwise.
func (bd *Breakdown) breakdownJSON(value string) any {
	if bd.Cohorts != nil {
		if n, ok := refID(value); ok {
			return n // PostHog answers cohort ids as numbers
		}
		return value
	}
	if bd.multi() {
		if list, ok := valueList(value); ok {
			return list
		}
	}
	return value
}

// valueText is a breakdown value of a result (text, a list of values, or
// none) as a table cell: a list's values joined by "::".
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []string:
		return strings.Join(x, "::")
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, "::")
	}
	return ""
}

// hogqlMessage is an expression's refusal as a validation detail: what
// was refused and where.
func hogqlMessage(err error) string {
	var he *hogql.Error
	if errors.As(err, &he) {
		if he.Pos >= 0 {
			return fmt.Sprintf("%s (at character %d)", he.Msg, he.Pos+1)
		}
		return he.Msg
	}
	return err.Error()
}
