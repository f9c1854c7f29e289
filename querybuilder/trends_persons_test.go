package querybuilder_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// personCase is a person in the person-filter project: its rows in
// persons (oldest version first; none for a person without a row), the
// person its events belong to now (merged through person_overrides), and
// its events, a distinct power of two per person so that every subset of
// persons sums to its own total.
type personCase struct {
	rows     []string // properties JSON of each version; "deleted" marks a deleted version
	mergedTo string
	events   int
	browser  string
}

var personCases = map[string]personCase{
	"pro":        {rows: []string{`{"plan": "free"}`, `{"plan": "pro", "email": "a@corp.com"}`}, events: 1, browser: "Chrome"},
	"free":       {rows: []string{`{"plan": "pro"}`, `{"plan": "free", "email": "b@test.com"}`}, events: 2, browser: "Safari"},
	"deleted":    {rows: []string{`{"plan": "pro", "email": "c@test.com"}`, "deleted"}, events: 4, browser: "Chrome"},
	"rowless":    {events: 8, browser: "Safari"},
	"merged":     {rows: []string{`{"plan": "free", "email": "d@test.com"}`}, mergedTo: "pro", events: 16, browser: "Chrome"},
	"noplan":     {rows: []string{`{"email": "e@corp.com", "plan": null}`}, events: 32, browser: "Safari"},
	"to-rowless": {rows: []string{`{"plan": "pro"}`}, mergedTo: "rowless", events: 64, browser: "Chrome"},
}

// currentProps are a person's current properties as the filters see them
// (nil: no live row), read off personCases by hand.
var currentProps = map[string]map[string]string{
	"pro":        {"plan": "pro", "email": "a@corp.com"},
	"free":       {"plan": "free", "email": "b@test.com"},
	"merged":     {"plan": "free", "email": "d@test.com"},
	"noplan":     {"email": "e@corp.com"},
	"to-rowless": {"plan": "pro"},
}

