package olap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// identity resolves distinct ids to persons and keeps person properties.
// It belongs to the writer's flush goroutine: nothing else touches it, so
// it needs no lock. What it knows is a cache of ClickHouse's
// person_distinct_id, persons and person_overrides tables (a miss is a
// lookup there), so a restart or a full cache loses nothing. It assumes
// one writer per project: two processes ingesting the same project at once
// could each create a link the other does not see until its cache misses.
type identity struct {
	engine Engine
	tables chsql.Schema
	log    *slog.Logger
	teams  map[int64]*teamIdentity
	// cached counts distinct ids held over all teams; past limit the
	// caches are dropped (not the overrides, which are small and complete).
	cached, limit int
	clock         versionClock
}

type teamIdentity struct {
	id      int64
	ids     map[string]uuid.UUID
	persons map[uuid.UUID]*person
	// overrides maps a merged-away person to the person it lives on as,
	// flattened (never a chain), complete for the team once loaded.
	overrides map[uuid.UUID]uuid.UUID
	// gone maps distinct ids whose person was deleted to that person
	// (persons_delete.go).
	gone map[string]uuid.UUID
}

// pending is what one flush must write besides events.
type pending struct {
	persons     map[*person]int64 // dirty person → team
	distinctIDs [][]any
	overrides   [][]any
}

func newIdentity(engine Engine, tables chsql.Schema, log *slog.Logger, limit int) *identity {
	return &identity{engine: engine, tables: tables, log: log, teams: map[int64]*teamIdentity{}, limit: limit}
}

// versionClock hands out increasing versions for the versioned tables:
// wall-clock nanoseconds, so a restarted process still writes versions
// above the ones before it.
type versionClock struct{ last uint64 }

func (c *versionClock) next() uint64 {
	v := uint64(time.Now().UnixNano())
	if v <= c.last {
		v = c.last + 1
	}
	c.last = v
	return v
}

// forgetAll drops what is known of every team after a failed batch,
// whose writes may or may not have landed: the next batch asks ClickHouse
// again.
func (id *identity) forgetAll() {
	id.teams = map[int64]*teamIdentity{}
	id.cached = 0
}

// trim empties the id and person caches when they have grown past the
// limit; the cost is one lookup per distinct id seen again.
func (id *identity) trim() {
	if id.cached <= id.limit {
		return
	}
	for _, ti := range id.teams {
		ti.ids = map[string]uuid.UUID{}
		ti.persons = map[uuid.UUID]*person{}
	}
	id.cached = 0
}

// resolve sets PersonID on every event, applying links and property
// updates in the order given, and returns the rows to write.
func (id *identity) resolve(ctx context.Context, events []Event, updates []*PersonUpdate) (*pending, error) {
	byTeam := map[int64][]int{}
	for i := range events {
		byTeam[events[i].TeamID] = append(byTeam[events[i].TeamID], i)
	}
	out := &pending{persons: map[*person]int64{}}
	for team, idx := range byTeam {
		ti, err := id.team(ctx, team)
		if err != nil {
			return nil, err
		}
		if err := id.prefetch(ctx, ti, events, updates, idx); err != nil {
			return nil, err
		}
		for _, i := range idx {
			ev, u := &events[i], updates[i]
			if u != nil && u.Link != "" {
				if err := id.link(ctx, ti, ev, u, out); err != nil {
					return nil, err
				}
			}
			pid := id.personOf(ti, ev.DistinctID, ev.Timestamp, out)
			ev.PersonID = pid
			if p, ok := ti.persons[pid]; ok && ev.Timestamp.Before(p.createdAt) {
				// created_at is the person's earliest event: a batch's
				// events come in any order, and an import or an offline
				// queue sends earlier ones later. The writer holds every
				// person of the distinct ids it knows (prefetch).
				p.createdAt = ev.Timestamp
				out.persons[p] = team
			}
			if u != nil && !u.empty() {
				p, err := id.person(ctx, ti, pid, ev.Timestamp)
				if err != nil {
					return nil, err
				}
				if p.apply(u, ev.Timestamp) {
					out.persons[p] = team
				}
			}
		}
	}
	return out, nil
}

