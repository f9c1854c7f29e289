package hogql

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

const (
	expr = iota
	sel
)

// compileText parses and compiles input as an expression (with
// aggregates allowed) or a statement, and renders the bound parameters
// as name=value in name order.
func compileText(kind int, input string) (string, string, error) {
	c := &Compiler{Resolver: testResolver{}, Aggregates: true}
	var sql string
	var params map[string]any
	if kind == sel {
		s, err := ParseSelect(input)
		if err != nil {
			return "", "", err
		}
		out, err := CompileSelect(s, c)
		if err != nil {
			return "", "", err
		}
		sql, params = out.SQL, out.Params
	} else {
		e, err := ParseExpr(input)
		if err != nil {
			return "", "", err
		}
		if sql, params, err = CompileExpr(e, c); err != nil {
			return "", "", err
		}
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%#v", k, params[k])
	}
	return sql, strings.Join(parts, " "), nil
}

// accepted are inputs with the SQL and parameters they compile to.
var accepted = []struct {
	kind        int
	input       string
	sql, params string
}{
	{expr, `properties.$browser`, `e.mat_browser`, ``},
	{expr, `lower(properties.email)`, `lower(JSONExtractString(e.properties, {hq0:String}))`, `hq0="email"`},
	{expr, `concat(properties.a, '-', person.properties.email)`, `concat(ifNull(toString(JSONExtractString(e.properties, {hq0:String})), {hq3:String}), ifNull(toString({hq1:String}), {hq3:String}), ifNull(toString(JSONExtractString(pp.properties, {hq2:String})), {hq3:String}))`, `hq0="a" hq1="-" hq2="email" hq3=""`},
	{expr, `if(properties.price > 10, 'big', 'small')`, `if((toFloat64OrNull(toString(JSONExtractString(e.properties, {hq0:String}))) > {hq1:Int64}), {hq2:String}, {hq3:String})`, `hq0="price" hq1=10 hq2="big" hq3="small"`},
	{expr, `multiIf(event = '$pageview', 1, event = 'x', 2.5, NULL)`, `multiIf((e.event = {hq0:String}), {hq1:Int64}, (e.event = {hq2:String}), {hq3:Float64}, NULL)`, `hq0="$pageview" hq1=1 hq2="x" hq3=2.5`},
	{expr, `toString(round(toFloat(properties.price), 1))`, `toString(round(toFloat64OrNull(toString(JSONExtractString(e.properties, {hq0:String}))), {hq1:Int64}))`, `hq0="price" hq1=1`},
	{expr, `properties.a * 2 + 1 - -3 / 4 % 5`, `(((toFloat64OrNull(toString(JSONExtractString(e.properties, {hq0:String}))) * {hq1:Int64}) + {hq2:Int64}) - (({hq3:Int64} / {hq4:Int64}) % {hq5:Int64}))`, `hq0="a" hq1=2 hq2=1 hq3=-3 hq4=4 hq5=5`},
	{expr, `NOT event = 'a' AND distinct_id != 'b' OR event <> 'c'`, `(((NOT (e.event = {hq0:String})) AND (e.distinct_id != {hq1:String})) OR (e.event != {hq2:String}))`, `hq0="a" hq1="b" hq2="c"`},
	{expr, `event LIKE '%page%' AND event NOT ILIKE 'x' AND properties.x =~ '^a'`, `((e.event LIKE {hq0:String}) AND (e.event NOT ILIKE {hq1:String}) AND match(JSONExtractString(e.properties, {hq1:String}), {hq2:String}))`, `hq0="%page%" hq1="x" hq2="^a"`},
	{expr, `event IN ('a', 'b') AND event NOT IN (SELECT event FROM events)`, `((e.event IN ({hq0:String}, {hq1:String})) AND (e.event NOT IN (SELECT hq_t_a.event AS hq_col_a
FROM (SELECT * FROM events WHERE team_id = {team:Int64}) AS hq_t_a)))`, `hq0="a" hq1="b"`},
	{expr, `timestamp BETWEEN now() - INTERVAL 7 DAY AND now()`, `(e.timestamp BETWEEN (now() - toIntervalDay({hq0:Int64})) AND now())`, `hq0=7`},
	{expr, `properties.x IS NOT NULL AND properties.y IS NULL`, `((JSONExtractString(e.properties, {hq0:String}) IS NOT NULL) AND (JSONExtractString(e.properties, {hq1:String}) IS NULL))`, `hq0="x" hq1="y"`},
	{expr, `CASE WHEN event = 'a' THEN 1 WHEN event = 'b' THEN 2 ELSE 0 END`, `multiIf((e.event = {hq0:String}), {hq1:Int64}, (e.event = {hq2:String}), {hq3:Int64}, {hq4:Int64})`, `hq0="a" hq1=1 hq2="b" hq3=2 hq4=0`},
	{expr, `CASE event WHEN 'a' THEN 'x' END`, `caseWithExpression(e.event, {hq0:String}, {hq1:String}, NULL)`, `hq0="a" hq1="x"`},
	{expr, `[1, 2, 3][2]`, `arrayElement([{hq0:Int64}, {hq1:Int64}, {hq2:Int64}], {hq1:Int64})`, `hq0=1 hq1=2 hq2=3`},
	{expr, `(1, 'a', true, false)`, `tuple({hq0:Int64}, {hq1:String}, true, false)`, `hq0=1 hq1="a"`},
	{expr, `arrayMap(x -> x * 2, [1, 2])`, `arrayMap(hq_x_a -> (hq_x_a * {hq0:Int64}), [{hq1:Int64}, {hq0:Int64}])`, `hq0=2 hq1=1`},
	{expr, `arrayFilter((x, i) -> x > i, [1,2], [0,3])`, `arrayFilter((hq_x_a, hq_x_b) -> (hq_x_a > hq_x_b), [{hq0:Int64}, {hq1:Int64}], [{hq2:Int64}, {hq3:Int64}])`, `hq0=1 hq1=2 hq2=0 hq3=3`},
	{expr, `quantile(0.9)(toFloat(properties.load))`, `quantile({hq1:Float64})(toFloat64OrNull(toString(JSONExtractString(e.properties, {hq0:String}))))`, `hq0="load" hq1=0.9`},
	{expr, `'it''s \n \x41 \\'`, `{hq0:String}`, `hq0="it's \n A \\"`},
	{expr, "`properties`.`$current_url`", `JSONExtractString(e.properties, {hq0:String})`, `hq0="$current_url"`},
	{expr, `person_id`, `e.person_id`, ``},
	{expr, `1e3 + 0x1F + 18446744073709551615`, `(({hq0:Float64} + {hq1:Int64}) + {hq2:UInt64})`, `hq0=1000 hq1=31 hq2=0xffffffffffffffff`},
	{expr, `event = 'a' ? 1 : 2`, `if((e.event = {hq0:String}), {hq1:Int64}, {hq2:Int64})`, `hq0="a" hq1=1 hq2=2`},
	{expr, `-properties.x = -1.5 AND -(1) < 2`, `(((-JSONExtractString(e.properties, {hq0:String})) = {hq1:Float64}) AND ({hq2:Int64} < {hq3:Int64}))`, `hq0="x" hq1=-1.5 hq2=-1 hq3=2`},
	{expr, `3 - 2 - 1`, `(({hq0:Int64} - {hq1:Int64}) - {hq2:Int64})`, `hq0=3 hq1=2 hq2=1`},
	{sel, `SELECT event, count() AS c FROM events WHERE timestamp > now() - INTERVAL 1 DAY GROUP BY event HAVING c > 10 ORDER BY c DESC LIMIT 10 OFFSET 5`, `SELECT hq_t_a.event AS hq_col_a, count() AS hq_col_b
FROM (SELECT * FROM events WHERE team_id = {team:Int64}) AS hq_t_a
WHERE (hq_t_a.timestamp > (now() - toIntervalDay({hq0:Int64})))
GROUP BY hq_t_a.event
HAVING (hq_col_b > {hq1:Int64})
ORDER BY hq_col_b DESC
LIMIT {hq2:UInt64}
OFFSET {hq3:UInt64}`, `hq0=1 hq1=10 hq2=0xa hq3=0x5`},
	{sel, `WITH top AS (SELECT event, count() AS n FROM events GROUP BY event) SELECT event, n FROM top ORDER BY n DESC`, `WITH hq_cte_a AS (
    SELECT hq_t_a.event AS hq_col_a, count() AS hq_col_b
    FROM (SELECT * FROM events WHERE team_id = {team:Int64}) AS hq_t_a
    GROUP BY hq_t_a.event
)
SELECT hq_t_b.hq_col_a AS hq_col_c, hq_t_b.hq_col_b AS hq_col_d
FROM hq_cte_a AS hq_t_b
ORDER BY hq_t_b.hq_col_b DESC`, ``},
	{sel, `SELECT x.c FROM (SELECT count() AS c FROM events) AS x`, `SELECT hq_t_a.hq_col_a AS hq_col_b
FROM (
    SELECT count() AS hq_col_a
    FROM (SELECT * FROM events WHERE team_id = {team:Int64}) AS hq_t_b
) AS hq_t_a`, ``},
	{sel, `SELECT e.event, p.properties.email FROM events AS e LEFT JOIN persons AS p ON e.person_id = p.id LIMIT 5`, `SELECT hq_t_a.event AS hq_col_a, JSONExtractString(hq_t_b.properties, {hq0:String}) AS hq_col_b
FROM (SELECT * FROM events WHERE team_id = {team:Int64}) AS hq_t_a
LEFT JOIN (SELECT * FROM persons WHERE team_id = {team:Int64}) AS hq_t_b ON (hq_t_a.person_id = hq_t_b.id)
LIMIT {hq1:UInt64}`, `hq0="email" hq1=0x5`},
	{sel, `SELECT 1 UNION ALL SELECT 2`, `SELECT {hq0:Int64} AS hq_col_a
UNION ALL
SELECT {hq1:Int64} AS hq_col_b`, `hq0=1 hq1=2`},
	{sel, `SELECT DISTINCT properties.$browser FROM events`, `SELECT DISTINCT hq_t_a.mat_browser AS hq_col_a
FROM (SELECT * FROM events WHERE team_id = {team:Int64}) AS hq_t_a`, ``},
	{sel, `SELECT uniqExact(person_id), quantiles(0.5, 0.9)(toFloat(properties.x)), windowFunnel(3600)(timestamp, event = 'a', event = 'b') FROM events`, `SELECT uniqExact(hq_t_a.person_id) AS hq_col_a, quantiles({hq1:Float64}, {hq2:Float64})(toFloat64OrNull(toString(JSONExtractString(hq_t_a.properties, {hq0:String})))) AS hq_col_b, windowFunnel({hq5:Int64})(hq_t_a.timestamp, (hq_t_a.event = {hq3:String}), (hq_t_a.event = {hq4:String})) AS hq_col_c
FROM (SELECT * FROM events WHERE team_id = {team:Int64}) AS hq_t_a`, `hq0="x" hq1=0.5 hq2=0.9 hq3="a" hq4="b" hq5=3600`},
	{sel, `SELECT count(DISTINCT person_id) FROM events LIMIT 10, 20`, `SELECT count(DISTINCT hq_t_a.person_id) AS hq_col_a
FROM (SELECT * FROM events WHERE team_id = {team:Int64}) AS hq_t_a
LIMIT {hq0:UInt64}
OFFSET {hq1:UInt64}`, `hq0=0x14 hq1=0xa`},
}

func TestAcceptedInputsCompileToBoundSQL(t *testing.T) {
	for _, tc := range accepted {
		t.Run(tc.input, func(t *testing.T) {
			sql, params, err := compileText(tc.kind, tc.input)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if sql != tc.sql {
				t.Errorf("sql\n got: %s\nwant: %s", sql, tc.sql)
			}
			if params != tc.params {
				t.Errorf("params\n got: %s\nwant: %s", params, tc.params)
			}
			again, _, _ := compileText(tc.kind, tc.input)
			if again != sql {
				t.Errorf("compiling twice gave different SQL")
			}
			if err := checkNoInputText(sql); err != nil {
				t.Error(err)
			}
		})
	}
}
