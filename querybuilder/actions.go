package querybuilder

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Action is a saved action as analyses use it (analytics.md, Entities),
// handed in by the caller in Env: an event matches it when any step
// matches all of its parts. Version changes with every edit, and keys
// cached answers.
type Action struct {
	ID      int64
	Name    string
	Steps   json.RawMessage
	Version int64
	Deleted bool
}

// actionStep is one stored step (metadata.ActionStep's JSON).
type actionStep struct {
	Event        *string         `json:"event"`
	URL          *string         `json:"url"`
	URLMatching  *string         `json:"url_matching"`
	Properties   json.RawMessage `json:"properties"`
	Selector     *string         `json:"selector"`
	TagName      *string         `json:"tag_name"`
	Text         *string         `json:"text"`
	TextMatching *string         `json:"text_matching"`
	Href         *string         `json:"href"`
	HrefMatching *string         `json:"href_matching"`
}

// References are the saved definitions a request names, which the caller
// must load into Env before parsing: action ids (entities of type
// actions, anywhere in the request) and cohort ids (conditions of type
// cohort, cohort breakdowns).
func References(p Params) (actions, cohorts []int64) {
	seenA, seenC := map[int64]bool{}, map[int64]bool{}
	add := func(seen map[int64]bool, list *[]int64, v any) {
		if n, ok := refID(v); ok && !seen[n] {
			seen[n] = true
			*list = append(*list, n)
		}
	}
	var walk func(v any, actionList bool)
	walk = func(v any, actionList bool) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "actions" || (actionList && x["type"] == nil) {
				add(seenA, &actions, x["id"])
			}
			if x["type"] == "cohort" || x["type"] == "precalculated-cohort" || x["type"] == "static-cohort" {
				add(seenC, &cohorts, x["value"])
			}
			for k, e := range x {
				walk(e, k == "actions")
			}
		case []any:
			for _, e := range x {
				walk(e, actionList)
			}
		case string:
			if t := strings.TrimSpace(x); len(t) > 1 && (t[0] == '[' || t[0] == '{') {
				if d, err := decodeValue(json.RawMessage(t)); err == nil {
					walk(d, actionList)
				}
			}
		}
	}
	for k, raw := range p {
		if d, err := decodeValue(raw); err == nil {
			walk(d, k == "actions")
		}
	}
	if bt, _ := p.str("breakdown_type", &problems{}); bt == "cohort" {
		if d, err := decodeValue(unwrapDocument(p["breakdown"])); err == nil {
			list, ok := d.([]any)
			if !ok {
				list = []any{d}
			}
			for _, v := range list {
				add(seenC, &cohorts, v)
			}
		}
	}
	sort.Slice(actions, func(i, j int) bool { return actions[i] < actions[j] })
	sort.Slice(cohorts, func(i, j int) bool { return cohorts[i] < cohorts[j] })
	return actions, cohorts
}

// refID reads an id sent as a number or as numeric text.
func refID(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil && n > 0
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil && n > 0
	}
	return 0, false
}

// actionFilter compiles an action's steps into one condition: OR of the
// steps, each the AND of its parts. nil means every event (a step with
// no part matches any).
func (pp *propertyParser) actionFilter(a Action, attr, path string) (*PropertyFilter, bool) {
	var steps []actionStep
	if err := json.Unmarshal(a.Steps, &steps); err != nil {
		pp.pr.add(attr, "%s: action %d has steps that cannot be read", path, a.ID)
		return nil, false
	}
	if len(steps) == 0 {
		pp.pr.add(attr, "%s: action %d has no steps", path, a.ID)
		return nil, false
	}
	or := &PropertyFilter{Group: "OR"}
	for i, st := range steps {
		and, ok := pp.actionStep(st, attr, fmt.Sprintf("%s (action %d step %d)", path, a.ID, i))
		if !ok {
			return nil, false
		}
		if and == nil {
			return nil, true // this step matches every event
		}
		or.Values = append(or.Values, and)
	}
	return or, true
}

