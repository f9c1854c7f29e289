package hogql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
	"github.com/insightd/insightd/querybuilder"
	"github.com/insightd/insightd/querybuilder/hogql"
)

// engineResolver reads one team's events and persons, as the query API
// will: every table is a subquery that keeps the team's rows only.
type engineResolver struct{}

func (engineResolver) Field(ref hogql.FieldRef, bind func(string, any) string) (string, error) {
	q := ref.Alias + "."
	ch := ref.Chain
	switch {
	case ref.Table == "persons" && len(ch) == 1 && ch[0] == "id":
		return q + "id", nil
	case ref.Table == "persons" && len(ch) == 2 && ch[0] == "properties":
		return "JSONExtractString(" + q + "properties, " + bind("String", ch[1]) + ")", nil
	case ref.Table == "persons":
	case len(ch) == 1 && (ch[0] == "event" || ch[0] == "timestamp" || ch[0] == "distinct_id" || ch[0] == "person_id"):
		return q + ch[0], nil
	case len(ch) == 2 && ch[0] == "properties":
		return "JSONExtractString(" + q + "properties, " + bind("String", ch[1]) + ")", nil
	}
	return "", &hogql.Error{Pos: -1, Msg: "field " + strings.Join(ch, ".") + " is not allowed"}
}

func (engineResolver) Table(name string, _ func(string, any) string) (string, error) {
	switch name {
	case "events", "persons":
		return "(SELECT * FROM " + name + " WHERE team_id = {team:Int64})", nil
	}
	return "", &hogql.Error{Pos: -1, Msg: "table " + name + " is not allowed"}
}

// Compiled statements run on the engine and answer from the team's rows
// only: the printed SQL is ClickHouse's, with its bound values.
func TestCompiledStatementsRunOnTheEngine(t *testing.T) {
	eng, done, err := olaptest.Open(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	ctx := context.Background()
	team := time.Now().UnixNano() / 1000
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	var events []olap.Event
	add := func(teamID int64, name, props string, n int) {
		for i := 0; i < n; i++ {
			events = append(events, olap.Event{UUID: uuid.New(), TeamID: teamID, Event: name, DistinctID: "d", PersonID: uuid.New(),
				Timestamp: at.Add(time.Duration(i) * time.Minute), Properties: props, CreatedAt: at})
		}
	}
	add(team, "$pageview", `{"$browser": "Chrome", "price": 12.5}`, 3)
	add(team, "signup", `{"$browser": "Safari", "price": "n/a"}`, 2)
	add(team+1, "$pageview", `{"$browser": "Chrome"}`, 7) // another team's
	if err := eng.InsertEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, want string }{
		{`SELECT event, count() AS c FROM events GROUP BY event ORDER BY c DESC, event`, `[[$pageview 3] [signup 2]]`},
		{`SELECT count() FROM events WHERE properties.price > 10`, `[[3]]`},
		{`SELECT CASE event WHEN '$pageview' THEN 'pv' ELSE 'other' END AS k, count() FROM events GROUP BY k ORDER BY k`, `[[other 2] [pv 3]]`},
		{`WITH t AS (SELECT event, count() AS n FROM events GROUP BY event) SELECT sum(n) FROM t`, `[[5]]`},
		{`SELECT x.c FROM (SELECT count() AS c FROM events WHERE event IN ('signup', 'x')) AS x`, `[[2]]`},
		{`SELECT count() FROM events WHERE event NOT IN (SELECT event FROM events WHERE properties.$browser = 'Safari')`, `[[3]]`},
		{`SELECT arrayMap(x -> x * 2, [1, 2]), arrayFilter((x, i) -> x > i, [1, 5], [2, 3]), [10, 20][2], tupleElement((1, 'a'), 2)`, `[[[2 4] [5] 20 a]]`},
		{`SELECT quantile(0.5)(toFloat(properties.price)), uniqExact(event), windowFunnel(3600)(toDateTime(timestamp), event = '$pageview', event = 'signup') FROM events`, ``},
		{`SELECT toStartOfDay(timestamp) AS d, count() FROM events WHERE timestamp > toDateTime('2026-03-01') - INTERVAL 1 DAY GROUP BY d LIMIT 10 OFFSET 0`, `[[2026-03-02 00:00:00 +0000 UTC 5]]`},
		{`SELECT concat(properties.$browser, '-', toString(round(toFloat(properties.price)))) AS k FROM events ORDER BY k LIMIT 1`, `[[Chrome-12]]`},
		{`SELECT 1 AS one UNION ALL SELECT 2 AS two`, ``},
		{`SELECT e.event, p.properties.email FROM events AS e LEFT JOIN persons AS p ON e.person_id = p.id WHERE e.event = 'signup' LIMIT 1`, `[[signup ]]`},
	} {
		t.Run(tc.query, func(t *testing.T) {
			s, err := hogql.ParseSelect(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			out, err := hogql.CompileSelect(s, &hogql.Compiler{Resolver: engineResolver{}, Aggregates: true})
			if err != nil {
				t.Fatal(err)
			}
			out.Params["team"] = team
			rows, err := eng.Query(ctx, querybuilder.Statement{SQL: out.SQL, Params: out.Params})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.SQL)
			}
			if got := fmt.Sprint(rows.Data); tc.want != "" && got != tc.want {
				t.Errorf("got %s, want %s\n%s", got, tc.want, out.SQL)
			}
		})
	}
}
