package hogql

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// refused are inputs with the words their refusal must name.
var refused = []struct {
	kind  int
	input string
	want  string
}{
	{sel, `SELECT * FROM system.tables`, "table system.tables is not allowed"},
	{sel, `SELECT name FROM system.tables`, "table system.tables is not allowed"},
	{sel, `SELECT count() FROM file('/etc/passwd')`, "table function file is not allowed"},
	{sel, `SELECT count() FROM url('http://x', CSV)`, "table function url is not allowed"},
	{sel, `SELECT count() FROM remote('host', default.events)`, "table function remote is not allowed"},
	{sel, `SELECT count() FROM numbers(10)`, "table function numbers is not allowed"},
	{sel, `SELECT count() FROM other_table`, "table other_table is not allowed"},
	{expr, `file('/etc/passwd')`, "function file is not allowed"},
	{expr, `url('http://x')`, "function url is not allowed"},
	{expr, `remote('host', 'db', 'events')`, "function remote is not allowed"},
	{expr, `sleep(3)`, "function sleep is not allowed"},
	{expr, `dictGet('d', 'a', 1)`, "function dictGet is not allowed"},
	{expr, `no_such_function(1)`, "function no_such_function is not allowed"},
	{expr, `getSetting('max_memory_usage')`, "function getSetting is not allowed"},
	{sel, `SELECT 1 SETTINGS max_execution_time = 1000`, "SETTINGS is not allowed"},
	{sel, `SELECT event FROM events INTO OUTFILE '/tmp/x'`, "INTO OUTFILE is not allowed"},
	{sel, `SELECT event FROM events FORMAT JSON`, "FORMAT is not allowed"},
	{sel, `SELECT 1; SELECT 2`, "multiple statements are not allowed"},
	{sel, `SELECT 1;`, "trailing semicolon is not allowed"},
	{expr, `1; DROP TABLE events`, "multiple statements are not allowed"},
	{expr, `'unterminated`, "unterminated string"},
	{expr, "`unterminated", "unterminated quoted identifier"},
	{expr, `/* open comment`, "unterminated comment"},
	{expr, strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), "nested deeper than 64"},
	{expr, strings.Repeat("lower(", 70) + "event" + strings.Repeat(")", 70), "nested deeper than 64"},
	{expr, strings.Repeat("NOT ", 100) + "1", "nested deeper than 64"},
	{expr, strings.Repeat("- ", 100) + "1", "nested deeper than 64"},
	{expr, "1" + strings.Repeat(" + 1", 100), "nested deeper than 64"},
	{expr, "[" + strings.Repeat("[", 80) + strings.Repeat("]", 81), "nested deeper than 64"},
	{expr, "'" + strings.Repeat("a", MaxStringBytes+1) + "'", "string longer than"},
	{expr, strings.Repeat("9", 60), "number literal longer than"},
	{expr, "99999999999999999999999", "out of range"},
	{expr, "1e999", "out of range"},
	{expr, "event = '" + strings.Repeat("x", MaxInputBytes) + "'", "more than the 65536 allowed"},
	{expr, `properties.x + `, "unexpected token end of input"},
	{expr, `lower(event`, `unexpected token end of input, expected "," or ")"`},
	{expr, `event = = 1`, `unexpected token "="`},
	{expr, `x -> x`, "a lambda is only allowed as an argument of an array function"},
	{expr, `lower(x -> x)`, "a lambda is not allowed as an argument of lower"},
	{expr, `lower(event, event)`, "function lower takes 1 arguments, got 2"},
	{expr, `concat()`, "function concat takes at least 1 arguments, got 0"},
	{expr, `lower(1)(event)`, "function lower takes no parameters"},
	{expr, `secret_column`, "field secret_column is not allowed"},
	{expr, `{missing}`, "placeholder {missing} has no value"},
	{expr, `1 ~ 2`, "unexpected character"},
	{expr, "", "empty input"},
	{expr, `INTERVAL 1 fortnight`, "INTERVAL needs a number and a unit"},
	{sel, `SELECT * FROM events`, "SELECT * is not supported"},
	{sel, `SELECT event FROM events ARRAY JOIN x`, "ARRAY joins are not supported"},
	{sel, `SELECT 1 FROM events CROSS JOIN persons`, "CROSS joins are not supported"},
	{sel, `SELECT 1 FROM events LIMIT -1`, "LIMIT must be a non-negative integer"},
	{sel, `SELECT 1 UNION SELECT 2`, "only UNION ALL is supported"},
	{sel, `SELECT 1 UNION ALL SELECT 1, 2`, "UNION ALL parts select 1 and 2 columns"},
	{sel, `SELECT x FROM (SELECT event FROM events)`, "field x is not a column of the subquery"},
	{sel, `SELECT quantile(x)(1) FROM events`, "parameters of quantile must be literals"},
	{sel, `INSERT INTO events VALUES (1)`, `unexpected token "INSERT", expected SELECT`},
	{sel, `SELECT 1 FROM events WHERE event IN (SELECT name FROM system.tables)`, "table system.tables is not allowed"},
}

