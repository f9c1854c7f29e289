package olap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// batch is one group of requests on its way through the writer's stages.
type batch struct {
	group   []*writeRequest
	results []WriteResult
	// gen is the preparing stage's generation: it changes after each
	// failure, so batches prepared before the failure was known can be
	// told apart from those prepared after.
	gen     uint64
	events  []Event // to insert: duplicates dropped, persons resolved
	owner   []int   // events[i] came from group[owner[i]]
	persons [][]any // rows of the persons table
	groups  [][]any // rows of the groups table
	tax     *taxRows
	p       *pending
	// fresh holds the client-chosen uuids of events to insert, recorded in
	// event_uuids after them; inflight the same keys, held by the
	// preparing stage until the batch is written.
	fresh    [][]any
	inflight []teamUUID
	total    int
	err      error
	// stored says the events were inserted (even if the batch then failed
	// for an earlier one); finished closes once the batch is answered.
	stored   bool
	finished chan struct{}
	// createdAt is when the batch was prepared: its events' created_at,
	// and the start of its deadline (see writer_recover.go).
	createdAt time.Time
	// uuidsMissing says its events are stored but their uuids could not
	// be recorded: the writer records them before the next batch.
	uuidsMissing bool
	// poisonGen is the latest generation in which this batch or one
	// before it failed (-1: none), with that failure in poison.
	poisonGen int64
	poison    error
}

type teamUUID struct {
	team int64
	id   uuid.UUID
}

// prepare drops duplicates (within the batch, already stored, or in a
// batch still being written) and resolves persons. Errors are kept in the
// batch, which the write stage then fails.
func (w *Writer) prepare(group []*writeRequest, gen uint64, inflight map[teamUUID]int) *batch {
	now := time.Now().UTC()
	b := &batch{group: group, gen: gen, results: make([]WriteResult, len(group)), createdAt: now}
	for _, r := range group {
		b.total += len(r.events)
	}
	events := make([]Event, 0, b.total)
	updates := make([]*PersonUpdate, 0, b.total)
	owner := make([]int, 0, b.total)
	groupUps := make([]*GroupUpdate, 0, b.total)
	// Keyed by project and uuid, as every other dedup: one uuid sent to
	// two projects is two events.
	seen := make(map[teamUUID]bool, b.total)
	// retried: client uuids the retry check must look up; known: client
	// uuids the writer already knows are new.
	var retried, known []int
	for gi, r := range group {
		for i := range r.events {
			c := &r.events[i]
			if seen[teamUUID{c.TeamID, c.UUID}] || (c.ClientUUID && inflight[teamUUID{c.TeamID, c.UUID}] > 0) {
				b.results[gi].Duplicates++
				continue
			}
			seen[teamUUID{c.TeamID, c.UUID}] = true
			if c.ClientUUID {
				if w.recent != nil {
					if dup, sure := w.recent.lookup(teamUUID{c.TeamID, c.UUID}, c.UUIDTime); dup {
						b.results[gi].Duplicates++
						continue
					} else if sure {
						known = append(known, len(events))
					} else {
						retried = append(retried, len(events))
					}
				} else {
					retried = append(retried, len(events))
				}
			}
			ev := c.Event
			ev.CreatedAt = now
			events = append(events, ev)
			updates = append(updates, c.Person)
			groupUps = append(groupUps, c.Group)
			owner = append(owner, gi)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout)
	defer cancel()
	w.ident.trim()
	// The retry check and person resolution are independent reads: run
	// them side by side. Resolving a retried event again changes nothing
	// (its links and property updates are already in place).
	var stored map[teamUUID]bool
	var storedErr error
	checked := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(checked)
		defer func() { // as Writer.safely: this goroutine is outside it
			if r := recover(); r != nil {
				storedErr = fmt.Errorf("the retry check failed: %v", r)
			}
		}()
		stored, storedErr = w.storedUUIDs(ctx, events, retried)
		w.stats.CheckNanos.Add(int64(time.Since(start)))
	}()
	p, err := w.ident.resolve(ctx, events, updates)
	w.stats.ResolveNanos.Add(int64(time.Since(start)))
	<-checked
	if b.err = errors.Join(err, storedErr); b.err != nil {
		return b
	}
	b.p, b.persons = p, p.personRows(&w.ident.clock)
	if b.groups, b.err = w.prepareGroups(ctx, gen, group); b.err != nil {
		return b
	}
	for _, i := range append(known, retried...) {
		if k := (teamUUID{events[i].TeamID, events[i].UUID}); !stored[k] {
			b.fresh = append(b.fresh, []any{k.team, k.id})
			b.inflight = append(b.inflight, k)
			inflight[k]++
		}
	}
	if len(stored) > 0 {
		keep := 0
		for i := range events {
			if stored[teamUUID{events[i].TeamID, events[i].UUID}] {
				b.results[owner[i]].Duplicates++
				continue
			}
			events[keep], owner[keep], updates[keep], groupUps[keep] = events[i], owner[i], updates[i], groupUps[i]
			keep++
		}
		events, owner = events[:keep], owner[:keep]
	}
	b.events, b.owner = events, owner
	if !w.taxOff.Load() {
		b.tax, b.err = w.observeTaxonomy(ctx, events, updates, groupUps, now)
	}
	return b
}

