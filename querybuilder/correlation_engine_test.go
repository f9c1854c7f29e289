package querybuilder_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// Each correlation type runs on the engine (an empty project), with the
// project's correlation_config exclusions, and its persons too.
func TestEveryCorrelationTypeRunsOnTheEngine(t *testing.T) {
	eng := testEngine(t)
	project := querybuilder.Project{ID: newTeam(), Timezone: "Europe/Paris",
		CorrelationConfig: json.RawMessage(`{"excluded_event_names": ["$pageleave"], "excluded_person_property_names": ["email"], "excluded_event_property_names": ["$ip"]}`)}
	now := time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)
	funnel := `"events": [{"id": "a"}, {"id": "b"}], "funnel_window_days": 3`
	for name, body := range map[string]string{
		"events":     `{` + funnel + `}`,
		"groups":     `{` + funnel + `, "aggregation_group_type_index": 2}`,
		"properties": `{` + funnel + `, "funnel_correlation_type": "properties", "funnel_correlation_names": ["plan", "$all"]}`,
		"event_with": `{` + funnel + `, "funnel_correlation_type": "event_with_properties", "funnel_correlation_event_names": ["x"]}`,
	} {
		params, err := querybuilder.ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		q, err := querybuilder.ParseCorrelation(params, querybuilder.Env{Project: project, Now: now})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		stmt, err := querybuilder.BuildCorrelation(q, querybuilder.Facts{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows, err := eng.Query(context.Background(), stmt)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stmt)
		}
		if _, err := querybuilder.ShapeCorrelation(q, rows.Data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sel, _ := querybuilder.ParseBody([]byte(`{"funnel_correlation_person_converted": "true", "funnel_correlation_person_entity": {"id": "x", "properties": [{"key": "k", "value": 1}]},
			"funnel_correlation_property_values": [{"key": "plan", "value": "pro"}]}`))
		ast, err := q.Actors(sel, querybuilder.Facts{}, querybuilder.Page{Limit: 10})
		if err != nil {
			t.Fatalf("%s persons: %v", name, err)
		}
		if _, err := eng.Query(context.Background(), ast); err != nil {
			t.Fatalf("%s persons: %v\n%s", name, err, ast)
		}
	}
}
