package olap

import (
	"context"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder"
)

// personDeletion is a person's deletion on its way to the writer's loop.
type personDeletion struct {
	team       int64
	statements func(version uint64) []querybuilder.Statement
	result     chan error
}

// DeletePerson runs a person's deletion (statements, given a version above
// every version the writer has written: querybuilder.PersonDeleteStatements)
// inside the writer, between batches: every batch prepared before it is
// stored first (so deleting events catches them all), none is prepared
// while it runs (so none writes the person back with a later version), and
// what the writer knew of the project's persons is dropped after it, so the
// next event of one of the person's distinct ids makes a new person
// (freshPersonID). Ingestion waits while it runs.
func (w *Writer) DeletePerson(ctx context.Context, team int64, statements func(version uint64) []querybuilder.Statement) error {
	d := &personDeletion{team: team, statements: statements, result: make(chan error, 1)}
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
	return <-d.result
}

// deletePerson runs a deletion; only loop calls it, with no batch pending.
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
	delete(w.ident.teams, d.team)
	d.result <- err
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
