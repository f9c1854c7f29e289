package analysis

import (
	"sync"
	"sync/atomic"
	"time"
)

// IngestClock remembers when each project last received events through
// this server, so open ranges computed before are stale. It lives in
// memory (the capture path writes no PostgreSQL row per request): a
// restarted server counts every project as having received events at its
// start, which costs one recomputation of open ranges.
type IngestClock struct {
	start time.Time
	m     sync.Map // project id -> *atomic.Int64 (unix nanoseconds)
}

// NewIngestClock is a clock that counts every project as having
// received events now.
func NewIngestClock() *IngestClock { return &IngestClock{start: time.Now()} }

// Note records that the project's events were just stored.
func (c *IngestClock) Note(projectID int64) {
	now := time.Now().UnixNano()
	if v, ok := c.m.Load(projectID); ok {
		v.(*atomic.Int64).Store(now)
		return
	}
	n := &atomic.Int64{}
	n.Store(now)
	if v, loaded := c.m.LoadOrStore(projectID, n); loaded {
		v.(*atomic.Int64).Store(now)
	}
}

// Last is when the project last received events, at the earliest the
// server's start.
func (c *IngestClock) Last(projectID int64) time.Time {
	if v, ok := c.m.Load(projectID); ok {
		if t := time.Unix(0, v.(*atomic.Int64).Load()); t.After(c.start) {
			return t
		}
	}
	return c.start
}
