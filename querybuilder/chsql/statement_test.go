package chsql

import (
	"strings"
	"testing"
)

// A statement's own settings and the server's limits end up in one
// SETTINGS clause, the statement's first, and the statement handed in is
// left as it was.
func TestWithLimitsWritesTheStatementsSettings(t *testing.T) {
	const sessionJoinSetting = "query_plan_join_swap_table = 'false'" // the sessions join's (querybuilder)
	own := []string{sessionJoinSetting}
	in := Statement{SQL: "SELECT 1", Settings: own[:1:1]}
	out := WithLimits(in, Limits{MaxExecutionTime: 7})
	want := "SELECT 1\nSETTINGS " + sessionJoinSetting + ", max_execution_time = 7"
	if out.SQL != want {
		t.Fatalf("SQL\n%s\nwant\n%s", out.SQL, want)
	}
	if out.Settings != nil {
		t.Fatalf("settings %q written twice", out.Settings)
	}
	if in.SQL != "SELECT 1" || len(in.Settings) != 1 || in.Settings[0] != sessionJoinSetting {
		t.Fatalf("the statement handed in changed: %+v", in)
	}
	if got := WithLimits(Statement{SQL: "SELECT 1", Settings: own}, Limits{}).SQL; got != "SELECT 1\nSETTINGS "+sessionJoinSetting {
		t.Fatalf("without limits: %s", got)
	}
	if got := WithLimits(Statement{SQL: "SELECT 1"}, Limits{}).SQL; strings.Contains(got, "SETTINGS") {
		t.Fatalf("nothing to set: %s", got)
	}
}
