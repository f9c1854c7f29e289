package querybuilder

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// Entity is one series' source: an event (or all events) with its own
// math and property conditions.
type Entity struct {
	// ID is the event name (an action's id for actions); AllEvents means
	// id was null (every event).
	ID        string
	AllEvents bool
	// Type is "events" or "actions". An action's steps are part of
	// Properties (the conditions the SQL applies); declared holds the
	// properties as sent, which results echo.
	Type     string
	declared *PropertyFilter
	Order    int
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
	// Optional is a funnel step a conversion may skip (optionalInFunnel,
	// the key PostHog's legacy filters and query nodes share); other
	// kinds ignore it, as PostHog does.
	Optional bool
}

// maxEntities bounds the series of one request; formulas name them A-Z.
const maxEntities = 26

// Label is what a series is called: the custom name, else the event's
// name, else "All events".
func (e Entity) Label() string {
	switch {
	case e.CustomName != "":
		return e.CustomName
	case e.Type == "actions":
		return e.Name
	case !e.AllEvents:
		return e.ID
	}
	return "All events"
}

// JSON is the entity as results echo it (a series' action, filter.events).
func (e Entity) JSON() map[string]any {
	name := e.Name
	if name == "" {
		name = e.Label()
	}
	props := []any{}
	if d := e.echoed(); d != nil {
		props = append(props, d.JSON())
	}
	m := map[string]any{
		"id": e.IDValue(), "type": e.Type, "order": e.Order, "name": name,
		"custom_name": nullIfEmpty(e.CustomName), "math": e.Math,
		"math_property": nullIfEmpty(e.MathProperty), "math_group_type_index": nil,
		"properties": props,
	}
	if e.MathGroupTypeIndex >= 0 {
		m["math_group_type_index"] = e.MathGroupTypeIndex
	}
	return m
}

// IDValue is the entity's id as PostHog's answers show it: the event's
// name, null for every event, an action's number.
func (e Entity) IDValue() any {
	switch {
	case e.AllEvents:
		return nil
	case e.Type == "actions":
		n, _ := strconv.ParseInt(e.ID, 10, 64)
		return n
	}
	return e.ID
}

// echoed is the entity's properties as sent.
func (e Entity) echoed() *PropertyFilter {
	if e.Type == "actions" {
		return e.declared
	}
	return e.Properties
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
	n := 0
	for _, attr := range []string{"events", "actions"} {
		raw, ok := p.document(attr)
		if !ok {
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			pp.pr.add(attr, "%s must be a list of entities", attr)
			continue
		}
		if n += len(list); n > maxEntities {
			pp.pr.add(attr, "at most %d entities, got %d", maxEntities, n)
			return nil
		}
		for i, item := range list {
			// An entity with a bad field stays, so that the request is
			// not also told it has no entities; its problems are
			// reported. Entities of actions are actions whatever their
			// type says.
			if e, ok := parseEntity(item, attr, fmt.Sprintf("%s[%d]", attr, i), len(out), pp); ok {
				out = append(out, e)
			}
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
	if t, present := fp.str("type", local); (present && t == "actions") || attr == "actions" {
		e.Type = "actions"
	} else if present && t != "events" {
		pp.pr.add(attr, "%s.type must be events or actions, got %q", path, t)
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
	e.Optional = fp.boolean("optionalInFunnel", local)
	// Field-level problems name the field inside the entity.
	for _, ve := range ValidationErrors(local.err()) {
		pp.pr.add(attr, "%s.%s", path, ve.Detail)
	}
	if props, present := fields["properties"]; present {
		e.Properties = pp.parse(props, attr, path+".properties")
	}
	if e.Type == "actions" {
		return pp.action(e, attr, path)
	}
	return e, true
}

// action resolves an entity of type actions: its action (which must
// exist and not be deleted), its name, its steps as conditions.
func (pp *propertyParser) action(e Entity, attr, path string) (Entity, bool) {
	id, ok := refID(e.ID)
	if !ok || e.AllEvents {
		pp.pr.add(attr, "%s.id must be an action id", path)
		return e, false
	}
	a, known := pp.saved().actions[id]
	if !known || a.Deleted {
		pp.pr.add(attr, "%s: action %d does not exist", path, id)
		return e, false
	}
	e.ID = strconv.FormatInt(id, 10)
	// The action's name as it is now, whatever name the request carries
	// (clients send the one they last saw): a renamed action's series
	// are labelled anew (analytics.md, Entities). custom_name still wins.
	e.Name = a.Name
	pp.saved().useSetting(fmt.Sprintf("action %d version", id), json.RawMessage(strconv.FormatInt(a.Version, 10)))
	steps, ok := pp.actionFilter(a, attr, path)
	if !ok {
		return e, false
	}
	e.declared = e.Properties
	e.Properties = andFilters(e.Properties, steps)
	return e, true
}
