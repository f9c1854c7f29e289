package olap

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestAProjectRunsAtMostItsShareAndWaitsThenIsRefused(t *testing.T) {
	f := newFairShare(2, 200*time.Millisecond)
	ctx := context.Background()
	var releases []func()
	for range 2 {
		r, _, err := f.acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	// Another project is not held up by the first one's analyses.
	other, _, err := f.acquire(ctx, 2)
	if err != nil {
		t.Fatalf("another project: %v", err)
	}
	other()
	// A third analysis of project 1 waits, and gets the slot freed.
	go func() { time.Sleep(50 * time.Millisecond); releases[0]() }()
	start := time.Now()
	r, _, err := f.acquire(ctx, 1)
	if err != nil || time.Since(start) < 40*time.Millisecond {
		t.Fatalf("the waiting analysis: %v after %s", err, time.Since(start))
	}
	// A fourth waits the queueing time and is refused.
	start = time.Now()
	_, _, err = f.acquire(ctx, 1)
	var te *ThrottledError
	if !errors.As(err, &te) || !errors.Is(err, ErrThrottled) || te.RetryAfter <= 0 {
		t.Fatalf("past the queueing time: %v", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > time.Second {
		t.Fatalf("refused after %s, want the 200ms queueing time", d)
	}
	// A caller that leaves stops waiting at once.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := f.acquire(cctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	r()
	releases[1]()
}

// A project with its slot still waits at most the rest of the queueing
// time for a connection: two projects holding every connection refuse a
// third in time instead of keeping it until the query timeout.
func TestTheWaitForAConnectionEndsWithTheQueueingTime(t *testing.T) {
	f := newFairShare(2, 200*time.Millisecond)
	ctx := context.Background()
	pool := make(chan int, 1)
	release, deadline, err := f.acquire(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	start := time.Now()
	_, err = waitFor(ctx, f, 3, deadline, pool)
	var te *ThrottledError
	if !errors.As(err, &te) || !te.EngineBusy || te.RetryAfter <= 0 || te.Running != 1 {
		t.Fatalf("no connection free: %v (%+v)", err, te)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > time.Second {
		t.Fatalf("refused after %s, want the 200ms queueing time", d)
	}
	go func() { time.Sleep(50 * time.Millisecond); pool <- 7 }()
	if v, err := waitFor(ctx, f, 3, time.Now().Add(time.Second), pool); err != nil || v != 7 {
		t.Fatalf("a connection freed in time: %v, %v", v, err)
	}
}

func TestACancelledIDStopsItsQueuedStatementAndRefusesLaterOnes(t *testing.T) {
	cs := newCalls()
	ctx := context.Background()
	t.Run("a queued statement's wait ends with the engine's cancelled code", func(t *testing.T) {
		qctx, c, err := cs.admit(ctx, "q1")
		if err != nil {
			t.Fatal(err)
		}
		running, stopped := cs.cancel("q1")
		if !stopped || len(running) != 0 {
			t.Fatalf("cancel: %v running, stopped %v", running, stopped)
		}
		<-qctx.Done()
		if code, ok := ErrorCode(context.Cause(qctx)); !ok || code != CodeQueryWasCancelled {
			t.Fatalf("cause %v", context.Cause(qctx))
		}
		if err := cs.start(c); err == nil {
			t.Fatal("a cancelled statement started")
		}
		cs.finish(c)
	})
	t.Run("a running statement is handed back to be killed", func(t *testing.T) {
		_, c, err := cs.admit(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.start(c); err != nil {
			t.Fatal(err)
		}
		running, _ := cs.cancel("r1")
		if len(running) != 1 || running[0] != c {
			t.Fatalf("running %v", running)
		}
		cs.finish(c)
		select {
		case <-c.done:
		default:
			t.Fatal("done not closed")
		}
	})
	t.Run("an id cancelled before its statement arrives refuses it, and then reads as cancelled", func(t *testing.T) {
		if _, stopped := cs.cancel("early"); stopped {
			t.Fatal("nothing was stopped yet")
		}
		_, _, err := cs.admit(ctx, "early")
		if code, ok := ErrorCode(err); !ok || code != CodeQueryWasCancelled {
			t.Fatalf("admit: %v", err)
		}
		if _, stopped := cs.cancel("early"); !stopped {
			t.Fatal("the refused statement does not read as cancelled")
		}
		if _, c, err := cs.admit(ctx, "other"); err != nil {
			t.Fatalf("another id: %v", err)
		} else {
			cs.finish(c)
		}
	})
	t.Run("cancels are forgotten after a while and past the bound", func(t *testing.T) {
		now := time.Now()
		cs.now = func() time.Time { return now }
		cs.cancel("old")
		now = now.Add(cancelMemory + time.Second)
		if _, c, err := cs.admit(ctx, "old"); err != nil {
			t.Fatalf("an id cancelled long ago: %v", err)
		} else {
			cs.finish(c)
		}
		for i := range cancelMemoryMax + 10 {
			cs.cancel(fmt.Sprintf("id-%d", i))
		}
		if len(cs.cancelled) > cancelMemoryMax || len(cs.order) > cancelMemoryMax {
			t.Fatalf("%d cancels remembered, %d in order", len(cs.cancelled), len(cs.order))
		}
		if cs.mark("id-0") != nil || cs.mark(fmt.Sprintf("id-%d", cancelMemoryMax+9)) == nil {
			t.Fatal("the oldest is not the one forgotten")
		}
		if len(cs.byID) != 0 {
			t.Fatalf("statements left registered: %v", cs.byID)
		}
	})
}
