package metadata

import (
	"encoding/json"
	"strings"
	"time"
)

// AnnotationInput is a checked set of writeable annotation fields: column
// name to the value to store.
type AnnotationInput struct {
	Values map[string]any
}

// AnnotationScopes are where an annotation may show. PostHog's dashboard
// and recording scopes need objects insightd does not have.
var AnnotationScopes = []string{"project", "organization", "dashboard_item"}

// annotationContentMax is PostHog's column size for content.
const annotationContentMax = 400

type annotationField = field[Annotation]

// ParseAnnotationInput checks the writeable fields present in body (any
// subset); read-only and unknown fields are ignored, as for insights. The
// first bad value is a ValidationError naming it.
func ParseAnnotationInput(body map[string]json.RawMessage) (AnnotationInput, error) {
	values, err := parseFields(annotationFields, body)
	return AnnotationInput{Values: values}, err
}

var annotationFields = []annotationField{
	{name: "content", parse: nullableText(annotationContentMax),
		get: func(a *Annotation) any { return nullString(a.Content.String, a.Content.Valid) }},
	{name: "date_marker", parse: parseDateMarker, get: func(a *Annotation) any {
		if !a.DateMarker.Valid {
			return nil
		}
		return a.DateMarker.Time.UTC()
	}},
	{name: "creation_type", parse: oneOf("USR", "GIT"), get: func(a *Annotation) any { return a.CreationType }},
	{name: "scope", parse: oneOf(AnnotationScopes...), get: func(a *Annotation) any { return a.Scope }},
	{name: "dashboard_item", parse: func(raw json.RawMessage) (any, string) {
		if isNull(raw) {
			return nil, ""
		}
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return nil, "Must be an insight id or null."
		}
		v, err := n.Int64()
		if err != nil || v < 1 {
			return nil, "Must be an insight id or null."
		}
		return v, ""
	}, get: func(a *Annotation) any { return nullInt(a.DashboardItem.Int64, a.DashboardItem.Valid) }},
	{name: "deleted", parse: parseBool, get: func(a *Annotation) any { return a.Deleted }},
}

// dateMarkerLayouts are the ISO 8601 forms date_marker accepts; a time
// without a zone is UTC.
var dateMarkerLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

func parseDateMarker(raw json.RawMessage) (any, string) {
	if isNull(raw) {
		return nil, ""
	}
	const problem = "Must be an ISO 8601 date-time such as 2026-01-02T03:04:05Z, or null."
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, problem
	}
	for _, l := range dateMarkerLayouts {
		if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
			// PostgreSQL has no year 0; Go parses one.
			if t.UTC().Year() < 1 {
				return nil, problem
			}
			return t.UTC().Truncate(time.Microsecond), ""
		}
	}
	return nil, problem
}

// oneOf reads a string that must be one of values.
func oneOf(values ...string) func(json.RawMessage) (any, string) {
	return func(raw json.RawMessage) (any, string) {
		var s string
		if !isNull(raw) && json.Unmarshal(raw, &s) == nil {
			for _, v := range values {
				if s == v {
					return s, ""
				}
			}
		}
		return nil, "Must be one of " + strings.Join(values, ", ") + "."
	}
}
