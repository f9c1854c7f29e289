package querybuilder_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
	"github.com/insightd/insightd/querybuilder"
)

// The cluster mode's analyses are the single-node statements with GLOBAL
// where a subquery reads a Distributed table (querybuilder.ClusterSchema).
// On the embedded engine GLOBAL changes nothing, so the statements must
// give the same rows there; on a real cluster (docker-compose.cluster.yml,
// where a Docker engine exists) every answer must equal the embedded
// engine's on the same events.

// corpusNow is the clock of every corpus request.
var corpusNow = time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)

// corpusCase is one analysis of the corpus: its statement for a schema.
type corpusCase struct {
	name  string
	build func(s querybuilder.Schema, team int64) (querybuilder.Statement, error)
}

// clusterCorpus is the funnel modes, trends with breakdowns (top values
// through a subquery), session properties (a join of sessions), paths and
// every valid trends fuzz corpus request.
func clusterCorpus(t *testing.T) []corpusCase {
	t.Helper()
	env := func(s querybuilder.Schema, team int64) querybuilder.Env {
		return querybuilder.Env{Project: querybuilder.Project{ID: team, Timezone: "Europe/Paris", WeekStartDay: 1}, Now: corpusNow, Schema: s}
	}
	facts := querybuilder.Facts{FirstEvent: corpusNow.AddDate(0, -3, 0)}
	// analysis is the statement of a request to the kind named kind.
	analysis := func(kind, body string) func(querybuilder.Schema, int64) (querybuilder.Statement, error) {
		return func(s querybuilder.Schema, team int64) (querybuilder.Statement, error) {
			p, err := querybuilder.ParseBody([]byte(body))
			if err != nil {
				return querybuilder.Statement{}, err
			}
			k, _ := querybuilder.ByName(kind)
			q, err := k.Parse(p, env(s, team))
			if err != nil {
				return querybuilder.Statement{}, err
			}
			return q.Build(facts)
		}
	}
	var out []corpusCase
	for _, name := range sortedKeys(funnelModes) {
		body := funnelModes[name]
		out = append(out, corpusCase{"funnel " + name, analysis("funnel", body)})
	}
	for name, body := range map[string]string{
		"trend breakdown":          `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"k","date_from":"-14d"}`,
		"trend session breakdown":  `{"events":[{"id":"a"}],"breakdown":"$entry_current_url","breakdown_type":"session","date_from":"-14d"}`,
		"trend session filter":     `{"events":[{"id":"a","math":"dau"}],"properties":[{"key":"$session_duration","value":60,"operator":"gt","type":"session"}],"date_from":"-14d"}`,
		"trend person breakdown":   `{"events":[{"id":"b","math":"dau"}],"breakdown":"$browser","date_from":"-14d"}`,
		"trend group breakdown":    `{"events":[{"id":"a"}],"breakdown":"industry","breakdown_type":"group","breakdown_group_type_index":1,"date_from":"-14d"}`,
		"trend unique weekly":      `{"events":[{"id":"a","math":"weekly_active"}],"date_from":"-14d"}`,
		"trend numeric bins":       `{"events":[{"id":"a"}],"breakdown":"n","breakdown_histogram_bin_count":3,"date_from":"-14d"}`,
		"trend formula":            `{"events":[{"id":"a"},{"id":"c"}],"formula":"A/B","date_from":"-14d"}`,
		"trend cumulative persons": `{"events":[{"id":"a","math":"dau"}],"display":"ActionsLineGraphCumulative","date_from":"-14d"}`,
	} {
		out = append(out, corpusCase{name, analysis("trends", body)})
	}
	// Paths name their hashed items by a scalar subquery over events and
	// fall back to the text statement (both compared).
	for name, body := range map[string]string{
		"paths every event": `{"date_from":"-14d"}`,
		"paths start point": `{"date_from":"-14d","start_point":"a","end_point":"c"}`,
	} {
		out = append(out, corpusCase{name, analysis("paths", body)})
	}
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParseTrends", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 {
			continue
		}
		body, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
		if err != nil {
			continue
		}
		out = append(out, corpusCase{"fuzz corpus " + filepath.Base(file), analysis("trends", body)})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// seedCorpus writes the corpus's events for team through the writer, as
// ingestion does: persons doing steps with breakdown values, sessions
// with pages, numbers, and an anonymous person merged by $identify.
func seedCorpus(t *testing.T, e olap.Engine, team int64) {
	t.Helper()
	w := olap.NewWriter(e, slog.New(slog.NewTextHandler(io.Discard, nil)), olap.WriterConfig{})
	defer w.Close()
	start := corpusNow.Add(-72 * time.Hour)
	var batch []olap.Capture
	add := func(at time.Time, distinct, name, props string) {
		batch = append(batch, olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: name,
			DistinctID: distinct, Timestamp: at, Properties: props}})
	}
	for i, spec := range []string{"p1 a b x a c d", "p2 a", "p3 b a a b", "p4 x a b c", "p1 e f g", "p5 a a", "p6 a c b", "anon7 a b"} {
		f := strings.Fields(spec)
		for j, name := range f[1:] {
			props := fmt.Sprintf(`{"k": "v%s", "n": %d, "$browser": "B%s", "$group_1": "org%s", "$session_id": "s%d", "$current_url": "https://x/%s"}`,
				name, i*7+j, f[0], f[0], i, name)
			add(start.Add(time.Duration(i*10+j)*time.Minute), f[0], name, props)
		}
	}
	add(start.Add(5*time.Hour), "p7", "$identify", `{"$anon_distinct_id": "anon7"}`)
	add(start.Add(6*time.Hour), "p7", "c", `{"k": "vc", "$session_id": "s9"}`)
	if res := w.Write(context.Background(), batch); res.Err != nil {
		t.Fatal(res.Err)
	}
}

