package api

import (
	"context"
	"sync"

	"github.com/insightd/insightd/metadata"
)

// maxChecked bounds the users a kept answer remembers checks for: past
// it, they are forgotten (each then costs a round trip again).
const maxChecked = 1024

// renderChecks remembers, for a kept answer, under which of its
// project's stamps the store last showed it current and each user a
// member (metadata.RenderStamp): until the stamp moves, it still is. Its
// zero value is ready.
//
// Concurrent retrieves that find no check under the stamp they see share
// the round trip being made under it: one that saw the same stamp as
// the round trip's start has heard of no change since, as if the round
// trip had ended before it came. After a change, the first wave of 32
// clients then costs one round trip instead of 32 at once (which, through
// a pool of 20 connections, were the slowest 5% of a round's retrieves).
type renderChecks struct {
	mu      sync.Mutex
	checked map[int64]metadata.RenderStamp
	flights map[int64]*checkFlight
}

// checkFlight is a round trip being made for a user under stamp; done
// closes when ok is set.
type checkFlight struct {
	stamp metadata.RenderStamp
	done  chan struct{}
	ok    bool
}

// confirm reports whether the answer is current for user under stamp,
// a stamp taken when the retrieve came: at once when the store showed it
// under that stamp, else from the round trip being made under it, else
// from roundTrip, made now and remembered when it confirms.
func (c *renderChecks) confirm(ctx context.Context, user int64, stamp metadata.RenderStamp, roundTrip func() bool) bool {
	c.mu.Lock()
	if st, ok := c.checked[user]; ok && st == stamp {
		c.mu.Unlock()
		return true
	}
	if f := c.flights[user]; f != nil && f.stamp == stamp {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.ok
		case <-ctx.Done():
			return false
		}
	}
	f := &checkFlight{stamp: stamp, done: make(chan struct{})}
	if c.flights == nil {
		c.flights = map[int64]*checkFlight{}
	}
	c.flights[user] = f
	c.mu.Unlock()

	f.ok = roundTrip()
	c.mu.Lock()
	if f.ok {
		c.recordLocked(user, stamp)
	}
	if c.flights[user] == f {
		delete(c.flights, user)
	}
	c.mu.Unlock()
	close(f.done)
	return f.ok
}

// record remembers that the store showed the answer current for user
// under stamp, taken before the store was read.
func (c *renderChecks) record(user int64, stamp metadata.RenderStamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordLocked(user, stamp)
}

func (c *renderChecks) recordLocked(user int64, stamp metadata.RenderStamp) {
	if c.checked == nil || len(c.checked) >= maxChecked {
		c.checked = map[int64]metadata.RenderStamp{}
	}
	c.checked[user] = stamp
}
