package olap

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAProjectRunsAtMostItsShareAndWaitsThenIsRefused(t *testing.T) {
	f := newFairShare(2, 200*time.Millisecond)
	ctx := context.Background()
	var releases []func()
	for range 2 {
		r, err := f.acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	// Another project is not held up by the first one's analyses.
	other, err := f.acquire(ctx, 2)
	if err != nil {
		t.Fatalf("another project: %v", err)
	}
	other()
	// A third analysis of project 1 waits, and gets the slot freed.
	go func() { time.Sleep(50 * time.Millisecond); releases[0]() }()
	start := time.Now()
	r, err := f.acquire(ctx, 1)
	if err != nil || time.Since(start) < 40*time.Millisecond {
		t.Fatalf("the waiting analysis: %v after %s", err, time.Since(start))
	}
	// A fourth waits the queueing time and is refused.
	start = time.Now()
	_, err = f.acquire(ctx, 1)
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
	if _, err := f.acquire(cctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	r()
	releases[1]()
}
