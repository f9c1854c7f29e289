package olap

import (
	"context"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// personDeletion is a person's deletion on its way to the writer's loop.
type personDeletion struct {
	team       int64
	statements func(version uint64) []chsql.Statement
	result     chan error
}

// DeletePerson deletes a person in two steps. rewrite (statements given
// a version above every version the writer has written:
// querybuilder.PersonDeleteStatements) runs inside the writer, between
// batches: every batch prepared before it is stored first (so deleting
// events catches them all), none is prepared while it runs (so none
// writes the person back with a later version), and what the writer knew
// of the project's persons is dropped after it, so the next event of one
// of the person's distinct ids makes a new person (freshPersonID).
// events (querybuilder.PersonEventsDeleteStatement, or none) run after
// the writer is released: a DELETE of events may take seconds, during
// which every project's ingestion would otherwise wait, and events
// arriving meanwhile no longer carry the person's ids. Both steps run to
// the end (within the writer's Timeout) even if ctx ends, and every
// statement can run again, so a failed deletion is retried whole.
func (w *Writer) DeletePerson(ctx context.Context, team int64, rewrite func(version uint64) []chsql.Statement, events []chsql.Statement) error {
	d := &personDeletion{team: team, statements: rewrite, result: make(chan error, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrWriterClosed
	}
	select {
	case w.deletes <- d:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	if err := <-d.result; err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.Timeout)
	defer cancel()
	for _, stmt := range events {
		if err := w.engine.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// deletePerson runs a deletion's rewrite; only loop calls it, with no
// batch pending.
func (w *Writer) deletePerson(d *personDeletion) {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout)
	defer cancel()
	var err error
	for _, stmt := range d.statements(w.ident.clock.next()) {
		if err = w.engine.Exec(ctx, stmt); err != nil {
			break
		}
	}
	// Even a failed deletion may have written some of its rows.
	w.ident.forget(d.team)
	d.result <- err
}

// forget drops what is known of one team's persons; the next batch asks
// ClickHouse again.
func (id *identity) forget(team int64) {
	if ti := id.teams[team]; ti != nil {
		id.cached -= len(ti.ids)
		delete(id.teams, team)
	}
}

// freshPersonID is the id of the person made for a distinct id that
// maps to no live person: PersonIDFor, unless the distinct id's person
// was deleted (gone), whose id that may well be; then one derived from
// the deleted person's, so that two writers, or a retry, still agree on
// it.
func (ti *teamIdentity) freshPersonID(d string) uuid.UUID {
	if old, ok := ti.gone[d]; ok {
		return PersonIDFor(ti.id, d+"\x00after deleted person "+old.String())
	}
	return PersonIDFor(ti.id, d)
}

// markGone records that distinct id d's person was deleted.
func (ti *teamIdentity) markGone(d string, person uuid.UUID) {
	if ti.gone == nil {
		ti.gone = map[string]uuid.UUID{}
	}
	ti.gone[d] = person
}
