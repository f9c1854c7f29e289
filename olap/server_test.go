package olap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/insightd/insightd/querybuilder/chsql"
)

const (
	serverImage = "clickhouse/clickhouse-server:25.8"
	noDocker    = "no Docker engine reachable: the ClickHouse server backend tests need one (docker-compose / testcontainers)"
)

// requireDocker skips the test unless a Docker engine answers a ping
// within a few seconds. The check runs aside, with panics recovered,
// because testcontainers' engine discovery may block or panic when there
// is no engine at all.
func requireDocker(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("docker client: %v", r)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		cli, err := testcontainers.NewDockerClientWithOpts(ctx)
		if err != nil {
			done <- err
			return
		}
		defer cli.Close()
		_, err = cli.Ping(ctx, client.PingOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Skipf("%s (%v)", noDocker, err)
		}
	case <-time.After(4 * time.Second):
		t.Skip(noDocker + " (the engine did not answer within 4s)")
	}
}

// startServer runs ClickHouse in a container for the test and returns the
// server backend connected to it, with the events table created. The
// server runs in a time zone far from UTC so that a backend which failed
// to pin the session time zone would read DateTime values differently.
func startServer(t *testing.T) *Server {
	t.Helper()
	requireDocker(t)
	ctx := context.Background()
	ctr, err := testcontainers.Run(ctx, serverImage,
		testcontainers.WithExposedPorts("9000/tcp", "8123/tcp"),
		testcontainers.WithEnv(map[string]string{
			"CLICKHOUSE_DB":                        "insightd",
			"CLICKHOUSE_USER":                      "insightd",
			"CLICKHOUSE_PASSWORD":                  "insightd",
			"CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT": "1",
			"TZ":                                   "Asia/Kathmandu",
		}),
		// The image's entrypoint first runs a private server for its init
		// scripts; the mapped HTTP port answers only once the real one runs.
		testcontainers.WithWaitStrategy(wait.ForHTTP("/ping").WithPort("8123/tcp").WithStartupTimeout(3*time.Minute)),
	)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start %s: %v", serverImage, err)
	}
	endpoint, err := ctr.PortEndpoint(ctx, "9000/tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{ClickHouseURL: "clickhouse://insightd:insightd@" + endpoint + "/insightd", QueryTimeout: time.Minute}
	var s *Server
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err = OpenServer(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("open the server backend: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Cleanup(func() { _ = s.Close() })
	for _, stmt := range eventsTableSQL(t) {
		if err := s.Exec(ctx, chsql.Statement{SQL: stmt}); err != nil {
			t.Fatalf("create events table: %v", err)
		}
	}
	return s
}

// eventsTableSQL is the project's events migration when it exists, so the
// tests write to the real schema, and a minimal table otherwise.
func eventsTableSQL(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../migrations/clickhouse/0001_events.sql")
	if errors.Is(err, os.ErrNotExist) {
		return []string{`CREATE TABLE IF NOT EXISTS events
(
    uuid UUID,
    team_id Int64,
    event LowCardinality(String),
    distinct_id String,
    person_id UUID,
    timestamp DateTime64(6, 'UTC'),
    properties String,
    created_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))`}
	}
	if err != nil {
		t.Fatal(err)
	}
	// One statement per query: split where a line ends a statement.
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = appendStatement(out, cur.String())
			cur.Reset()
		}
	}
	return appendStatement(out, cur.String())
}

func appendStatement(out []string, s string) []string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ";")
	for _, line := range strings.Split(s, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "--") {
			return append(out, s)
		}
	}
	return out
}

