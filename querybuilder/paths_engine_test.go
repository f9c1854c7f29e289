package querybuilder_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// The paths modes the API tests do not reach run on the engine (an empty
// project): groups with a person condition, weights with test accounts,
// the project's cleaning rules.
func TestEveryPathsModeRunsOnTheEngine(t *testing.T) {
	eng := testEngine(t)
	project := querybuilder.Project{ID: newTeam(), Timezone: "Asia/Kolkata",
		TestAccountFilters:  json.RawMessage(`[{"key": "email", "operator": "not_icontains", "value": "@example.com", "type": "person"}]`),
		PathCleaningFilters: json.RawMessage(`[{"regex": "\\?.*$", "alias": ""}]`)}
	now := time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)
	for name, body := range map[string]string{
		"groups":   `{"aggregation_group_type_index": 1, "properties": [{"key": "plan", "value": "pro", "type": "person"}], "start_point": "/a"}`,
		"weights":  `{"min_edge_weight": 2, "max_edge_weight": 50, "edge_limit": 200, "filter_test_accounts": true, "end_point": "/b"}`,
		"cleaning": `{"path_replacements": true, "path_groupings": ["/x/*"], "exclude_events": ["/x/*"], "start_point": "/a", "end_point": "/b"}`,
		"funnel":   `{"funnel_paths": "funnel_path_before_step", "funnel_step": -2, "funnel_filter": {"events": [{"id": "a"}, {"id": "b"}], "breakdown": "$browser"}}`,
	} {
		q, stmt := pathsStatement(t, name, body, querybuilder.Env{Project: project, Now: now})
		rows, err := eng.Query(context.Background(), stmt)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stmt)
		}
		if _, err := querybuilder.ShapePaths(q, rows.Data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// pathsStatement is the query and statement of a paths request body
// (name says which in a failure), over facts of a project without
// merged persons or events before the range.
func pathsStatement(t *testing.T, name, body string, env querybuilder.Env) (*querybuilder.PathsQuery, querybuilder.Statement) {
	t.Helper()
	params, err := querybuilder.ParseBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	q, err := querybuilder.ParsePaths(params, env)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	stmt, err := querybuilder.BuildPaths(q, querybuilder.Facts{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return q, stmt
}
