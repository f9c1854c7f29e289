package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/insightd/insightd/olap/synth"
)

func TestLoadUsageMistakesExit2(t *testing.T) {
	// Should a mistake slip through, it must not write into the working tree.
	t.Setenv("INSIGHTD_DATA_DIR", t.TempDir())
	for _, args := range [][]string{
		{"load"},
		{"load", "--events", "10", "--persons", "2", "--days", "1"},
		{"load", "--project", "1", "--events", "10", "--persons", "2", "--days", "1", "--end", "2026-13-01"},
		{"load", "--project", "1", "--events", "-5", "--persons", "2", "--days", "1"},
		{"load", "--project", "1", "--events", "10", "--persons", "2", "--days", "1", "--chunk", "0"},
		{"load", "--project", "1", "--events", "10", "--persons", "2", "--days", "99999"},
		{"load", "--project", "1", "--events", "10", "--persons", "2", "--days", "1", "extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if code, _, errOut := runCmd(t, "", args...); code != 2 {
				t.Fatalf("exit %d, want 2 (%s)", code, errOut)
			}
		})
	}
	if code, out, errOut := runCmd(t, "", "load", "--help"); code != 0 || !strings.Contains(out+errOut, "Usage: insightd load") {
		t.Fatalf("load --help: exit %d, output %q %q", code, out, errOut)
	}
}

func TestLoadWritesOnceThenRefusesUnlessAppending(t *testing.T) {
	lib := os.Getenv("INSIGHTD_CHDB_LIB")
	if lib == "" {
		t.Fatal("INSIGHTD_CHDB_LIB is not set: run `make test`")
	}
	dir := t.TempDir()
	args := []string{"load", "--data-dir", dir, "--chdb-lib", lib, "--log-level", "warn",
		"--project", "7", "--events", "3000", "--persons", "40", "--days", "3", "--seed", "9", "--end", "2026-01-31", "--chunk", "1000"}

	code, out, errOut := runCmd(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sum struct {
		Events, Persons int64
		ProjectEvents   int64 `json:"project_events"`
		Start, End      string
		Chunks          int
		HotColumns      bool `json:"hot_columns"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("output is not one JSON object: %q", out)
	}
	if sum.Events != 3000 || sum.Persons != 40 || sum.Start != "2026-01-29T00:00:00Z" || sum.End != "2026-02-01T00:00:00Z" ||
		sum.Chunks != 5 || !sum.HotColumns {
		t.Fatalf("summary %+v from %s", sum, out)
	}

	if code, _, errOut := runCmd(t, "", args...); code != 1 || !strings.Contains(errOut, "already has 3000 events") {
		t.Fatalf("second load: exit %d %q, want 1 and a refusal", code, errOut)
	}
	// Another seed: other events, the same persons and distinct ids.
	code, out, errOut = runCmd(t, "", append(args, "--append", "--seed", "10")...)
	if code != 0 {
		t.Fatalf("--append: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"project_events":6000`) {
		t.Fatalf("--append summary %s, want project_events 6000", out)
	}

	code, out, errOut = runCmd(t, "", "load", "--data-dir", dir, "--chdb-lib", lib, "--log-level", "warn", "--project", "7", "--optimize", "--report")
	if code != 0 {
		t.Fatalf("--optimize --report: exit %d: %s", code, errOut)
	}
	var after struct {
		OptimizeSeconds *float64 `json:"optimize_seconds"`
		Report          synth.Report
	}
	if err := json.Unmarshal([]byte(out), &after); err != nil || after.OptimizeSeconds == nil {
		t.Fatalf("output is not one JSON object with optimize_seconds and report: %q", out)
	}
	r := after.Report
	var named int64
	for _, c := range r.ByEvent {
		named += c.Count
	}
	if r.Events != 6000 || named != 6000 || r.DistinctIDs != 40 || r.Persons < 1 || r.Persons > 40 ||
		len(r.Funnel.Persons) != 3 || r.Funnel.Persons[0] != r.Persons || len(r.Tables) != 3 || r.Tables[0].BytesOnDisk == 0 || r.Tables[0].Parts != 1 {
		t.Fatalf("report %+v", r)
	}
}
