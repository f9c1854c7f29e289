package olap

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// poisonable answers the writer's distinct id lookups with a row it
// cannot read (a person id that is no uuid) while poisoned is set.
type poisonable struct {
	Engine
	poisoned atomic.Bool
}

func (p *poisonable) Query(ctx context.Context, stmt chsql.Statement) (*Rows, error) {
	if p.poisoned.Load() && strings.Contains(stmt.SQL, p.Schema().DistinctIDs) {
		return &Rows{Data: [][]any{{"someone", "not-a-uuid"}}}, nil
	}
	return p.Engine.Query(ctx, stmt)
}

// A row the writer cannot handle fails its own flush: every request
// waiting on it gets the error, nothing of theirs is stored, and the same
// writer stores the next batch.
func TestARowTheWriterCannotHandleFailsItsFlushAndTheSameWriterGoesOn(t *testing.T) {
	e := &poisonable{Engine: engine}
	// A linger long enough that the waiting requests share a flush.
	w := NewWriter(e, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{Linger: 100 * time.Millisecond})
	defer w.Close()
	team := newTeam()
	e.poisoned.Store(true)
	const waiting = 6
	results := make([]WriteResult, waiting)
	var wg sync.WaitGroup
	for i := range waiting {
		wg.Go(func() {
			results[i] = w.Write(context.Background(), []Capture{capture(team, "poisoned", fmt.Sprintf("d%d", i), t0, nil)})
		})
	}
	wg.Wait()
	for i, res := range results {
		if res.Err == nil || res.Stored != 0 {
			t.Errorf("waiting request %d: %+v; want the flush's error and nothing stored", i, res)
		}
	}
	if n := eventCount(t, team); n != 0 {
		t.Fatalf("%d events of the failed flush were stored", n)
	}

	e.poisoned.Store(false)
	var next []Capture
	for i := range 3 {
		next = append(next, capture(team, "after", fmt.Sprintf("d%d", i), t0.Add(time.Second), nil))
	}
	if res := w.Write(context.Background(), next); res.Err != nil || res.Stored != len(next) {
		t.Fatalf("the same writer's next batch: %+v", res)
	}
	if n := eventCount(t, team); n != int64(len(next)) {
		t.Fatalf("%d events stored after the failed flush, want %d", n, len(next))
	}
}