// sortedRows is a result's rows as text, sorted, so that two engines'
// answers compare whatever order rows of equal sort keys come in.
func sortedRows(r *olap.Rows) []string {
	out := make([]string, len(r.Data))
	for i, row := range r.Data {
		out[i] = fmt.Sprint(row)
	}
	slices.Sort(out)
	return out
}

func TestClusterStatementsAreTheSingleNodeOnesWithGlobalAndAnswerAlike(t *testing.T) {
	e := testEngine(t)
	team := newTeam()
	seedCorpus(t, e, team)
	single, cluster := querybuilder.DefaultSchema(), querybuilder.ClusterSchema("insightd_cluster")
	global := map[string]int{}
	ran := 0
	for _, c := range clusterCorpus(t) {
		want, err := c.build(single, team)
		if err != nil {
			continue // a corpus request the builder refuses: the fuzz tests' concern
		}
		got, err := c.build(cluster, team)
		if err != nil {
			t.Fatalf("%s: refused on a cluster only: %v", c.name, err)
		}
		if strings.ReplaceAll(got.SQL, "GLOBAL ", "") != want.SQL || !reflect.DeepEqual(got.Params, want.Params) {
			t.Fatalf("%s: the cluster statement differs by more than GLOBAL:\n%s\n---\n%s", c.name, got.SQL, want.SQL)
		}
		kind, _, _ := strings.Cut(c.name, " ")
		global[kind] += strings.Count(got.SQL, "GLOBAL ")
		a, err := e.Query(context.Background(), want)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, err := e.Query(context.Background(), got)
		if err != nil {
			t.Fatalf("%s on a cluster schema: %v\n%s", c.name, err, got.SQL)
		}
		if !slices.Equal(sortedRows(a), sortedRows(b)) {
			t.Fatalf("%s: rows differ:\n%v\n%v", c.name, sortedRows(a), sortedRows(b))
		}
		if got.Fallback != nil { // the statement answers by itself, not through its fallback
			alone := got
			alone.Fallback = nil
			if b, err = e.Query(context.Background(), alone); err != nil || !slices.Equal(sortedRows(a), sortedRows(b)) {
				t.Fatalf("%s without its fallback: %v\n%v\n%v", c.name, err, sortedRows(a), sortedRows(b))
			}
		}
		ran++
	}
	if ran < 30 {
		t.Fatalf("only %d corpus statements ran", ran)
	}
	// The funnels' "may get past step 1" set, the trends' top breakdown
	// values and the session join read a Distributed table from inside a
	// statement over one: each must be GLOBAL.
	if global["funnel"] == 0 || global["trend"] == 0 {
		t.Fatalf("GLOBAL subqueries per kind: %v", global)
	}
	t.Logf("%d statements; GLOBAL subqueries per kind: %v", ran, global)
}

// compareWithEmbedded runs the corpus on other and on the embedded
// engine, each with its own copy of the same events, and requires the
// same rows from both.
func compareWithEmbedded(t *testing.T, other olap.Engine) {
	e := testEngine(t)
	team := newTeam()
	seedCorpus(t, e, team)
	seedCorpus(t, other, team)
	ran := 0
	for _, c := range clusterCorpus(t) {
		want, err := c.build(e.Schema(), team)
		if err != nil {
			continue
		}
		got, err := c.build(other.Schema(), team)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		a, err := e.Query(context.Background(), want)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, err := other.Query(context.Background(), got)
		if err != nil {
			t.Fatalf("%s on %s: %v\n%s", c.name, other.Backend(), err, got.SQL)
		}
		if !slices.Equal(sortedRows(a), sortedRows(b)) {
			t.Errorf("%s: the server answers\n%v\nthe embedded engine\n%v", c.name, sortedRows(b), sortedRows(a))
		}
		ran++
	}
	if ran < 30 {
		t.Fatalf("only %d corpus statements ran", ran)
	}
}

// TestClusterAnswersTheCorpusAsTheEmbeddedEngineDoes starts
// docker-compose.cluster.yml's Keeper and two shards (skipped without a
// Docker engine), migrates them as a cluster and compares every corpus
// answer with the embedded engine's.
func TestClusterAnswersTheCorpusAsTheEmbeddedEngineDoes(t *testing.T) {
	s := olaptest.ClickHouseCluster(t, "../docker-compose.cluster.yml")
	if s.Schema().Cluster == "" {
		t.Fatal("the cluster backend has no cluster in its schema")
	}
	compareWithEmbedded(t, s)
}

// TestServerAnswersTheCorpusAsTheEmbeddedEngineDoes does the same with
// one ClickHouse server (CLICKHOUSE_URL without a cluster), the image
// docker-compose.yml runs.
func TestServerAnswersTheCorpusAsTheEmbeddedEngineDoes(t *testing.T) {
	compareWithEmbedded(t, olaptest.ClickHouseServer(t, "../docker-compose.yml"))
}
