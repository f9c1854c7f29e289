package metadata

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Action is a saved definition of an event that counts: its steps, ORed
// (analytics.md, Entities); see migrations/postgres/0004. Version grows
// with every change.
type Action struct {
	ID          int64           `db:"id"`
	ProjectID   int64           `db:"project_id"`
	Name        string          `db:"name"`
	Description string          `db:"description"`
	Steps       json.RawMessage `db:"steps"`
	Tags        pq.StringArray  `db:"tags"`
	Deleted     bool            `db:"deleted"`
	Version     int64           `db:"version"`
	CreatedAt   time.Time       `db:"created_at"`
	UpdatedAt   time.Time       `db:"updated_at"`
	CreatedBy   *User           `db:"-"`
}

type actionRow struct {
	Action
	CreatedBy userRef `db:"created_by"`
	Total     int     `db:"total"`
}

func (r *actionRow) action() Action {
	a := r.Action
	a.CreatedBy = r.CreatedBy.user()
	return a
}

var actionSelect = `SELECT a.id, a.project_id, a.name, a.description, a.steps, a.tags, a.deleted, a.version,
	a.created_at, a.updated_at, ` + userColumns("u", "created_by")

const actionJoins = ` FROM actions a LEFT JOIN users u ON u.id = a.created_by`

// ListActions returns one page of the project's actions that are not
// deleted, newest first, and the total; search keeps those whose name
// holds it (any case).
func (s *Store) ListActions(ctx context.Context, projectID int64, search string, limit, offset int) ([]Action, int, error) {
	var pattern *string
	if search != "" {
		q := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(search) + "%"
		pattern = &q
	}
	st, err := s.prepared(ctx, actionSelect+", count(*) OVER () AS total"+actionJoins+
		` WHERE a.project_id = $1 AND NOT a.deleted AND ($2::text IS NULL OR a.name ILIKE $2) ORDER BY a.id DESC LIMIT $3 OFFSET $4`)
	if err != nil {
		return nil, 0, err
	}
	var rows []actionRow
	if err := st.SelectContext(ctx, &rows, projectID, pattern, limit, offset); err != nil {
		return nil, 0, err
	}
	out := make([]Action, len(rows))
	total := 0
	for k := range rows {
		out[k] = rows[k].action()
		total = rows[k].Total
	}
	if len(rows) == 0 && offset > 0 {
		err = s.db.GetContext(ctx, &total, `SELECT count(*) FROM actions a WHERE a.project_id = $1 AND NOT a.deleted
			AND ($2::text IS NULL OR a.name ILIKE $2)`, projectID, pattern)
	}
	return out, total, err
}

// GetAction returns one of the project's actions, deleted or not;
// ErrNotFound otherwise.
func (s *Store) GetAction(ctx context.Context, projectID, id int64) (*Action, error) {
	return s.actionWhere(ctx, nil, "a.project_id = $1 AND a.id = $2", projectID, id)
}

// ActionsByID returns the project's actions with these ids, deleted ones
// included (callers decide what a deleted one means), by id.
func (s *Store) ActionsByID(ctx context.Context, projectID int64, ids []int64) (map[int64]*Action, error) {
	out := map[int64]*Action{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []actionRow
	if err := s.db.SelectContext(ctx, &rows, actionSelect+actionJoins+" WHERE a.project_id = $1 AND a.id = ANY($2)",
		projectID, pq.Array(ids)); err != nil {
		return nil, err
	}
	for k := range rows {
		a := rows[k].action()
		out[a.ID] = &a
	}
	return out, nil
}

func (s *Store) actionWhere(ctx context.Context, tx *sqlx.Tx, where string, args ...any) (*Action, error) {
	var row actionRow
	if err := s.getOne(ctx, tx, &row, actionSelect+actionJoins+" WHERE "+where, args...); err != nil {
		return nil, err
	}
	a := row.action()
	return &a, nil
}

// CreateAction creates an action with the given fields (checked by
// ParseActionInput; name is required) and records the creation.
func (s *Store) CreateAction(ctx context.Context, p *Project, userID int64, in ActionInput) (*Action, error) {
	if _, ok := in.Values["name"]; !ok {
		return nil, &ValidationError{Attr: "name", Detail: "This field is required."}
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	cols := []string{"project_id", "created_by"}
	args := []any{p.ID, userID}
	for _, f := range actionFields {
		if v, ok := in.Values[f.name]; ok {
			cols = append(cols, f.name)
			args = append(args, dbValue(v))
		}
	}
	var id int64
	if err := tx.QueryRowContext(ctx, "INSERT INTO actions ("+strings.Join(cols, ", ")+") VALUES ("+
		placeholders(len(args))+") RETURNING id", args...).Scan(&id); err != nil {
		return nil, err
	}
	a, err := s.actionWhere(ctx, tx, "a.id = $1", id)
	if err != nil {
		return nil, err
	}
	if err := logActivity(ctx, tx, actionActivity(p, a, userID, "created", nil)); err != nil {
		return nil, err
	}
	return a, tx.Commit()
}

// UpdateAction applies the given fields, bumping the version when
// anything changes; a deleted action can only be restored.
func (s *Store) UpdateAction(ctx context.Context, p *Project, userID, id int64, in ActionInput) (*Action, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	before, err := s.actionWhere(ctx, tx, "a.project_id = $1 AND a.id = $2 FOR UPDATE OF a", p.ID, id)
	if err != nil {
		return nil, err
	}
	if before.Deleted && in.Values["deleted"] != false {
		return nil, ErrNotFound
	}
	sets, args, changes := changedFields("Action", actionFields, before, in.Values)
	if len(sets) == 0 {
		return before, nil
	}
	for i := range args {
		args[i] = dbValue(args[i])
	}
	args = append(args, id)
	query := fmt.Sprintf("UPDATE actions SET %s, version = version + 1, updated_at = now() WHERE id = $%d", strings.Join(sets, ", "), len(args))
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return nil, err
	}
	after, err := s.actionWhere(ctx, tx, "a.id = $1", id)
	if err != nil {
		return nil, err
	}
	activity := "updated"
	switch {
	case after.Deleted && !before.Deleted:
		activity = "deleted"
	case before.Deleted && !after.Deleted:
		activity = "restored"
	}
	if err := logActivity(ctx, tx, actionActivity(p, after, userID, activity, changes)); err != nil {
		return nil, err
	}
	return after, tx.Commit()
}

// dbValue is a field value as PostgreSQL takes it: steps as JSON text,
// tags as an array.
func dbValue(v any) any {
	switch x := v.(type) {
	case json.RawMessage:
		return string(x)
	case []string:
		return pq.Array(x)
	}
	return v
}

func actionActivity(p *Project, a *Action, userID int64, activity string, changes []Change) Activity {
	return Activity{OrganizationID: p.OrganizationID, ProjectID: &a.ProjectID, Scope: "Action", ItemID: fmt.Sprint(a.ID),
		Activity: activity, UserID: userID, Detail: ActivityDetail{Name: a.Name, Changes: changes}}
}
