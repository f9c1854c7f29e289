package metadata

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// renderChannel is the channel migration 0008's triggers notify, with a
// project id as the payload ('0': every project). This process's beats
// travel on it too, as "beat <watch id> <epoch> <n>".
const renderChannel = "insightd_render"

// ListenerName is the listening connection's application_name (unless
// the database URL sets one), which tells it apart in pg_stat_activity.
const ListenerName = "insightd render listener"

// RenderStamp is how far the store's notifications had moved a project
// when it was taken: a rendered answer that the store confirmed current
// under a stamp is still current while the project's stamp is the same
// (RenderStamp). It is comparable; the zero stamp is never current.
type RenderStamp struct {
	epoch, all, project uint64
}

// renderWatch listens on renderChannel and counts, per project, the
// changes it heard of (and those this process made, RenderChanged), so
// that a kept answer is checked with PostgreSQL once per change rather
// than once per request. What makes it exact:
//   - a notification is sent by a trigger at the commit of every change
//     an answer shows, to every listener (every server), in commit order;
//   - epoch moves whenever notifications may have been lost (the
//     connection lost, or lib/pq's nil after reconnecting), which voids
//     every stamp taken before;
//   - stamps are only given while live: a beat of ours, sent through the
//     pool under the current epoch, came back within liveFor. That proves
//     LISTEN is in effect on a connection that still delivers (a silently
//     dead one, or a PostgreSQL frozen with its sockets open, stops the
//     beats), and the round trip is used meanwhile; a silence longer than
//     liveFor moves epoch too;
//   - this process's own writes move the stamp before their answer is
//     sent (RenderChanged), so a client that wrote through this server
//     never reads its kept answer from before the write.
//
// A change made elsewhere (another server, by hand) is seen once its
// notification arrives: after its commit, by the time PostgreSQL wakes
// the listening backend and this process reads it.
type renderWatch struct {
	dsn       string
	db        *sqlx.DB
	roundTrip time.Duration
	beatEvery time.Duration
	liveFor   time.Duration
	id        string

	start sync.Once
	stop  chan struct{}
	kick  chan struct{}
	wg    sync.WaitGroup

	mu       sync.Mutex
	listener *pq.Listener
	closed   bool
	epoch    uint64
	live     bool
	heardAt  time.Time
	all      uint64
	projects map[int64]uint64
	beats    uint64
	heard    uint64 // the latest own beat heard, under any epoch
	waiting  map[uint64]chan struct{}
}

func newRenderWatch(dsn string, db *sqlx.DB, roundTrip time.Duration) *renderWatch {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	// Beats must come back well within one round trip's deadline, which
	// the listening connection's reads are under too: a healthy idle
	// connection always has a beat to read.
	beat := min(time.Second, roundTrip/4)
	return &renderWatch{dsn: dsn, db: db, roundTrip: roundTrip, beatEvery: beat, liveFor: 3 * beat,
		id: hex.EncodeToString(id), stop: make(chan struct{}), kick: make(chan struct{}, 1),
		epoch: 1, projects: map[int64]uint64{}, waiting: map[uint64]chan struct{}{}}
}

// RenderStamp is the project's stamp, and false while the store cannot
// vouch for notifications (not listening yet, or not lately heard from):
// then only a round trip tells whether an answer is current. The first
// call starts listening.
func (s *Store) RenderStamp(projectID int64) (RenderStamp, bool) {
	w := s.watch
	w.start.Do(w.run)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.live || w.lapsed() {
		return RenderStamp{}, false
	}
	return RenderStamp{epoch: w.epoch, all: w.all, project: w.projects[projectID]}, true
}

// lapsed reports whether no beat came back for liveFor, and then counts
// the silence as a lost connection (w.mu held): nothing was lost if the
// connection was only slow, but nothing given before it need be trusted.
func (w *renderWatch) lapsed() bool {
	if !w.live || time.Since(w.heardAt) <= w.liveFor {
		return false
	}
	w.epoch++
	w.live = false
	return true
}

// RenderChanged moves the project's stamp (0: every project's) for a
// change this process made: its notification may arrive after the
// answer to the request that made it, and the client's next request.
func (s *Store) RenderChanged(projectID int64) {
	s.watch.changed(projectID)
}

// SyncRenders waits until the store has heard every notification
// committed before it was called, and listens (tests and tools: a change
// made by hand is seen once this returns).
func (s *Store) SyncRenders(ctx context.Context) error {
	w := s.watch
	w.start.Do(w.run)
	for {
		w.mu.Lock()
		closed := w.closed
		w.mu.Unlock()
		if closed {
			return errWatchClosed
		}
		n, heard := w.sendBeat(ctx, true)
		select {
		case <-heard:
			if _, ok := s.RenderStamp(0); ok {
				return nil
			}
		case <-time.After(w.beatEvery):
		case <-ctx.Done():
			return fmt.Errorf("render notifications: beat %d not heard: %w", n, ctx.Err())
		}
	}
}