func TestHostileInputsAreRefusedNamingWhy(t *testing.T) {
	for _, tc := range refused {
		name := tc.input
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			sql, _, err := compileText(tc.kind, tc.input)
			if err == nil {
				t.Fatalf("accepted as %s", sql)
			}
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("refusal %v is not a *hogql.Error", err)
			}
			if !strings.Contains(he.Msg, tc.want) {
				t.Errorf("refusal %q does not say %q", he.Msg, tc.want)
			}
		})
	}
}

func TestBreakdownSubsetRefusesWhatTheDocDoesNotList(t *testing.T) {
	c := func() *Compiler { return &Compiler{Resolver: testResolver{}, Only: BreakdownFunctions} }
	for input, want := range map[string]string{
		`toStartOfDay(timestamp)`:             "function toStartOfDay is not allowed",
		`arrayMap(x -> x, [1])`:               "function arrayMap is not allowed",
		`[1, 2]`:                              "arrays are not allowed here",
		`event IN (SELECT event FROM events)`: "subqueries are not allowed here",
		`{p}`:                                 "placeholders are not allowed here",
		`count()`:                             "function count is not allowed",
	} {
		e, err := ParseExpr(input)
		if err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		_, _, err = CompileExpr(e, c())
		var he *Error
		if !errors.As(err, &he) || !strings.Contains(he.Msg, want) {
			t.Errorf("%s: got %v, want a refusal saying %q", input, err, want)
		}
	}
	e, _ := ParseExpr(`count()`)
	if _, _, err := CompileExpr(e, &Compiler{Resolver: testResolver{}}); err == nil || !strings.Contains(err.Error(), "aggregate function count is not allowed here") {
		t.Errorf("count() over one event: got %v, want the aggregate refused", err)
	}
	for _, input := range []string{`multiIf(properties.a = 'x', upper(properties.b), coalesce(properties.c, 'none'))`,
		`concat(substring(lower(event), 1, 3), toString(length(properties.q)))`, `round(toFloat(properties.p) * 2, 1)`,
		`toInt(extract(properties.url, 'id=([0-9]+)'))`} {
		e, err := ParseExpr(input)
		if err == nil {
			_, _, err = CompileExpr(e, c())
		}
		if err != nil {
			t.Errorf("%s: %v", input, err)
		}
	}
}

var (
	placeholderRe = regexp.MustCompile(`\{[a-z_][a-z0-9_]*:[A-Za-z0-9]+\}`)
	wordRe        = regexp.MustCompile(`[A-Za-z_$][A-Za-z0-9_$]*`)
	generatedRe   = regexp.MustCompile(`^hq_(col|t|x|cte)_[a-z]+$`)
	sqlWords      = map[string]bool{}
)

