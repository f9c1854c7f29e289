package querybuilder

import (
	"strings"
	"testing"
)

func TestAProjectWithoutMergedPersonsSkipsTheOverrideJoin(t *testing.T) {
	body := `{"events": [{"id": "$pageview", "math": "dau"}], "breakdown": "plan", "breakdown_type": "person",
		"properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}], "date_from": "-7d"}`
	for _, tc := range []struct {
		name      string
		none      bool
		overrides bool
		personID  string
	}{
		{"with merged persons the statement resolves them", false, true, EventPersonID},
		{"without, each event's person_id is its person", true, false, "e.person_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseBody([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			q, err := ParseTrends(p, Env{Project: goldenProject, Now: testNow})
			if err != nil {
				t.Fatal(err)
			}
			stmt, err := BuildTrends(q, Facts{NoPersonOverrides: tc.none})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stmt.SQL, "person_overrides") != tc.overrides ||
				!strings.Contains(stmt.SQL, "pp.id = "+tc.personID) || !strings.Contains(stmt.SQL, tc.personID+" AS actor") {
				t.Fatalf("%s", stmt.SQL)
			}
		})
	}
}
