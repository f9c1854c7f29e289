// Command correlationload times funnel correlation on the loaded project
// in one interleaved run: (a) over HTTP with refresh=true, (b) the
// generated statement on the engine with its result discarded, (c) a
// hand-written query for the same counts, discarded too, and (d) the
// funnel alone over HTTP. Before timing, the generated statement's counts
// and the hand-written ones must agree, and every item the HTTP answer
// shows must have those counts.
//
// The hand-written query is the way PostHog wrote correlation: the
// funnel's actors joined to the events inside their bounds (actors on
// the hash side), distinct (actor, item) pairs counted, and the totals
// from the actor set in a second branch. Its actor set is the generated
// statement's own (the funnel part is compared with hand-written SQL in
// funnels.md): what differs is how the counts are made.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/querybuilder"
)

type benchCase struct {
	name string
	body map[string]any
	// hand writes the hand-written query around the actor set.
	hand func(actors string) string
}

func main() {
	f := loaded.RegisterFlags("correlation")
	env := loaded.Start("correlationload", f)
	defer env.Close()
	ctx := context.Background()
	last, err := time.Parse(time.DateOnly, env.To)
	loaded.Check(err)
	from := last.AddDate(0, 0, -29).Format(time.DateOnly)
	funnel := map[string]any{"events": []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "signup", "order": 1},
		map[string]any{"id": "purchase", "order": 2}}, "date_from": from, "date_to": env.To}
	with := func(extra map[string]any) map[string]any {
		b := map[string]any{}
		for k, v := range funnel {
			b[k] = v
		}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	cases := []benchCase{
		{name: "event correlation", body: with(nil), hand: handEvents},
		{name: "person property correlation ($all)", body: with(map[string]any{"funnel_correlation_type": "properties",
			"funnel_correlation_names": []string{"$all"}}), hand: handProperties},
	}
	fmt.Printf("project %d, 3-step funnel over %s to %s, %d rounds after one warm-up round; started %s, load average %s\n\n",
		*f.Project, from, env.To, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
	type way struct{ wall, cpu []time.Duration }
	type runner struct {
		c                   benchCase
		body, funnelBody    []byte
		gen, hand           querybuilder.Statement
		http, gw, hw, fw    way
		handR, funnelR, gfr []float64
	}
	limits := querybuilder.DefaultLimits()
	firstBody, _ := json.Marshal(cases[0].body)
	env.Cold(cases[0].name, "funnel/correlation", firstBody)
	var rs []*runner
	for _, c := range cases {
		r := &runner{c: c}
		r.body, _ = json.Marshal(c.body)
		r.funnelBody, _ = json.Marshal(funnel)
		r.gen, err = env.Generated(ctx, "correlation", r.body)
		loaded.Check(err)
		r.hand = querybuilder.WithLimits(querybuilder.Statement{SQL: c.hand(actorSet(r.gen.SQL)), Params: r.gen.Params}, limits)
		check(ctx, env, c, r.body, r.gen, r.hand)
		rs = append(rs, r)
	}
	timed := func(w *way, fn func()) time.Duration {
		c0, t0 := loaded.CPUTime(), time.Now()
		fn()
		d := time.Since(t0)
		w.wall, w.cpu = append(w.wall, d), append(w.cpu, loaded.CPUTime()-c0)
		return d
	}
	discard := func(st querybuilder.Statement) func() {
		st.SQL = strings.TrimSpace(st.SQL) + "\nFORMAT Null"
		return func() {
			_, err := env.Engine.Query(ctx, st)
			loaded.Check(err)
		}
	}
	for round := 0; round <= *f.Runs; round++ {
		for i := range rs {
			r := rs[(i+round)%len(rs)] // a different case first in each round
			h, g, w, fw := &r.http, &r.gw, &r.hw, &r.fw
			if round == 0 {
				var scratch way
				h, g, w, fw = &scratch, &scratch, &scratch, &scratch
			}
			var dh, dw, dg, df time.Duration
			ways := []func(){
				func() { dh = timed(h, func() { env.HTTPResult("funnel/correlation", r.body) }) },
				func() { dg = timed(g, discard(r.gen)) },
				func() { dw = timed(w, discard(r.hand)) },
				func() { df = timed(fw, func() { env.HTTPResult("funnel", r.funnelBody) }) },
			}
			for k := range ways {
				ways[(k+round)%len(ways)]()
			}
			if round > 0 {
				r.handR = append(r.handR, float64(dh)/float64(dw))
				r.funnelR = append(r.funnelR, float64(dh)/float64(df))
				r.gfr = append(r.gfr, float64(dg)/float64(dw))
			}
		}
	}
	fmt.Println("| case | HTTP ms median (min-max) | CPU ms | generated ms | CPU ms | hand-written ms | CPU ms | funnel alone (HTTP) ms | CPU ms | HTTP / hand median (min-max) | HTTP / funnel median (min-max) | generated / hand median (min-max) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Printf("| %s | %s | %.0f | %s | %.0f | %s | %.0f | %s | %.0f | %s | %s | %s |\n", r.c.name,
			loaded.Spread(r.http.wall), loaded.Ms(loaded.Median(r.http.cpu)), loaded.Spread(r.gw.wall), loaded.Ms(loaded.Median(r.gw.cpu)),
			loaded.Spread(r.hw.wall), loaded.Ms(loaded.Median(r.hw.cpu)), loaded.Spread(r.fw.wall), loaded.Ms(loaded.Median(r.fw.cpu)),
			loaded.Ratios(r.handR), loaded.Ratios(r.funnelR), loaded.Ratios(r.gfr))
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}

// actorSet is the funnel's actor set in the generated statement: the
// subquery the RIGHT JOIN reads as fa.
func actorSet(sql string) string {
	start := strings.Index(sql, "RIGHT JOIN (\n")
	end := strings.Index(sql, ") AS fa ON")
	if start < 0 || end < start {
		loaded.Check(fmt.Errorf("no actor set in the generated statement"))
	}
	return sql[start+len("RIGHT JOIN (\n") : end]
}

func handEvents(actors string) string {
	return `SELECT name, countIf(success), countIf(NOT success)
FROM (
    SELECT DISTINCT fa.actor AS actor, fa.success AS success, e.event AS name
    FROM events AS e
    INNER JOIN (` + actors + `) AS fa ON e.person_id = fa.actor
    WHERE e.team_id = {team:Int64} AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
      AND e.event NOT IN ('$pageview', 'signup', 'purchase')
      AND toUnixTimestamp64Micro(e.timestamp) > fa.lo AND toUnixTimestamp64Micro(e.timestamp) < fa.hi
)
GROUP BY name
UNION ALL
SELECT NULL, countIf(success), countIf(NOT success) FROM (` + actors + `)`
}

func handProperties(actors string) string {
	return `SELECT item, countIf(success), countIf(NOT success)
FROM (
    SELECT fa.success AS success, concat(kv.1, '::', multiIf(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2 = 'null', '', kv.2)) AS item
    FROM (SELECT id, argMax(properties, version) AS props FROM persons WHERE team_id = {team:Int64} GROUP BY id HAVING argMax(is_deleted, version) = 0) AS p
    INNER JOIN (` + actors + `) AS fa ON p.id = fa.actor
    ARRAY JOIN JSONExtractKeysAndValuesRaw(p.props) AS kv
)
GROUP BY item
UNION ALL
SELECT NULL, countIf(success), countIf(NOT success) FROM (` + actors + `)`
}

// check fails unless the generated rows and the hand-written rows (past
// the same threshold) give the same counts, and the HTTP items have them.
func check(ctx context.Context, env *loaded.Env, c benchCase, body []byte, gen, hand querybuilder.Statement) {
	counts := func(st querybuilder.Statement, generated bool) map[string][2]int64 {
		res, err := env.Engine.Query(ctx, st)
		loaded.Check(err)
		out := map[string][2]int64{}
		for _, r := range res.Data {
			s, _ := strconv.ParseInt(fmt.Sprint(r[1]), 10, 64)
			f, _ := strconv.ParseInt(fmt.Sprint(r[2]), 10, 64)
			key := "<totals>"
			if r[0] != nil {
				key = fmt.Sprint(r[0])
				if generated {
					key = itemText(key)
				}
			}
			out[key] = [2]int64{s, f}
		}
		return out
	}
	g, h := counts(gen, true), counts(hand, false)
	total := h["<totals>"]
	threshold := math.Min(25, 0.02*float64(total[0]+total[1]))
	for k, v := range h {
		if k != "<totals>" && float64(v[0]+v[1]) < threshold {
			delete(h, k)
		}
	}
	same := len(g) == len(h)
	for k, v := range g {
		same = same && h[k] == v
	}
	var res struct {
		Events []struct {
			Event struct{ Event string }
			S     int64 `json:"success_count"`
			F     int64 `json:"failure_count"`
		}
	}
	loaded.Check(json.Unmarshal(env.HTTPResult("funnel/correlation", body), &res))
	for _, e := range res.Events {
		same = same && h[e.Event.Event] == [2]int64{e.S, e.F}
	}
	if !same || len(res.Events) == 0 {
		fmt.Fprintf(os.Stderr, "%s: the counts differ\ngenerated %v\nhand %v\nHTTP %+v\n", c.name, g, h, res.Events)
		os.Exit(1)
	}
	fmt.Printf("%s: %d items agree (S=%d, F=%d), %d shown\n", c.name, len(g)-1, total[0], total[1], len(res.Events))
}

// itemText is a property item as the hand-written query writes it
// (key::value) from the generated statement's length-prefixed text
// (len(key):key::value), which keeps a key holding '::' exact; an event
// name has no prefix and is left as it is.
func itemText(s string) string {
	i := strings.IndexByte(s, ':')
	n, err := strconv.Atoi(s[:max(i, 0)])
	if i <= 0 || err != nil || n < 0 {
		return s
	}
	rest := s[i+1:]
	if len(rest) < n+2 || rest[n:n+2] != "::" {
		return s
	}
	return rest
}
