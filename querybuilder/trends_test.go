package querybuilder

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

func parseTrends(t *testing.T, body string, project Project) (*TrendsQuery, error) {
	t.Helper()
	p, err := ParseBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if project.ID == 0 {
		project.ID = 42
	}
	return ParseTrends(p, Env{Project: project, Now: testNow})
}

func TestTrendsDefaults(t *testing.T) {
	q, err := parseTrends(t, `{"events": [{"id": "$pageview"}, {"id": null, "custom_name": "Anything", "order": -1}], "breakdown": "$browser"}`, Project{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Display != "ActionsLineGraph" || q.Interval != IntervalDay || q.Breakdown.Limit != 25 || q.Breakdown.Type != "event" {
		t.Fatalf("defaults %+v", q)
	}
	if len(q.Series) != 2 || q.Series[0].Label() != "Anything" || q.Series[1].Label() != "$pageview" || q.Series[1].Math != "total" {
		t.Fatalf("series sorted by order: %+v", q.Series)
	}
	if bs := q.Range.Buckets(); len(bs) != 8 {
		t.Fatalf("%d buckets", len(bs))
	}
	if q.Location().String() != "UTC" {
		t.Fatal(q.Location())
	}
}

func TestTrendsValidationNamesEveryBadParameter(t *testing.T) {
	cases := []struct {
		name, body string
		project    Project
		attrs      []string
	}{
		{"no entities", `{}`, Project{}, []string{"events"}},
		{"an empty events list", `{"events": []}`, Project{}, []string{"events"}},
		{"events that are not a list", `{"events": {"id": "x"}}`, Project{}, []string{"events", "events"}},
		{"an unknown math", `{"events": [{"id": "x", "math": "mode"}]}`, Project{}, []string{"events"}},
		{"a property math without its property", `{"events": [{"id": "x", "math": "p95"}]}`, Project{}, []string{"events"}},
		{"unique_group without a group type", `{"events": [{"id": "x", "math": "unique_group"}]}`, Project{}, []string{"events"}},
		{"an unknown interval", `{"events": [{"id": "x"}], "interval": "fortnight"}`, Project{}, []string{"interval"}},
		{"an unknown display", `{"events": [{"id": "x"}], "display": "Sparkles"}`, Project{}, []string{"display"}},
		{"a formula with a function", `{"events": [{"id": "x"}], "formula": "abs(A)"}`, Project{}, []string{"formula"}},
		{"a formula naming a missing series", `{"events": [{"id": "x"}], "formula": "A + B"}`, Project{}, []string{"formula"}},
		{"actions", `{"events": [{"id": "x"}], "actions": [{"id": 3}]}`, Project{}, []string{"actions"}},
		{"a cohort breakdown of an unknown cohort", `{"events": [{"id": "x"}], "breakdown": "[1]", "breakdown_type": "cohort"}`, Project{}, []string{"breakdown"}},
		{"a group breakdown without its group type", `{"events": [{"id": "x"}], "breakdown": "name", "breakdown_type": "group"}`, Project{}, []string{"breakdown_group_type_index"}},
		{"a group breakdown of a sixth group type", `{"events": [{"id": "x"}], "breakdown": "name", "breakdown_type": "group", "breakdown_group_type_index": 5}`, Project{}, []string{"breakdown_group_type_index"}},
		{"a breakdown list", `{"events": [{"id": "x"}], "breakdown": [1, 2]}`, Project{}, []string{"breakdown"}},
		{"a zero breakdown limit", `{"events": [{"id": "x"}], "breakdown": "$os", "breakdown_limit": 0}`, Project{}, []string{"breakdown_limit"}},
		{"a bad breakdown limit without a breakdown", `{"events": [{"id": "x"}], "breakdown_limit": "abc"}`, Project{}, []string{"breakdown_limit"}},
		{"dates the wrong way round", `{"events": [{"id": "x"}], "date_from": "2026-02-01", "date_to": "2026-01-01"}`, Project{}, []string{"date_from"}},
		{"a bad date", `{"events": [{"id": "x"}], "date_from": "-7 days"}`, Project{}, []string{"date_from"}},
		{"a bad group type to aggregate by", `{"events": [{"id": "x"}], "aggregation_group_type_index": 9}`, Project{}, []string{"aggregation_group_type_index"}},
		{"the project's bad test account filters", `{"events": [{"id": "x"}], "filter_test_accounts": true}`,
			Project{TestAccountFilters: json.RawMessage(`[{"key": "email", "operator": "like", "value": "x", "type": "person"}]`)}, []string{"test_account_filters"}},
		{"the project's bad timezone", `{"events": [{"id": "x"}]}`, Project{Timezone: "Mars/Olympus"}, []string{"timezone"}},
		{"several problems at once", `{"events": [{"id": "x", "math": "nope"}], "interval": "year", "display": "x", "compare": "maybe"}`,
			Project{}, []string{"compare", "display", "events", "interval"}},
		{"a bad compare_to", `{"events": [{"id": "x"}], "compare": true, "compare_to": "last year"}`, Project{}, []string{"compare_to"}},
		{"a zero compare_to", `{"events": [{"id": "x"}], "compare": true, "compare_to": "-0d"}`, Project{}, []string{"compare_to"}},
		{"a compare_to before 1970", `{"events": [{"id": "x"}], "compare": true, "compare_to": "-9999y"}`, Project{}, []string{"compare_to"}},
		{"a compared period before 1970", `{"events": [{"id": "x"}], "compare": true, "date_from": "1970-01-01", "date_to": "1970-01-05"}`, Project{}, []string{"compare"}},
		{"a bad entity field", `{"events": [{"id": "x", "order": "first"}]}`, Project{}, []string{"events"}},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused naming "+strings.Join(tc.attrs, ", "), func(t *testing.T) {
			_, err := parseTrends(t, tc.body, tc.project)
			ves := ValidationErrors(err)
			var attrs []string
			for _, ve := range ves {
				attrs = append(attrs, ve.Attr)
			}
			sort.Strings(attrs)
			if strings.Join(attrs, ",") != strings.Join(tc.attrs, ",") {
				t.Fatalf("attrs %v, want %v (%v)", attrs, tc.attrs, err)
			}
		})
	}
}