// actionStep compiles one step; nil when it has no part.
func (pp *propertyParser) actionStep(st actionStep, attr, path string) (*PropertyFilter, bool) {
	and := &PropertyFilter{Group: "AND"}
	if st.Event != nil && *st.Event != "" {
		and.Values = append(and.Values, &PropertyFilter{Type: condEvent, Key: *st.Event, strs: []string{*st.Event}})
	}
	if st.URL != nil && *st.URL != "" {
		and.Values = append(and.Values, &PropertyFilter{Type: condURL, Operator: matching(st.URLMatching, "contains"), strs: []string{*st.URL}})
	}
	if len(st.Properties) > 0 && !isNull(st.Properties) {
		if f := pp.parse(st.Properties, attr, path+".properties"); f != nil {
			and.Values = append(and.Values, f)
		}
	}
	rule := &elementRule{}
	if st.TagName != nil && *st.TagName != "" {
		rule.tag = *st.TagName
	}
	if st.Text != nil && *st.Text != "" {
		rule.text, rule.textMatching = *st.Text, matching(st.TextMatching, "exact")
	}
	if st.Href != nil && *st.Href != "" {
		rule.href, rule.hrefMatching = *st.Href, matching(st.HrefMatching, "exact")
	}
	if rule.tag != "" || rule.text != "" || rule.href != "" {
		and.Values = append(and.Values, &PropertyFilter{Type: condElement, elements: rule})
	}
	if st.Selector != nil && strings.TrimSpace(*st.Selector) != "" {
		sel, err := parseSelector(*st.Selector)
		if err != nil {
			pp.pr.add(attr, "%s.selector: %v", path, err)
			return nil, false
		}
		and.Values = append(and.Values, &PropertyFilter{Type: condSelector, Key: *st.Selector, selector: sel})
	}
	for _, re := range []struct {
		value, matching *string
		name            string
	}{{st.URL, st.URLMatching, "url"}, {st.Text, st.TextMatching, "text"}, {st.Href, st.HrefMatching, "href"}} {
		if re.value != nil && matching(re.matching, "") == "regex" {
			if err := checkRegex(*re.value); err != nil {
				pp.pr.add(attr, "%s.%s: %v", path, re.name, err)
				return nil, false
			}
		}
	}
	if len(and.Values) == 0 {
		return nil, true
	}
	return and, true
}

func matching(m *string, def string) string {
	if m == nil || *m == "" {
		return def
	}
	return *m
}

// Condition types an action compiles to; a request cannot send them.
const (
	condEvent    = "$event"
	condURL      = "$url"
	condElement  = "$element"
	condSelector = "$selector"
)

// elementRule is a step's element parts, all to be met by one element of
// the event's elements_chain.
type elementRule struct {
	tag, text, textMatching, href, hrefMatching string
}

// elementsChain is the event's $elements_chain: the clicked element, then
// its ancestors, separated by ';' (capture builds it from $elements).
// elementSegments splits it into elements, honouring quoted values.
const (
	elementsChainKey = "$elements_chain"
	elementSegments  = `extractAll(%s, '(?:[^;"]|"(?:[^"\\\\]|\\\\.)*")+')`
)

// attrValue extracts an element attribute's value (unescaped) from a
// segment el: key="value", where the key starts the attribute list or
// follows the previous value. The pattern is bound: keys may be a
// selector's, sent by a user.
func attrValue(sc *scope, el, key string) string {
	return "replaceAll(extract(" + el + ", " + sc.str(`(?:^|[:"])`+regexp.QuoteMeta(key)+`="((?:[^"\\]|\\.)*)"`) + `), '\\"', '"')`
}

// elementSQL is the condition that one element of the chain meets the rule.
func (r *elementRule) sql(sc *scope) string {
	var parts []string
	if r.tag != "" {
		parts = append(parts, "match(el, "+sc.str("^"+regexp.QuoteMeta(r.tag)+"([.:]|$)")+")")
	}
	for _, m := range []struct{ key, value, how string }{{"text", r.text, r.textMatching}, {"href", r.href, r.hrefMatching}} {
		if m.value == "" {
			continue
		}
		x := attrValue(sc, "el", m.key)
		switch m.how {
		case "contains":
			parts = append(parts, "position("+x+", "+sc.str(m.value)+") > 0")
		case "regex":
			parts = append(parts, "match("+x+", "+sc.str(m.value)+")")
		default:
			parts = append(parts, x+" = "+sc.str(m.value))
		}
	}
	chain := fmt.Sprintf(elementSegments, propertyText(sc, "event", elementsChainKey))
	return "arrayExists(el -> " + strings.Join(parts, " AND ") + ", " + chain + ")"
}
