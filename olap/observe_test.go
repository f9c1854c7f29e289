package olap

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// recorder is a StatementObserver and a WriterObserver keeping what it
// was told.
type recorder struct {
	mu         sync.Mutex
	statements int
	rows       uint64
	flushed    int
	queue      func() int64
}

func (r *recorder) ObserveStatement(rows, _ uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statements++
	r.rows += rows
}

func (r *recorder) ObserveFlush(events int, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushed += events
}

func (r *recorder) WatchWriterQueue(fn func() int64) { r.queue = fn }

// The engine reports what its statements read to the observer of the
// context they run under, and to none without one.
func TestStatementsReportWhatTheyReadToTheContextsObserver(t *testing.T) {
	stmt := chsql.Statement{SQL: "SELECT count() FROM numbers(1000)"}
	t.Run("a statement under an observer reports the rows it read", func(t *testing.T) {
		r := &recorder{}
		if _, err := engine.Query(WithStatementObserver(context.Background(), r), stmt); err != nil {
			t.Fatal(err)
		}
		if err := engine.Exec(WithStatementObserver(context.Background(), r), stmt); err != nil {
			t.Fatal(err)
		}
		if r.statements != 2 || r.rows != 2000 {
			t.Fatalf("observed %d statements reading %d rows, want 2 reading 2000", r.statements, r.rows)
		}
	})
	t.Run("without an observer the context is left as it is", func(t *testing.T) {
		ctx := context.Background()
		if got := WithStatementObserver(ctx, nil); got != ctx {
			t.Fatal("a nil observer wrapped the context")
		}
		if statementObserver(ctx) != nil {
			t.Fatal("an observer came out of a context without one")
		}
		if _, err := engine.Query(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	})
}

// The writer reports each flush's events and its queue to its observer.
func TestTheWriterReportsItsFlushesAndQueue(t *testing.T) {
	r := &recorder{}
	w := NewWriter(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{Linger: time.Millisecond, Metrics: r})
	t.Cleanup(w.Close)
	team := newTeam()
	mustWrite(t, w, capture(team, "a", "d1", t0, nil), capture(team, "b", "d2", t0, nil))
	r.mu.Lock()
	flushed := r.flushed
	r.mu.Unlock()
	if flushed != 2 {
		t.Fatalf("flushes reported %d events, want 2", flushed)
	}
	if r.queue == nil || r.queue() != 0 {
		t.Fatal("the writer's queue is not watched, or holds events once written")
	}
}