// write stores person rows, then events, then the events' uuids: no stored
// event lacks its person, and no uuid is recorded for an event that is
// not stored. The three person tables are written side by side.
func (w *Writer) write(ctx context.Context, b *batch) error {
	writes := []struct {
		t    Table
		rows [][]any
	}{
		{w.tables.persons, b.persons},
		{w.tables.distinctIDs, b.p.distinctIDs},
		{w.tables.overrides, b.p.overrides},
		{w.groupsTable(), b.groups},
	}
	if b.tax != nil {
		writes = append(writes, w.taxonomyWrites(b.tax)...)
	}
	errs := make([]error, len(writes))
	start := time.Now()
	began := start
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
	if len(b.events) > 0 {
		start = time.Now()
		err := w.engine.InsertEvents(ctx, b.events)
		w.stats.InsertNanos.Add(int64(time.Since(start)))
		if err != nil {
			return fmt.Errorf("write events: %w", err)
		}
	}
	b.stored = true
	if w.cfg.AfterEventsInsert != nil {
		w.cfg.AfterEventsInsert()
	}
	// A failure here would let a resend be stored again: try again, and
	// if it still fails, the writer records the uuids from the events
	// themselves before it prepares another batch.
	for attempt := 1; ; attempt++ {
		err := w.engine.Insert(ctx, w.tables.eventUUIDs, b.fresh)
		if err == nil {
			break
		}
		if attempt == 3 || ctx.Err() != nil {
			w.log.Error("could not record event uuids; recovering them before the next batch", "events", len(b.fresh), "error", err)
			b.uuidsMissing = true
			break
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	for _, gi := range b.owner {
		b.results[gi].Stored++
	}
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.ObserveFlush(len(b.events), time.Since(began))
	}
	w.stats.Flushes.Add(1)
	w.stats.Events.Add(int64(len(b.events)))
	w.stats.Duplicates.Add(int64(b.total - len(b.events)))
	return nil
}

// jsonLines writes values as JSONEachRow text. Lists of keys travel to the
// engine this way, as one String parameter read with format(): the engine
// parses an Array parameter of thousands of values far more slowly
// (benchmarks/results/ingestion.md).
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
// escaping), the cheapest form for the engine to read
// (benchmarks/results/ingestion.md).
func (w *Writer) storedUUIDs(ctx context.Context, events []Event, idx []int) (map[teamUUID]bool, error) {
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
	rows, err := w.engine.Query(ctx, chsql.Statement{
		SQL: `SELECT DISTINCT team_id, uuid FROM ` + w.schema.EventUUIDs + `
WHERE (team_id, uuid) IN (SELECT t, u FROM format(TSV, 't Int64, u UUID', {keys:String}))`,
		Params: map[string]any{"keys": keys.String()},
	})
	if err != nil {
		return nil, fmt.Errorf("look up retried events: %w", err)
	}
	out := make(map[teamUUID]bool, len(rows.Data))
	for _, r := range rows.Data {
		team, ok := r[0].(int64)
		id, err := cellUUID(r[1])
		if err != nil || !ok {
			return nil, fmt.Errorf("look up retried events: %v %w", r[0], err)
		}
		out[teamUUID{team, id}] = true
	}
	return out, nil
}
