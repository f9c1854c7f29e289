package olap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// Capture is one validated event on its way to storage.
type Capture struct {
	Event
	// ClientUUID says the client chose the uuid, so the same event may
	// come again (a retry after a timeout) and must be stored once.
	ClientUUID bool
	// UUIDTime is when the client made the uuid, on the server's clock,
	// when the uuid and the request say (see recentUUIDs); else zero.
	UUIDTime time.Time
	Person   *PersonUpdate
	// Group is a $groupidentify's update of its group (groups.go).
	Group *GroupUpdate
}

// WriterConfig tunes group commit.
type WriterConfig struct {
	// MaxEvents flushes as soon as this many events wait (default 50 000).
	MaxEvents int
	// Linger is how long the first waiting event waits for others to join
	// its insert (default 20ms). A busy server fills inserts while the
	// previous one runs, so this only matters when traffic is light.
	Linger time.Duration
	// Inserts is how many batches are inserted at once (default 2). A
	// batch waits for a free insert gathering more requests (see gather).
	Inserts int
	// IdentityCache bounds the distinct ids held in memory (default 2M).
	IdentityCache int
	// Timeout bounds one flush: lookups and inserts (default 60s).
	Timeout time.Duration
	// SoleWriter says no other process writes these tables (the embedded
	// engine), so the writer may trust what it remembers of the uuids it
	// stored (RecentUUIDs of them, default 1M) to skip the retry lookup.
	SoleWriter  bool
	RecentUUIDs int
	// AfterEventsInsert, when set, runs after each batch's events are
	// stored and before their uuids are recorded: a test hook, to kill
	// the process at that instant.
	AfterEventsInsert func()
	// TaxonomyFlush is how often the counted event volumes and last-seen
	// times are written to the taxonomy tables (default a minute; see
	// taxonomy.go). New names are written with the batch that brings them.
	TaxonomyFlush time.Duration
	// Metrics, when set, records each flush and reports the queue depth
	// (the server's metrics, api/metrics).
	Metrics WriterObserver
}

// DefaultWriterConfig is the configuration without any setting.
func DefaultWriterConfig() WriterConfig {
	return WriterConfig{MaxEvents: 50_000, Linger: 20 * time.Millisecond, Inserts: 2, IdentityCache: 2_000_000, Timeout: time.Minute, TaxonomyFlush: time.Minute}
}

// Validate reports a configuration that cannot work.
func (c WriterConfig) Validate() error {
	var errs []error
	if c.MaxEvents < 1 {
		errs = append(errs, errors.New("ingest max events must be positive"))
	}
	if c.Linger < 0 || c.Linger > time.Second {
		errs = append(errs, fmt.Errorf("ingest linger must be 0..1s, got %s", c.Linger))
	}
	if c.Inserts < 1 || c.Inserts > 16 {
		errs = append(errs, fmt.Errorf("ingest inserts must be 1..16, got %d", c.Inserts))
	}
	if c.IdentityCache < 1 {
		errs = append(errs, errors.New("identity cache size must be positive"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("ingest timeout must be positive"))
	}
	return errors.Join(errs...)
}

// ErrWriterClosed is returned by Write after Close.
var ErrWriterClosed = errors.New("the event writer is shut down")

// Writer stores captured events with group commit: concurrent Write calls
// are gathered into one insert (up to MaxEvents, or Linger after the first
// one waits), and each call returns once its own events are stored and
// visible to queries. Nothing is held in memory past a Write's return, so
// a crash loses only requests not yet answered. Batches go through two
// stages in arrival order (see loop): one resolves persons while the
// previous one is inserted.
type Writer struct {
	engine Engine
	// schema and tables name what the writer reads and writes: the
	// engine's (Engine.Schema).
	schema chsql.Schema
	tables tables
	log    *slog.Logger
	cfg    WriterConfig
	in     chan *writeRequest
	quit   chan struct{}
	done   chan struct{}
	ident  *identity
	// deletes are persons' deletions, run by loop (persons_delete.go).
	deletes chan *personDeletion
	groups  groupCache // the preparing stage's, as ident
	stats   WriterStats
	// recent is nil unless SoleWriter; only the preparing stage uses it.
	recent *recentUUIDs
	// queued counts the events of Write calls not yet answered.
	queued atomic.Int64
	// started says the recovery at start is done; recoverFrom, when set,
	// is the oldest batch whose uuids went unrecorded. Only loop uses
	// them (see writer_recover.go).
	started     bool
	recoverFrom time.Time
	// tax is the taxonomy's seen-set (taxonomy.go), taxOff turns it off
	// (the ingestion benchmark's A side).
	tax    *taxonomy
	taxOff atomic.Bool

	mu     sync.RWMutex
	closed bool
}

// WriterStats counts what a writer did, for metrics, benchmarks and tests.
// The durations add up each flush's stages: the retry check and person
// resolution (side by side), person rows, the events insert.
type WriterStats struct {
	Flushes, Events, Duplicates                         atomic.Int64
	CheckNanos, ResolveNanos, PersonsNanos, InsertNanos atomic.Int64
}

type writeRequest struct {
	events []Capture
	result chan WriteResult
}

// WriteResult is what became of one Write's events.
type WriteResult struct {
	// Stored counts events written; Duplicates those already stored (or
	// sent twice) under the same uuid, which were dropped.
	Stored, Duplicates int
	Err                error
}

// NewWriter starts a writer; Close stops it. Zero fields of cfg take
// their defaults.
func NewWriter(engine Engine, log *slog.Logger, cfg WriterConfig) *Writer {
	d := DefaultWriterConfig()
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = d.MaxEvents
	}
	if cfg.Linger == 0 {
		cfg.Linger = d.Linger
	}
	if cfg.Inserts == 0 {
		cfg.Inserts = d.Inserts
	}
	if cfg.IdentityCache == 0 {
		cfg.IdentityCache = d.IdentityCache
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = d.Timeout
	}
	if cfg.TaxonomyFlush == 0 {
		cfg.TaxonomyFlush = d.TaxonomyFlush
	}
	if cfg.RecentUUIDs == 0 {
		cfg.RecentUUIDs = 1_000_000
	}
	schema := engine.Schema()
	w := &Writer{engine: engine, schema: schema, tables: tablesOf(schema), log: log, cfg: cfg, in: make(chan *writeRequest, 1024),
		quit: make(chan struct{}), done: make(chan struct{}),
		ident: newIdentity(engine, schema, log, cfg.IdentityCache)}
	w.deletes = make(chan *personDeletion)
	w.tax = newTaxonomy()
	if cfg.SoleWriter {
		w.recent = newRecentUUIDs(cfg.RecentUUIDs, time.Now())
	}
	if cfg.Metrics != nil {
		cfg.Metrics.WatchWriterQueue(w.queued.Load)
	}
	go w.loop()
	return w
}

