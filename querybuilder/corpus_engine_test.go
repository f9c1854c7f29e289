package querybuilder_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// The fuzz targets prove that no input panics and that every refusal is
// a validation error; this runs every checked-in corpus request that
// validates on the engine, so that no accepted request fails there (a
// 500) either.
func TestEveryValidFuzzCorpusRequestRunsOnTheEngine(t *testing.T) {
	eng := testEngine(t)
	project := querybuilder.Project{ID: newTeam(), Timezone: "America/New_York", WeekStartDay: 1}
	facts := querybuilder.Facts{FirstEvent: time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)}
	now := time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParseTrends", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	ran := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[1], "string(") {
			t.Fatalf("%s: not a one-string corpus entry", file)
		}
		body, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		params, err := querybuilder.ParseBody([]byte(body))
		if err != nil {
			continue
		}
		q, err := querybuilder.ParseTrends(params, querybuilder.Env{Project: project, Now: now})
		if err != nil {
			continue
		}
		stmt, err := querybuilder.BuildTrends(q, facts)
		if err != nil {
			if len(querybuilder.ValidationErrors(err)) > 0 {
				continue // date_from=all, refused once its range is known
			}
			t.Fatalf("%s: %v", file, err)
		}
		rows, err := eng.Query(context.Background(), stmt)
		if err != nil {
			t.Fatalf("%s: the engine refused an accepted request: %v\n%s\n%s", file, err, body, stmt)
		}
		if _, err := querybuilder.ShapeTrends(q, rows.Data); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		ran++
	}
	if ran < 10 {
		t.Fatalf("only %d corpus requests validated: the corpus no longer exercises the builder", ran)
	}
	t.Logf("%d of %d corpus requests ran", ran, len(files))
}