func (id *identity) team(ctx context.Context, team int64) (*teamIdentity, error) {
	if ti := id.teams[team]; ti != nil {
		return ti, nil
	}
	rows, err := id.engine.Query(ctx, chsql.Statement{
		SQL: `SELECT old_person_id, argMax(override_person_id, version)
FROM ` + id.tables.Overrides + ` WHERE team_id = {team:Int64} GROUP BY old_person_id`,
		Params: map[string]any{"team": team},
	})
	if err != nil {
		return nil, fmt.Errorf("load person overrides: %w", err)
	}
	ti := &teamIdentity{id: team, ids: map[string]uuid.UUID{}, persons: map[uuid.UUID]*person{},
		overrides: make(map[uuid.UUID]uuid.UUID, len(rows.Data))}
	for _, r := range rows.Data {
		old, err1 := cellUUID(r[0])
		to, err2 := cellUUID(r[1])
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("load person overrides: %w", err)
		}
		ti.overrides[old] = to
	}
	id.teams[team] = ti
	return ti, nil
}

// prefetch looks up, in one query each, the distinct ids and then the
// persons this flush needs that the cache does not hold.
func (id *identity) prefetch(ctx context.Context, ti *teamIdentity, events []Event, updates []*PersonUpdate, idx []int) error {
	// Persons to load: those whose properties or links change, and those
	// of distinct ids seen here for the first time since the cache was
	// trimmed, so that an earlier event of theirs lowers created_at
	// (resolve) even when it updates nothing.
	var load []uuid.UUID
	loading := map[uuid.UUID]bool{}
	loadPerson := func(p uuid.UUID) {
		p = ti.current(p)
		if _, ok := ti.persons[p]; !ok && !loading[p] {
			loading[p] = true
			load = append(load, p)
		}
	}
	var missing []string
	seen := map[string]bool{}
	want := func(d string) {
		if _, ok := ti.ids[d]; !ok && !seen[d] {
			seen[d] = true
			missing = append(missing, d)
		}
	}
	for _, i := range idx {
		want(events[i].DistinctID)
		if u := updates[i]; u != nil && u.Link != "" {
			want(u.Link)
		}
	}
	if len(missing) > 0 {
		keys := make([]any, len(missing))
		for i, d := range missing {
			keys[i] = struct {
				D string `json:"d"`
			}{d}
		}
		data, err := jsonLines(keys)
		if err != nil {
			return err
		}
		// Deleted mappings too: their distinct ids get new persons
		// (freshPersonID).
		rows, err := id.engine.Query(ctx, chsql.Statement{
			SQL: `SELECT distinct_id, argMax(person_id, version), argMax(is_deleted, version) FROM ` + id.tables.DistinctIDs + `
WHERE team_id = {team:Int64} AND distinct_id IN (SELECT d FROM format(JSONEachRow, 'd String', {ids:String}))
GROUP BY distinct_id`,
			Params: map[string]any{"team": ti.id, "ids": data},
		})
		if err != nil {
			return fmt.Errorf("look up distinct ids: %w", err)
		}
		for _, r := range rows.Data {
			pid, err := cellUUID(r[1])
			if err != nil {
				return fmt.Errorf("look up distinct ids: %w", err)
			}
			if deleted, _ := r[2].(uint64); deleted == 1 {
				ti.markGone(fmt.Sprint(r[0]), pid)
				continue
			}
			ti.ids[fmt.Sprint(r[0])] = pid
			id.cached++
			loadPerson(pid)
		}
	}
	need := func(d string) {
		if p, ok := ti.ids[d]; ok {
			loadPerson(p)
		}
	}
	for _, i := range idx {
		if u := updates[i]; u != nil && !u.empty() {
			need(events[i].DistinctID)
			if u.Link != "" {
				need(u.Link)
			}
		}
	}
	return id.loadPersons(ctx, ti, load)
}

func (id *identity) loadPersons(ctx context.Context, ti *teamIdentity, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := id.engine.Query(ctx, chsql.Statement{
		SQL: `SELECT id, argMax(property_times, version), argMax(created_at, version),
    argMax(is_identified, version), argMax(is_deleted, version)
FROM ` + id.tables.Persons + ` WHERE team_id = {team:Int64} AND id IN {ids:Array(UUID)} GROUP BY id`,
		Params: map[string]any{"team": ti.id, "ids": ids},
	})
	if err != nil {
		return fmt.Errorf("load persons: %w", err)
	}
	for _, r := range rows.Data {
		pid, err := cellUUID(r[0])
		if err != nil {
			return fmt.Errorf("load persons: %w", err)
		}
		props, _ := r[1].(string)
		created, _ := r[2].(time.Time)
		identified, _ := r[3].(uint64)
		deleted, _ := r[4].(uint64)
		p, err := loadPerson(pid, props, created, identified == 1, deleted == 1)
		if err != nil {
			return fmt.Errorf("person %s: stored property times: %w", pid, err)
		}
		ti.persons[pid] = p
	}
	return nil
}

// current follows a merged-away person to the person it became.
func (ti *teamIdentity) current(p uuid.UUID) uuid.UUID {
	if q, ok := ti.overrides[p]; ok {
		return q
	}
	return p
}

