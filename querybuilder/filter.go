package querybuilder

import (
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
)

// PropertyFilter is a property condition or an AND/OR group of them, as
// PostHog's legacy filters send them in properties, in an entity's
// properties and in a project's test_account_filters.
type PropertyFilter struct {
	// Group is "AND" or "OR" for a group and empty for a condition.
	Group  string
	Values []*PropertyFilter

	// A condition: Type is event or person, Operator one of operators.
	Key      string
	Type     string
	Operator string
	Value    any // as sent: string, json.Number, bool, []any
	Negation bool
	// GroupTypeIndex is the group type a condition of type group reads.
	GroupTypeIndex int

	// What Value means for the operator, resolved while validating.
	strs        []string  // exact, is_not, icontains, regex
	num         float64   // gt, gte, lt, lte
	from, until time.Time // is_date_*: [from, until); zero until for one instant

	// The parts of an action step (actions.go, selector.go) and cohort
	// membership (cohorts.go), for the condition types they compile to.
	elements *elementRule
	selector []selectorPart
	cohort   *Cohort
	behavior *behavior
	// echo is the condition as sent, for a group compiled from one (an
	// inline cohort): results show what was sent.
	echo *PropertyFilter
}

// operators are the condition operators analytics.md lists.
var operators = map[string]bool{
	"exact": true, "is_not": true, "icontains": true, "not_icontains": true,
	"regex": true, "not_regex": true, "gt": true, "gte": true, "lt": true, "lte": true,
	"is_set": true, "is_not_set": true, "is_date_exact": true, "is_date_before": true, "is_date_after": true,
}

const operatorList = "exact, is_not, icontains, not_icontains, regex, not_regex, gt, gte, lt, lte, is_set, is_not_set, is_date_exact, is_date_before, is_date_after"

// Property types PostHog defines that insightd cannot filter on yet: a
// request naming one is refused as a 400 rather than silently widened.
var unsupportedPropertyTypes = map[string]bool{
	"element": true, "hogql": true, "data_warehouse": true, "feature": true,
	"recording": true, "log_entry": true, "data_warehouse_person_property": true,
}

// Bounds on one property document, so that a hostile request cannot make
// the parser or the generated SQL arbitrarily deep or long.
const (
	maxPropertyDepth      = 8
	maxPropertyConditions = 200
	// maxExpandedConditions bounds the conditions of a request with the
	// cohorts it names read inline (each up to maxPropertyConditions,
	// nested cohortDepth deep).
	maxExpandedConditions = 1000
)

// propertyParser reads property documents for one request.
type propertyParser struct {
	// common is the request being read: its saved actions and cohorts,
	// and the settings its answer depends on.
	common *Common
	clock  clock
	pr     *problems
	count  int
	// relative, if set, collects what relative date values (-7d) resolved
	// to: the answer depends on the clock through them.
	relative *[]time.Time
	// defaultType is the type of a condition that names none ("event";
	// "person" inside cohort definitions); depth counts cohorts inside
	// cohorts; behavioural allows behavioural conditions (a cohort's
	// calculation).
	defaultType string
	depth       int
	behavioural bool
	// expanded counts the conditions of the whole tree, the cohorts read
	// inline included (their parsers share it): maxExpandedConditions
	// bounds what a request costs, however its cohorts nest.
	expanded *int
}

// parse reads a document: a list of conditions and groups (ANDed), a
// group {"type": "AND"|"OR", "values": [...]}, or the oldest form, an
// object of key: value exact matches (key__operator for others). attr is
// the parameter, path where the document sits inside it. It returns nil
// for an empty document.
func (pp *propertyParser) parse(raw json.RawMessage, attr, path string) *PropertyFilter {
	raw = unwrapDocument(raw)
	if isNull(raw) {
		return nil
	}
	v, err := decodeValue(raw)
	if err != nil {
		pp.pr.add(attr, "%s must be a list of property conditions or a group", path)
		return nil
	}
	f := pp.node(v, attr, path, 0, true)
	if f == nil || (f.Group != "" && len(f.Values) == 0) {
		return nil
	}
	return f
}

