package metadata

import (
	"context"
	"encoding/json"
	"fmt"
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

func (r *actionRow) record() Action {
	a := r.Action
	a.CreatedBy = r.CreatedBy.user()
	return a
}

func (r *actionRow) total() int { return r.Total }

var actionSelect = `SELECT a.id, a.project_id, a.name, a.description, a.steps, a.tags, a.deleted, a.version,
	a.created_at, a.updated_at, ` + userColumns("u", "created_by")

const actionJoins = ` FROM actions a LEFT JOIN users u ON u.id = a.created_by`

// ListActions returns one page of the project's actions that are not
// deleted, newest first, and the total; search keeps those whose name
// holds it (any case).
func (s *Store) ListActions(ctx context.Context, projectID int64, search string, limit, offset int) ([]Action, int, error) {
	const where = ` WHERE a.project_id = $1 AND NOT a.deleted AND ($2::text IS NULL OR a.name ILIKE $2)`
	return listPage[Action, actionRow](ctx, s, actionSelect+", count(*) OVER () AS total"+actionJoins+where+
		` ORDER BY a.id DESC LIMIT $3 OFFSET $4`, "SELECT count(*) FROM actions a"+where,
		[]any{projectID, searchPattern(search)}, limit, offset)
}

// GetAction returns one of the project's actions, deleted or not;
// ErrNotFound otherwise.
func (s *Store) GetAction(ctx context.Context, projectID, id int64) (*Action, error) {
	return s.actionWhere(ctx, nil, "a.project_id = $1 AND a.id = $2", projectID, id)
}

// ActionsByID returns the project's actions with these ids, deleted ones
// included (callers decide what a deleted one means), by id.
func (s *Store) ActionsByID(ctx context.Context, projectID int64, ids []int64) (map[int64]*Action, error) {
	return recordsByID[Action, actionRow](ctx, s, actionSelect+actionJoins+" WHERE a.project_id = $1 AND a.id = ANY($2)",
		projectID, ids, func(a *Action) int64 { return a.ID })
}

func (s *Store) actionWhere(ctx context.Context, tx *sqlx.Tx, where string, args ...any) (*Action, error) {
	return getRecord[Action, actionRow](ctx, s, tx, actionSelect+actionJoins+" WHERE "+where, args...)
}

// CreateAction creates an action with the given fields (checked by
// ParseActionInput; name is required) and records the creation.
func (s *Store) CreateAction(ctx context.Context, p *Project, userID int64, in ActionInput) (*Action, error) {
	if err := required(in.Values, "name"); err != nil {
		return nil, err
	}
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Action, error) {
		id, err := insertRecord(ctx, tx, "actions", []string{"project_id", "created_by"}, []any{p.ID, userID}, actionFields, in.Values)
		if err != nil {
			return nil, err
		}
		a, err := s.actionWhere(ctx, tx, "a.id = $1", id)
		if err != nil {
			return nil, err
		}
		return a, logActivity(ctx, tx, actionActivity(p, a, userID, "created", nil))
	})
}

// UpdateAction applies the given fields, bumping the version when
// anything changes; a deleted action can only be restored.
func (s *Store) UpdateAction(ctx context.Context, p *Project, userID, id int64, in ActionInput) (*Action, error) {
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Action, error) {
		before, err := s.actionWhere(ctx, tx, "a.project_id = $1 AND a.id = $2 FOR UPDATE OF a", p.ID, id)
		if err != nil {
			return nil, err
		}
		if err := onlyRestore(before.Deleted, in.Values); err != nil {
			return nil, err
		}
		sets, args, changes := changedFields("Action", actionFields, before, in.Values)
		if len(sets) == 0 {
			return before, nil
		}
		if err := updateRecord(ctx, tx, "actions", append(sets, "version = version + 1", "updated_at = now()"), args, id); err != nil {
			return nil, err
		}
		after, err := s.actionWhere(ctx, tx, "a.id = $1", id)
		if err != nil {
			return nil, err
		}
		return after, logActivity(ctx, tx, actionActivity(p, after, userID, editActivity(before.Deleted, after.Deleted), changes))
	})
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
