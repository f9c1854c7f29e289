package olap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder"
)

// Capture is one validated event on its way to storage.
type Capture struct {
	Event
	// ClientUUID says the client chose the uuid, so the same event may
	// come again (a retry after a timeout) and must be stored once.
	ClientUUID bool
	Person     *PersonUpdate
}

// WriterConfig tunes group commit.
type WriterConfig struct {
	// MaxEvents flushes as soon as this many events wait (default 50 000).
	MaxEvents int
	// Linger is how long the first waiting event waits for others to join
	// its insert (default 5ms). A busy server fills inserts while the
	// previous one runs, so this only matters when traffic is light.
	Linger time.Duration
	// IdentityCache bounds the distinct ids held in memory (default 2M).
	IdentityCache int
	// Timeout bounds one flush: lookups and inserts (default 60s).
	Timeout time.Duration
}

// DefaultWriterConfig is the configuration without any setting.
func DefaultWriterConfig() WriterConfig {
	return WriterConfig{MaxEvents: 50_000, Linger: 5 * time.Millisecond, IdentityCache: 2_000_000, Timeout: time.Minute}
}

// WriterConfigFromEnv reads INSIGHTD_INGEST_MAX_EVENTS and
// INSIGHTD_INGEST_LINGER (a Go duration or milliseconds).
func WriterConfigFromEnv() (WriterConfig, error) {
	c := DefaultWriterConfig()
	if v := os.Getenv("INSIGHTD_INGEST_MAX_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return c, fmt.Errorf("INSIGHTD_INGEST_MAX_EVENTS: %w", err)
		}
		c.MaxEvents = n
	}
	if v := os.Getenv("INSIGHTD_INGEST_LINGER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			ms, err2 := strconv.Atoi(v)
			if err2 != nil {
				return c, fmt.Errorf("INSIGHTD_INGEST_LINGER: %w", err)
			}
			d = time.Duration(ms) * time.Millisecond
		}
		c.Linger = d
	}
	return c, c.Validate()
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
// a crash loses only requests not yet answered. One goroutine resolves
// persons and writes, in arrival order.
type Writer struct {
	engine Engine
	log    *slog.Logger
	cfg    WriterConfig
	in     chan *writeRequest
	quit   chan struct{}
	done   chan struct{}
	ident  *identity
	stats  WriterStats

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
	// Teams lists the projects that received events.
	Teams []int64
	Err   error
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
	if cfg.IdentityCache == 0 {
		cfg.IdentityCache = d.IdentityCache
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = d.Timeout
	}
	w := &Writer{engine: engine, log: log, cfg: cfg, in: make(chan *writeRequest, 1024),
		quit: make(chan struct{}), done: make(chan struct{}),
		ident: newIdentity(engine, log, cfg.IdentityCache)}
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
	select {
	case w.in <- r:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return WriteResult{Err: ctx.Err()}
	}
	return <-r.result
}

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

func (w *Writer) loop() {
	defer close(w.done)
	for {
		var first *writeRequest
		select {
		case first = <-w.in:
		case <-w.quit:
			w.drain()
			return
		}
		w.flush(w.gather(first))
	}
}

// gather waits up to Linger for more requests to join first's insert.
func (w *Writer) gather(first *writeRequest) []*writeRequest {
	group := []*writeRequest{first}
	n := len(first.events)
	timer := time.NewTimer(w.cfg.Linger)
	defer timer.Stop()
	for n < w.cfg.MaxEvents {
		select {
		case r := <-w.in:
			group = append(group, r)
			n += len(r.events)
		case <-timer.C:
			return group
		case <-w.quit:
			return group
		}
	}
	return group
}

// drain writes what was queued before Close.
func (w *Writer) drain() {
	for {
		select {
		case r := <-w.in:
			w.flush(w.gather(r))
		default:
			return
		}
	}
}

func (w *Writer) flush(group []*writeRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout)
	defer cancel()
	results, err := w.store(ctx, group)
	for i, r := range group {
		res := results[i]
		res.Err = err
		r.result <- res
	}
}