// personOf is the person a distinct id belongs to now, creating a person
// for a distinct id seen for the first time. A distinct id whose person
// was merged away is moved to the surviving person.
func (id *identity) personOf(ti *teamIdentity, d string, at time.Time, out *pending) uuid.UUID {
	p, ok := ti.ids[d]
	if !ok {
		np := newPerson(ti.freshPersonID(d), at)
		ti.persons[np.id] = np
		out.persons[np] = ti.id
		id.mapID(ti, d, np.id, out)
		return np.id
	}
	if q := ti.current(p); q != p {
		id.mapID(ti, d, q, out)
		return q
	}
	return p
}

func (id *identity) mapID(ti *teamIdentity, d string, p uuid.UUID, out *pending) {
	if _, ok := ti.ids[d]; !ok {
		id.cached++
	}
	ti.ids[d] = p
	out.distinctIDs = append(out.distinctIDs, []any{ti.id, d, p, uint8(0), id.clock.next()})
}

// person returns a person's state, loading it if needed; a person with no
// stored row yet starts empty.
func (id *identity) person(ctx context.Context, ti *teamIdentity, pid uuid.UUID, at time.Time) (*person, error) {
	if p, ok := ti.persons[pid]; ok {
		return p, nil
	}
	if err := id.loadPersons(ctx, ti, []uuid.UUID{pid}); err != nil {
		return nil, err
	}
	if p, ok := ti.persons[pid]; ok {
		return p, nil
	}
	p := newPerson(pid, at)
	ti.persons[pid] = p
	return p, nil
}

// link joins the event's distinct id and u.Link into one person.
func (id *identity) link(ctx context.Context, ti *teamIdentity, ev *Event, u *PersonUpdate, out *pending) error {
	d, other := ev.DistinctID, u.Link
	if d == other || illegalDistinctID(d) || illegalDistinctID(other) {
		return nil
	}
	pd, hasD := ti.ids[d]
	po, hasO := ti.ids[other]
	switch {
	case !hasD && !hasO:
		// Both new: one person for both, the one d would have had.
		id.personOf(ti, d, ev.Timestamp, out)
		id.mapID(ti, other, ti.ids[d], out)
	case !hasD:
		// The usual $identify: an anonymous visitor signs up. The
		// identified id joins the visitor's person; nothing to merge.
		id.mapID(ti, d, ti.current(po), out)
	case !hasO:
		id.mapID(ti, other, ti.current(pd), out)
	default:
		pd, po = ti.current(pd), ti.current(po)
		if pd == po {
			return nil
		}
		src, err := id.person(ctx, ti, po, ev.Timestamp)
		if err != nil {
			return err
		}
		if src.identified && u.LinkKind != LinkMerge {
			id.log.Debug("refused to merge an identified person", "team_id", ti.id,
				"distinct_id", d, "other_distinct_id", other)
			return nil
		}
		dst, err := id.person(ctx, ti, pd, ev.Timestamp)
		if err != nil {
			return err
		}
		id.merge(ti, src, dst, out)
		id.mapID(ti, other, dst.id, out)
	}
	return nil
}

// merge moves src into dst: properties, the overrides that pointed at src,
// and src itself, which stays as a deleted row with an override so events
// already stored under it count as dst.
func (id *identity) merge(ti *teamIdentity, src, dst *person, out *pending) {
	dst.absorb(src)
	src.deleted = true
	out.persons[src] = ti.id
	out.persons[dst] = ti.id
	for old, to := range ti.overrides {
		if to == src.id {
			ti.overrides[old] = dst.id
			out.overrides = append(out.overrides, []any{ti.id, old, dst.id, id.clock.next()})
		}
	}
	ti.overrides[src.id] = dst.id
	out.overrides = append(out.overrides, []any{ti.id, src.id, dst.id, id.clock.next()})
	delete(ti.persons, src.id)
}

func illegalDistinctID(d string) bool {
	return illegalDistinctIDs[strings.ToLower(strings.TrimSpace(d))]
}

// personRows turns the pending persons into rows, each with a fresh version.
func (p *pending) personRows(clock *versionClock) [][]any {
	rows := make([][]any, 0, len(p.persons))
	for per, team := range p.persons {
		rows = append(rows, per.row(team, clock.next()))
	}
	return rows
}

// cellUUID reads a UUID cell, as text or as a UUID.
func cellUUID(v any) (uuid.UUID, error) {
	switch x := v.(type) {
	case uuid.UUID:
		return x, nil
	case string:
		return uuid.Parse(x)
	}
	return uuid.Nil, fmt.Errorf("not a uuid: %#v", v)
}
