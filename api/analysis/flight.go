package analysis

import (
	"context"
	"fmt"
	"sync"
)

// flightGroup runs one computation per key at a time; requests for a key
// already being computed wait for that computation. The computation runs
// on a context of its own that ends when every request waiting for it has
// gone, so one caller leaving does not fail the others, and the last one
// leaving stops the query.
type flightGroup struct {
	mu sync.Mutex
	m  map[string]*flight
}

type flight struct {
	done    chan struct{}
	res     *cachedResult
	err     error
	waiters int
	cancel  context.CancelFunc
}

func (g *flightGroup) do(ctx context.Context, key string, fn func(ctx context.Context) (*cachedResult, error)) (*cachedResult, error) {
	g.mu.Lock()
	if g.m == nil {
		g.m = map[string]*flight{}
	}
	f, ok := g.m[key]
	if !ok {
		// The first caller's values (its query id) travel with the
		// computation; its cancellation does not.
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		g.m[key] = f
		go g.run(fctx, key, f, fn)
	}
	f.waiters++
	g.mu.Unlock()
	select {
	case <-f.done:
		return f.res, f.err
	case <-ctx.Done():
		g.mu.Lock()
		f.waiters--
		if f.waiters == 0 {
			f.cancel()
			if g.m[key] == f {
				delete(g.m, key) // a later request starts afresh
			}
		}
		g.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (g *flightGroup) run(ctx context.Context, key string, f *flight, fn func(ctx context.Context) (*cachedResult, error)) {
	defer func() {
		if p := recover(); p != nil {
			f.err = fmt.Errorf("analysis panicked: %v", p)
		}
		g.mu.Lock()
		if g.m[key] == f {
			delete(g.m, key)
		}
		g.mu.Unlock()
		f.cancel()
		close(f.done)
	}()
	f.res, f.err = fn(ctx)
}
