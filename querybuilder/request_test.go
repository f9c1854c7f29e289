package querybuilder

import (
	"net/url"
	"sort"
	"strings"
	"testing"
)

func TestBodiesCarryTheFilterAtTheTopOrUnderFilters(t *testing.T) {
	top, err := ParseBody([]byte(`{"events": [{"id": "$pageview"}], "date_from": "-14d"}`))
	if err != nil {
		t.Fatal(err)
	}
	nested, err := ParseBody([]byte(`{"name": "x", "filters": {"events": [{"id": "$pageview"}], "date_from": "-14d"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Params{top, nested} {
		pr := &problems{}
		if s, _ := p.str("date_from", pr); s != "-14d" || !p.present("events") {
			t.Fatalf("params %v", p)
		}
	}
	for _, body := range []string{`[1]`, `"x"`, `{`, `{"filters": [1]}`, `{"filters": "x"}`} {
		t.Run(body+" is refused", func(t *testing.T) {
			if _, err := ParseBody([]byte(body)); len(ValidationErrors(err)) != 1 {
				t.Fatalf("err %v", err)
			}
		})
	}
	if p, err := ParseBody(nil); err != nil || len(p) != 0 {
		t.Fatalf("an empty body: %v %v", p, err)
	}
}

func TestQueryStringsTakeJSONOrPlainValues(t *testing.T) {
	v := url.Values{
		"events":               {`[{"id":"$pageview","math":"dau"},{"id":"signup"}]`},
		"date_from":            {"-7d"},
		"date_to":              {"2026-03-31"},
		"breakdown":            {`"$browser"`},
		"breakdown_limit":      {"10"},
		"compare":              {"true"},
		"filter_test_accounts": {"1"},
		"formula":              {"A + B"},
		"interval":             {"week"},
	}
	p := ParseQuery(v)
	pr := &problems{}
	get := func(k string) string { s, _ := p.str(k, pr); return s }
	if get("date_from") != "-7d" || get("date_to") != "2026-03-31" || get("breakdown") != "$browser" ||
		get("formula") != "A + B" || get("interval") != "week" {
		t.Fatalf("strings: %v", p)
	}
	if n, _ := p.integer("breakdown_limit", pr); n != 10 {
		t.Fatalf("breakdown_limit %d", n)
	}
	if !p.boolean("compare", pr) || !p.boolean("filter_test_accounts", pr) {
		t.Fatal("flags")
	}
	if !pr.ok() {
		t.Fatal(pr.err())
	}
	q, err := ParseTrends(p, Env{Project: Project{ID: 1}, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Series) != 2 || q.Series[0].Math != "dau" || q.Interval != IntervalWeek || q.Breakdown.Limit != 10 {
		t.Fatalf("query %+v", q)
	}
}

func TestScalarParametersRefuseWrongTypes(t *testing.T) {
	p := Params{"date_from": []byte(`[1]`), "compare": []byte(`"maybe"`), "breakdown_limit": []byte(`2.5`)}
	pr := &problems{}
	p.str("date_from", pr)
	p.boolean("compare", pr)
	p.integer("breakdown_limit", pr)
	var attrs []string
	for _, ve := range ValidationErrors(pr.err()) {
		attrs = append(attrs, ve.Attr)
	}
	sort.Strings(attrs)
	if strings.Join(attrs, ",") != "breakdown_limit,compare,date_from" {
		t.Fatalf("attrs %v", attrs)
	}
}

func TestFormulas(t *testing.T) {
	vals := []float64{10, 4, 0}
	v := func(i int) float64 { return vals[i] }
	for _, tc := range []struct {
		f    string
		want float64
	}{
		{"A + B", 14}, {"a+b", 14}, {"A - B * 2", 2}, {"(A - B) * 2", 12}, {"A / B", 2.5},
		{"A / C", 0}, {"-A + 1.5", -8.5}, {"A * " + strings.Repeat("9", 300) + " * " + strings.Repeat("9", 300), 0}, {"A / (B - 4)", 0}, {"100 * A / (A + B)", 1000.0 / 14}, {" ( ( A ) ) ", 10},
	} {
		f, err := parseFormula(tc.f, 3)
		if err != nil {
			t.Fatalf("%s: %v", tc.f, err)
		}
		if got := f.eval(v); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.f, got, tc.want)
		}
	}
	for _, bad := range []string{"", "A +", "A B", "AB", "D", "A; DROP", "sum(A)", "A ^ 2", "(A", "A)", "1..2", "A % B",
		strings.Repeat("(", 200) + "A" + strings.Repeat(")", 200), strings.Repeat("-", 200) + "A"} {
		if _, err := parseFormula(bad, 3); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
