package api

import (
	"context"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// Deleting a project clears its rows from every ClickHouse table keyed by
// project (querybuilder's TeamTables, which a test holds to the
// migrations), cohort members and groups included, and leaves another
// project's rows alone.
func TestDeletingAProjectClearsEveryTeamTable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	ctx := context.Background()
	_, p := call(t, f.h, "POST", f.projects(f.a.OrganizationID), key, map[string]any{"name": "Doomed"})
	doomed, kept := int64(p["id"].(float64)), f.a.ProjectID
	tables := engine.Schema().TeamTables()
	count := func(table string, team int64) uint64 {
		t.Helper()
		rows, err := engine.Query(ctx, querybuilder.Statement{
			SQL: "SELECT count() FROM " + table + " WHERE team_id = {t:Int64}", Params: map[string]any{"t": team}})
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		return rows.Data[0][0].(uint64)
	}
	for _, table := range tables {
		// Every other column takes its default: a row of the team is all
		// the deletion needs to find.
		for _, team := range []int64{doomed, kept} {
			if err := engine.Exec(ctx, querybuilder.Statement{
				SQL: "INSERT INTO " + table + " (team_id) VALUES ({t:Int64})", Params: map[string]any{"t": team}}); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
		}
	}
	keptBefore := map[string]uint64{}
	for _, table := range tables {
		if count(table, doomed) == 0 {
			t.Fatalf("%s holds no row of the project before the deletion", table)
		}
		keptBefore[table] = count(table, kept)
	}
	if st, body := call(t, f.h, "DELETE", f.project(f.a.OrganizationID, doomed), key, nil); st != 204 {
		t.Fatalf("%d %v", st, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, table := range tables {
		for count(table, doomed) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d rows of the deleted project remain in %s after 20s", count(table, doomed), table)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if n := count(table, kept); n != keptBefore[table] {
			t.Errorf("%s: the other project's rows went from %d to %d", table, keptBefore[table], n)
		}
	}
}
