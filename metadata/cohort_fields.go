package metadata

import (
	"encoding/json"
)

// CohortInput is a checked set of writeable cohort fields.
type CohortInput struct {
	Values map[string]any
}

type cohortField = field[Cohort]

// ParseCohortInput checks the writeable fields present in body: their
// shapes; the conditions inside groups and filters are checked by the
// query builder before the cohort is stored (api).
func ParseCohortInput(body map[string]json.RawMessage) (CohortInput, error) {
	values, err := parseFields(cohortFields, body)
	return CohortInput{Values: values}, err
}

var cohortFields = []cohortField{
	{name: "name", parse: actionFields[0].parse, get: func(c *Cohort) any { return c.Name }},
	{name: "description", parse: actionFields[1].parse, get: func(c *Cohort) any { return c.Description }},
	{name: "groups", parse: func(raw json.RawMessage) (any, string) {
		var list []json.RawMessage
		if isNull(raw) {
			return json.RawMessage("[]"), ""
		}
		if json.Unmarshal(raw, &list) != nil {
			return nil, "Must be a list of groups."
		}
		return cohortDocument(raw)
	}, get: func(c *Cohort) any { return c.Groups }},
	{name: "filters", parse: func(raw json.RawMessage) (any, string) {
		if isNull(raw) {
			return nil, ""
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return nil, "Must be an object with properties."
		}
		return cohortDocument(raw)
	}, get: func(c *Cohort) any {
		if len(c.Filters) == 0 || isNull(c.Filters) {
			return nil
		}
		return c.Filters
	}},
	{name: "is_static", parse: parseBool, get: func(c *Cohort) any { return c.IsStatic }},
	{name: "deleted", parse: parseBool, get: func(c *Cohort) any { return c.Deleted }},
}

// cohortDocument is a definition as jsonb will hold it (jsonDocument:
// numbers keep their digits; NUL characters and deep nesting, which jsonb
// refuses, are a problem here rather than a failed INSERT).
func cohortDocument(raw json.RawMessage) (any, string) {
	doc, _, problem := jsonDocument(raw)
	if problem != "" {
		return nil, problem
	}
	return json.RawMessage(doc), ""
}
