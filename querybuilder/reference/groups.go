package reference

import (
	"fmt"
	"sort"
)

// Groups as capture assigns them (analytics.md, Entities: groups): a
// group type gets the next index (0 to 4) when first named, by a
// $groupidentify's $group_type or a key of an event's $groups, and an
// event's $groups {"company": "acme"} is its $group_N = "acme" for the
// type's index N. An event belongs to the groups it names itself, never
// to those of the person who sent it.

// Groups numbers the group types the events name, in the order capture
// meets them: events in order, an event's $groups keys sorted (as the
// JSON of a Go map sends them), then a $groupidentify's type.
type Groups map[string]int

// GroupsOf reads the group types of all.
func GroupsOf(all []Event) Groups {
	g := Groups{}
	add := func(typ string) {
		if _, ok := g[typ]; !ok && typ != "" {
			g[typ] = len(g)
		}
	}
	for _, e := range all {
		if m, ok := e.Props["$groups"].(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if String(m[k]) != "" {
					add(k)
				}
			}
		}
		if e.Event == "$groupidentify" {
			add(String(e.Props["$group_type"]))
		}
	}
	return g
}

// Key is e's group of type index ("" for none): the key its $groups names
// for the type of that index, else its own $group_N property.
func (g Groups) Key(e Event, index int) string {
	if m, ok := e.Props["$groups"].(map[string]any); ok {
		for typ, key := range m {
			if i, ok := g[typ]; ok && i == index && String(key) != "" {
				return String(key)
			}
		}
	}
	return String(e.Props[fmt.Sprintf("$group_%d", index)])
}

// Props are e's properties as capture stores them: with $group_N for
// each group its $groups names.
func (g Groups) Props(e Event) map[string]any {
	m, ok := e.Props["$groups"].(map[string]any)
	if !ok {
		return e.Props
	}
	out := make(map[string]any, len(e.Props)+len(m))
	for k, v := range e.Props {
		out[k] = v
	}
	for typ, key := range m {
		if i, ok := g[typ]; ok && String(key) != "" {
			out[fmt.Sprintf("$group_%d", i)] = String(key)
		}
	}
	return out
}
