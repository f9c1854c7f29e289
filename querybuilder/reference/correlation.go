package reference

// A brute-force funnel correlation reference, written from analytics.md's
// Funnel correlation section: the funnel's persons from the funnel
// reference, then every person's items counted by success, the threshold,
// the odds ratio, the order and the top ten each way.

import (
	"encoding/json"
	"math"
	"sort"
)

// Correlation is a correlation request as the reference reads it.
type Correlation struct {
	Funnel                 Funnel
	Type                   string // events (default), properties, event_with_properties
	Names                  []string
	AllNames               bool
	ExcludeNames           []string
	EventNames             []string
	ExcludeEventProperties []string
	ExcludeEvents          []string
}

type CorrelationItem struct {
	Name  string
	S, F  int64
	Ratio float64
	Type  string
	// Success and Failure are the actors counted in S and F.
	Success, Failure map[string]bool
}

// answer is the result: the items in order and skewed.
func (c Correlation) Answer(all []Event) ([]CorrelationItem, bool) {
	personOf, props := Identities(all)
	from, to := c.Funnel.DateRange()
	groups := GroupsOf(all)
	byPerson := map[string][]Event{}
	for _, e := range all {
		if e.At.Before(from) || !e.At.Before(to) {
			continue
		}
		id := personOf(e.DistinctID)
		if c.Funnel.GroupIndex > 0 {
			if id = groups.Key(e, c.Funnel.GroupIndex); id == "" {
				continue
			}
		}
		byPerson[id] = append(byPerson[id], e)
	}
	steps := map[string]bool{}
	for _, s := range c.Funnel.Steps {
		if !s.Any {
			steps[s.Event] = true
		}
	}
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	n := len(c.Funnel.Steps)
	var S, F int64
	type counts struct {
		s, f             int64
		success, failure map[string]bool
	}
	items := map[string]*counts{}
	for _, p := range c.Funnel.Persons(all) {
		success := p.Level() == n
		if success {
			S++
		} else {
			F++
		}
		lo := p.Events[p.Path[0]].At
		hi := lo.Add(c.Funnel.Window())
		if success {
			hi = p.Events[p.Path[n-1]].At
		}
		mine := map[string]bool{}
		switch c.Type {
		case "properties":
			pp := props[p.ID]
			for _, k := range c.Names {
				if !has(c.ExcludeNames, k) {
					mine[k+"::"+String(pp[k])] = true
				}
			}
			if c.AllNames {
				for k, v := range pp {
					if !has(c.ExcludeNames, k) {
						mine[k+"::"+String(v)] = true
					}
				}
			}
		default:
			for _, e := range byPerson[p.ID] {
				if !e.At.After(lo) || !e.At.Before(hi) {
					continue
				}
				if c.Type == "event_with_properties" {
					if !has(c.EventNames, e.Event) {
						continue
					}
					for k, v := range groups.Props(e) {
						if !has(c.ExcludeEventProperties, k) {
							mine[e.Event+"::"+k+"::"+JSONText(v)] = true
						}
					}
				} else if !steps[e.Event] && !has(c.ExcludeEvents, e.Event) {
					mine[e.Event] = true
				}
			}
		}
		for it := range mine {
			if items[it] == nil {
				items[it] = &counts{success: map[string]bool{}, failure: map[string]bool{}}
			}
			if success {
				items[it].s++
				items[it].success[p.ID] = true
			} else {
				items[it].f++
				items[it].failure[p.ID] = true
			}
		}
	}
	if S == 0 || F == 0 {
		return nil, true
	}
	var succ, fail []CorrelationItem
	for name, k := range items {
		if float64(k.s+k.f) < math.Min(25, 0.02*float64(S+F)) || (c.Type == "event_with_properties" && k.s+k.f <= 2) {
			continue
		}
		r := (float64(k.s+1) * float64(F-k.f+1)) / (float64(S-k.s+1) * float64(k.f+1))
		it := CorrelationItem{name, k.s, k.f, r, "failure", k.success, k.failure}
		if r > 1 {
			it.Type = "success"
			succ = append(succ, it)
		} else {
			fail = append(fail, it)
		}
	}
	sort.Slice(succ, func(i, j int) bool {
		if succ[i].Ratio != succ[j].Ratio {
			return succ[i].Ratio > succ[j].Ratio
		}
		return succ[i].Name < succ[j].Name
	})
	sort.Slice(fail, func(i, j int) bool {
		if fail[i].Ratio != fail[j].Ratio {
			return fail[i].Ratio < fail[j].Ratio
		}
		return fail[i].Name < fail[j].Name
	})
	out := append(succ[:min(10, len(succ))], fail[:min(10, len(fail))]...)
	return out, float64(S)/float64(F) > 10 || float64(F)/float64(S) > 10
}

// JSONText is a property value as items hold it: a string as is,
// objects and lists as their JSON text, other values as String.
func JSONText(v any) string {
	switch v.(type) {
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return String(v)
}

// params is the request the API takes.
func (c Correlation) Params() map[string]any {
	m := c.Funnel.Filter(nil)
	if c.Type != "" {
		m["funnel_correlation_type"] = c.Type
	}
	names := append([]string{}, c.Names...)
	if c.AllNames {
		names = append(names, "$all")
	}
	for k, v := range map[string][]string{"funnel_correlation_names": names, "funnel_correlation_exclude_names": c.ExcludeNames,
		"funnel_correlation_event_names": c.EventNames, "funnel_correlation_event_exclude_property_names": c.ExcludeEventProperties,
		"funnel_correlation_exclude_event_names": c.ExcludeEvents} {
		if len(v) > 0 {
			m[k] = v
		}
	}
	return m
}