func (pp *propertyParser) node(v any, attr, path string, depth int, top bool) *PropertyFilter {
	if depth > maxPropertyDepth {
		pp.pr.add(attr, "%s: property groups nest deeper than %d levels", path, maxPropertyDepth)
		return nil
	}
	switch x := v.(type) {
	case []any:
		g := &PropertyFilter{Group: "AND"}
		for i, item := range x {
			if c := pp.node(item, attr, fmt.Sprintf("%s[%d]", path, i), depth+1, false); c != nil {
				g.Values = append(g.Values, c)
			}
		}
		return g
	case map[string]any:
		switch {
		case isGroup(x):
			return pp.group(x, x["values"], attr, path, depth)
		case isCondition(x) || !top:
			// Inside a list or group an object can only be a condition:
			// one without a key is refused rather than read as matches.
			return pp.condition(x, attr, path)
		case len(x) == 1 && isGroupType(x["type"]):
			return nil // a group with no values
		}
		return pp.legacy(x, attr, path)
	}
	pp.pr.add(attr, "%s must be a property condition (an object with key, value, operator and type) or a group", path)
	return nil
}

// isGroup tells a group ({"type": "AND", "values": [...]}) from the
// oldest form's object that has a property named values: a group's values
// are a list, or its type is AND or OR.
func isGroup(x map[string]any) bool {
	v, ok := x["values"]
	if !ok {
		return false
	}
	_, list := v.([]any)
	return list || v == nil || isGroupType(x["type"])
}

func isGroupType(t any) bool {
	s, ok := t.(string)
	return ok && (strings.EqualFold(s, "AND") || strings.EqualFold(s, "OR"))
}

// isCondition tells a condition from the oldest form's object of exact
// matches (a whole document), which may have a property named key
// ({"key": "val"} means property key equals val): a condition has key and
// at least one of value, operator and type.
func isCondition(x map[string]any) bool {
	if _, ok := x["key"]; !ok {
		return false
	}
	for _, k := range []string{"value", "operator", "type"} {
		if _, ok := x[k]; ok {
			return true
		}
	}
	return false
}

func (pp *propertyParser) group(x map[string]any, values any, attr, path string, depth int) *PropertyFilter {
	op := "AND"
	if t, ok := x["type"]; ok && t != nil {
		s, _ := t.(string)
		switch strings.ToUpper(s) {
		case "AND", "OR":
			op = strings.ToUpper(s)
		default:
			pp.pr.add(attr, "%s.type must be AND or OR, got %v", path, t)
		}
	}
	list, ok := values.([]any)
	if !ok && values != nil {
		pp.pr.add(attr, "%s.values must be a list", path)
		return nil
	}
	g := &PropertyFilter{Group: op}
	for i, item := range list {
		if c := pp.node(item, attr, fmt.Sprintf("%s.values[%d]", path, i), depth+1, false); c != nil {
			g.Values = append(g.Values, c)
		}
	}
	return g
}

// legacy reads {"$browser": "Chrome", "$current_url__icontains": "x"}.
func (pp *propertyParser) legacy(x map[string]any, attr, path string) *PropertyFilter {
	g := &PropertyFilter{Group: "AND"}
	for _, k := range sortedKeys(x) {
		key, op := legacyKey(k)
		c := pp.condition(map[string]any{"key": key, "value": x[k], "operator": op}, attr, path+"."+k)
		if c != nil {
			g.Values = append(g.Values, c)
		}
	}
	return g
}

