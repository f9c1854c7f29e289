package metadata

import (
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"slices"
)

// ActionInput is a checked set of writeable action fields: column name to
// the value to store.
type ActionInput struct {
	Values map[string]any
}

// Bounds on an action, so that a definition stays a definition.
const (
	actionNameMax        = 400
	actionDescriptionMax = 4000
	maxActionSteps       = 50
	actionStepTextMax    = 10000
)

type actionField = field[Action]

// ParseActionInput checks the writeable fields present in body. Steps are
// checked for their shape here (known keys, types, matchings, regular
// expressions that compile); their property conditions are checked by the
// query builder before the action is stored (api).
func ParseActionInput(body map[string]json.RawMessage) (ActionInput, error) {
	values, err := parseFields(actionFields, body)
	return ActionInput{Values: values}, err
}

var actionFields = []actionField{
	{name: "name", parse: func(raw json.RawMessage) (any, string) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, "Must be a string."
		}
		if s == "" {
			return nil, "This field may not be blank."
		}
		if problem := checkText(s, actionNameMax); problem != "" {
			return nil, problem
		}
		return s, ""
	}, get: func(a *Action) any { return a.Name }},
	{name: "description", parse: textOrEmpty(actionDescriptionMax), get: func(a *Action) any { return a.Description }},
	{name: "steps", parse: parseActionSteps, get: func(a *Action) any { return a.Steps }},
	{name: "tags", parse: parseTags, get: func(a *Action) any { return []string(a.Tags) }},
	{name: "deleted", parse: parseBool, get: func(a *Action) any { return a.Deleted }},
}

// ActionStep is one step as stored: PostHog's fields.
type ActionStep struct {
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

var stepMatchings = []string{"contains", "exact", "regex"}

// parseActionSteps checks a list of steps and returns it normalized (the
// known keys only, as JSON).
func parseActionSteps(raw json.RawMessage) (any, string) {
	var items []json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &items) != nil {
		return nil, "Must be a list of steps."
	}
	if len(items) > maxActionSteps {
		return nil, fmt.Sprintf("At most %d steps.", maxActionSteps)
	}
	steps := make([]ActionStep, len(items))
	for i, it := range items {
		var fields map[string]json.RawMessage
		if json.Unmarshal(it, &fields) != nil || fields == nil {
			return nil, fmt.Sprintf("steps[%d] must be an object.", i)
		}
		st := &steps[i]
		for _, kt := range []struct {
			key    string
			target **string
		}{{"event", &st.Event}, {"url", &st.URL}, {"url_matching", &st.URLMatching}, {"selector", &st.Selector},
			{"tag_name", &st.TagName}, {"text", &st.Text}, {"text_matching", &st.TextMatching}, {"href", &st.Href},
			{"href_matching", &st.HrefMatching}} {
			key, target := kt.key, kt.target
			v, ok := fields[key]
			if !ok || isNull(v) {
				continue
			}
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, fmt.Sprintf("steps[%d].%s must be a string or null.", i, key)
			}
			if problem := checkText(s, actionStepTextMax); problem != "" {
				return nil, fmt.Sprintf("steps[%d].%s: %s", i, key, problem)
			}
			*target = &s
		}
		for _, m := range []struct {
			key             string
			value, matching *string
		}{{"url", st.URL, st.URLMatching}, {"text", st.Text, st.TextMatching}, {"href", st.Href, st.HrefMatching}} {
			if m.matching != nil && !slices.Contains(stepMatchings, *m.matching) {
				return nil, fmt.Sprintf("steps[%d].%s_matching must be contains, exact or regex, got %q.", i, m.key, *m.matching)
			}
			if m.value != nil && m.matching != nil && *m.matching == "regex" {
				if _, err := syntax.Parse(*m.value, syntax.Perl); err != nil {
					return nil, fmt.Sprintf("steps[%d].%s is not a valid regular expression: %v", i, m.key, err)
				}
			}
		}
		if p, ok := fields["properties"]; ok && !isNull(p) {
			// As jsonb will hold them: a NUL is refused here rather than by
			// a failed INSERT, lone surrogates and bad bytes become U+FFFD.
			doc, x, problem := jsonDocument(p)
			if problem != "" && x == nil && json.Valid(p) {
				return nil, fmt.Sprintf("steps[%d].properties: %s", i, problem)
			}
			switch x.(type) {
			case []any, map[string]any:
			default:
				return nil, fmt.Sprintf("steps[%d].properties must be a list of conditions.", i)
			}
			st.Properties = json.RawMessage(doc)
		}
	}
	b, err := json.Marshal(steps)
	if err != nil {
		return nil, "Steps could not be stored."
	}
	return json.RawMessage(b), ""
}
