package metadata

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// The records a project holds (actions, cohorts, annotations, dashboards,
// insights) are read and written the same way: a row type that scans the
// record with its users under prefixed columns (and a list's window
// count), one query per read, soft deletion that only a restore undoes,
// and an activity entry per change. The helpers below are that way once;
// what differs between kinds (which rows a project sees, what an update
// also touches) stays with the kind.

// row is a query's row for a record of type T: record turns it into the
// record (its users resolved), total is the list's window count.
type row[T any] interface {
	record() T
	total() int
}

// rowOf is a pointer to the row type R of records of type T, the form in
// which R's methods are called.
type rowOf[R, T any] interface {
	*R
	row[T]
}

// inTx runs fn in a transaction and commits it when fn returns no
// error; otherwise, or when the commit fails, nothing fn wrote stays.
func inTx[T any](ctx context.Context, s *Store, fn func(tx *sqlx.Tx) (*T, error)) (*T, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	t, err := fn(tx)
	if err != nil {
		return nil, err
	}
	return t, tx.Commit()
}

// getRecord reads the record of query's one row through tx, or through
// the pool (nil tx) with the statement prepared once; ErrNotFound when
// there is none.
func getRecord[T, R any, P rowOf[R, T]](ctx context.Context, s *Store, tx *sqlx.Tx, query string, args ...any) (*T, error) {
	var r R
	if err := s.getOne(ctx, tx, &r, query, args...); err != nil {
		return nil, err
	}
	t := P(&r).record()
	return &t, nil
}

// selectRecords reads the records of every row of query.
func selectRecords[T, R any, P rowOf[R, T]](ctx context.Context, s *Store, query string, args ...any) ([]T, error) {
	var rows []R
	if err := s.recallInto(&rows, query, args, func() error { return s.db.SelectContext(ctx, &rows, query, args...) }); err != nil {
		return nil, err
	}
	return records[T, R, P](rows), nil
}

func records[T, R any, P rowOf[R, T]](rows []R) []T {
	out := make([]T, len(rows))
	for k := range rows {
		out[k] = P(&rows[k]).record()
	}
	return out
}

// recordsByID reads the records of query's rows, by id: query takes the
// project ($1) and the ids ($2, an array). No ids read nothing.
func recordsByID[T, R any, P rowOf[R, T]](ctx context.Context, s *Store, query string, projectID int64, ids []int64, id func(*T) int64) (map[int64]*T, error) {
	out := map[int64]*T{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := selectRecords[T, R, P](ctx, s, query, projectID, pq.Array(ids))
	if err != nil {
		return nil, err
	}
	for k := range list {
		out[id(&list[k])] = &list[k]
	}
	return out, nil
}

// listPage reads one page of records and their total: query is the list
// with its window count (total) and ends in LIMIT and OFFSET, the
// parameters after args; count is the same list's count(*) with args. A
// page past the end has no row to carry the count, so only then does
// count run.
func listPage[T, R any, P rowOf[R, T]](ctx context.Context, s *Store, query, count string, args []any, limit, offset int) ([]T, int, error) {
	st, err := s.prepared(ctx, query)
	if err != nil {
		return nil, 0, err
	}
	var rows []R
	if err := st.SelectContext(ctx, &rows, append(slices.Clip(args), limit, offset)...); err != nil {
		return nil, 0, err
	}
	out := records[T, R, P](rows)
	if len(rows) > 0 {
		return out, P(&rows[0]).total(), nil
	}
	if offset == 0 {
		return out, 0, nil
	}
	var total int
	err = s.db.GetContext(ctx, &total, count, args...)
	return out, total, err
}

// searchPattern is an ILIKE pattern matching text that holds search
// literally (its wildcards escaped), or nil for no search: a parameter
// the list's condition ignores when null.
func searchPattern(search string) *string {
	if search == "" {
		return nil
	}
	p := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(search) + "%"
	return &p
}

// insertRecord inserts a row into table, the columns cols with args and
// then each of fields that values sets, and returns its id.
func insertRecord[R any](ctx context.Context, tx *sqlx.Tx, table string, cols []string, args []any, fields []field[R], values map[string]any) (int64, error) {
	for _, f := range fields {
		if v, ok := values[f.name]; ok {
			cols = append(cols, pq.QuoteIdentifier(f.name))
			args = append(args, dbValue(v))
		}
	}
	var id int64
	err := tx.QueryRowContext(ctx, "INSERT INTO "+table+" ("+strings.Join(cols, ", ")+") VALUES ("+
		placeholders(len(args))+") RETURNING id", args...).Scan(&id)
	return id, err
}

// updateRecord writes sets, whose parameters are args numbered from $1
// (changedFields' values), to the row id of table.
func updateRecord(ctx context.Context, tx *sqlx.Tx, table string, sets []string, args []any, id int64) error {
	values := make([]any, 0, len(args)+1)
	for _, a := range args {
		values = append(values, dbValue(a))
	}
	values = append(values, id)
	_, err := tx.ExecContext(ctx, fmt.Sprintf("UPDATE %s SET %s WHERE id = $%d", table, strings.Join(sets, ", "), len(values)), values...)
	return err
}

// required is the error of a create whose values leave out the field
// name, nil when they have it.
func required(values map[string]any, name string) error {
	if _, ok := values[name]; !ok {
		return &ValidationError{Attr: name, Detail: "This field is required."}
	}
	return nil
}

// onlyRestore is the rule for updating a soft-deleted record: only a
// restore (deleted: false, with other fields or not) may touch it; any
// other update is ErrNotFound, as for a record that does not exist.
func onlyRestore(deleted bool, values map[string]any) error {
	if deleted && values["deleted"] != false {
		return ErrNotFound
	}
	return nil
}

// editActivity names an update in the activity log: the record's
// deletion, its restoration, or another change.
func editActivity(wasDeleted, isDeleted bool) string {
	switch {
	case isDeleted && !wasDeleted:
		return "deleted"
	case wasDeleted && !isDeleted:
		return "restored"
	}
	return "updated"
}
