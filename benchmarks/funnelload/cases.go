package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/insightd/insightd/benchmarks/loaded"
)

// windowSeconds is the conversion window of every case: the default 14 days.
const windowSeconds = 14 * 86400

// shape says how to read a case's HTTP result and its plain query's rows.
type shape int

const (
	steps          shape = iota // result: list of steps; plain rows: (level, count)
	breakdownSteps              // result: list of step lists; plain rows: (value, level, count)
	timeToConvert               // result: {bins, ...}; compared with the persons reaching the last step
	timing                      // result: {bins, ..., persons}; likewise
)

// funnelCase is one measured funnel: the request body, the endpoint, the
// plain windowFunnel query for it (empty: none) and the floor query.
type funnelCase struct {
	name     string
	endpoint string // "funnel" or "timing"
	filter   map[string]any
	shape    shape
	plain    string
	floor    string
	// expect is empty when HTTP and windowFunnel must give the same person
	// counts per step, else why they may differ.
	expect string
}

func cases(from, to string) []funnelCase {
	ev := func(names ...string) []any {
		var out []any
		for i, n := range names {
			out = append(out, map[string]any{"id": n, "type": "events", "order": i})
		}
		return out
	}
	body := func(events []any, extra map[string]any) map[string]any {
		f := map[string]any{"insight": "FUNNELS", "events": events, "date_from": from, "date_to": to, "interval": "day",
			"funnel_window_interval": windowSeconds / 86400, "funnel_window_interval_unit": "day"}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	three := []string{"$pageview", "signup", "purchase"}
	ten := []string{"$pageview", "signup", "$identify", "$autocapture", "feature used", "purchase", "$pageleave", "$pageview", "feature used", "purchase"}
	strict := []string{"$pageview", "signup", "$identify"}
	rangeSQL := `team_id = {team:Int64} AND toDate(timestamp) BETWEEN {from:Date} AND {to:Date}`
	in := func(names []string) string {
		seen := map[string]bool{}
		var q []string
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				q = append(q, "'"+n+"'")
			}
		}
		return " AND event IN (" + strings.Join(q, ", ") + ")"
	}
	wf := func(names []string, mode string) string {
		args := []string{"toDateTime(timestamp)"}
		for _, n := range names {
			args = append(args, "event = '"+n+"'")
		}
		if mode != "" {
			mode = ", '" + mode + "'"
		}
		return fmt.Sprintf("windowFunnel(%d%s)(%s)", windowSeconds, mode, strings.Join(args, ", "))
	}
	plain := func(level, where string) string {
		return `SELECT level, count() FROM (SELECT person_id, ` + level + ` AS level FROM events WHERE ` + where +
			` GROUP BY person_id) GROUP BY level ORDER BY level`
	}
	// The floor is what any funnel must do at least: read its events and
	// group them by person. It is timed with its result discarded; its
	// persons and events are counted once, untimed (floorCounts).
	floor := func(where string) string {
		return `SELECT person_id, count() AS c FROM events WHERE ` + where + ` GROUP BY person_id`
	}
	var rotations []string
	for i := range three {
		rotations = append(rotations, wf(append(append([]string(nil), three[i:]...), three[:i]...), ""))
	}
	w3, w10 := rangeSQL+in(three), rangeSQL+in(ten)
	return []funnelCase{
		{name: "3-step ordered", endpoint: "funnel", filter: body(ev(three...), nil), shape: steps,
			plain: plain(wf(three, ""), w3), floor: floor(w3)},
		{name: "10-step ordered", endpoint: "funnel", filter: body(ev(ten...), nil), shape: steps,
			plain: plain(wf(ten, ""), w10), floor: floor(w10),
			expect: "repeated steps: windowFunnel lets one event match several steps"},
		{name: "3-step strict ($pageview, signup, $identify)", endpoint: "funnel",
			filter: body(ev(strict...), map[string]any{"funnel_order_type": "strict"}), shape: steps,
			plain: plain(wf(strict, "strict_order"), rangeSQL), floor: floor(rangeSQL),
			expect: "strict_order stops at the first other event after a step-1 event; insightd takes the best attempt"},
		{name: "3-step unordered", endpoint: "funnel",
			filter: body(ev(three...), map[string]any{"funnel_order_type": "unordered"}), shape: steps,
			plain: plain("greatest("+strings.Join(rotations, ", ")+")", w3), floor: floor(w3),
			expect: "windowFunnel has no unordered mode: the best of the 3 rotations misses orders like a, c, b"},
		{name: "3-step, breakdown by $browser", endpoint: "funnel",
			filter: body(ev(three...), map[string]any{"breakdown": "$browser", "breakdown_type": "event"}), shape: breakdownSteps,
			plain: `SELECT mat_browser, level, count() FROM (SELECT person_id, mat_browser, ` + wf(three, "") +
				` AS level FROM events WHERE ` + w3 + ` GROUP BY person_id, mat_browser) GROUP BY mat_browser, level ORDER BY mat_browser, level`,
			floor: floor(w3)},
		{name: "3-step, time to convert", endpoint: "funnel",
			filter: body(ev(three...), map[string]any{"funnel_viz_type": "time_to_convert"}), shape: timeToConvert,
			plain: plain(wf(three, ""), w3), floor: floor(w3)},
		{name: "3-step, timing endpoint", endpoint: "timing", filter: body(ev(three...), nil), shape: timing,
			plain: plain(wf(three, ""), w3), floor: floor(w3)},
	}
}

