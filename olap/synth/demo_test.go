package synth

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder/chsql"
)

func demoWriter(t *testing.T) *olap.Writer {
	t.Helper()
	w := olap.NewWriter(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), olap.WriterConfig{})
	t.Cleanup(w.Close)
	return w
}

func demoQuery(t *testing.T, team int64, sql string) []any {
	t.Helper()
	rows, err := engine.Query(context.Background(), chsql.Statement{SQL: sql, Params: map[string]any{"team": team}})
	if err != nil {
		t.Fatal(err)
	}
	return rows.Data[0]
}

func TestDemoDataIsARealisticProductAndDeterministic(t *testing.T) {
	ctx := context.Background()
	end := time.Date(2026, 6, 30, 18, 0, 0, 0, time.UTC)
	cfg := DemoConfig{Team: 7_000_001, Persons: 400, Days: 30, Seed: 42, End: end}
	w := demoWriter(t)
	st, err := Demo(ctx, w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", st)
	if st.Persons < 390 || st.Signups < 100 || st.Signups > 180 || st.Purchases == 0 || st.Events < 2000 {
		t.Fatalf("implausible demo: %+v", st)
	}
	got := demoQuery(t, cfg.Team, `SELECT count(), countIf(event = '$identify'), countIf(event = 'signup'),
    countIf(event = 'purchase' AND JSONExtractFloat(properties, 'amount') > 0),
    uniqExact(mat_browser), uniqExact(mat_session_id), min(timestamp), max(timestamp),
    countIf(event = '$pageview' AND mat_current_url LIKE 'https://hedgebox.test/%')
FROM events WHERE team_id = {team:Int64}`)
	if got[0] != uint64(st.Events) || got[1] != uint64(st.Signups) || got[2] != uint64(st.Signups) || got[3] != uint64(st.Purchases) {
		t.Fatalf("stored counts %v do not match the run %+v", got, st)
	}
	if got[4].(uint64) < 4 || got[5].(uint64) < uint64(st.Persons) {
		t.Fatalf("want several browsers and at least a session per person, got %v", got)
	}
	if first, last := got[6].(time.Time), got[7].(time.Time); first.Before(end.Add(-30*24*time.Hour)) || last.After(end) {
		t.Fatalf("events fall outside the 30 days: %s .. %s", first, last)
	}
	// Each visitor is one person: signing up merged the anonymous browsing.
	persons := demoQuery(t, cfg.Team, "SELECT uniqExact("+chsql.EventPersonID+") FROM events AS e "+
		chsql.EventPersonJoin+" WHERE e.team_id = {team:Int64}")
	if persons[0] != uint64(st.Persons) {
		t.Fatalf("want %d persons, got %v", st.Persons, persons[0])
	}
	identified := demoQuery(t, cfg.Team, `SELECT count(), countIf(JSONExtractString(p, 'plan') = 'pro') FROM (
    SELECT argMax(properties, version) AS p FROM persons WHERE team_id = {team:Int64}
    GROUP BY id HAVING argMax(is_identified, version) = 1 AND argMax(is_deleted, version) = 0)`)
	if identified[0] != uint64(st.Signups) || identified[1] != uint64(st.Purchases) {
		t.Fatalf("want %d identified persons of which %d on pro, got %v", st.Signups, st.Purchases, identified)
	}

	// The same seed and end again: the same events, and into the same
	// project nothing is stored twice.
	again, err := Demo(ctx, w, cfg)
	if err != nil || again != st {
		t.Fatalf("second run: %+v %v", again, err)
	}
	if n := demoQuery(t, cfg.Team, "SELECT count() FROM events WHERE team_id = {team:Int64}"); n[0] != uint64(st.Events) {
		t.Fatalf("a repeated demo stored events twice: %v", n[0])
	}
	other := cfg
	other.Team = 7_000_002
	if _, err := Demo(ctx, w, other); err != nil {
		t.Fatal(err)
	}
	fp := "SELECT sum(cityHash64(uuid, event, distinct_id, timestamp, properties)) FROM events WHERE team_id = {team:Int64}"
	if a, b := demoQuery(t, cfg.Team, fp), demoQuery(t, other.Team, fp); a[0] != b[0] {
		t.Fatal("the same seed and end must give the same events")
	}
	other.Team, other.Seed = 7_000_003, 43
	if _, err := Demo(ctx, w, other); err != nil {
		t.Fatal(err)
	}
	if a, b := demoQuery(t, cfg.Team, fp), demoQuery(t, other.Team, fp); a[0] == b[0] {
		t.Fatal("another seed must give other events")
	}
}

func TestDemoConfigIsValidated(t *testing.T) {
	for _, c := range []DemoConfig{{Team: 0, Persons: 1, Days: 1}, {Team: 1, Persons: 0, Days: 1}, {Team: 1, Persons: 1, Days: 0}} {
		if c.Validate() == nil {
			t.Fatalf("%+v should be refused", c)
		}
	}
}