func TestTestAccountFiltersApplyOnlyWhenAsked(t *testing.T) {
	project := Project{TestAccountFilters: json.RawMessage(`[{"key": "email", "operator": "not_icontains", "value": "@example.com", "type": "person"}]`)}
	q, err := parseTrends(t, `{"events": [{"id": "x"}]}`, project)
	if err != nil || q.TestAccounts != nil {
		t.Fatalf("%v %+v", err, q.TestAccounts)
	}
	q, err = parseTrends(t, `{"events": [{"id": "x"}], "filter_test_accounts": true}`, project)
	if err != nil || q.TestAccounts == nil || q.TestAccounts.Values[0].Key != "email" {
		t.Fatalf("%v %+v", err, q.TestAccounts)
	}
}

func TestShapeTrends(t *testing.T) {
	q, err := parseTrends(t, `{"events": [{"id": "a"}, {"id": "b"}], "date_from": "2026-03-08", "date_to": "2026-03-10", "formula": "A * B", "display": "ActionsLineGraphCumulative"}`, Project{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("rows that are not the statement's are an error, not a panic", func(t *testing.T) {
		for _, rows := range [][][]any{
			{{uint64(0), uint64(0), "", "2026-03-08"}},
			{{uint64(2), uint64(0), "", "2026-03-08", 1.0}},
			{{uint64(0), uint64(2), "", "2026-03-08", 1.0}},
			{{"0", uint64(0), "", "2026-03-08", 1.0}},
			{{uint64(0), uint64(0), 7, "2026-03-08", 1.0}},
			{{uint64(0), uint64(0), "", "2026-03-08", "x"}},
		} {
			if _, err := ShapeTrends(q, rows); err == nil {
				t.Errorf("%v accepted", rows)
			}
		}
	})
	t.Run("numbers past float64 still encode", func(t *testing.T) {
		res, err := ShapeTrends(q, [][]any{{uint64(0), uint64(0), "", "2026-03-08", 1e308}, {uint64(0), uint64(0), "", "2026-03-09", 1e308},
			{uint64(1), uint64(0), "", "2026-03-08", 1e308}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Label != "Formula (A * B)" || res[0].Action != nil {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("rows of a bucket outside the range are ignored", func(t *testing.T) {
		res, err := ShapeTrends(q, [][]any{{uint64(0), uint64(0), "", "1999-01-01", 5.0}, {uint64(1), uint64(0), "", "2026-03-09", 2.0}, {uint64(0), uint64(0), "", "2026-03-09", 3.0}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res[0].Data; len(got) != 3 || got[0] != 0 || got[1] != 6 || got[2] != 6 || res[0].Count != 6 {
			t.Fatalf("data %v count %v", got, res[0].Count)
		}
	})
}