// Write stores events and returns once they are stored, or with the error
// that kept them out: on an error none of them were stored, or (for a
// failure between inserts) some were, and sending the same events again,
// uuids included, stores the rest without doubling any. ctx bounds only
// the wait for a place in the queue: once queued, the events are written
// whatever happens to the caller.
func (w *Writer) Write(ctx context.Context, events []Capture) WriteResult {
	if len(events) == 0 {
		return WriteResult{}
	}
	r := &writeRequest{events: events, result: make(chan WriteResult, 1)}
	// The read lock keeps Close from finishing between the check and the
	// send, which would leave r queued where no one reads it.
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return WriteResult{Err: ErrWriterClosed}
	}
	w.queued.Add(int64(len(events)))
	defer w.queued.Add(-int64(len(events)))
	select {
	case w.in <- r:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return WriteResult{Err: ctx.Err()}
	}
	return <-r.result
}

// Queued is how many events Write calls have handed over and not yet had
// answered: waiting for an insert or being written.
func (w *Writer) Queued() int64 { return w.queued.Load() }

// safely runs a stage, turning a panic (a bug, or a row the engine
// returned in an unexpected form) into the batch's error: the writer runs
// outside any request, where a panic would end the process.
func (w *Writer) safely(stage string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			w.log.Error("ingestion stage panicked", "stage", stage, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("ingestion %s failed: %v", stage, r)
		}
	}()
	return fn()
}

// SetTaxonomy turns the taxonomy's upkeep on or off (on by default).
// Events stored while it is off are not in it: this is for measuring
// what it costs (benchmarks/ingestload), not for serving.
func (w *Writer) SetTaxonomy(on bool) { w.taxOff.Store(!on) }

// Stats is what the writer has done so far.
func (w *Writer) Stats() *WriterStats { return &w.stats }

// Close stops accepting writes, flushes what is queued and waits.
func (w *Writer) Close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.quit)
	}
	w.mu.Unlock()
	<-w.done
}

