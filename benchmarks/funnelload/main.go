// Command funnelload times funnels on a loaded project in one run, so the
// numbers share the machine's state: (a) end to end through the HTTP
// endpoint with refresh=true (no result cache), (b) the statement the
// endpoint builds, run straight on the engine, (c) the plain windowFunnel
// query other ClickHouse tools run for the same funnel, and (d) the floor:
// reading the same events and grouping them by person, which any funnel
// must do at least. It serves the API in-process on a loopback port,
// because only one process may open the embedded engine's directory. It
// runs every case once to warm up, then -runs rounds, each round running
// every case every way in turn, a different way first in each round (so
// ratios between cases share the machine's state too); it prints a markdown table of medians, the ratios
// the targets name, and whether the per-step person counts of HTTP and
// windowFunnel agree. With -metrics, the HTTP request is also timed on a
// second server with Prometheus metrics on, as one more way in the
// rounds, and a last table gives the cost of metrics.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
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
	floor := func(where string) string {
		return `SELECT count(), sum(c) FROM (SELECT person_id, count() AS c FROM events WHERE ` + where + ` GROUP BY person_id)`
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

// way is one way of running a case: its timings and its last answer, as
// person counts per step (persons reaching step i or beyond), keyed by
// breakdown value ("" without a breakdown).
type way struct {
	name  string
	times []time.Duration
	na    string // why this way was not run, if it was not
	steps map[string][]float64
	// fails counts the timed runs that failed (a timeout, say); err is
	// the last failure. Their times are left out of the median.
	fails int
	err   string
}

// fail records a failed run: only timed rounds count, and an endpoint that
// is not there makes the whole way n/a.
func (w *way) fail(msg string, missing bool) {
	if missing {
		w.na = msg
		return
	}
	w.fails++
	w.err = msg
}

func main() {
	f := loaded.RegisterFlags("funnel")
	only := flag.String("only", "", "run only the cases whose name contains this")
	env := loaded.Start("funnelload", f)
	defer env.Close()
	ctx := context.Background()
	engine, from, to, runs, days, project := env.Engine, env.From, env.To, f.Runs, f.Days, f.Project
	base, client := env.InsightsURL, env.Client
	params := map[string]any{"team": *project, "from": from, "to": to}

	type runner struct {
		c                          funnelCase
		body                       []byte
		http, gen, plain, floor    way
		floorRows, httpMetrics     way
		cached                     way
		genStmt                    querybuilder.Statement
		floorPersons, floorEvents  float64
		runHTTP                    func(w *way, query string)
		runGen, runPlain, runFloor func()
		runFloorRows               func()
	}
	var rs []*runner
	for _, c := range cases(from, to) {
		if *only != "" && !strings.Contains(c.name, *only) {
			continue
		}
		r := &runner{c: c, http: way{name: "HTTP"}, gen: way{name: "generated"}, plain: way{name: "windowFunnel"},
			floor: way{name: "floor"}, floorRows: way{name: "floor, rows returned"}, cached: way{name: "HTTP, cached"},
			httpMetrics: way{name: "HTTP, metrics on"}}
		r.body, _ = json.Marshal(c.filter)
		if stmt, err := env.Generated(ctx, c.endpoint, r.body); err != nil {
			r.gen.na = err.Error()
		} else {
			r.genStmt = stmt
		}
		url := base + c.endpoint + "/"
		if w := &r.httpMetrics; env.MetricsURL == "" {
			w.na = "no -metrics"
		}
		r.runHTTP = func(w *way, query string) {
			if w.na != "" {
				return
			}
			target := url + query
			if w == &r.httpMetrics {
				target = env.MetricsURL + c.endpoint + "/" + query
			}
			start := time.Now()
			req, _ := http.NewRequest("POST", target, bytes.NewReader(r.body))
			req.Header.Set("Authorization", "Bearer "+env.Key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			loaded.Check(err)
			out, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			loaded.Check(err)
			d := time.Since(start)
			if resp.StatusCode != 200 {
				missing := resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed
				w.fail(fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, bytes.TrimSpace(out)), missing)
				return
			}
			var env struct {
				Result json.RawMessage `json:"result"`
			}
			loaded.Check(json.Unmarshal(out, &env))
			s, err := httpSteps(c.shape, env.Result)
			if err != nil {
				w.na = fmt.Sprintf("%s: unexpected result: %v: %.200s", c.name, err, env.Result)
				return
			}
			w.steps = s
			w.times = append(w.times, d)
		}
		timeStmt := func(w *way, st querybuilder.Statement) *olap.Rows {
			if w.na != "" {
				return nil
			}
			start := time.Now()
			rows, err := engine.Query(ctx, st)
			d := time.Since(start)
			if err != nil {
				w.fail(fmt.Sprintf("%.200s", err.Error()), false)
				return nil
			}
			w.times = append(w.times, d)
			return rows
		}
		r.runGen = func() {
			if r.genStmt.SQL != "" {
				timeStmt(&r.gen, r.genStmt)
			}
		}
		r.runPlain = func() {
			if rows := timeStmt(&r.plain, querybuilder.Statement{SQL: c.plain, Params: params}); rows != nil {
				r.plain.steps = plainSteps(c.shape, len(c.filter["events"].([]any)), rows.Data)
			}
		}
		r.runFloor = func() {
			if rows := timeStmt(&r.floor, querybuilder.Statement{SQL: c.floor, Params: params}); rows != nil && len(rows.Data) == 1 {
				r.floorPersons, r.floorEvents = number(rows.Data[0][0]), number(rows.Data[0][1])
			}
		}
		r.runFloorRows = func() { timeStmt(&r.floorRows, querybuilder.Statement{SQL: literalFloor(c.floor), Params: params}) }
		rs = append(rs, r)
	}

	// The ways take turns at going first: the first statement after
	// another case pays for reading columns that case did not read (the
	// breakdown's mat_browser), and that cost must not always land on
	// the same way.
	round := func(n int) {
		for _, r := range rs {
			ways := []func(){
				func() { r.runHTTP(&r.http, "?refresh=true") }, // refresh=true: the endpoint recomputes
				r.runGen, r.runPlain, r.runFloor, r.runFloorRows,
			}
			if r.httpMetrics.na == "" {
				ways = append(ways, func() { r.runHTTP(&r.httpMetrics, "?refresh=true") })
			}
			for i := range ways {
				ways[(i+n)%len(ways)]()
			}
		}
	}
	round(0) // warm-up
	for _, r := range rs {
		for _, w := range []*way{&r.http, &r.gen, &r.plain, &r.floor, &r.floorRows, &r.httpMetrics} {
			w.times, w.fails, w.err = nil, 0, ""
		}
	}
	for n := range *runs {
		round(n + 1)
	}
	for _, r := range rs {
		for range *runs {
			r.runHTTP(&r.cached, "")
		}
	}

	fmt.Printf("range %s to %s (%d days, UTC), window %d days, project %d; %d rounds (median) after one warm-up round\n\n",
		from, to, *days, windowSeconds/86400, *project, *runs)
	fmt.Println("| funnel | HTTP end to end (ms) | generated SQL on the engine (ms) | plain windowFunnel (ms) | floor (ms) | floor, rows returned (ms) | HTTP / floor | HTTP / floor with rows | HTTP / windowFunnel | HTTP, cached (ms) | floor: persons, events |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f, %.0f |\n", r.c.name, cell(r.http), cell(r.gen), cell(r.plain), cell(r.floor),
			cell(r.floorRows), ratio(r.http, r.floor), ratio(r.http, r.floorRows), ratio(r.http, r.plain), cell(r.cached), r.floorPersons, r.floorEvents)
	}

	find := func(name string) *runner {
		for _, r := range rs {
			if r.c.name == name {
				return r
			}
		}
		return nil
	}
	for _, r := range rs {
		for _, w := range []way{r.http, r.gen, r.plain, r.floor, r.floorRows, r.cached, r.httpMetrics} {
			if w.fails > 0 {
				fmt.Printf("\n%s, %s: %d of %d timed runs failed, left out of the median; the last: %s\n", r.c.name, w.name, w.fails, w.fails+len(w.times), w.err)
			}
		}
	}
	fmt.Println("\nTargets:")
	target := func(label string, a, b *runner, wa, wb func(*runner) way, limit float64, strict bool) {
		if a == nil || b == nil {
			fmt.Printf("- %s: n/a (case not run)\n", label)
			return
		}
		x, y := wa(a), wb(b)
		if x.na != "" || y.na != "" || len(x.times) == 0 || len(y.times) == 0 {
			fmt.Printf("- %s: n/a (%s)\n", label, firstNonEmpty(x.na, y.na, x.err, y.err, "no timings"))
			return
		}
		v := float64(loaded.Median(x.times)) / float64(loaded.Median(y.times))
		met := v <= limit
		if strict {
			met = v < limit
		}
		verdict := "met"
		if !met {
			verdict = "NOT met"
		}
		if limit == 0 {
			verdict = "no target"
		}
		if x.fails+y.fails > 0 {
			verdict += fmt.Sprintf("; %d failed runs left out", x.fails+y.fails)
		}
		fmt.Printf("- %s: %.2f (%s)\n", label, v, verdict)
	}
	httpOf := func(r *runner) way { return r.http }
	floorOf := func(r *runner) way { return r.floor }
	plainOf := func(r *runner) way { return r.plain }
	three := find("3-step ordered")
	target("3-step HTTP / floor (target <= 2)", three, three, httpOf, floorOf, 2, false)
	target("3-step HTTP / floor as the issue writes it, its rows returned (target <= 2)", three, three, httpOf,
		func(r *runner) way { return r.floorRows }, 2, false)
	target("3-step HTTP / plain windowFunnel (target < 1: faster)", three, three, httpOf, plainOf, 1, true)
	target("10-step HTTP / 3-step HTTP (target <= 2)", find("10-step ordered"), three, httpOf, httpOf, 2, false)
	target("breakdown HTTP / 3-step HTTP (target <= 1.3)", find("3-step, breakdown by $browser"), three, httpOf, httpOf, 1.3, false)
	target("for reference: 10-step windowFunnel / 3-step windowFunnel", find("10-step ordered"), three, plainOf, plainOf, 0, false)
	target("for reference: strict HTTP / 3-step HTTP", find("3-step strict ($pageview, signup, $identify)"), three, httpOf, httpOf, 0, false)
	target("for reference: unordered HTTP / 3-step HTTP", find("3-step unordered"), three, httpOf, httpOf, 0, false)
	target("for reference: time to convert HTTP / 3-step plain windowFunnel", find("3-step, time to convert"), three, httpOf, plainOf, 0, false)
	target("for reference: time to convert HTTP / 3-step HTTP", find("3-step, time to convert"), three, httpOf, httpOf, 0, false)

	fmt.Println("\nPersons per step (step i: persons reaching step i or beyond), HTTP vs plain windowFunnel:")
	for _, r := range rs {
		fmt.Printf("- %s: %s\n", r.c.name, compare(r.c, r.http, r.plain))
	}
	if env.MetricsURL != "" {
		fmt.Println("\nMetrics cost: the same HTTP requests (refresh=true) on a server with Prometheus metrics off and on, in the same rounds (target: on / off within 1.02)")
		fmt.Println()
		fmt.Println("| funnel | HTTP, metrics off (ms) | HTTP, metrics on (ms) | on / off |")
		fmt.Println("|---|---|---|---|")
		for _, r := range rs {
			on := "n/a"
			if ratio(r.httpMetrics, r.http) != "n/a" {
				on = fmt.Sprintf("%.3f", float64(loaded.Median(r.httpMetrics.times))/float64(loaded.Median(r.http.times)))
			}
			fmt.Printf("| %s | %s | %s | %s |\n", r.c.name, cell(r.http), cell(r.httpMetrics), on)
		}
	}
}