func init() {
	for _, w := range strings.Fields(`SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT OFFSET UNION ALL AS AND OR NOT IN
		LIKE ILIKE BETWEEN IS NULL true false DESC DISTINCT WITH LEFT INNER JOIN ON toInt64OrNull toFloat64OrNull
		caseWithExpression`) {
		sqlWords[w] = true
	}
	for _, f := range functions {
		sqlWords[f.ch] = true
	}
	for _, w := range resolverWords {
		sqlWords[w] = true
	}
}

// checkNoInputText checks that compiled SQL holds no text of the input:
// outside bound placeholders it has no quotes, no comments, no number
// literal, and only names from the allow-lists, the resolver or the
// compiler's generated names.
func checkNoInputText(sql string) error {
	rest := placeholderRe.ReplaceAllString(sql, " ")
	if i := strings.IndexAny(rest, "'\"`;{}\\$"); i >= 0 {
		return fmt.Errorf("compiled SQL has %q outside parameters: %s", rest[i], sql)
	}
	if strings.Contains(rest, "--") || strings.Contains(rest, "/*") {
		return fmt.Errorf("compiled SQL has a comment: %s", sql)
	}
	for _, w := range wordRe.FindAllString(rest, -1) {
		if !sqlWords[w] && !generatedRe.MatchString(w) {
			return fmt.Errorf("compiled SQL has the name %q, which no allow-list holds: %s", w, sql)
		}
	}
	if d := regexp.MustCompile(`(^|[^A-Za-z0-9_])[0-9]`).FindString(rest); d != "" {
		return fmt.Errorf("compiled SQL has a number outside parameters: %s", sql)
	}
	return nil
}

func TestKindsRefuseWhatTheEngineWouldOnlyRefuseWhenRunning(t *testing.T) {
	field := func(chain []string) Kind {
		if len(chain) == 1 && chain[0] == "timestamp" {
			return KindDate
		}
		return KindString
	}
	for input, want := range map[string]string{
		`properties.a + properties.b`:          "operator + takes numbers, got text",
		`if(properties.flag, 'y', 'n')`:        "the condition of if takes a number, got text",
		`if(event = 'a', 'x', 1)`:              "if mixes text and a number",
		`coalesce(properties.x, 0)`:            "coalesce mixes text and a number",
		`lower(toFloat(properties.x))`:         "lower takes text, got a number",
		`round(properties.x)`:                  "round takes a number, got text",
		`lower(timestamp)`:                     "lower takes text, got a date",
		`event LIKE 1`:                         "LIKE takes text, got a number",
		`event = 'a' AND properties.b`:         "AND takes a number, got text",
		`multiIf(event = 'a', 1, event, 2, 3)`: "the condition of multiIf takes a number, got text",
		`event IN ('a', 2)`:                    "IN takes text, got a number",
		`CASE WHEN 1 THEN 'a' ELSE 2 END`:      "CASE mixes text and a number",
	} {
		e, err := ParseExpr(input)
		if err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		err = CheckKinds(e, field)
		var he *Error
		if !errors.As(err, &he) || !strings.Contains(he.Msg, want) {
			t.Errorf("%s: got %v, want a refusal saying %q", input, err, want)
		}
	}
	for _, input := range []string{`if(properties.price > 10, 'big', 'small')`, `toFloat(properties.p) * 2 + 1`,
		`coalesce(upper(person.properties.plan), 'NO PLAN')`, `concat(properties.a, 1, timestamp)`, `toString(round(toFloat(properties.p)))`,
		`multiIf(properties.p >= 100, 'huge', properties.p IS NULL, 'none', NULL)`, `timestamp > '2026-01-01' AND timestamp - INTERVAL 1 DAY < now()`,
		`substring(lower(event), 1, 3)`, `length(properties.q) + 1`, `if(properties.x = 'a', NULL, 'b')`} {
		e, err := ParseExpr(input)
		if err == nil {
			err = CheckKinds(e, field)
		}
		if err != nil {
			t.Errorf("%s: %v", input, err)
		}
	}
}
