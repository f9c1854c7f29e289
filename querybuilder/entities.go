package querybuilder

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Entity is one series' source: an event (or all events) with its own
// math and property conditions.
type Entity struct {
	// ID is the event name; AllEvents means id was null (every event).
	ID        string
	AllEvents bool
	// Type is "events"; actions are refused until insightd stores them.
	Type  string
	Order int
	// Name and CustomName are as sent; Label says which one a series shows.
	Name       string
	CustomName string
	// Math is the aggregation (total when not sent); MathProperty the
	// property it aggregates, MathGroupTypeIndex the group type it
	// counts (unique_group), -1 when not sent.
	Math               string
	MathProperty       string
	MathGroupTypeIndex int
	Properties         *PropertyFilter
}

// maxEntities bounds the series of one request; formulas name them A-Z.
const maxEntities = 26

// Label is what a series is called: the custom name, else the event's
// name, else "All events".
func (e Entity) Label() string {
	switch {
	case e.CustomName != "":
		return e.CustomName
	case !e.AllEvents:
		return e.ID
	}
	return "All events"
}

// JSON is the entity as results echo it (a series' action, filter.events).
func (e Entity) JSON() map[string]any {
	var id any = e.ID
	if e.AllEvents {
		id = nil
	}
	name := e.Name
	if name == "" {
		name = e.Label()
	}
	props := []any{}
	if e.Properties != nil {
		props = append(props, e.Properties.JSON())
	}
	m := map[string]any{
		"id": id, "type": e.Type, "order": e.Order, "name": name,
		"custom_name": nullIfEmpty(e.CustomName), "math": e.Math,
		"math_property": nullIfEmpty(e.MathProperty), "math_group_type_index": nil,
		"properties": props,
	}
	if e.MathGroupTypeIndex >= 0 {
		m["math_group_type_index"] = e.MathGroupTypeIndex
	}
	return m
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// parseEntities reads events and actions, merged and sorted by order (an
// entity without an order keeps its place in the request).
func parseEntities(p Params, pp *propertyParser) []Entity {
	var out []Entity
	if raw, ok := p.document("actions"); ok {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			pp.pr.add("actions", "actions must be a list")
		} else if len(list) > 0 {
			pp.pr.add("actions", "actions are not supported yet: send the events as events")
		}
	}
	raw, ok := p.document("events")
	if !ok {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		pp.pr.add("events", "events must be a list of entities")
		return nil
	}
	if len(list) > maxEntities {
		pp.pr.add("events", "at most %d entities, got %d", maxEntities, len(list))
		return nil
	}
	for i, item := range list {
		// An entity with a bad field stays, so that the request is not
		// also told it has no entities; its problems are reported.
		if e, ok := parseEntity(item, "events", fmt.Sprintf("events[%d]", i), i, pp); ok {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Order < out[b].Order })
	return out
}

// parseEntity reads one entity at path inside parameter attr.
func parseEntity(raw json.RawMessage, attr, path string, index int, pp *propertyParser) (Entity, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		pp.pr.add(attr, "%s must be an object with id, type, math and properties", path)
		return Entity{}, false
	}
	e := Entity{Type: "events", Order: index, Math: "total", MathGroupTypeIndex: -1}
	fp := Params(fields)
	local := &problems{}
	if id, ok2 := fp.str("id", local); ok2 {
		e.ID = id
	} else if !fp.present("id") {
		e.AllEvents = true
	}
	if t, present := fp.str("type", local); present && t != "events" {
		if t == "actions" {
			pp.pr.add(attr, "%s.type: actions are not supported yet", path)
		} else {
			pp.pr.add(attr, "%s.type must be events, got %q", path, t)
		}
	}
	if n, present := fp.integer("order", local); present {
		e.Order = int(n)
	}
	e.Name, _ = fp.str("name", local)
	e.CustomName, _ = fp.str("custom_name", local)
	if m, present := fp.str("math", local); present && m != "" {
		e.Math = m
	}
	e.MathProperty, _ = fp.str("math_property", local)
	if n, present := fp.integer("math_group_type_index", local); present {
		e.MathGroupTypeIndex = int(n)
	}
	// Field-level problems name the field inside the entity.
	for _, ve := range ValidationErrors(local.err()) {
		pp.pr.add(attr, "%s.%s", path, ve.Detail)
	}
	if props, present := fields["properties"]; present {
		e.Properties = pp.parse(props, attr, path+".properties")
	}
	return e, true
}
