package olap

import (
	"time"

	"github.com/google/uuid"
)

// recentUUIDs spares the retry check its ClickHouse lookup for most
// events, when this process is the only writer (the embedded engine). It
// holds the client-chosen uuids this writer stored, oldest evicted first,
// and since: every uuid stored at or after since is held. An event whose
// uuid says when the client made it (a version 7 uuid, its time corrected
// by the request's clock skew) cannot have been stored before it was made:
// if that is after since and the uuid is not held, it is new. Other events
// (version 4 uuids, no sent_at, or made before since) go to ClickHouse.
type recentUUIDs struct {
	since time.Time
	set   map[teamUUID]struct{}
	ring  []recentEntry
	head  int
}

type recentEntry struct {
	k  teamUUID
	at time.Time
}

// uuidTimeMargin covers what the clock-skew correction cannot know: the
// request's transit between the client's sent_at and the server's clock.
// (Time between making an event and sending it needs no margin: an event
// is never stored before it was made.)
const uuidTimeMargin = 15 * time.Second

func newRecentUUIDs(size int, since time.Time) *recentUUIDs {
	return &recentUUIDs{since: since, set: make(map[teamUUID]struct{}, size), ring: make([]recentEntry, 0, size)}
}

// add records uuids stored by a batch that completed at.
func (r *recentUUIDs) add(keys []teamUUID, at time.Time) {
	for _, k := range keys {
		if len(r.ring) < cap(r.ring) {
			r.ring = append(r.ring, recentEntry{k, at})
		} else {
			old := r.ring[r.head]
			delete(r.set, old.k)
			// Stores are recorded in order: everything after the evicted
			// one is still held.
			r.since = old.at
			r.ring[r.head] = recentEntry{k, at}
			r.head = (r.head + 1) % len(r.ring)
		}
		r.set[k] = struct{}{}
	}
}

// lookup says whether k is a known duplicate, or certainly new, or (sure
// false) unknown here. made is when the client made the uuid, or zero.
func (r *recentUUIDs) lookup(k teamUUID, made time.Time) (dup, sure bool) {
	if _, ok := r.set[k]; ok {
		return true, true
	}
	if !made.IsZero() && made.Add(-uuidTimeMargin).After(r.since) {
		return false, true
	}
	return false, false
}

// UUIDTime is when a client made a version 7 uuid by its own clock, or
// zero for other versions.
func UUIDTime(id uuid.UUID) time.Time {
	if id.Version() != 7 {
		return time.Time{}
	}
	sec, nsec := id.Time().UnixTime()
	return time.Unix(sec, nsec).UTC()
}
