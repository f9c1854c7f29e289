package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/metadata/metadatatest"
)

// runCmd runs the CLI in-process against the test's own database.
func runCmd(t *testing.T, dbURL string, args ...string) (int, string, string) {
	t.Helper()
	if dbURL != "" {
		t.Setenv("DATABASE_URL", dbURL)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// testDB returns the URL of a fresh migrated database.
func testDB(t *testing.T) string {
	t.Helper()
	store := metadatatest.NewStore(t)
	var name string
	if err := store.DB().Get(&name, "SELECT current_database()"); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := runCmd(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "insightd ") {
		t.Fatalf("version: %d %q", code, out)
	}
	for _, args := range [][]string{
		{"--help"}, {"serve", "--help"}, {"migrate", "--help"}, {"admin", "--help"},
		{"admin", "bootstrap", "--help"}, {"admin", "create-key", "--help"},
	} {
		t.Run(strings.Join(args, " ")+" prints usage and exits 0", func(t *testing.T) {
			code, out, errOut := runCmd(t, "", args...)
			if code != 0 || !strings.Contains(out+errOut, "Usage") {
				t.Fatalf("exit %d, output %q %q", code, out, errOut)
			}
		})
	}
}

func TestUsageMistakesExit2(t *testing.T) {
	for _, args := range [][]string{
		{}, {"frobnicate"}, {"admin"}, {"admin", "nope"},
		{"admin", "bootstrap", "--org", "Acme"},
		{"admin", "create-key", "--email", "a@b.c"},
		{"serve", "--no-such-flag"},
		{"migrate", "extra-arg"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if code, _, _ := runCmd(t, "", args...); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
		})
	}
}

func TestBootstrapPrintsOneJSONObjectAndCreateKeyWorks(t *testing.T) {
	db := testDB(t)
	code, out, errOut := runCmd(t, db, "admin", "bootstrap", "--email", "ada@example.com", "--org", "Acme", "--project", "Web")
	if code != 0 {
		t.Fatalf("bootstrap exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("bootstrap output is not one JSON object: %q", out)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"organization_id", "personal_api_key", "project_api_token", "project_id", "user_id"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}

	code, out, errOut = runCmd(t, db, "admin", "create-key", "--email", "ada@example.com", "--scopes", "insight:read, project:read", "--label", "ci")
	if code != 0 {
		t.Fatalf("create-key exit %d: %s", code, errOut)
	}
	var key map[string]string
	if err := json.Unmarshal([]byte(out), &key); err != nil || !strings.HasPrefix(key["personal_api_key"], "phx_") || len(key) != 1 {
		t.Fatalf("create-key output %q", out)
	}

	if code, _, errOut := runCmd(t, db, "admin", "create-key", "--email", "ada@example.com", "--scopes", "insight:read,everything:write"); code != 1 || !strings.Contains(errOut, "unknown scope") {
		t.Fatalf("unknown scope: exit %d %q", code, errOut)
	}
	if code, _, errOut := runCmd(t, db, "admin", "create-key", "--email", "nobody@example.com", "--scopes", "*"); code != 1 || !strings.Contains(errOut, "no user") {
		t.Fatalf("unknown user: exit %d %q", code, errOut)
	}
}

func TestCreateKeyLimitsTheKeyToOrganizationsAndProjects(t *testing.T) {
	db := testDB(t)
	code, out, errOut := runCmd(t, db, "admin", "bootstrap", "--email", "ada@example.com", "--org", "Acme")
	if code != 0 {
		t.Fatalf("bootstrap exit %d: %s", code, errOut)
	}
	var b struct {
		OrganizationID string `json:"organization_id"`
		ProjectID      int64  `json:"project_id"`
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCmd(t, db, "admin", "create-key", "--email", "ada@example.com", "--scopes", "*",
		"--scoped-organizations", b.OrganizationID, "--scoped-teams", fmt.Sprint(b.ProjectID))
	if code != 0 {
		t.Fatalf("create-key exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"an organization id that is not a UUID", []string{"--scoped-organizations", "acme"}, 2, "not an organization id"},
		{"a project id that is not a number", []string{"--scoped-teams", "1,x"}, 2, "not a project id"},
		{"an organization the user is not in", []string{"--scoped-organizations", "00000000-0000-4000-8000-000000000000"}, 1, "not a member"},
		{"a project the user cannot reach", []string{"--scoped-teams", "999999999"}, 1, "scoped project"},
		{"a label with a NUL", []string{"--label", "a\x00b"}, 1, "NUL"},
		{"a label of 41 characters", []string{"--label", strings.Repeat("l", 41)}, 1, "label"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"admin", "create-key", "--email", "ada@example.com", "--scopes", "*"}, tc.args...)
			code, _, errOut := runCmd(t, db, args...)
			if code != tc.code || !strings.Contains(errOut, tc.says) {
				t.Fatalf("exit %d %q, want %d saying %q", code, errOut, tc.code, tc.says)
			}
		})
	}
}

func TestMigrateTwiceIsANoOp(t *testing.T) {
	lib := os.Getenv("INSIGHTD_CHDB_LIB")
	if lib == "" {
		t.Fatal("INSIGHTD_CHDB_LIB is not set: run `make test`")
	}
	db := testDB(t)
	dir := t.TempDir()
	for i, wantApplied := range []bool{true, false} {
		code, _, errOut := runCmd(t, db, "migrate", "--data-dir", dir, "--chdb-lib", lib, "--log-level", "info")
		if code != 0 {
			t.Fatalf("migrate run %d: exit %d: %s", i+1, code, errOut)
		}
		var line struct {
			Postgres   []int `json:"postgres_applied"`
			ClickHouse []int `json:"clickhouse_applied"`
		}
		for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
			if strings.Contains(l, `"msg":"migrated"`) {
				if err := json.Unmarshal([]byte(l), &line); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The test database came migrated from its template; ClickHouse is new.
		if got := len(line.ClickHouse) > 0; got != wantApplied {
			t.Fatalf("migrate run %d applied clickhouse %v; want applied=%v (log %s)", i+1, line.ClickHouse, wantApplied, errOut)
		}
		if len(line.Postgres) != 0 {
			t.Fatalf("migrate run %d applied postgres %v on a migrated database", i+1, line.Postgres)
		}
	}
}

func TestDemoDataWritesASimulatedProductIntoAProject(t *testing.T) {
	lib := os.Getenv("INSIGHTD_CHDB_LIB")
	if lib == "" {
		t.Fatal("INSIGHTD_CHDB_LIB is not set: run `make test`")
	}
	db := testDB(t)
	code, out, errOut := runCmd(t, db, "admin", "bootstrap", "--email", "demo@example.com", "--org", "Demo")
	if code != 0 {
		t.Fatalf("bootstrap exit %d: %s", code, errOut)
	}
	var boot struct {
		ProjectID int64 `json:"project_id"`
	}
	if err := json.Unmarshal([]byte(out), &boot); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := []string{"demo-data", "--data-dir", dir, "--chdb-lib", lib, "--project", fmt.Sprint(boot.ProjectID),
		"--persons", "50", "--days", "7", "--seed", "3", "--end", "2026-06-01T00:00:00Z"}
	code, out, errOut = runCmd(t, db, args...)
	if code != 0 {
		t.Fatalf("demo-data exit %d: %s", code, errOut)
	}
	var st struct{ Persons, Events int }
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Persons < 45 || st.Events < st.Persons {
		t.Fatalf("demo-data output %q (%v)", out, err)
	}
	if code, _, _ := runCmd(t, db, "demo-data", "--data-dir", dir, "--chdb-lib", lib, "--project", "999999999"); code != 1 {
		t.Fatalf("an unknown project: exit %d, want 1", code)
	}
	if code, _, _ := runCmd(t, db, "demo-data", "--persons", "10"); code != 2 {
		t.Fatalf("no --project: exit %d, want 2", code)
	}
}

// Every setting has a flag and a variable, and the README's table lists
// each one with both.
func TestEverySettingIsAFlagAndAVariableInTheREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, uses := range []stores{usePostgres, useClickHouse, useBoth} {
		fs := newFlagSet("x", "x", io.Discard)
		if _, err := addStoreFlags(fs, uses); err != nil {
			t.Fatal(err)
		}
		fs.VisitAll(func(f *flag.Flag) { seen[f.Name] = true })
	}
	for name, env := range envNames {
		row := fmt.Sprintf("| `%s` | `--%s` |", env, name)
		if !strings.Contains(string(readme), row) {
			t.Errorf("README has no row starting %q", row)
		}
	}
	for name := range seen {
		if _, ok := envNames[name]; !ok {
			t.Errorf("store flag --%s has no environment variable", name)
		}
	}
}

func TestVariablesSetFlagsAndFlagsWin(t *testing.T) {
	t.Setenv("INSIGHTD_QUERY_TIMEOUT", "7")
	t.Setenv("INSIGHTD_QUEUE_WAIT", "3s")
	t.Setenv("INSIGHTD_LOG_LEVEL", "debug")
	fs := newFlagSet("x", "x", io.Discard)
	sf, err := addStoreFlags(fs, useClickHouse)
	if err != nil {
		t.Fatal(err)
	}
	if err := parse(fs, []string{"--log-level", "warn"}); err != nil {
		t.Fatal(err)
	}
	if sf.olap.QueryTimeout != 7*time.Second || sf.olap.QueueWait != 3*time.Second || sf.logLevel != "warn" {
		t.Fatalf("got timeout %s, queue wait %s, log level %q", sf.olap.QueryTimeout, sf.olap.QueueWait, sf.logLevel)
	}
	t.Setenv("INSIGHTD_OLAP_CONNECTIONS", "many")
	fs = newFlagSet("x", "x", io.Discard)
	if _, err := addStoreFlags(fs, useClickHouse); err != nil {
		t.Fatal(err)
	}
	if err := parse(fs, nil); err == nil || !strings.Contains(err.Error(), "INSIGHTD_OLAP_CONNECTIONS") {
		t.Fatalf("a bad variable: %v", err)
	}
}
