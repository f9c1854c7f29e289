package olap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// engine is the embedded engine every test in this package shares: chDB
// opens one data directory per process. Tests keep apart by team_id.
var engine *Embedded

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	lib := os.Getenv("INSIGHTD_CHDB_LIB")
	if lib == "" {
		fmt.Fprintln(os.Stderr, "INSIGHTD_CHDB_LIB is not set: run `make test` (it fetches chDB and sets it)")
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "insightd-olap-test-")
	if err != nil {
		panic(err)
	}
	engine, err = OpenEmbedded(Config{ChDBLib: lib, DataDir: dir, QueryTimeout: time.Minute, Connections: 8},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := Migrate(context.Background(), engine); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	engine.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestBoundParametersRunOnTheEmbeddedEngine(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	rows, err := engine.Query(context.Background(), chsql.Statement{
		SQL:    "SELECT {n:Int64} + 1 AS n, {s:String} AS s, {t:DateTime64(6, 'UTC')} AS t, {a:Array(String)} AS a, {f:Float64} AS f, {b:Bool} AS b, {x:Nullable(String)} AS x",
		Params: map[string]any{"n": 41, "s": "hello", "t": ts, "a": []string{"x", "y"}, "f": 0.25, "b": true, "x": nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(42), "hello", ts, []any{"x", "y"}, 0.25, true, nil}
	if len(rows.Data) != 1 || !reflect.DeepEqual(rows.Data[0], want) {
		t.Fatalf("got %#v, want %#v", rows.Data, want)
	}
	if rows.Columns[0] != (Column{Name: "n", Type: "Int64"}) {
		t.Errorf("first column %+v", rows.Columns[0])
	}
}

// hostile are strings that would change a statement if pasted into it, or
// that the engine's text form of parameters treats specially.
var hostile = []string{
	"'; DROP TABLE events; --",
	`\'; DROP TABLE events; --`,
	"tab\there", "new\nline", "cr\rhere", `back\slash`, `\N`, `\\N`, "nul\x00byte",
	"{s:String}", "`backtick`", `"double"`, "😀 ünïcödé", "",
}

func TestHostileStringParametersAreData(t *testing.T) {
	ctx := context.Background()
	for _, s := range hostile {
		t.Run(fmt.Sprintf("%q comes back unchanged", s), func(t *testing.T) {
			rows, err := engine.Query(ctx, chsql.Statement{
				SQL:    "SELECT {s:String} AS s, length({s:String}) AS n, {a:Array(String)} AS a",
				Params: map[string]any{"s": s, "a": []string{s, "x" + s}},
			})
			if err != nil {
				t.Fatal(err)
			}
			got := rows.Data[0]
			if got[0] != s || got[1] != uint64(len(s)) || !reflect.DeepEqual(got[2], []any{s, "x" + s}) {
				t.Fatalf("got %#v", got)
			}
		})
	}
	rows, err := engine.Query(ctx, chsql.Statement{SQL: "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'events'"})
	if err != nil {
		t.Fatal(err)
	}
	if rows.Data[0][0] != uint64(1) {
		t.Fatal("the events table is gone")
	}
}

func TestContextCancellationStopsALongQueryWithinASecond(t *testing.T) {
	testContextStopsLongQuery(t, engine)
}

// testContextStopsLongQuery checks, on either backend, that a context
// cancelled or past its deadline stops a long query within a second with
// the context's error, and that the engine answers afterwards.
func testContextStopsLongQuery(t *testing.T, e Engine) {
	t.Helper()
	for _, how := range []string{"cancel", "deadline"} {
		t.Run("by "+how, func(t *testing.T) {
			var ctx context.Context
			var cancel context.CancelFunc
			if how == "cancel" {
				ctx, cancel = context.WithCancel(context.Background())
				time.AfterFunc(300*time.Millisecond, cancel)
			} else {
				ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
			}
			defer cancel()
			start := time.Now()
			_, err := e.Query(ctx, chsql.Statement{SQL: "SELECT count() FROM numbers(1e11) WHERE NOT ignore(sipHash64(number))"})
			took := time.Since(start)
			if err == nil {
				t.Fatal("query finished instead of being stopped")
			}
			want := context.Canceled
			if how == "deadline" {
				want = context.DeadlineExceeded
			}
			if !errors.Is(err, want) {
				t.Fatalf("err = %v, want %v", err, want)
			}
			if took > 1300*time.Millisecond {
				t.Fatalf("stopped after %v, want within a second of the cancel", took)
			}
		})
	}
	// Connections are usable after the kills.
	if err := e.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCancelByQueryID(t *testing.T) {
	testCancelByQueryID(t, engine, "cancel-me-1")
}

// testCancelByQueryID checks Engine.Cancel on either backend: a long query
// running under id stops with QUERY_WAS_CANCELLED, and ids under which
// nothing runs, or that are not valid ids, report false without error.
func testCancelByQueryID(t *testing.T, e Engine, id string) {
	t.Helper()
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := e.Query(WithQueryID(ctx, id), chsql.Statement{SQL: "SELECT count() FROM numbers(1e11) WHERE NOT ignore(sipHash64(number))"})
		errc <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, err := e.Cancel(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the query never showed up to be cancelled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-errc:
		code, ok := ErrorCode(err)
		if !ok || code != CodeQueryWasCancelled {
			t.Fatalf("err = %v, want code %d", err, CodeQueryWasCancelled)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("cancelled query still running after 2s")
	}
	for _, other := range []string{"nothing-runs-under-this-id", "bad id'; --", ""} {
		if ok, err := e.Cancel(ctx, other); err != nil || ok {
			t.Fatalf("Cancel(%q) = %v, %v; want false, nil", other, ok, err)
		}
	}
}

func TestSixteenConcurrentQueriesAllGetTheirOwnAnswer(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 16*20)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				n := int64(g*1000 + i)
				rows, err := engine.Query(context.Background(), chsql.Statement{
					SQL:    "SELECT sum(number) AS s, {tag:String} AS tag FROM numbers({n:UInt64})",
					Params: map[string]any{"n": n, "tag": fmt.Sprintf("g%d-%d", g, i)},
				})
				if err != nil {
					errs <- err
					return
				}
				want := uint64(n * (n - 1) / 2)
				if rows.Data[0][0] != want || rows.Data[0][1] != fmt.Sprintf("g%d-%d", g, i) {
					errs <- fmt.Errorf("goroutine %d query %d: got %v, want %d", g, i, rows.Data[0], want)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestMigrationsRunTwiceAreANoOp(t *testing.T) {
	applied, err := Migrate(context.Background(), engine)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 0 {
		t.Fatalf("second run applied %v", applied)
	}
}

func TestInsertEventsWritesAllOrNothing(t *testing.T) {
	ctx := context.Background()
	team := time.Now().UnixNano()
	ts := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)
	events := []Event{
		{UUID: uuid.New(), TeamID: team, Event: "$pageview", DistinctID: "d1", PersonID: uuid.New(), Timestamp: ts,
			Properties: `{"$current_url":"https://x.test/a?q='; DROP TABLE events; --","$browser":"Firefox"}`, CreatedAt: ts},
		{UUID: uuid.New(), TeamID: team, Event: "signup\t'\"", DistinctID: "d2\n", PersonID: uuid.New(), Timestamp: ts, Properties: `{}`, CreatedAt: ts},
	}
	if err := engine.InsertEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	rows, err := engine.Query(ctx, chsql.Statement{
		SQL:    "SELECT event, distinct_id, timestamp, mat_current_url, mat_browser FROM events WHERE team_id = {team:Int64} ORDER BY distinct_id",
		Params: map[string]any{"team": team},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"$pageview", "d1", ts, "https://x.test/a?q='; DROP TABLE events; --", "Firefox"},
		{"signup\t'\"", "d2\n", ts, "", ""},
	}
	if !reflect.DeepEqual(rows.Data, want) {
		t.Fatalf("got %#v\nwant %#v", rows.Data, want)
	}
}

func TestValueTypesAreNormalized(t *testing.T) {
	rows, err := engine.Query(context.Background(), chsql.Statement{SQL: `SELECT toInt8(-1), toUInt64(18446744073709551615),
		toFloat32(1.5), true, 'x', toDate('2026-01-02'), toDateTime64('2026-01-02 03:04:05.123456', 6, 'Asia/Tokyo'),
		NULL::Nullable(String), [1, 2], map('a', 1), tuple(1, 'b'), CAST((1, 'b'), 'Tuple(n UInt8, s String)'),
		toLowCardinality('lc'), toUUID('00000000-0000-0000-0000-000000000001'), nan`})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(-1), uint64(18446744073709551615), 1.5, true, "x",
		time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 18, 4, 5, 123456000, time.UTC),
		nil, []any{uint64(1), uint64(2)}, map[string]any{"a": uint64(1)}, []any{uint64(1), "b"}, []any{uint64(1), "b"},
		"lc", "00000000-0000-0000-0000-000000000001"}
	got := rows.Data[0]
	if !reflect.DeepEqual(got[:len(want)], want) {
		t.Fatalf("got  %#v\nwant %#v", got[:len(want)], want)
	}
	if f, ok := got[len(want)].(float64); !ok || f == f {
		t.Fatalf("nan decoded as %#v", got[len(want)])
	}
}

// TestMaintenanceIsNotBoundByTheQueryTimeout: a migration filling a table
// from every event may outlast Config.QueryTimeout (the sessions table
// took over ten minutes on 100 million events under load); its own
// deadline still holds.
func TestMaintenanceIsNotBoundByTheQueryTimeout(t *testing.T) {
	ctx, cancel := withTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		t.Fatal("an ordinary statement has no deadline")
	}
	ctx, cancel = withTimeout(Maintenance(context.Background()), time.Millisecond)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		t.Fatalf("maintenance got the query timeout: deadline %v", dl)
	}
	own, stop := context.WithTimeout(Maintenance(context.Background()), time.Hour)
	defer stop()
	ctx, cancel = withTimeout(own, time.Millisecond)
	defer cancel()
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) < 59*time.Minute {
		t.Fatalf("maintenance lost its own deadline: %v %v", dl, ok)
	}
}
