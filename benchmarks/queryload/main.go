// Command queryload times the query API on the loaded project against
// what it stands for, in one interleaved run: a TrendsQuery and a
// FunnelsQuery through POST query/ against their legacy requests through
// insights/<route>/ (both over HTTP with the result cache bypassed;
// target within 1.05x), and a HogQL daily count through POST query/
// against its hand-written ClickHouse SQL run on the engine with its
// result discarded (FORMAT Null; target within 1.1x). Before timing, each
// pair's answers are checked equal.
//
// It runs every case both ways once to warm up, then -runs rounds, the
// two ways taking turns at going first, and prints per case and way the
// median wall time, its spread and the median process CPU time (the
// engine runs in this process), and the ratio query / reference taken
// round by round.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/querybuilder"
)

// benchCase is a query node and its reference: a legacy request (route
// and body) or hand-written SQL.
type benchCase struct {
	name        string
	node        map[string]any
	route       string
	legacy      map[string]any
	hand        string
	target      float64
	legacyBytes []byte
}

func main() {
	f := loaded.RegisterFlags("query API")
	env := loaded.Start("queryload", f)
	defer env.Close()
	ctx := context.Background()
	last, err := time.Parse(time.DateOnly, env.To)
	loaded.Check(err)
	queryURL := strings.TrimSuffix(env.InsightsURL, "insights/") + "query/"
	cases := benchCases(last)
	fmt.Printf("project %d, last complete day %s, %d rounds after one warm-up round; started %s, load average %s\n\n",
		*f.Project, env.To, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())

	post := func(node map[string]any) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"query": node, "refresh": "force_blocking"})
		req, _ := http.NewRequest("POST", queryURL, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+env.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := env.Client.Do(req)
		loaded.Check(err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		loaded.Check(err)
		if resp.StatusCode != 200 {
			loaded.Check(fmt.Errorf("query: %d %s", resp.StatusCode, body))
		}
		var out struct {
			Results json.RawMessage `json:"results"`
		}
		loaded.Check(json.Unmarshal(body, &out))
		return out.Results
	}
	hand := func(c *benchCase) querybuilder.Statement {
		return querybuilder.Statement{SQL: c.hand, Params: map[string]any{"team": *f.Project}}
	}
	for i := range cases {
		c := &cases[i]
		got := post(c.node)
		if c.legacy != nil {
			c.legacyBytes, _ = json.Marshal(c.legacy)
			// The node was just computed (force_blocking); its legacy
			// request must be answered from the same cache entry, byte
			// for byte. (Computing both would not do on this table: the
			// engine's parallel sums differ in their last digits.)
			if want, cached := cachedLegacy(env, c.route, c.legacyBytes); !cached || !bytes.Equal(got, want) {
				fmt.Fprintf(os.Stderr, "%s: the legacy request was not answered from the node's cache entry (cached %v)\n", c.name, cached)
				fmt.Fprintf(os.Stderr, "node %.300s\nlegacy %.300s\n", got, want)
				os.Exit(1)
			}
		} else {
			rows, err := env.Engine.Query(ctx, hand(c))
			loaded.Check(err)
			var want [][]any
			for _, r := range rows.Data {
				want = append(want, []any{r[0].(time.Time).Format(time.DateOnly), r[1]})
			}
			wb, _ := json.Marshal(want)
			if !bytes.Equal(got, wb) {
				fmt.Fprintf(os.Stderr, "%s: HogQL and hand-written differ\nHogQL %.500s\nhand %.500s\n", c.name, got, wb)
				os.Exit(1)
			}
		}
		fmt.Printf("%s: answers agree (%d bytes)\n", c.name, len(got))
	}

	type way struct{ wall, cpu []time.Duration }
	timed := func(w *way, fn func()) time.Duration {
		c0, t0 := loaded.CPUTime(), time.Now()
		fn()
		d := time.Since(t0)
		w.wall, w.cpu = append(w.wall, d), append(w.cpu, loaded.CPUTime()-c0)
		return d
	}
	qw, rw := make([]way, len(cases)), make([]way, len(cases))
	ratios := make([][]float64, len(cases))
	for round := 0; round <= *f.Runs; round++ {
		for k := range cases {
			i := (k + round) % len(cases) // a different case first in each round
			c := &cases[i]
			var scratch way
			q, r := &qw[i], &rw[i]
			if round == 0 { // warm-up, not recorded
				q, r = &scratch, &scratch
			}
			reference := func() { env.HTTPResult(c.route, c.legacyBytes) }
			if c.legacy == nil {
				st := loaded.Discard(hand(c))
				reference = func() {
					_, err := env.Engine.Query(ctx, st)
					loaded.Check(err)
				}
			}
			var dq, dr time.Duration
			ways := []func(){
				func() { dq = timed(q, func() { post(c.node) }) },
				func() { dr = timed(r, reference) },
			}
			for k := range ways {
				ways[(k+round)%len(ways)]()
			}
			if round > 0 {
				ratios[i] = append(ratios[i], float64(dq)/float64(dr))
			}
		}
	}
	fmt.Println("| case | query/ ms median (min-max) | CPU ms | reference ms median (min-max) | CPU ms | query / reference median (min-max) | target |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for i, c := range cases {
		fmt.Printf("| %s | %s | %.0f | %s | %.0f | %s | %.2f |\n", c.name,
			loaded.Spread(qw[i].wall), loaded.Ms(loaded.Median(qw[i].cpu)), loaded.Spread(rw[i].wall), loaded.Ms(loaded.Median(rw[i].cpu)),
			loaded.Ratios(ratios[i]), c.target)
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}

// benchCases end on the last complete day; the loaded project is UTC.
func benchCases(last time.Time) []benchCase {
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	from, to := day(last.AddDate(0, 0, -29)), day(last)
	dr := map[string]any{"date_from": from, "date_to": to}
	ev := func(name string) map[string]any { return map[string]any{"kind": "EventsNode", "event": name} }
	legacyEv := func(name string, order int) map[string]any {
		return map[string]any{"id": name, "type": "events", "order": order}
	}
	return []benchCase{
		{name: "TrendsQuery: daily $pageview by $browser, 30 days", target: 1.05,
			node: map[string]any{"kind": "InsightVizNode", "source": map[string]any{"kind": "TrendsQuery", "series": []any{ev("$pageview")},
				"dateRange": dr, "interval": "day", "breakdownFilter": map[string]any{"breakdown": "$browser", "breakdown_type": "event"}}},
			route: "trend", legacy: map[string]any{"insight": "TRENDS", "events": []any{legacyEv("$pageview", 0)}, "date_from": from,
				"date_to": to, "interval": "day", "breakdown": "$browser", "breakdown_type": "event"}},
		{name: "FunnelsQuery: $pageview then signup, 30 days", target: 1.05,
			node: map[string]any{"kind": "InsightVizNode", "source": map[string]any{"kind": "FunnelsQuery",
				"series": []any{ev("$pageview"), ev("signup")}, "dateRange": dr,
				"funnelsFilter": map[string]any{"funnelWindowInterval": 14, "funnelWindowIntervalUnit": "day"}}},
			route: "funnel", legacy: map[string]any{"insight": "FUNNELS", "events": []any{legacyEv("$pageview", 0), legacyEv("signup", 1)},
				"date_from": from, "date_to": to, "funnel_window_interval": 14, "funnel_window_interval_unit": "day"}},
		{name: "HogQL daily $pageview count, 30 days", target: 1.1,
			node: map[string]any{"kind": "HogQLQuery", "query": "SELECT toDate(timestamp) AS day, count() FROM events " +
				"WHERE event = '$pageview' AND timestamp >= {from} AND timestamp < {end} GROUP BY day ORDER BY day",
				"values": map[string]any{"from": from, "end": day(last.AddDate(0, 0, 1))}},
			hand: fmt.Sprintf(`SELECT toDate(timestamp) AS day, count() FROM events
WHERE team_id = {team:Int64} AND event = '$pageview' AND timestamp >= '%s' AND timestamp < '%s'
GROUP BY day ORDER BY day`, from, day(last.AddDate(0, 0, 1)))},
	}
}

// cachedLegacy asks the legacy endpoint without refresh: its result and
// whether it came from the cache.
func cachedLegacy(env *loaded.Env, route string, body []byte) (json.RawMessage, bool) {
	req, _ := http.NewRequest("POST", env.InsightsURL+route+"/", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+env.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := env.Client.Do(req)
	loaded.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	loaded.Check(err)
	if resp.StatusCode != 200 {
		loaded.Check(fmt.Errorf("%s: %d %s", route, resp.StatusCode, b))
	}
	var out struct {
		Result   json.RawMessage `json:"result"`
		IsCached bool            `json:"is_cached"`
	}
	loaded.Check(json.Unmarshal(b, &out))
	return out.Result, out.IsCached
}
