package olap

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/insightd/insightd/olap/chdb"
)

// Cancelling a query id (Engine.Cancel) must stop it whatever stage it is
// at: running in the engine (KILL QUERY), queued for its project's slot or
// a connection (the wait ends), or not arrived yet (a client cancels
// while the request still reads its project). So the backends register
// every statement by query id while it is under way, and remember the ids
// cancelled in the last cancelMemory: a statement under such an id does
// not start.

// cancelMemory is how long a cancelled id is remembered: longer than a
// request takes to reach the engine and queue there (queueing is 10s by
// default), shorter than a client would take to reuse an id on purpose.
const cancelMemory = time.Minute

// cancelMemoryMax bounds the ids remembered: past it the oldest are
// forgotten first (a few hundred kilobytes at most).
const cancelMemoryMax = 10_000

// call is one statement under way.
type call struct {
	id string
	// stop ends the statement's wait, with errCancelled as the cause.
	stop    context.CancelCauseFunc
	running bool
	// done is closed when the statement has returned.
	done chan struct{}
}

// cancelMark is a remembered cancel; refused says a statement under its
// id was refused because of it.
type cancelMark struct {
	at      time.Time
	refused bool
}

// calls is the registry of statements under way and of cancelled ids.
type calls struct {
	mu        sync.Mutex
	byID      map[string][]*call
	cancelled map[string]*cancelMark
	// order is the cancelled ids, oldest first, to forget them in order.
	order []string
	now   func() time.Time
}

func newCalls() *calls {
	return &calls{byID: map[string][]*call{}, cancelled: map[string]*cancelMark{}, now: time.Now}
}

// cancelledError is what a statement cancelled before it ran returns:
// the error the engine gives a statement stopped by KILL QUERY, so that
// callers tell both apart from others by the one code.
func cancelledError(id string) error {
	return &chdb.Exception{Code: CodeQueryWasCancelled, Name: "QUERY_WAS_CANCELLED",
		Message: fmt.Sprintf("Code: %d. query %s was cancelled before it started (QUERY_WAS_CANCELLED)", CodeQueryWasCancelled, id)}
}

// admit registers a statement under id, unless id was cancelled lately.
// The returned context ends when the statement is cancelled while it
// queues; finish unregisters it.
func (cs *calls) admit(ctx context.Context, id string) (context.Context, *call, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if m := cs.mark(id); m != nil {
		m.refused = true
		return ctx, nil, cancelledError(id)
	}
	ctx, stop := context.WithCancelCause(ctx)
	c := &call{id: id, stop: stop, done: make(chan struct{})}
	cs.byID[id] = append(cs.byID[id], c)
	return ctx, c, nil
}

// start marks c as running in the engine, unless its id was cancelled
// meanwhile: from then on a cancel kills it there.
func (cs *calls) start(c *call) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if m := cs.mark(c.id); m != nil {
		m.refused = true
		return cancelledError(c.id)
	}
	c.running = true
	return nil
}

// finish unregisters c once its statement has returned.
func (cs *calls) finish(c *call) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	list := cs.byID[c.id]
	for i, x := range list {
		if x == c {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(cs.byID, c.id)
	} else {
		cs.byID[c.id] = list
	}
	c.stop(nil)
	close(c.done)
}

// cancel remembers id as cancelled and stops the statements queued under
// it. It returns the statements running under it (for the backend to
// kill), and whether any statement was stopped or refused because of id.
func (cs *calls) cancel(id string) (running []*call, stopped bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	m := cs.mark(id)
	if m == nil {
		m = &cancelMark{at: cs.now()}
		cs.cancelled[id] = m
		cs.order = append(cs.order, id)
		cs.forget()
	}
	m.at = cs.now()
	stopped = m.refused
	for _, c := range cs.byID[id] {
		if c.running {
			running = append(running, c)
			continue
		}
		c.stop(cancelledError(id))
		m.refused, stopped = true, true
	}
	return running, stopped
}

// mark is id's remembered cancel, if it is recent.
func (cs *calls) mark(id string) *cancelMark {
	m := cs.cancelled[id]
	if m == nil || cs.now().Sub(m.at) > cancelMemory {
		return nil
	}
	return m
}

// forget drops the cancels older than cancelMemory, and the oldest past
// cancelMemoryMax.
func (cs *calls) forget() {
	now := cs.now()
	n := 0
	for ; n < len(cs.order); n++ {
		m := cs.cancelled[cs.order[n]]
		if len(cs.order)-n <= cancelMemoryMax && m != nil && now.Sub(m.at) <= cancelMemory {
			break
		}
		delete(cs.cancelled, cs.order[n])
	}
	if n > 0 {
		cs.order = append([]string(nil), cs.order[n:]...)
	}
}

// counts is how many statements run in the engine and how many are
// registered but still queued (for their project's slot or a connection).
func (cs *calls) counts() (running, queued int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, list := range cs.byID {
		for _, c := range list {
			if c.running {
				running++
			} else {
				queued++
			}
		}
	}
	return running, queued
}