// store writes one group: it drops duplicates, resolves persons, writes
// person rows, then events. Person rows go first so that no stored event
// lacks its person; a failure after them leaves rows a retry rewrites.
func (w *Writer) store(ctx context.Context, group []*writeRequest) ([]WriteResult, error) {
	results := make([]WriteResult, len(group))
	total := 0
	for _, r := range group {
		total += len(r.events)
	}
	events := make([]Event, 0, total)
	updates := make([]*PersonUpdate, 0, total)
	owner := make([]int, 0, total)
	seen := make(map[uuid.UUID]bool, total)
	var retried []int
	teams := map[int64]bool{}
	now := time.Now().UTC()
	for gi, r := range group {
		rteams := map[int64]bool{}
		for i := range r.events {
			c := &r.events[i]
			if seen[c.UUID] {
				results[gi].Duplicates++
				continue
			}
			seen[c.UUID] = true
			if c.ClientUUID {
				retried = append(retried, len(events))
			}
			ev := c.Event
			ev.CreatedAt = now
			events = append(events, ev)
			updates = append(updates, c.Person)
			owner = append(owner, gi)
			if !rteams[ev.TeamID] {
				rteams[ev.TeamID] = true
				results[gi].Teams = append(results[gi].Teams, ev.TeamID)
			}
			teams[ev.TeamID] = true
		}
	}
	// The retry check and person resolution are independent reads: run
	// them side by side. Resolving a retried event again changes nothing
	// (its links and property updates are already in place).
	all := events // retried indexes point here; events is filtered below
	var stored map[uuid.UUID]bool
	var storedErr error
	checked := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(checked)
		stored, storedErr = w.storedUUIDs(ctx, all, retried)
		w.stats.CheckNanos.Add(int64(time.Since(start)))
	}()
	p, err := w.ident.resolve(ctx, events, updates)
	w.stats.ResolveNanos.Add(int64(time.Since(start)))
	<-checked
	if err == nil {
		err = storedErr
	}
	if err != nil {
		w.ident.forget(teams)
		return results, err
	}
	var fresh [][]any // client-chosen uuids now stored, for later retry checks
	for _, i := range retried {
		if !stored[all[i].UUID] {
			fresh = append(fresh, []any{all[i].TeamID, all[i].UUID})
		}
	}
	if len(stored) > 0 {
		// Filtering in place reuses all's array: fresh is taken first.
		keep := 0
		for i := range events {
			if stored[events[i].UUID] {
				results[owner[i]].Duplicates++
				continue
			}
			events[keep], owner[keep] = events[i], owner[i]
			keep++
		}
		events, owner = events[:keep], owner[:keep]
	}
	if err := w.write(ctx, events, p); err != nil {
		w.ident.forget(teams)
		return results, err
	}
	if err := w.engine.Insert(ctx, eventUUIDsTable, fresh); err != nil {
		// The events are stored and their senders will not resend them;
		// only a spurious resend could now be stored twice (and
		// ReplacingMergeTree collapses it at merge). Not worth a failure.
		w.log.Error("could not record event uuids for the retry check", "events", len(fresh), "error", err)
	}
	w.ident.trim()
	for _, gi := range owner {
		results[gi].Stored++
	}
	w.stats.Flushes.Add(1)
	w.stats.Events.Add(int64(len(events)))
	w.stats.Duplicates.Add(int64(total - len(events)))
	return results, nil
}

// write stores person rows, then events: no stored event lacks its
// person. The three person tables are written side by side.
func (w *Writer) write(ctx context.Context, events []Event, p *pending) error {
	writes := []struct {
		t    Table
		rows [][]any
	}{
		{PersonsTable, p.personRows(&w.ident.clock)},
		{DistinctIDsTable, p.distinctIDs},
		{OverridesTable, p.overrides},
	}
	errs := make([]error, len(writes))
	start := time.Now()
	var wg sync.WaitGroup
	for i, x := range writes {
		wg.Go(func() {
			if err := w.engine.Insert(ctx, x.t, x.rows); err != nil {
				errs[i] = fmt.Errorf("write %s: %w", x.t.name, err)
			}
		})
	}
	wg.Wait()
	w.stats.PersonsNanos.Add(int64(time.Since(start)))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	start = time.Now()
	defer func() { w.stats.InsertNanos.Add(int64(time.Since(start))) }()
	if err := w.engine.InsertEvents(ctx, events); err != nil {
		return fmt.Errorf("write events: %w", err)
	}
	return nil
}

// jsonLines writes values as JSONEachRow text. Lists of keys travel to the
// engine this way, as one String parameter read with format(): the engine
// parses an Array parameter of thousands of values 3 to 5 times slower.
func jsonLines(values []any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// storedUUIDs finds which of the events at idx (those whose uuid the
// client chose) are already stored, by point lookups in event_uuids. The
// keys travel as TSV text in one parameter (numbers and uuids need no
// escaping), the cheapest form for the engine to read: about 4 ms for
// 4 000 keys.
func (w *Writer) storedUUIDs(ctx context.Context, events []Event, idx []int) (map[uuid.UUID]bool, error) {
	if len(idx) == 0 {
		return nil, nil
	}
	var keys strings.Builder
	keys.Grow(len(idx) * 58)
	for _, i := range idx {
		keys.WriteString(strconv.FormatInt(events[i].TeamID, 10))
		keys.WriteByte('\t')
		keys.WriteString(events[i].UUID.String())
		keys.WriteByte('\n')
	}
	rows, err := w.engine.Query(ctx, querybuilder.Statement{
		SQL: `SELECT DISTINCT uuid FROM event_uuids
WHERE (team_id, uuid) IN (SELECT t, u FROM format(TSV, 't Int64, u UUID', {keys:String}))`,
		Params: map[string]any{"keys": keys.String()},
	})
	if err != nil {
		return nil, fmt.Errorf("look up retried events: %w", err)
	}
	out := make(map[uuid.UUID]bool, len(rows.Data))
	for _, r := range rows.Data {
		out[uuid.MustParse(r[0].(string))] = true
	}
	return out, nil
}
