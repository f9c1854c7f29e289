package metadata

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// Change is one field's change in an activity entry.
type Change struct {
	Type   string `json:"type"`
	Field  string `json:"field"`
	Action string `json:"action"`
	Before any    `json:"before"`
	After  any    `json:"after"`
}

// ActivityDetail is what an activity entry says about the item.
type ActivityDetail struct {
	Name    string   `json:"name"`
	ShortID string   `json:"short_id,omitempty"`
	Changes []Change `json:"changes"`
}

// Activity is one entry of the change log: who did what to which item.
type Activity struct {
	ID             int64
	OrganizationID uuid.UUID
	ProjectID      *int64
	Scope          string // Project or Insight
	ItemID         string
	Activity       string // created, updated, deleted, restored
	UserID         int64
	Detail         ActivityDetail
	CreatedAt      time.Time
	User           *User
}

func logActivity(ctx context.Context, tx *sqlx.Tx, a Activity) error {
	if a.Detail.Changes == nil {
		a.Detail.Changes = []Change{}
	}
	detail, err := json.Marshal(a.Detail)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO activity_log (organization_id, project_id, scope, item_id, activity, user_id, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, a.OrganizationID, a.ProjectID, a.Scope, a.ItemID, a.Activity, a.UserID, detail)
	return err
}

// ListActivity returns a page of a project's log for one scope, optionally
// one item ("" = all items), newest first, and the total count.
func (s *Store) ListActivity(ctx context.Context, projectID int64, scope, itemID string, limit, offset int) ([]Activity, int, error) {
	var total int
	if err := s.db.GetContext(ctx, &total, `SELECT count(*) FROM activity_log
		WHERE project_id = $1 AND scope = $2 AND ($3 = '' OR item_id = $3)`, projectID, scope, itemID); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.QueryxContext(ctx, `SELECT a.id, a.organization_id, a.project_id, a.scope, a.item_id, a.activity,
			COALESCE(a.user_id, 0), a.detail, a.created_at,
			u.uuid, u.distinct_id, u.email, u.first_name, u.last_name, u.is_email_verified, u.hedgehog_config
		FROM activity_log a LEFT JOIN users u ON u.id = a.user_id
		WHERE a.project_id = $1 AND a.scope = $2 AND ($3 = '' OR a.item_id = $3)
		ORDER BY a.created_at DESC, a.id DESC LIMIT $4 OFFSET $5`, projectID, scope, itemID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Activity
	for rows.Next() {
		var a Activity
		var detail []byte
		var uu *uuid.UUID
		var distinct, email, first, last *string
		var verified *bool
		var hedgehog []byte
		if err := rows.Scan(&a.ID, &a.OrganizationID, &a.ProjectID, &a.Scope, &a.ItemID, &a.Activity, &a.UserID, &detail, &a.CreatedAt,
			&uu, &distinct, &email, &first, &last, &verified, &hedgehog); err != nil {
			return nil, 0, err
		}
		if err := json.Unmarshal(detail, &a.Detail); err != nil {
			return nil, 0, err
		}
		if uu != nil {
			a.User = &User{ID: a.UserID, UUID: *uu, DistinctID: *distinct, Email: *email, FirstName: *first,
				LastName: *last, IsEmailVerified: *verified, HedgehogConfig: hedgehog}
		}
		out = append(out, a)
	}
	return out, total, rows.Err()
}