// The writer runs in two stages so that one batch's reads overlap the
// previous batch's inserts: loop (this goroutine, the only one touching
// identity) gathers requests, drops duplicates and resolves persons;
// writeLoop inserts and answers. A batch prepared while an earlier one was
// still being written may depend on it (persons it created, retries of its
// events): when a batch fails, every batch prepared before loop learned of
// that failure fails too, and loop forgets what it knew of persons, so the
// clients' retries start from what ClickHouse holds.
func (w *Writer) loop() {
	defer close(w.done)
	toWrite := make(chan *batch, 1)
	written := make(chan *batch, 4)
	go w.writeLoop(toWrite, written)
	inflight := map[teamUUID]int{}
	var gen uint64
	// pending counts batches handed to writeLoop and not yet settled.
	pending := 0
	settle := func(b *batch) {
		pending--
		for _, k := range b.inflight {
			if inflight[k]--; inflight[k] <= 0 {
				delete(inflight, k)
			}
		}
		if b.stored && w.recent != nil {
			w.recent.add(b.inflight, time.Now())
		}
		if b.uuidsMissing && (w.recoverFrom.IsZero() || b.createdAt.Before(w.recoverFrom)) {
			w.recoverFrom = b.createdAt
		}
		if b.err != nil && b.tax != nil {
			w.tax.forget(b.tax)
		}
		if b.err != nil && b.gen == gen {
			w.ident.forgetAll()
			gen++
		}
	}
	send := func(group []*writeRequest) {
		if err := w.recoverBeforePrepare(); err != nil {
			w.log.Error("ingestion cannot start: recovering the uuids of recent events failed", "error", err)
			for _, r := range group {
				r.result <- WriteResult{Err: err}
			}
			return
		}
		var b *batch
		if err := w.safely("prepare", func() error { b = w.prepare(group, gen, inflight); return nil }); err != nil {
			b = &batch{group: group, gen: gen, results: make([]WriteResult, len(group)), createdAt: time.Now(), err: err}
		}
		pending++
		for {
			select {
			case toWrite <- b:
				return
			case d := <-written:
				settle(d)
			}
		}
	}
	for {
		select {
		case r := <-w.in:
			send(w.gather(r, written, settle, func() bool { return pending >= w.cfg.Inserts }))
		case d := <-written:
			settle(d)
		case del := <-w.deletes:
			for pending > 0 {
				settle(<-written)
			}
			w.deletePerson(del)
		case <-w.quit:
			// Write what was queued before Close, then let writeLoop end.
			for queued := true; queued; {
				select {
				case r := <-w.in:
					send(w.gather(r, nil, settle, func() bool { return false }))
				default:
					queued = false
				}
			}
			close(toWrite)
			for d := range written {
				settle(d)
			}
			w.flushTaxonomy()
			return
		}
	}
}

// gather waits up to Linger for more requests to join first's insert,
// and past it for as long as busy says every insert is taken: the batch
// could not be written sooner, and each insert costs the engine a part
// (a fixed CPU cost whatever its size: benchmarks/results/ingestion.md)
// and later merges, so under load fewer, larger inserts store more
// events per second.
// Batches that finish meanwhile are settled.
func (w *Writer) gather(first *writeRequest, written <-chan *batch, settle func(*batch), busy func() bool) []*writeRequest {
	group := []*writeRequest{first}
	n := len(first.events)
	timer := time.NewTimer(w.cfg.Linger)
	defer timer.Stop()
	lingered := false
	for n < w.cfg.MaxEvents {
		if lingered && !busy() {
			return group
		}
		select {
		case r := <-w.in:
			group = append(group, r)
			n += len(r.events)
		case d := <-written:
			settle(d)
		case <-timer.C:
			lingered = true
		case <-w.quit:
			return group
		}
	}
	return group
}

// writeLoop inserts prepared batches, Inserts at a time, and answers
// them in order. A batch whose insert succeeded still fails when an
// earlier batch it may depend on failed (see loop); its events' uuids were
// recorded, so the clients' resends are recognized.
func (w *Writer) writeLoop(in <-chan *batch, out chan<- *batch) {
	defer close(out)
	slots := make(chan struct{}, w.cfg.Inserts)
	var prev *batch
	var wg sync.WaitGroup
	for b := range in {
		b.finished = make(chan struct{})
		slots <- struct{}{}
		wg.Add(1)
		go func(b, prev *batch) {
			defer wg.Done()
			if b.err == nil {
				// The deadline runs from preparation, so no batch's insert
				// commits later than Timeout after its events' created_at
				// (which the recovery at start relies on).
				ctx, cancel := context.WithDeadline(context.Background(), b.createdAt.Add(w.cfg.Timeout))
				b.err = w.safely("write", func() error { return w.write(ctx, b) })
				cancel()
			}
			<-slots
			b.poisonGen, b.poison = -1, nil
			if prev != nil {
				<-prev.finished
				b.poisonGen, b.poison = prev.poisonGen, prev.poison
			}
			if b.err == nil && b.poisonGen >= int64(b.gen) {
				b.err = fmt.Errorf("an earlier insert this one depended on failed: %w", b.poison)
			}
			if b.err != nil && int64(b.gen) > b.poisonGen {
				b.poisonGen, b.poison = int64(b.gen), b.err
			}
			for i, r := range b.group {
				res := b.results[i]
				if b.err != nil {
					res = WriteResult{Err: b.err}
				}
				r.result <- res
			}
			out <- b
			close(b.finished)
		}(b, prev)
		prev = b
	}
	wg.Wait()
}