// serverHostile are strings that would change a statement if pasted into
// it, or that parameters' escaped text form and clickhouse-go's quoting of
// it on the wire treat specially.
var serverHostile = []string{
	"'; DROP TABLE events; --",
	`\'; DROP TABLE events; --`,
	"tab\there", "new\nline", "cr\rhere", `back\slash`, `trailing\`, `\N`, `\\N`, "nul\x00byte",
	"{s:String}", "`backtick`", `"double"`, "😀 ünïcödé", "",
}

// serverTypeCases are expressions, the type name the server gives them
// and the Go value Rows documents for it.
var serverTypeCases = []struct {
	expr, typ string
	want      any
}{
	{"toInt8(1)", "Int8", int64(1)},
	{"toUInt64(2)", "UInt64", uint64(2)},
	{"1.5", "Float64", 1.5},
	{"toFloat32(1.1)", "Float32", 1.1},
	{"true", "Bool", true},
	{"'x'", "String", "x"},
	{"toFixedString('ab', 2)", "FixedString(2)", "ab"},
	{"toLowCardinality('lc')", "LowCardinality(String)", "lc"},
	{"CAST('b', 'Enum8(\\'a\\' = 1, \\'b\\' = 2)')", "Enum8('a' = 1, 'b' = 2)", "b"},
	{"toDateTime64('2026-01-02 03:04:05.123456', 6, 'UTC')", "DateTime64(6, 'UTC')", time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)},
	// Without a zone in the text the session zone applies: UTC, not the server's.
	{"toDateTime('2026-01-02 03:04:05')", "DateTime", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
	{"toStartOfDay(toDateTime('2026-01-02 03:04:05'))", "DateTime", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
	{"toDate('2026-01-02')", "Date", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
	{"toDate32('1950-06-07')", "Date32", time.Date(1950, 6, 7, 0, 0, 0, 0, time.UTC)},
	{"NULL::Nullable(String)", "Nullable(String)", nil},
	{"NULL", "Nullable(Nothing)", nil},
	{"toNullable(7)", "Nullable(UInt8)", uint64(7)},
	{"[1,2]", "Array(UInt8)", []any{uint64(1), uint64(2)}},
	{"[NULL, 'x']", "Array(Nullable(String))", []any{nil, "x"}},
	{"map('a',1)", "Map(String, UInt8)", map[string]any{"a": uint64(1)}},
	{"tuple(1, 'a')", "Tuple(UInt8, String)", []any{uint64(1), "a"}},
	{"CAST((1, 'z'), 'Tuple(a UInt8, b String)')", "Tuple(a UInt8, b String)", []any{uint64(1), "z"}},
	{"map(1, [toDate('2026-01-02')])", "Map(UInt8, Array(Date))", map[string]any{"1": []any{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}}},
	{"toIntervalSecond(5)", "IntervalSecond", "5"},
	{"toUUID('6f1b2a3c-1d2e-4f50-8a9b-0c1d2e3f4a5b')", "UUID", "6f1b2a3c-1d2e-4f50-8a9b-0c1d2e3f4a5b"},
	{"toIPv4('10.1.2.3')", "IPv4", "10.1.2.3"},
	{"toIPv6('2001:db8::1')", "IPv6", "2001:db8::1"},
	{"toIPv6('::ffff:1.2.3.4')", "IPv6", "::ffff:1.2.3.4"},
	{"toDecimal64('1.25', 2)", "Decimal(18, 2)", 1.25},
	{"toInt128('-170141183460469231731687303715884105728')", "Int128", "-170141183460469231731687303715884105728"},
	{"toUInt256(5)", "UInt256", "5"},
}

func TestServerBackend(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()

	t.Run("names itself clickhouse and answers a ping", func(t *testing.T) {
		if s.Backend() != "clickhouse" {
			t.Fatalf("Backend() = %q", s.Backend())
		}
		if err := s.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("hostile string parameters come back unchanged", func(t *testing.T) {
		for _, str := range serverHostile {
			t.Run(fmt.Sprintf("%q", str), func(t *testing.T) {
				rows, err := s.Query(ctx, chsql.Statement{
					SQL:    "SELECT {s:String} AS s, length({s:String}) AS n, {a:Array(String)} AS a",
					Params: map[string]any{"s": str, "a": []string{str, "x" + str}},
				})
				if err != nil {
					t.Fatal(err)
				}
				want := []any{str, uint64(len(str)), []any{str, "x" + str}}
				if len(rows.Data) != 1 || !reflect.DeepEqual(rows.Data[0], want) {
					t.Fatalf("got %#v, want %#v", rows.Data, want)
				}
			})
		}
		rows, err := s.Query(ctx, chsql.Statement{SQL: "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'events'"})
		if err != nil {
			t.Fatal(err)
		}
		if rows.Data[0][0] != uint64(1) {
			t.Fatal("the events table is gone")
		}
	})

	t.Run("every parameter type binds", func(t *testing.T) {
		ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
		rows, err := s.Query(ctx, chsql.Statement{
			SQL: "SELECT {n:Int64} + 1 AS n, {t:DateTime64(6, 'UTC')} AS t, {a:Array(String)} AS a, length({a:Array(String)}) AS len, " +
				"has({a:Array(String)}, 'b''c') AS has, {ids:Array(Int64)} AS ids, {f:Float64} AS f, {b:Bool} AS b, {x:Nullable(String)} AS x",
			Params: map[string]any{"n": 41, "t": ts, "a": []string{"a", "b'c", "d\te", `f\g`}, "ids": []int64{-1, 2},
				"f": 0.25, "b": true, "x": nil},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []any{int64(42), ts, []any{"a", "b'c", "d\te", `f\g`}, uint64(4), true, []any{int64(-1), int64(2)}, 0.25, true, nil}
		if len(rows.Data) != 1 || !reflect.DeepEqual(rows.Data[0], want) {
			t.Fatalf("got %#v\nwant %#v", rows.Data, want)
		}
		if rows.Columns[0] != (Column{Name: "n", Type: "Int64"}) {
			t.Errorf("first column %+v", rows.Columns[0])
		}
	})

	t.Run("values come back as the Go types Rows documents", func(t *testing.T) {
		cases := serverTypeCases
		exprs := make([]string, len(cases))
		for i, c := range cases {
			exprs[i] = fmt.Sprintf("%s AS c%d", c.expr, i)
		}
		rows, err := s.Query(ctx, chsql.Statement{SQL: "SELECT " + strings.Join(exprs, ", ")})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows.Data) != 1 || len(rows.Data[0]) != len(cases) {
			t.Fatalf("got %#v", rows.Data)
		}
		for i, c := range cases {
			if got := rows.Columns[i].Type; got != c.typ {
				t.Errorf("%s: type %q, want %q", c.expr, got, c.typ)
			}
			if got := rows.Data[0][i]; !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: got %#v (%T), want %#v (%T)", c.expr, got, got, c.want, c.want)
			}
		}
	})

	t.Run("a context that ends stops a long query within a second", func(t *testing.T) {
		testContextStopsLongQuery(t, s)
	})

	t.Run("Cancel stops the query running under an id", func(t *testing.T) {
		id := "server-cancel-" + strings.ReplaceAll(uuid.NewString(), "-", "")
		testCancelByQueryID(t, s, id)
		serverProcessesGone(t, s, id, time.Now())
	})

	// The driver's cancel packet alone leaves the query running on the
	// server: the backend kills it by its id.
	for _, how := range []string{"the caller hangs up", "the query timeout passes"} {
		t.Run("the query is gone from the server's processes within a second when "+how, func(t *testing.T) {
			id := "server-stop-" + strings.ReplaceAll(uuid.NewString(), "-", "")
			var ctx context.Context
			var cancel context.CancelFunc
			if how == "the caller hangs up" {
				ctx, cancel = context.WithCancel(WithQueryID(context.Background(), id))
				time.AfterFunc(300*time.Millisecond, cancel)
			} else {
				ctx, cancel = context.WithTimeout(WithQueryID(context.Background(), id), 300*time.Millisecond)
			}
			defer cancel()
			_, err := s.Query(WithProject(ctx, 1), chsql.Statement{
				SQL: "SELECT count() FROM numbers(1e12) WHERE NOT ignore(sipHash64(number)) SETTINGS max_execution_time = 600"})
			if err == nil {
				t.Fatal("the endless query finished")
			}
			serverProcessesGone(t, s, id, time.Now())
		})
	}

	t.Run("errors carry their ClickHouse code", func(t *testing.T) {
		err := s.Exec(ctx, chsql.Statement{SQL: "SELEC 1"})
		if code, ok := ErrorCode(err); !ok || code != CodeSyntaxError {
			t.Fatalf("err = %v, want code %d", err, CodeSyntaxError)
		}
		_, err = s.Query(ctx, chsql.Statement{SQL: "SELECT {n:UInt8}", Params: map[string]any{"n": "not a number"}})
		if code, ok := ErrorCode(err); !ok || code != CodeBadQueryParameter {
			t.Fatalf("err = %v, want code %d", err, CodeBadQueryParameter)
		}
	})

	t.Run("InsertEvents writes every event and a cancelled insert writes none", func(t *testing.T) {
		team := time.Now().UnixNano()
		ts := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)
		events := []Event{
			{UUID: uuid.New(), TeamID: team, Event: "$pageview", DistinctID: "d1", PersonID: uuid.New(), Timestamp: ts,
				Properties: `{"$current_url":"https://x.test/a?q='; DROP TABLE events; --","$browser":"Firefox"}`, CreatedAt: ts},
			{UUID: uuid.New(), TeamID: team, Event: "signup\t'\"", DistinctID: "d2\n", PersonID: uuid.New(),
				Timestamp: ts.In(time.FixedZone("X", 3600)), Properties: `{}`, CreatedAt: ts},
			{UUID: uuid.New(), TeamID: team, Event: "$pageview", DistinctID: "d3", PersonID: uuid.New(), Timestamp: ts, Properties: `{}`, CreatedAt: ts},
		}
		if err := s.InsertEvents(ctx, events); err != nil {
			t.Fatal(err)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.InsertEvents(cancelled, []Event{{UUID: uuid.New(), TeamID: team, Event: "late", Timestamp: ts, CreatedAt: ts}}); err == nil {
			t.Fatal("an insert with a cancelled context succeeded")
		}
		rows, err := s.Query(ctx, chsql.Statement{
			SQL:    "SELECT count() AS n, arraySort(groupArray(distinct_id)) AS ids FROM events WHERE team_id = {team:Int64}",
			Params: map[string]any{"team": team},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []any{uint64(3), []any{"d1", "d2\n", "d3"}}
		if !reflect.DeepEqual(rows.Data[0], want) {
			t.Fatalf("got %#v, want %#v", rows.Data[0], want)
		}
		rows, err = s.Query(ctx, chsql.Statement{
			SQL:    "SELECT event, timestamp FROM events WHERE team_id = {team:Int64} AND distinct_id = {d:String}",
			Params: map[string]any{"team": team, "d": "d2\n"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows.Data) != 1 || rows.Data[0][0] != "signup\t'\"" || rows.Data[0][1] != ts {
			t.Fatalf("got %#v", rows.Data)
		}
		if err := s.InsertEvents(ctx, nil); err != nil {
			t.Fatalf("an empty insert: %v", err)
		}
	})

	t.Run("Close can be called twice", func(t *testing.T) {
		// Last: the other subtests share the connection pool.
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestServerBackendRefusesABadURL(t *testing.T) {
	_, err := OpenServer(context.Background(), Config{ClickHouseURL: "clickhouse://user:s3cret@%zz/db", QueryTimeout: time.Second},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		t.Fatal("a malformed URL was accepted")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("the error shows the password: %v", err)
	}
}

// serverProcessesGone checks that no statement of query id is listed in
// the server's system.processes within a second of since.
func serverProcessesGone(t *testing.T, s *Server, id string, since time.Time) {
	t.Helper()
	for {
		rows, err := s.Query(context.Background(), chsql.Statement{
			SQL: "SELECT count() FROM system.processes WHERE query_id = {id:String}", Params: map[string]any{"id": id}})
		if err != nil {
			t.Fatal(err)
		}
		if rows.Data[0][0] == uint64(0) {
			return
		}
		if time.Since(since) > time.Second {
			t.Fatalf("query %s still in system.processes %s after the stop", id, time.Since(since).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
