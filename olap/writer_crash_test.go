package olap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// The crash test runs the writer in child processes of the test binary
// (chDB opens one data directory per process, and the crash must kill a
// whole process): TestMain hands over to crashChild when this variable
// names a directory.
const crashChildEnv = "INSIGHTD_TEST_CRASH_CHILD"

// crashReport is what the resending child prints.
type crashReport struct {
	Stored, Duplicates int
	Rows, Distinct     int64
	Err                string
}

// crashChild runs one step in the directory named by the variable, as
// the mode says: "write" writes the events and dies the instant their
// insert commits; "resend" starts a writer (its recovery) and sends the
// same events again, then reports what was stored. It returns the exit
// status.
func crashChild(dir string) int {
	lib := os.Getenv("INSIGHTD_CHDB_LIB")
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e, err := OpenEmbedded(Config{ChDBLib: lib, DataDir: filepath.Join(dir, "olap"), QueryTimeout: time.Minute, Connections: 2}, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := Migrate(context.Background(), e); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, err := os.ReadFile(filepath.Join(dir, "events.json"))
	var events []Capture
	if err == nil {
		err = json.Unmarshal(b, &events)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := WriterConfig{Linger: time.Millisecond}
	if os.Getenv("INSIGHTD_TEST_CRASH_MODE") == "write" {
		cfg.AfterEventsInsert = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	}
	w := NewWriter(e, log, cfg)
	res := w.Write(context.Background(), events)
	w.Close()
	rep := crashReport{Stored: res.Stored, Duplicates: res.Duplicates}
	if res.Err != nil {
		rep.Err = res.Err.Error()
	}
	ids := make([]string, len(events))
	for i, c := range events {
		ids[i] = c.UUID.String()
	}
	// No FINAL, no waiting: what an analysis would count right now.
	rows, err := e.Query(context.Background(), chsql.Statement{
		SQL:    "SELECT count(), uniqExact(uuid) FROM events WHERE team_id = {team:Int64} AND toString(uuid) IN {ids:Array(String)}",
		Params: map[string]any{"team": events[0].TeamID, "ids": ids},
	})
	if err != nil {
		rep.Err += err.Error()
	} else {
		rep.Rows, rep.Distinct = int64(rows.Data[0][0].(uint64)), int64(rows.Data[0][1].(uint64))
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	e.Close()
	return 0
}

// runCrashChild runs the test binary as a child in mode.
func runCrashChild(t *testing.T, dir, mode string) (*os.ProcessState, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, "INSIGHTD_TEST_CRASH_MODE="+mode)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s child: %v", mode, err)
	}
	if errOut.Len() > 0 {
		t.Logf("%s child stderr: %s", mode, errOut.String())
	}
	return cmd.ProcessState, out.String()
}

// A process killed the instant its events' insert commits, before it
// records their uuids: the client never got an answer and sends the same
// events again to the restarted server, which must count each once, at
// once (no merge, no FINAL).
func TestAKillAtTheInstantAnInsertCommitsCountsEveryResentEventOnce(t *testing.T) {
	dir := t.TempDir()
	team := newTeam()
	var events []Capture
	for i := range 300 {
		c := capture(team, "crash", fmt.Sprintf("user-%d", i%40), t0.Add(time.Duration(i)*time.Minute), nil)
		c.ClientUUID = true
		// Two months: the insert writes two parts, and the kill may land
		// between them in a real crash; the hook is after both.
		if i%2 == 0 {
			c.Timestamp = c.Timestamp.AddDate(0, 1, 0)
		}
		events = append(events, c)
	}
	b, _ := json.Marshal(events)
	if err := os.WriteFile(filepath.Join(dir, "events.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	state, out := runCrashChild(t, dir, "write")
	if ws, ok := state.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the writing child was not killed: %v, output %q", state, out)
	}
	_, out = runCrashChild(t, dir, "resend")
	var rep crashReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("resend child printed %q: %v", out, err)
	}
	if rep.Err != "" || rep.Stored != 0 || rep.Duplicates != len(events) {
		t.Fatalf("resend: %+v; want all %d recognized as already stored", rep, len(events))
	}
	if rep.Rows != int64(len(events)) || rep.Distinct != int64(len(events)) {
		t.Fatalf("after the resend %d rows of %d uuids; want %d of each", rep.Rows, rep.Distinct, len(events))
	}
}

// flakyUUIDs fails every record of event uuids, as a store that refuses
// that insert would, and passes everything else to the real engine.
type flakyUUIDs struct {
	Engine
	fail atomic.Bool
}

func (f *flakyUUIDs) Insert(ctx context.Context, t Table, rows [][]any) error {
	if f.fail.Load() && t.name == f.Schema().EventUUIDs {
		return errors.New("event_uuids refused the insert")
	}
	return f.Engine.Insert(ctx, t, rows)
}

// When recording uuids fails at run time, the events are stored and
// acknowledged; the writer records their uuids from the events before
// the next batch, so a resend is still recognized.
func TestUUIDsThatCouldNotBeRecordedAreRecoveredBeforeTheNextBatch(t *testing.T) {
	f := &flakyUUIDs{Engine: engine}
	f.fail.Store(true)
	w := NewWriter(f, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{Linger: time.Millisecond})
	defer w.Close()
	team := newTeam()
	var events []Capture
	for i := range 50 {
		c := capture(team, "flaky", fmt.Sprintf("u%d", i), t0.Add(time.Duration(i)*time.Second), nil)
		c.ClientUUID = true
		events = append(events, c)
	}
	if res := w.Write(context.Background(), events); res.Err != nil || res.Stored != len(events) {
		t.Fatalf("first write: %+v", res)
	}
	f.fail.Store(false)
	// A client that never got the answer sends them again, with one new.
	extra := capture(team, "flaky", "new", t0, nil)
	extra.ClientUUID = true
	res := w.Write(context.Background(), append(append([]Capture{}, events...), extra))
	if res.Err != nil || res.Stored != 1 || res.Duplicates != len(events) {
		t.Fatalf("resend: %+v; want 1 stored, %d duplicates", res, len(events))
	}
	if n := eventCount(t, team); n != int64(len(events)+1) {
		t.Fatalf("%d rows, want %d", n, len(events)+1)
	}
}

// oddRows answers the writer's distinct id lookups with rows of a shape
// it does not expect, as a changed schema or driver might.
type oddRows struct{ Engine }

func (o oddRows) Query(ctx context.Context, stmt chsql.Statement) (*Rows, error) {
	if strings.Contains(stmt.SQL, "person_distinct_id") {
		return &Rows{Data: [][]any{{"someone", "not-a-uuid"}, {"other", 42}}}, nil
	}
	return o.Engine.Query(ctx, stmt)
}

// A row the writer cannot read fails that write with an error; the
// process goes on, and the next writes work.
func TestRowsTheWriterCannotReadFailTheWriteNotTheProcess(t *testing.T) {
	w := NewWriter(oddRows{engine}, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{Linger: time.Millisecond})
	defer w.Close()
	team := newTeam()
	res := w.Write(context.Background(), []Capture{capture(team, "odd", "someone", t0, nil)})
	if res.Err == nil {
		t.Fatalf("a write whose lookup returned unreadable rows: %+v, want an error", res)
	}
	good := newTestWriter(t)
	mustWrite(t, good, capture(team, "fine", "someone", t0, nil))
}

// panicky panics in the middle of the writer's person resolution.
type panicky struct{ Engine }

func (p panicky) Query(ctx context.Context, stmt chsql.Statement) (*Rows, error) {
	if strings.Contains(stmt.SQL, "person_distinct_id") {
		panic("a bug in a lookup")
	}
	return p.Engine.Query(ctx, stmt)
}

func TestAPanicInTheWriterFailsTheWriteNotTheProcess(t *testing.T) {
	w := NewWriter(panicky{engine}, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{Linger: time.Millisecond})
	defer w.Close()
	res := w.Write(context.Background(), []Capture{capture(newTeam(), "odd", "someone", t0, nil)})
	if res.Err == nil || !strings.Contains(res.Err.Error(), "a bug in a lookup") {
		t.Fatalf("a write whose preparation panicked: %+v, want its error", res)
	}
}
