package chsql

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// Every ClickHouse table with a team_id column belongs to one project, so
// deleting a project must clear it: each one the migrations create is in
// TeamTables, and TeamTables names only tables the migrations create.
func TestTeamTablesAreEveryTableTheMigrationsKeyByTeam(t *testing.T) {
	files, err := filepath.Glob("../../migrations/clickhouse/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	create := regexp.MustCompile(`(?is)CREATE TABLE IF NOT EXISTS (\w+)\s*\((.*?)\)\s*ENGINE`)
	var keyed, all []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatch(string(b), -1) {
			all = append(all, m[1])
			if regexp.MustCompile(`(?m)^\s*team_id\s`).MatchString(m[2]) {
				keyed = append(keyed, m[1])
			}
		}
	}
	got := DefaultSchema().TeamTables()
	for _, table := range keyed {
		if !slices.Contains(got, table) {
			t.Errorf("table %s has a team_id but is not in Schema.TeamTables: a deleted project's rows would stay", table)
		}
	}
	for _, table := range got {
		if !slices.Contains(keyed, table) {
			t.Errorf("TeamTables names %s, which no migration creates with a team_id (tables: %v)", table, all)
		}
	}
}
