package taxonomy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/querybuilder"
)

// ReadQuery is the read_taxonomy tool's query (the CLI's
// read-data-schema): events, then an event's or entity's properties,
// then a property's values.
type ReadQuery struct {
	Kind         string  `json:"kind"`
	EventName    *string `json:"event_name"`
	PropertyName *string `json:"property_name"`
	Entity       *string `json:"entity"`
	ActionID     *int64  `json:"action_id"`
	Limit        *int    `json:"limit"`
	Offset       *int    `json:"offset"`
}

// Read answers a read_taxonomy query as PostHog's tool does: YAML-like
// text for the model. Refusals name the field under args.query.
func (s *Service) Read(ctx context.Context, projectID int64, q ReadQuery) (string, error) {
	switch q.Kind {
	case "events":
		return s.readEvents(ctx, projectID, q)
	case "event_properties":
		event, err := required(q.EventName, "args.query.event_name")
		if err != nil {
			return "", err
		}
		return s.readProperties(ctx, projectID, querybuilder.PropertyDefinitionsQuery{Kind: 1, Type: "event",
			EventNames: []string{event}, FilterByEventNames: true}, "event "+event)
	case "entity_properties":
		pq, what, err := s.entityKind(ctx, projectID, q.Entity)
		if err != nil {
			return "", err
		}
		return s.readProperties(ctx, projectID, pq, what)
	case "event_property_values", "entity_property_values":
		return s.readValues(ctx, projectID, q)
	case "action_properties", "action_property_values":
		return "", httpx.Invalid("args.query.kind", q.Kind+" is not served by insightd yet: read the properties of the action's events (event_properties) instead.")
	}
	return "", httpx.Invalid("args.query.kind", fmt.Sprintf("kind must be one of events, event_properties, entity_properties, event_property_values, entity_property_values, got %q.", q.Kind))
}

func required(v *string, attr string) (string, error) {
	if v == nil || *v == "" {
		return "", httpx.Invalid(attr, attr[strings.LastIndex(attr, ".")+1:]+" is required for this kind.")
	}
	return *v, nil
}

func (s *Service) readEvents(ctx context.Context, projectID int64, q ReadQuery) (string, error) {
	eq := querybuilder.EventDefinitionsQuery{Limit: 500, Order: "-volume_30_day"}
	if q.Limit != nil {
		if *q.Limit < 1 || *q.Limit > 500 {
			return "", httpx.Invalid("args.query.limit", "limit must be 1 to 500.")
		}
		eq.Limit = *q.Limit
	}
	if q.Offset != nil {
		if *q.Offset < 0 {
			return "", httpx.Invalid("args.query.offset", "offset must be 0 or more.")
		}
		eq.Offset = *q.Offset
	}
	defs, total, err := s.Events(ctx, projectID, eq)
	if err != nil {
		return "", err
	}
	if len(defs) == 0 {
		return "No events have been captured in this project yet.", nil
	}
	var b strings.Builder
	b.WriteString("events:\n")
	for _, d := range defs {
		fmt.Fprintf(&b, "- name: %s\n  volume_30_day: %d\n  last_seen_at: %s\n", yamlString(d.Name), d.Volume30Day, d.LastSeenAt.Format("2006-01-02T15:04:05Z"))
	}
	if eq.Offset+len(defs) < total {
		fmt.Fprintf(&b, "# %d of %d events; read the next page with offset %d.\n", len(defs), total, eq.Offset+len(defs))
	}
	return b.String(), nil
}

// entityKind is the property list of an entity: person, or a group type
// by its name (singular or plural).
func (s *Service) entityKind(ctx context.Context, projectID int64, entity *string) (querybuilder.PropertyDefinitionsQuery, string, error) {
	name, err := required(entity, "args.query.entity")
	if err != nil {
		return querybuilder.PropertyDefinitionsQuery{}, "", err
	}
	switch strings.ToLower(name) {
	case "person", "persons":
		return querybuilder.PropertyDefinitionsQuery{Kind: 2, Type: "person"}, "persons", nil
	case "session", "sessions":
		return querybuilder.PropertyDefinitionsQuery{}, "", httpx.Invalid("args.query.entity",
			"session properties are the fixed columns of the sessions table: read them with execute_sql.")
	}
	types, err := s.store.GroupTypes(ctx, projectID)
	if err != nil {
		return querybuilder.PropertyDefinitionsQuery{}, "", err
	}
	for _, t := range types {
		if strings.EqualFold(t.GroupType, name) || strings.EqualFold(t.NamePlural.String, name) || strings.EqualFold(t.GroupType+"s", name) {
			return querybuilder.PropertyDefinitionsQuery{Kind: 3, Type: "group", GroupTypeIndex: t.Index}, "group type " + t.GroupType, nil
		}
	}
	return querybuilder.PropertyDefinitionsQuery{}, "", httpx.Invalid("args.query.entity",
		fmt.Sprintf("entity must be person or one of the project's group types, got %q.", name))
}

func (s *Service) readProperties(ctx context.Context, projectID int64, q querybuilder.PropertyDefinitionsQuery, what string) (string, error) {
	q.Limit = querybuilder.TaxonomyMaxLimit
	defs, _, err := s.Properties(ctx, projectID, q)
	if err != nil {
		return "", err
	}
	if len(defs) == 0 {
		return "Properties do not exist in the taxonomy for the " + what + ".", nil
	}
	byType := map[string][]string{}
	for _, d := range defs {
		t := "Unknown"
		if d.PropertyType != nil {
			t = *d.PropertyType
		}
		byType[t] = append(byType[t], d.Name)
	}
	var b strings.Builder
	b.WriteString("properties:\n")
	for _, t := range []string{"String", "Numeric", "Boolean", "DateTime", "Unknown"} {
		if len(byType[t]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s:\n", t)
		for _, n := range byType[t] {
			fmt.Fprintf(&b, "  - name: %s\n", yamlString(n))
		}
	}
	return b.String(), nil
}

func (s *Service) readValues(ctx context.Context, projectID int64, q ReadQuery) (string, error) {
	prop, err := required(q.PropertyName, "args.query.property_name")
	if err != nil {
		return "", err
	}
	var st querybuilder.Statement
	var what string
	if q.Kind == "event_property_values" {
		event, err := required(q.EventName, "args.query.event_name")
		if err != nil {
			return "", err
		}
		st, what = querybuilder.EventPropertyValues(s.schema, projectID, event, prop), "event "+event
	} else {
		pq, w, err := s.entityKind(ctx, projectID, q.Entity)
		if err != nil {
			return "", err
		}
		st, what = querybuilder.EntityPropertyValues(s.schema, projectID, pq.Kind, pq.GroupTypeIndex, prop), w
	}
	rows, err := s.engine.Query(ctx, projectID, st)
	if err != nil {
		return "", err
	}
	if len(rows.Data) == 0 {
		return fmt.Sprintf("The property %s has no values on the %s.", prop, what), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "property: %s\nsample_values:\n", yamlString(prop))
	for _, r := range rows.Data {
		v, _ := r[0].(string)
		fmt.Fprintf(&b, "- %s\n", yamlString(v))
	}
	if n := cellInt(rows.Data[0][1]); n > len(rows.Data) {
		fmt.Fprintf(&b, "# %d distinct values; the most common shown.\n", n)
	}
	return b.String(), nil
}

// yamlString quotes s as a YAML (and JSON) string.
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
