package querybuilder

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// cohortEnv holds a property cohort (1), a behavioural one (2, computed)
// and a static one (3, computed).
func cohortTestEnv() Env {
	return Env{Project: Project{ID: 42}, Now: testNow, Cohorts: map[int64]Cohort{
		1: {ID: 1, Name: "Pro", Groups: json.RawMessage(`[{"properties": [{"key": "plan", "value": "pro", "type": "person"}]}]`)},
		2: {ID: 2, Name: "Buyers", Version: 3, Groups: json.RawMessage(`[]`), Filters: json.RawMessage(
			`{"properties": {"type": "AND", "values": [{"type": "behavioral", "key": "purchase", "value": "performed_event", "time_value": 7, "time_interval": "day"}]}}`)},
		3: {ID: 3, Name: "Listed", IsStatic: true, Version: 1},
	}}
}

func trendSQL(t *testing.T, env Env, props string) (string, error) {
	t.Helper()
	p, err := ParseBody([]byte(`{"events": [{"id": "$pageview"}], "properties": ` + props + `}`))
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseTrends(p, env)
	if err != nil {
		return "", err
	}
	st, err := q.Build(Facts{})
	return st.SQL, err
}

func TestCohortConditionsInTrends(t *testing.T) {
	env := cohortTestEnv()
	cond := func(id string, negation bool) string {
		n := "false"
		if negation {
			n = "true"
		}
		return `[{"type": "cohort", "key": "id", "value": ` + id + `, "negation": ` + n + `}]`
	}
	t.Run("a negated property cohort builds another statement than the plain one", func(t *testing.T) {
		plain, err := trendSQL(t, env, cond("1", false))
		if err != nil {
			t.Fatal(err)
		}
		negated, err := trendSQL(t, env, cond("1", true))
		if err != nil {
			t.Fatal(err)
		}
		if plain == negated || !strings.Contains(negated, "NOT") {
			t.Fatalf("negation lost:\n%s", negated)
		}
	})
	t.Run("a behavioural cohort is read through its computed members", func(t *testing.T) {
		for _, negation := range []bool{false, true} {
			sql, err := trendSQL(t, env, cond("2", negation))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(sql, "cohort_people") {
				t.Fatalf("not through cohort_people:\n%s", sql)
			}
		}
	})
	t.Run("a behavioural cohort not calculated yet is a 400 saying so", func(t *testing.T) {
		e := cohortTestEnv()
		co := e.Cohorts[2]
		co.Version = 0
		e.Cohorts[2] = co
		_, err := trendSQL(t, e, cond("2", false))
		var inv *ValidationError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), "still being calculated") {
			t.Fatalf("%v", err)
		}
	})
}

func TestCheckCohort(t *testing.T) {
	env := cohortTestEnv()
	for _, tc := range []struct {
		name    string
		co      Cohort
		problem string // "" = valid
	}{
		{"a cohort naming a behavioural cohort", Cohort{Filters: json.RawMessage(`{"properties": [{"type": "cohort", "key": "id", "value": 2}]}`)}, ""},
		{"a cohort naming a static cohort", Cohort{Filters: json.RawMessage(`{"properties": [{"type": "cohort", "key": "id", "value": 3}]}`)}, ""},
		{"an event condition", Cohort{Filters: json.RawMessage(`{"properties": [{"type": "event", "key": "$browser", "value": "x"}]}`)}, "not event properties"},
		{"a session condition", Cohort{Groups: json.RawMessage(`[{"properties": [{"type": "session", "key": "$session_duration", "value": 3, "operator": "gt"}]}]`)}, "not session properties"},
		{"empty groups", Cohort{Groups: json.RawMessage(`[]`)}, "no conditions"},
		{"empty filters", Cohort{Filters: json.RawMessage(`{"properties": {"type": "OR", "values": [{"type": "AND", "values": []}]}}`)}, "no conditions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCohort(env, tc.co)
			if tc.problem == "" && err != nil || tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)) {
				t.Fatalf("got %v, want %q", err, tc.problem)
			}
		})
	}
}

// Cohorts read inline multiply: 200 references to a cohort of 200
// person conditions were 40 000 conditions (and 200 such references in
// a request 8 million) built before the engine refused the statement.
// The conditions of the whole tree are bounded.
func TestInlineCohortsCannotMultiplyConditions(t *testing.T) {
	var person, refs []string
	for range 200 {
		person = append(person, `{"key": "plan", "value": "pro", "type": "person"}`)
		refs = append(refs, `{"type": "cohort", "key": "id", "value": 1}`)
	}
	env := Env{Project: Project{ID: 42}, Now: testNow, Cohorts: map[int64]Cohort{
		1: {ID: 1, Name: "Wide", Filters: json.RawMessage(`{"properties": {"type": "AND", "values": [` + strings.Join(person, ", ") + `]}}`)},
		2: {ID: 2, Name: "Wider", Filters: json.RawMessage(`{"properties": {"type": "AND", "values": [` + strings.Join(refs, ", ") + `]}}`)},
	}}
	_, err := trendSQL(t, env, `[{"type": "cohort", "key": "id", "value": 2}]`)
	if ves := ValidationErrors(err); len(ves) == 0 || ves[0].Attr != "properties" || !strings.Contains(ves[0].Detail, "in all") {
		t.Fatalf("%v", err)
	}
	// Within the bound, a cohort is still read inline.
	if _, err := trendSQL(t, env, `[{"type": "cohort", "key": "id", "value": 1}]`); err != nil {
		t.Fatal(err)
	}
}