// httpSteps reads an HTTP result into person counts per step by breakdown
// value; time to convert and timing give one "step": the persons binned.
func httpSteps(sh shape, raw json.RawMessage) (map[string][]float64, error) {
	type step struct {
		Count          float64         `json:"count"`
		BreakdownValue json.RawMessage `json:"breakdown_value"`
	}
	out := map[string][]float64{}
	switch sh {
	case steps:
		var s []step
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		for _, st := range s {
			out[""] = append(out[""], st.Count)
		}
	case breakdownSteps:
		var s [][]step
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		for _, l := range s {
			if len(l) == 0 {
				continue
			}
			v := breakdownValue(l[0].BreakdownValue)
			for _, st := range l {
				out[v] = append(out[v], st.Count)
			}
		}
	case timeToConvert, timing:
		var t struct {
			Bins    [][]float64 `json:"bins"`
			Persons *float64    `json:"persons"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, err
		}
		var n float64
		for _, bin := range t.Bins {
			if len(bin) != 2 {
				return nil, fmt.Errorf("a bin of %d numbers", len(bin))
			}
			n += bin[1]
		}
		if t.Persons != nil && *t.Persons != n {
			return nil, fmt.Errorf("persons %.0f but the bins hold %.0f", *t.Persons, n)
		}
		out[""] = []float64{n}
	}
	return out, nil
}

// breakdownValue is a breakdown value as text: a string, or the one string
// of a list.
func breakdownValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil && len(l) == 1 {
		return l[0]
	}
	return string(raw)
}

// plainSteps turns (level, persons) rows, or (value, level, persons), into
// persons reaching step i or beyond, for n steps; time to convert and
// timing compare with the persons reaching the last step.
func plainSteps(sh shape, n int, rows [][]any) map[string][]float64 {
	out := map[string][]float64{}
	for _, r := range rows {
		key := ""
		if sh == breakdownSteps {
			key, r = fmt.Sprint(r[0]), r[1:]
		}
		lv, c := int(number(r[0])), number(r[1])
		if out[key] == nil {
			out[key] = make([]float64, n)
		}
		for i := 0; i < lv && i < n; i++ {
			out[key][i] += c
		}
	}
	if sh == timeToConvert || sh == timing {
		out[""] = []float64{out[""][n-1]}
	}
	return out
}

// compare says whether HTTP and windowFunnel agree on the persons per
// step; why says why either has no answer.
func compare(c funnelCase, h, p map[string][]float64, why string) string {
	if h == nil || p == nil {
		return "n/a (" + firstNonEmpty(why, "no answer") + ")"
	}
	var keys []string
	seen := map[string]bool{}
	for _, m := range []map[string][]float64{h, p} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	var diffs []string
	for _, k := range keys {
		a, b := fmt.Sprint(h[k]), fmt.Sprint(p[k])
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%sHTTP %s, windowFunnel %s", label(k), a, b))
		}
	}
	unit := "persons per step"
	if c.shape == timeToConvert || c.shape == timing {
		unit = "persons binned vs persons reaching the last step"
	}
	if len(diffs) == 0 {
		s := fmt.Sprintf("agree (%s: %v", unit, h[keys[0]])
		if len(keys) > 1 {
			s += fmt.Sprintf(" for %s, and %d more values", keys[0], len(keys)-1)
		}
		return s + ")"
	}
	s := "differ: " + strings.Join(diffs, "; ")
	if c.expect != "" {
		s += " (expected: " + c.expect + ")"
	}
	return s
}

func label(k string) string {
	if k == "" {
		return ""
	}
	return k + ": "
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// number reads a count or level of any numeric type.
func number(v any) float64 {
	switch v := v.(type) {
	case uint64:
		return float64(v)
	case int64:
		return float64(v)
	case uint32:
		return float64(v)
	case int32:
		return float64(v)
	case uint8:
		return float64(v)
	case uint16:
		return float64(v)
	case float64:
		return v
	case string: // wider integers
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	loaded.Check(fmt.Errorf("number of type %T: %v", v, v))
	return 0
}