func (pp *propertyParser) condition(x map[string]any, attr, path string) *PropertyFilter {
	pp.count++
	if pp.count == maxPropertyConditions+1 {
		pp.pr.add(attr, "%s: more than %d property conditions", path, maxPropertyConditions)
	}
	if pp.count > maxPropertyConditions {
		return nil
	}
	if pp.expanded != nil {
		*pp.expanded++
		if *pp.expanded == maxExpandedConditions+1 {
			pp.pr.add(attr, "%s: the conditions and the cohorts they name hold more than %d conditions in all", path, maxExpandedConditions)
		}
		if *pp.expanded > maxExpandedConditions {
			return nil
		}
	}
	c := &PropertyFilter{Type: "event", Operator: "exact", Value: x["value"]}
	if pp.defaultType != "" {
		c.Type = pp.defaultType
	}
	if n, present := x["negation"]; present && n != nil {
		b, isBool := n.(bool)
		if !isBool {
			pp.pr.add(attr, "%s.negation must be true or false", path)
			return nil
		}
		c.Negation = b
	}
	switch x["type"] {
	case "cohort", "static-cohort", "precalculated-cohort":
		return pp.cohortCondition(c, x, attr, path)
	case condBehavioral:
		return pp.behaviorCondition(c, x, attr, path)
	}
	ok := true
	if t, present := x["type"]; present && t != nil {
		s, isStr := t.(string)
		switch {
		case isStr && (s == "event" || s == "person" || s == "session"):
			c.Type = s
		case isStr && s == condGroup:
			c.Type = s
			if c.GroupTypeIndex, ok = groupTypeIndexOf(x["group_type_index"]); !ok {
				pp.pr.add(attr, "%s.group_type_index must be a group type 0 to %d with type group", path, maxGroupTypeIndex)
			}
		case isStr && unsupportedPropertyTypes[s]:
			pp.pr.add(attr, "%s.type: %s properties are not supported yet; use event, person, group or session", path, s)
			ok = false
		default:
			pp.pr.add(attr, "%s.type must be event, person, group, session or cohort, got %v", path, t)
			ok = false
		}
	}
	switch k := x["key"].(type) {
	case string:
		c.Key = k
	case json.Number:
		c.Key = k.String()
	}
	if c.Key == "" {
		pp.pr.add(attr, "%s.key must be a non-empty property name", path)
		ok = false
	} else if _, known := sessionKeys[c.Key]; c.Type == "session" && !known {
		pp.pr.add(attr, "%s.key: %q is not a session property; use one of %s", path, c.Key, sessionKeyList())
		ok = false
	}
	if o, present := x["operator"]; present && o != nil {
		s, _ := o.(string)
		if !operators[s] {
			pp.pr.add(attr, "%s.operator: unknown operator %v; use one of %s", path, o, operatorList)
			ok = false
		} else {
			c.Operator = s
		}
	}
	if ok && !pp.resolveValue(c, attr, path) {
		ok = false
	}
	if !ok {
		return nil
	}
	return c
}