func (w *renderWatch) changed(projectID int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if projectID == 0 {
		w.all++
	} else {
		w.projects[projectID]++
	}
}

// lost voids every stamp given so far: notifications may have been
// missed. Only a beat sent after it makes the watch live again.
func (w *renderWatch) lost() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.epoch++
	w.live = false
}

func (w *renderWatch) run() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.listener = pq.NewDialListener(deadlineDialer{roundTrip: w.roundTrip}, listenerDSN(w.dsn),
		100*time.Millisecond, 10*time.Second, w.event)
	l := w.listener
	w.wg.Add(3)
	go func() {
		defer w.wg.Done()
		// Blocks until LISTEN is in effect (or the listener is closed);
		// the beat it kicks is what makes the watch live.
		if l.Listen(renderChannel) == nil {
			w.kickBeat()
		}
	}()
	go func() {
		defer w.wg.Done()
		for n := range l.Notify {
			w.notified(n)
		}
	}()
	go func() {
		defer w.wg.Done()
		w.beat()
	}()
}

// event handles the listener's connection events (on lib/pq's goroutine).
func (w *renderWatch) event(ev pq.ListenerEventType, _ error) {
	switch ev {
	case pq.ListenerEventDisconnected:
		w.lost()
	case pq.ListenerEventReconnected:
		w.kickBeat()
	}
}

func (w *renderWatch) notified(n *pq.Notification) {
	if n == nil { // lib/pq after reconnecting: some may have been missed
		w.lost()
		return
	}
	if rest, ok := strings.CutPrefix(n.Extra, "beat "); ok {
		w.beatHeard(rest)
		return
	}
	p, err := strconv.ParseInt(n.Extra, 10, 64)
	if err != nil {
		p = 0 // not ours to read: everything may have changed
	}
	w.changed(p)
}

// beatHeard handles a beat "<watch id> <epoch> <n>": one of ours sent
// under the current epoch makes the watch live.
func (w *renderWatch) beatHeard(payload string) {
	f := strings.Fields(payload)
	if len(f) != 3 || f[0] != w.id {
		return // another server's
	}
	epoch, err1 := strconv.ParseUint(f[1], 10, 64)
	n, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.lapsed() && epoch == w.epoch {
		w.live, w.heardAt = true, time.Now()
	}
	if n > w.heard {
		w.heard = n
	}
	for k, ch := range w.waiting {
		if k <= w.heard {
			close(ch)
			delete(w.waiting, k)
		}
	}
}

func (w *renderWatch) kickBeat() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// beat sends a beat every beatEvery, and at once when kicked.
func (w *renderWatch) beat() {
	t := time.NewTicker(w.beatEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		case <-w.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.roundTrip)
		w.sendBeat(ctx, false)
		cancel()
	}
}

// sendBeat notifies a beat through the pool. With wait, heard closes
// once the listener has read it (every notification committed before it
// has then been read too: PostgreSQL delivers them in commit order);
// else, and when it could not be sent, heard is nil.
func (w *renderWatch) sendBeat(ctx context.Context, wait bool) (n uint64, heard <-chan struct{}) {
	w.mu.Lock()
	w.beats++
	n, epoch := w.beats, w.epoch
	var ch chan struct{}
	if wait {
		ch = make(chan struct{})
		w.waiting[n] = ch
	}
	w.mu.Unlock()
	payload := fmt.Sprintf("beat %s %d %d", w.id, epoch, n)
	if _, err := w.db.ExecContext(ctx, "SELECT pg_notify($1, $2)", renderChannel, payload); err != nil {
		w.mu.Lock()
		delete(w.waiting, n)
		w.mu.Unlock()
		return n, nil
	}
	if ch == nil {
		return n, nil
	}
	return n, ch
}

// close stops listening; stamps are no longer given.
func (w *renderWatch) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed, w.live = true, false
	l := w.listener
	w.mu.Unlock()
	close(w.stop)
	if l != nil {
		_ = l.Close()
	}
	w.wg.Wait()
}

// listenerDSN names the listening connection, unless the DSN names its
// connections already.
func listenerDSN(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn
		}
		q := u.Query()
		q.Set("fallback_application_name", ListenerName)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " fallback_application_name='" + ListenerName + "'"
}

// errWatchClosed is what a closed store's watch answers.
var errWatchClosed = errors.New("render notifications: the store is closed")