// literalFloor is the floor as the issue writes it, SELECT person_id,
// count() ... GROUP BY person_id, its rows (one per person) returned to
// the client, from the wrapped form that only counts them.
func literalFloor(wrapped string) string {
	inner := strings.TrimPrefix(wrapped, "SELECT count(), sum(c) FROM (")
	return strings.TrimSuffix(inner, ")")
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

// compare says whether HTTP and windowFunnel agree on the persons per step.
func compare(c funnelCase, h, p way) string {
	if h.na != "" || p.na != "" || h.steps == nil || p.steps == nil {
		return "n/a (" + firstNonEmpty(h.na, p.na, h.err, p.err, "no answer") + ")"
	}
	var keys []string
	seen := map[string]bool{}
	for _, m := range []map[string][]float64{h.steps, p.steps} {
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
		a, b := fmt.Sprint(h.steps[k]), fmt.Sprint(p.steps[k])
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%sHTTP %s, windowFunnel %s", label(k), a, b))
		}
	}
	unit := "persons per step"
	if c.shape == timeToConvert || c.shape == timing {
		unit = "persons binned vs persons reaching the last step"
	}
	if len(diffs) == 0 {
		s := fmt.Sprintf("agree (%s: %v", unit, h.steps[keys[0]])
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

func cell(w way) string {
	if w.na != "" || len(w.times) == 0 {
		return "n/a"
	}
	s := fmt.Sprintf("%.1f", loaded.Ms(loaded.Median(w.times)))
	if w.fails > 0 {
		s += fmt.Sprintf(" (%d failed)", w.fails)
	}
	return s
}

func ratio(a, b way) string {
	if a.na != "" || b.na != "" || len(a.times) == 0 || len(b.times) == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(loaded.Median(a.times))/float64(loaded.Median(b.times)))
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
