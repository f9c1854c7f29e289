package querybuilder

import (
	"path/filepath"
	"testing"
)

// The export of a number's actors is one statement: the kind's actors
// joined to their details, read once (persons with their distinct ids,
// or the groups of the type), the actors on the join's right side.
func TestActorsExportGoldenSQL(t *testing.T) {
	env := Env{Project: goldenProject, Now: testNow}
	checkGolden(t, filepath.Join("testdata", "actors"), map[string]string{
		"export_funnel_step_persons": `{"insight": "FUNNELS", "events": [{"id": "$pageview", "order": 0}, {"id": "signup", "order": 1}, {"id": "purchase", "order": 2}], "date_from": "-30d", "funnel_step": 2}`,
		"export_funnel_groups":       `{"insight": "FUNNELS", "events": [{"id": "$pageview", "order": 0}, {"id": "signup", "order": 1}], "aggregation_group_type_index": 2, "funnel_step": -2}`,
		"export_trend_sessions":      `{"events": [{"id": "$pageview", "math": "unique_session"}], "date_from": "-7d", "interval": "day", "series": 0, "bucket": "2026-03-08"}`,
		"export_retention_cell":      `{"target_entity": {"id": "$pageview", "type": "events"}, "total_intervals": 4, "date_to": "2026-03-10", "selected_interval": 0, "retention_row": 1}`,
	}, func(p Params) (Statement, error) {
		var q Query
		var err error
		switch {
		case p.present("target_entity"):
			q, err = ParseRetention(p, env)
		case p.present("funnel_step"):
			q, err = ParseFunnel(p, env)
		default:
			q, err = ParseTrends(p, env)
		}
		if err != nil {
			return Statement{}, err
		}
		l := q.(ActorsLister)
		typ := l.ActorType(p)
		return l.Actors(p, Facts{}, Page{Details: &typ, DisplayNames: []string{"email", "name"}})
	})
}

// The actors' type is the query's, never guessed from an id.
func TestActorTypeFollowsTheQuery(t *testing.T) {
	env := Env{Project: goldenProject, Now: testNow}
	for body, want := range map[string]ActorType{
		`{"events": [{"id": "a", "math": "dau"}], "series": 0}`:                                                PersonActors,
		`{"events": [{"id": "a"}, {"id": "b", "math": "unique_session"}], "series": 1}`:                        {Kind: ActorSession},
		`{"events": [{"id": "a"}, {"id": "b", "math": "unique_session"}], "series": 0}`:                        PersonActors,
		`{"events": [{"id": "a", "math": "unique_group", "math_group_type_index": 0}], "series": 0}`:           GroupActors(0),
		`{"events": [{"id": "a", "math": "dau"}], "aggregation_group_type_index": 3, "series": 0}`:             GroupActors(3),
		`{"insight": "FUNNELS", "events": [{"id": "a"}, {"id": "b"}], "aggregation_group_type_index": 1}`:      GroupActors(1),
		`{"insight": "FUNNELS", "events": [{"id": "a"}, {"id": "b"}]}`:                                         PersonActors,
		`{"target_entity": {"id": "a", "type": "events"}, "aggregation_group_type_index": 4}`:                  GroupActors(4),
		`{"insight": "STICKINESS", "events": [{"id": "a"}], "aggregation_group_type_index": 2}`:                GroupActors(2),
		`{"insight": "LIFECYCLE", "events": [{"id": "a"}], "aggregation_group_type_index": 2}`:                 GroupActors(2),
		`{"insight": "PATHS", "aggregation_group_type_index": 1}`:                                              GroupActors(1),
		`{"insight": "LIFECYCLE", "events": [{"id": "a", "math": "unique_session"}], "shown_as": "Lifecycle"}`: PersonActors,
	} {
		p, err := ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		var q Query
		insight, _ := p.str("insight", &problems{})
		switch {
		case p.present("target_entity"):
			q, err = ParseRetention(p, env)
		case insight == "FUNNELS":
			q, err = ParseFunnel(p, env)
		case insight == "STICKINESS":
			q, err = ParseStickiness(p, env)
		case insight == "LIFECYCLE":
			q, err = ParseLifecycle(p, env)
		case insight == "PATHS":
			q, err = ParsePaths(p, env)
		default:
			q, err = ParseTrends(p, env)
		}
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := q.(ActorsLister).ActorType(p); got != want {
			t.Errorf("%s: %+v, want %+v", body, got, want)
		}
	}
}

// A retention cell is named by its two numbers: a negative returning
// interval names none (it listed the whole cohort).
func TestRetentionActorsRefuseANegativeReturningInterval(t *testing.T) {
	p, err := ParseBody([]byte(`{"target_entity": {"id": "$pageview", "type": "events"}, "total_intervals": 4, "date_to": "2026-03-10", "selected_interval": 0, "returning_interval": -5}`))
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseRetention(p, Env{Project: goldenProject, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.Actors(p, Facts{}, Page{Limit: 100})
	if ves := ValidationErrors(err); len(ves) == 0 || ves[0].Attr != "returning_interval" {
		t.Fatalf("%v, want a ValidationError naming returning_interval", err)
	}
}

// With date_from=all the range starts at the project's first event (a
// fact of the engine): a selection is checked against that range, not
// the single interval the request alone gives.
func TestActorsOfAnAllTimeRangeAreCheckedAgainstItsFirstEvent(t *testing.T) {
	env := Env{Project: goldenProject, Now: testNow}
	facts := Facts{FirstEvent: testNow.AddDate(0, 0, -20)}
	parse := func(body string) Params {
		p, err := ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := parse(`{"insight": "STICKINESS", "events": [{"id": "$pageview"}], "date_from": "all", "stickiness_days": 3}`)
	sq, err := ParseStickiness(p, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sq.Actors(p, facts, Page{Limit: 100}); err != nil {
		t.Fatalf("stickiness: %v", err)
	}
	p = parse(`{"insight": "FUNNELS", "funnel_viz_type": "trends", "events": [{"id": "a", "order": 0}, {"id": "b", "order": 1}],
		"date_from": "all", "entrance_period_start": "` + testNow.AddDate(0, 0, -10).Format("2006-01-02") + `"}`)
	fq, err := ParseFunnel(p, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fq.Actors(p, facts, Page{Limit: 100}); err != nil {
		t.Fatalf("funnel trends: %v", err)
	}
}
