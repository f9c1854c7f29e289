package api

// A brute-force funnel correlation reference, written from analytics.md's
// Funnel correlation section: the funnel's persons from the funnel
// reference, then every person's items counted by success, the threshold,
// the odds ratio, the order and the top ten each way.

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
)

// refCorrelation is a correlation request as the reference reads it.
type refCorrelation struct {
	Funnel                 refFunnel
	Type                   string // events (default), properties, event_with_properties
	Names                  []string
	AllNames               bool
	ExcludeNames           []string
	EventNames             []string
	ExcludeEventProperties []string
	ExcludeEvents          []string
}

type refCorrelationItem struct {
	Name  string
	S, F  int64
	Ratio float64
	Type  string
	// Success and Failure are the actors counted in S and F.
	Success, Failure map[string]bool
}

// answer is the result: the items in order and skewed.
func (c refCorrelation) answer(all []refEvent) ([]refCorrelationItem, bool) {
	personOf, props := refIdentities(all)
	from, to := c.Funnel.dateRange()
	byPerson := map[string][]refEvent{}
	for _, e := range all {
		if e.At.Before(from) || !e.At.Before(to) {
			continue
		}
		id := personOf(e.DistinctID)
		if c.Funnel.GroupIndex > 0 {
			if id = refString(e.Props[fmt.Sprintf("$group_%d", c.Funnel.GroupIndex)]); id == "" {
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
	for _, p := range c.Funnel.persons(all) {
		success := p.level() == n
		if success {
			S++
		} else {
			F++
		}
		lo := p.Events[p.Path[0]].At
		hi := lo.Add(c.Funnel.window())
		if success {
			hi = p.Events[p.Path[n-1]].At
		}
		mine := map[string]bool{}
		switch c.Type {
		case "properties":
			pp := props[p.ID]
			for _, k := range c.Names {
				if !has(c.ExcludeNames, k) {
					mine[k+"::"+refString(pp[k])] = true
				}
			}
			if c.AllNames {
				for k, v := range pp {
					if !has(c.ExcludeNames, k) {
						mine[k+"::"+refString(v)] = true
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
					for k, v := range e.Props {
						if !has(c.ExcludeEventProperties, k) {
							mine[e.Event+"::"+k+"::"+refJSONText(v)] = true
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
	var succ, fail []refCorrelationItem
	for name, k := range items {
		if float64(k.s+k.f) < math.Min(25, 0.02*float64(S+F)) || (c.Type == "event_with_properties" && k.s+k.f <= 2) {
			continue
		}
		r := (float64(k.s+1) * float64(F-k.f+1)) / (float64(S-k.s+1) * float64(k.f+1))
		it := refCorrelationItem{name, k.s, k.f, r, "failure", k.success, k.failure}
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

// refJSONText is a property value as items hold it: a string as is,
// objects and lists as their JSON text, other values as refString.
func refJSONText(v any) string {
	switch v.(type) {
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return refString(v)
}

// params is the request the API takes.
func (c refCorrelation) params() map[string]any {
	m := c.Funnel.filter(nil)
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

type apiCorrelation struct {
	Events []struct {
		Event struct {
			Event string `json:"event"`
		} `json:"event"`
		SuccessCount     int64   `json:"success_count"`
		FailureCount     int64   `json:"failure_count"`
		OddsRatio        float64 `json:"odds_ratio"`
		CorrelationType  string  `json:"correlation_type"`
		SuccessPeopleURL string  `json:"success_people_url"`
		FailurePeopleURL string  `json:"failure_people_url"`
	} `json:"events"`
	Skewed bool `json:"skewed"`
}

// checkCorrelation compares the API's answer with the reference's and
// returns the answer.
func checkCorrelation(t *testing.T, p *funnelProject, events []refEvent, c refCorrelation) apiCorrelation {
	t.Helper()
	var got apiCorrelation
	p.result(t, "funnel/correlation", c.params(), &got)
	want, skewed := c.answer(events)
	same := len(got.Events) == len(want) && got.Skewed == skewed
	for i := 0; same && i < len(want); i++ {
		g, w := got.Events[i], want[i]
		same = g.Event.Event == w.Name && g.SuccessCount == w.S && g.FailureCount == w.F && g.CorrelationType == w.Type &&
			math.Abs(g.OddsRatio-w.Ratio) <= 1e-9*math.Max(1, w.Ratio)
	}
	if !same {
		var gs, ws []string
		for _, e := range got.Events {
			gs = append(gs, fmt.Sprintf("%s s=%d f=%d %.4f %s", e.Event.Event, e.SuccessCount, e.FailureCount, e.OddsRatio, e.CorrelationType))
		}
		for _, e := range want {
			ws = append(ws, fmt.Sprintf("%s s=%d f=%d %.4f %s", e.Name, e.S, e.F, e.Ratio, e.Type))
		}
		t.Fatalf("request %v\n got skewed=%v\n  %s\nwant skewed=%v\n  %s", c.params(), got.Skewed, strings.Join(gs, "\n  "), skewed, strings.Join(ws, "\n  "))
	}
	return got
}