// TestTrendsPersonFilters checks person-property filters, which the
// statement evaluates as a set of persons instead of a person join where
// it can, against the properties of each event's current person: merged
// persons, later versions, deleted persons and persons without a row,
// with conditions false and true for a person without properties.
func TestTrendsPersonFilters(t *testing.T) {
	eng := testEngine(t)
	ctx := context.Background()
	team := newTeam()
	day := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	ids := map[string]uuid.UUID{}
	for name := range personCases {
		ids[name] = uuid.New()
	}
	// Versions stay in separate parts, unmerged, so the statements must
	// pick the latest one themselves.
	exec(t, eng, "SYSTEM STOP MERGES persons", nil)
	t.Cleanup(func() { exec(t, eng, "SYSTEM START MERGES persons", nil) })
	var events []olap.Event
	versions := 0
	for name, p := range personCases {
		versions += len(p.rows)
		for v, props := range p.rows {
			deleted := 0
			if props == "deleted" {
				props, deleted = "{}", 1
			}
			exec(t, eng, `INSERT INTO persons (id, team_id, properties, created_at, is_deleted, version)
VALUES ({id:UUID}, {team:Int64}, {props:String}, now64(6), {deleted:UInt8}, {version:UInt64})`,
				map[string]any{"id": ids[name].String(), "team": team, "props": props, "deleted": deleted, "version": v})
		}
		if p.mergedTo != "" {
			exec(t, eng, `INSERT INTO person_overrides (team_id, old_person_id, override_person_id, version)
VALUES ({team:Int64}, {old:UUID}, {new:UUID}, 1)`, map[string]any{"team": team, "old": ids[name].String(), "new": ids[p.mergedTo].String()})
		}
		for i := range p.events {
			events = append(events, olap.Event{UUID: uuid.New(), TeamID: team, Event: "$pageview", DistinctID: name, PersonID: ids[name],
				Timestamp: day.Add(time.Duration(i) * time.Second), Properties: `{"$browser": "` + p.browser + `"}`})
		}
	}
	if err := eng.InsertEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	rows, err := eng.Query(ctx, querybuilder.Statement{SQL: "SELECT count() FROM persons WHERE team_id = {team:Int64}", Params: map[string]any{"team": team}})
	if err != nil || len(rows.Data) != 1 || fmt.Sprint(rows.Data[0][0]) != fmt.Sprint(versions) {
		t.Fatalf("persons rows: %v %v, want all %d versions unmerged", rows, err, versions)
	}

	// current is who did an event of name's now, and their properties.
	current := func(name string, overrides bool) (string, map[string]string) {
		if to := personCases[name].mergedTo; to != "" && overrides {
			name = to
		}
		return name, currentProps[name]
	}
	text := func(props map[string]string, k string) string { return props[k] }
	set := func(props map[string]string, k string) bool { _, ok := props[k]; return ok }
	for _, tc := range []struct {
		name, cond string
		keep       func(props map[string]string) bool
	}{
		{"exact", `{"key": "plan", "value": "pro", "type": "person"}`, func(p map[string]string) bool { return text(p, "plan") == "pro" }},
		{"is_not", `{"key": "plan", "value": "pro", "operator": "is_not", "type": "person"}`, func(p map[string]string) bool { return text(p, "plan") != "pro" }},
		{"exact, negated", `{"key": "plan", "value": ["pro", "free"], "negation": true, "type": "person"}`,
			func(p map[string]string) bool { return text(p, "plan") != "pro" && text(p, "plan") != "free" }},
		{"exact empty", `{"key": "plan", "value": "", "type": "person"}`, func(p map[string]string) bool { return text(p, "plan") == "" }},
		{"is_set", `{"key": "plan", "operator": "is_set", "type": "person"}`, func(p map[string]string) bool { return set(p, "plan") }},
		{"is_not_set", `{"key": "plan", "operator": "is_not_set", "type": "person"}`, func(p map[string]string) bool { return !set(p, "plan") }},
		{"not_icontains", `{"key": "email", "value": "TEST", "operator": "not_icontains", "type": "person"}`,
			func(p map[string]string) bool { return !strings.Contains(text(p, "email"), "test") }},
		{"icontains empty", `{"key": "email", "value": "", "operator": "icontains", "type": "person"}`, func(map[string]string) bool { return true }},
		{"regex (joined)", `{"key": "plan", "value": "^(pro|)$", "operator": "regex", "type": "person"}`,
			func(p map[string]string) bool { return regexp.MustCompile("^(pro|)$").MatchString(text(p, "plan")) }},
		{"gt", `{"key": "plan", "value": 1, "operator": "gt", "type": "person"}`, func(map[string]string) bool { return false }},
		{"an OR group", `{"type": "OR", "values": [{"key": "plan", "value": "free", "type": "person"}, {"key": "email", "operator": "is_not_set", "type": "person"}]}`,
			func(p map[string]string) bool { return text(p, "plan") == "free" || !set(p, "email") }},
		{"two conditions", `{"key": "plan", "value": "pro", "operator": "is_not", "type": "person"}, {"key": "email", "value": "corp", "operator": "icontains", "type": "person"}`,
			func(p map[string]string) bool {
				return text(p, "plan") != "pro" && strings.Contains(text(p, "email"), "corp")
			}},
	} {
		// Without overrides (a project that has none), events stay with
		// the person they were written with.
		for _, overrides := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s keeps the events of the persons it holds for (merges read: %v)", tc.name, overrides), func(t *testing.T) {
				var count, chrome float64
				dau, chromeDAU := map[string]bool{}, map[string]bool{}
				for name, p := range personCases {
					who, props := current(name, overrides)
					if tc.keep(props) {
						count += float64(p.events)
						dau[who] = true
						if p.browser == "Chrome" {
							chrome += float64(p.events)
							chromeDAU[who] = true
						}
					}
				}
				run := func(math, extra string) float64 {
					body := `{"events": [{"id": "$pageview", "math": "` + math + `"}], "properties": [` + tc.cond + extra + `],
						"date_from": "2026-03-10", "date_to": "2026-03-10"}`
					p, err := querybuilder.ParseBody([]byte(body))
					if err != nil {
						t.Fatal(err)
					}
					q, err := querybuilder.ParseTrends(p, querybuilder.Env{Project: querybuilder.Project{ID: team, Timezone: "UTC"}, Now: day})
					if err != nil {
						t.Fatal(err)
					}
					stmt, err := querybuilder.BuildTrends(q, querybuilder.Facts{NoPersonOverrides: !overrides})
					if err != nil {
						t.Fatal(err)
					}
					rows, err := eng.Query(ctx, stmt)
					if err != nil {
						t.Fatalf("%v\n%s", err, stmt.SQL)
					}
					res, err := querybuilder.ShapeTrends(q, rows.Data)
					if err != nil {
						t.Fatal(err)
					}
					return one(t, res).Count
				}
				if got := run("total", ""); got != count {
					t.Errorf("total: %v, want %v", got, count)
				}
				if got, want := run("dau", ""), float64(len(dau)); got != want {
					t.Errorf("dau: %v, want %v", got, want)
				}
				if got := run("total", `, {"key": "$browser", "value": "Chrome"}`); got != chrome {
					t.Errorf("total on Chrome: %v, want %v", got, chrome)
				}
				if got, want := run("dau", `, {"key": "$browser", "value": "Chrome"}`), float64(len(chromeDAU)); got != want {
					t.Errorf("dau on Chrome: %v, want %v", got, want)
				}
			})
		}
	}
}

func exec(t *testing.T, eng *olap.Embedded, sql string, params map[string]any) {
	t.Helper()
	if err := eng.Exec(context.Background(), querybuilder.Statement{SQL: sql, Params: params}); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}