// resolveValue checks the value against the operator and keeps the form
// the SQL binds.
func (pp *propertyParser) resolveValue(c *PropertyFilter, attr, path string) bool {
	switch c.Operator {
	case "is_set", "is_not_set":
		return true
	case "exact", "is_not":
		list, isList := c.Value.([]any)
		if !isList {
			list = []any{c.Value}
		}
		for _, v := range list {
			s, err := scalarString(v)
			if err != nil {
				pp.pr.add(attr, "%s.value: %s needs a value or a list of values (strings, numbers, booleans)", path, c.Operator)
				return false
			}
			c.strs = append(c.strs, s)
		}
		if len(c.strs) == 0 {
			pp.pr.add(attr, "%s.value: %s needs at least one value", path, c.Operator)
			return false
		}
		return true
	case "icontains", "not_icontains", "regex", "not_regex":
		v := c.Value
		if list, isList := v.([]any); isList && len(list) == 1 {
			v = list[0]
		}
		s, err := scalarString(v)
		if err != nil {
			pp.pr.add(attr, "%s.value: %s needs one string value", path, c.Operator)
			return false
		}
		if c.Operator == "regex" || c.Operator == "not_regex" {
			if err := checkRegex(s); err != nil {
				pp.pr.add(attr, "%s.value: %v", path, err)
				return false
			}
		}
		c.strs = []string{s}
		return true
	case "gt", "gte", "lt", "lte":
		s, err := scalarString(c.Value)
		f, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || perr != nil || f != f || f > 1e300 || f < -1e300 {
			pp.pr.add(attr, "%s.value: %s needs a number, got %v", path, c.Operator, c.Value)
			return false
		}
		c.num = f
		return true
	case "is_date_exact", "is_date_before", "is_date_after":
		s, isStr := c.Value.(string)
		if !isStr {
			pp.pr.add(attr, "%s.value: %s needs a date", path, c.Operator)
			return false
		}
		t, dateOnly, err := pp.clock.parse(s, false)
		if err != nil {
			pp.pr.add(attr, "%s.value: %v", path, err)
			return false
		}
		c.from = t
		if pp.relative != nil && relativeDate.MatchString(strings.TrimSpace(s)) {
			*pp.relative = append(*pp.relative, t)
		}
		if c.Operator == "is_date_exact" {
			// A bare date is that whole local day; a date-time its second.
			if dateOnly {
				c.until = pp.clock.next('d', t)
			} else {
				c.from = t.Truncate(time.Second)
				c.until = c.from.Add(time.Second)
			}
		}
		return true
	}
	return false
}

// checkRegex refuses a pattern ClickHouse could not compile, before the
// query runs. ClickHouse's match() uses RE2; Go's regexp/syntax parses
// the same Perl-like RE2 syntax (no backreferences, no lookaround), so it
// is a close approximation: the few patterns they judge differently still
// fail in the engine, as a query error.
func checkRegex(s string) error {
	if _, err := syntax.Parse(s, syntax.Perl); err != nil {
		return fmt.Errorf("%q is not a valid regular expression (RE2 syntax): %v", s, err)
	}
	return nil
}

// scalarString is a condition value as the text properties are compared
// with: JSON numbers and booleans as their JSON text.
func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("not a scalar value")
}

// andFilters joins documents with AND, dropping empty ones.
func andFilters(fs ...*PropertyFilter) *PropertyFilter {
	g := &PropertyFilter{Group: "AND"}
	for _, f := range fs {
		if f != nil {
			g.Values = append(g.Values, f)
		}
	}
	if len(g.Values) == 0 {
		return nil
	}
	if len(g.Values) == 1 {
		return g.Values[0]
	}
	return g
}

// usesPersons reports whether any condition reads person properties.
func (f *PropertyFilter) usesPersons() bool {
	if f == nil {
		return false
	}
	if f.Group == "" {
		return f.Type == "person" || f.Type == condCohort
	}
	for _, v := range f.Values {
		if v.usesPersons() {
			return true
		}
	}
	return false
}

// JSON is the document in PostHog's group shape, as results echo it.
func (f *PropertyFilter) JSON() any {
	if f == nil {
		return map[string]any{"type": "AND", "values": []any{}}
	}
	if e, ok := f.echoJSON(); ok {
		return e
	}
	if f.Group == "" {
		switch f.Type {
		case condEvent, condURL, condElement, condSelector:
			return map[string]any{"type": f.Type, "key": f.Key, "value": f.strs, "operator": f.Operator, "element": fmt.Sprint(f.elements)}
		}
		m := map[string]any{"key": f.Key, "value": f.Value, "operator": f.Operator, "type": f.Type}
		if f.Negation {
			m["negation"] = true
		}
		if f.Type == condGroup {
			m["group_type_index"] = f.GroupTypeIndex
		}
		return m
	}
	values := make([]any, len(f.Values))
	for i, v := range f.Values {
		values[i] = v.JSON()
	}
	return map[string]any{"type": f.Group, "values": values}
}
