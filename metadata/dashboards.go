package metadata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/types"
	"github.com/lib/pq"
)

// Dashboard is a named set of tiles whose filters override its insights'
// (analytics.md, Dashboards); see migrations/postgres/0006.
type Dashboard struct {
	ID               int64          `db:"id"`
	ProjectID        int64          `db:"project_id"`
	Name             string         `db:"name"`
	Description      string         `db:"description"`
	Pinned           bool           `db:"pinned"`
	Filters          types.JSONText `db:"filters"`
	Tags             pq.StringArray `db:"tags"`
	RestrictionLevel int64          `db:"restriction_level"`
	CreationMode     string         `db:"creation_mode"`
	Deleted          bool           `db:"deleted"`
	CreatedAt        time.Time      `db:"created_at"`
	LastModifiedAt   time.Time      `db:"last_modified_at"`
	CreatedBy        *User          `db:"-"`
	// Tiles are the tiles shown (not deleted, insight not deleted), in
	// id order; only a single dashboard's read fills them.
	Tiles []Tile `db:"-"`
}

// Tile is an insight's (InsightID) or a text's (TextBody) place on a
// dashboard.
type Tile struct {
	ID             int64          `db:"id"`
	DashboardID    int64          `db:"dashboard_id"`
	InsightID      sql.NullInt64  `db:"insight_id"`
	TextBody       sql.NullString `db:"text_body"`
	Layouts        types.JSONText `db:"layouts"`
	Color          sql.NullString `db:"color"`
	Deleted        bool           `db:"deleted"`
	LastModifiedAt time.Time      `db:"last_modified_at"`
}

type dashboardRow struct {
	Dashboard
	CreatedBy userRef `db:"created_by"`
	Total     int     `db:"total"`
}

func (r *dashboardRow) record() Dashboard {
	d := r.Dashboard
	d.CreatedBy = r.CreatedBy.user()
	return d
}

func (r *dashboardRow) total() int { return r.Total }

var dashboardSelect = `SELECT d.id, d.project_id, d.name, d.description, d.pinned, d.filters, d.tags, d.restriction_level,
	d.creation_mode, d.deleted, d.created_at, d.last_modified_at, ` + userColumns("u", "created_by")

const dashboardJoins = ` FROM dashboards d LEFT JOIN users u ON u.id = d.created_by`

const dashboardListWhere = ` WHERE d.project_id = $1 AND NOT d.deleted AND ($2::text IS NULL OR d.name ILIKE $2)`

// ListDashboards returns one page of the project's dashboards that are
// not deleted (pinned first, then by name and id, as PostHog lists them)
// and the total; search keeps those whose name holds it (any case).
func (s *Store) ListDashboards(ctx context.Context, projectID int64, search string, limit, offset int) ([]Dashboard, int, error) {
	return listPage[Dashboard, dashboardRow](ctx, s, dashboardSelect+", count(*) OVER () AS total"+dashboardJoins+dashboardListWhere+
		` ORDER BY d.pinned DESC, d.name, d.id LIMIT $3 OFFSET $4`, "SELECT count(*) FROM dashboards d"+dashboardListWhere,
		[]any{projectID, searchPattern(search)}, limit, offset)
}

// GetDashboard returns one of the project's dashboards, deleted or not,
// with its tiles; ErrNotFound otherwise.
func (s *Store) GetDashboard(ctx context.Context, projectID, id int64) (*Dashboard, error) {
	return s.dashboardWhere(ctx, nil, "d.project_id = $1 AND d.id = $2", projectID, id)
}

func (s *Store) dashboardWhere(ctx context.Context, tx *sqlx.Tx, where string, args ...any) (*Dashboard, error) {
	d, err := getRecord[Dashboard, dashboardRow](ctx, s, tx, dashboardSelect+dashboardJoins+" WHERE "+where, args...)
	if err != nil {
		return nil, err
	}
	const tiles = `SELECT t.id, t.dashboard_id, t.insight_id, t.text_body, t.layouts, t.color,
		t.deleted, t.last_modified_at FROM dashboard_tiles t LEFT JOIN insights i ON i.id = t.insight_id
		WHERE t.dashboard_id = $1 AND NOT t.deleted AND (i.id IS NULL OR NOT i.deleted) ORDER BY t.id`
	if tx != nil {
		return d, tx.SelectContext(ctx, &d.Tiles, tiles, d.ID)
	}
	return d, s.recallInto(&d.Tiles, tiles, []any{d.ID}, func() error { return s.db.SelectContext(ctx, &d.Tiles, tiles, d.ID) })
}

// InsightsByID returns the project's insights with these ids that are not
// deleted, by id.
func (s *Store) InsightsByID(ctx context.Context, projectID int64, ids []int64) (map[int64]*Insight, error) {
	return recordsByID[Insight, insightRow](ctx, s, insightSelect+insightJoins+` WHERE i.project_id = $1 AND i.id = ANY($2)
		AND NOT i.deleted`, projectID, ids, func(i *Insight) int64 { return i.ID })
}

// record and total make insightRow (insights.go) a row for the record
// helpers (records.go).
func (r *insightRow) record() Insight { return r.insight() }
func (r *insightRow) total() int      { return r.Total }

// CreateDashboard creates a dashboard with the given fields and tiles,
// copying use_dashboard's tiles (and filters, unless given) first, and
// records the creation.
func (s *Store) CreateDashboard(ctx context.Context, p *Project, userID int64, in DashboardInput) (*Dashboard, error) {
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Dashboard, error) {
		var source *Dashboard
		if in.UseDashboard != nil {
			var err error
			source, err = s.dashboardWhere(ctx, tx, "d.project_id = $1 AND d.id = $2 AND NOT d.deleted", p.ID, *in.UseDashboard)
			if errors.Is(err, ErrNotFound) {
				return nil, &ValidationError{Attr: "use_dashboard", Detail: fmt.Sprintf("Dashboard %d does not exist.", *in.UseDashboard)}
			}
			if err != nil {
				return nil, err
			}
		}
		cols := []string{"project_id", "created_by"}
		args := []any{p.ID, userID}
		if source != nil {
			cols = append(cols, "creation_mode")
			args = append(args, "duplicate")
			if _, ok := in.Values["filters"]; !ok {
				in.Values["filters"] = source.Filters
			}
			if _, ok := in.Values["name"]; !ok {
				in.Values["name"] = source.Name
			}
		}
		id, err := insertRecord(ctx, tx, "dashboards", cols, args, dashboardFields, in.Values)
		if err != nil {
			return nil, err
		}
		if source != nil {
			if err := copyTiles(ctx, tx, p.ID, userID, source, id, in.DuplicateTiles); err != nil {
				return nil, err
			}
		}
		if _, err := applyTiles(ctx, tx, p.ID, userID, id, in.Tiles); err != nil {
			return nil, err
		}
		d, err := s.dashboardWhere(ctx, tx, "d.id = $1", id)
		if err != nil {
			return nil, err
		}
		return d, logActivity(ctx, tx, dashboardActivity(p, d, userID, "created", nil))
	})
}

// copyTiles puts source's tiles on dashboard id: the same insights, or
// copies of them when duplicate is set; texts are always copied.
func copyTiles(ctx context.Context, tx *sqlx.Tx, projectID, userID int64, source *Dashboard, id int64, duplicate bool) error {
	for _, t := range source.Tiles {
		insightID := t.InsightID
		if duplicate && insightID.Valid {
			copied, err := withFreshShortID(ctx, tx, randomShortID, projectID, `INSERT INTO insights (project_id, short_id, name,
				derived_name, description, filters, query, tags, saved, created_by, last_modified_by)
				SELECT project_id, $3, name, derived_name, description, filters, query, tags, saved, $4, $4
				FROM insights WHERE project_id = $1 AND id = $2`, []any{projectID, insightID.Int64, nil, userID}, 2)
			if err != nil {
				return err
			}
			insightID = sql.NullInt64{Int64: copied, Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO dashboard_tiles (dashboard_id, insight_id, text_body, layouts, color, created_by)
			VALUES ($1, $2, $3, $4, $5, $6)`, id, insightID, t.TextBody, t.Layouts, t.Color, userID); err != nil {
			return err
		}
	}
	return nil
}

// UpdateDashboard applies the given fields and tiles; a deleted dashboard
// can only be restored. Its tiles read as deleted while it is.
func (s *Store) UpdateDashboard(ctx context.Context, p *Project, userID, id int64, in DashboardInput) (*Dashboard, error) {
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Dashboard, error) {
		before, err := s.dashboardWhere(ctx, tx, "d.project_id = $1 AND d.id = $2 FOR UPDATE OF d", p.ID, id)
		if err != nil {
			return nil, err
		}
		if err := onlyRestore(before.Deleted, in.Values); err != nil {
			return nil, err
		}
		sets, args, changes := changedFields("Dashboard", dashboardFields, before, in.Values)
		tileIDs, err := applyTiles(ctx, tx, p.ID, userID, id, in.Tiles)
		if err != nil {
			return nil, err
		}
		if len(tileIDs) > 0 {
			changes = append(changes, Change{Type: "Dashboard", Field: "tiles", Action: "changed", After: tileIDs})
		}
		if len(changes) == 0 {
			return before, nil
		}
		if err := updateRecord(ctx, tx, "dashboards", append(sets, "last_modified_at = now()"), args, id); err != nil {
			return nil, err
		}
		after, err := s.dashboardWhere(ctx, tx, "d.id = $1", id)
		if err != nil {
			return nil, err
		}
		activity := editActivity(before.Deleted, after.Deleted)
		if activity == "deleted" {
			// The project's primary dashboard names a dashboard that exists.
			if _, err := tx.ExecContext(ctx, "UPDATE projects SET primary_dashboard = NULL WHERE id = $1 AND primary_dashboard = $2", p.ID, id); err != nil {
				return nil, err
			}
		}
		return after, logActivity(ctx, tx, dashboardActivity(p, after, userID, activity, changes))
	})
}

// applyTiles adds and changes dashboard id's tiles as the body's tiles
// say, and returns the ids of the tiles it touched.
func applyTiles(ctx context.Context, tx *sqlx.Tx, projectID, userID, id int64, tiles []TileInput) ([]int64, error) {
	var touched []int64
	for k, t := range tiles {
		bad := func(format string, a ...any) error {
			return &ValidationError{Attr: "tiles", Detail: fmt.Sprintf("tiles[%d]", k) + fmt.Sprintf(format, a...)}
		}
		var layouts, color any
		if t.Layouts != nil {
			layouts = string(t.Layouts)
		}
		if t.Color != nil {
			color = *t.Color
		}
		var tileID int64
		switch {
		case t.ID != 0:
			var isText bool
			var insightID sql.NullInt64
			err := tx.QueryRowContext(ctx, `SELECT text_body IS NOT NULL, insight_id FROM dashboard_tiles WHERE id = $1 AND dashboard_id = $2 FOR UPDATE`,
				t.ID, id).Scan(&isText, &insightID)
			if err == sql.ErrNoRows {
				return nil, bad(": tile %d is not on this dashboard.", t.ID)
			}
			if err != nil {
				return nil, err
			}
			if t.Text != nil && !isText {
				return nil, bad(": tile %d shows an insight, not a text.", t.ID)
			}
			// A tile read and sent back names its own insight: allowed.
			if t.InsightID != 0 && t.InsightID != insightID.Int64 {
				return nil, bad(": a tile's insight cannot change; add a tile instead.")
			}
			_, err = tx.ExecContext(ctx, `UPDATE dashboard_tiles SET layouts = COALESCE($2::jsonb, layouts),
				color = CASE WHEN $3 THEN $4 ELSE color END, text_body = COALESCE($5, text_body),
				deleted = COALESCE($6, deleted), last_modified_at = now() WHERE id = $1`,
				t.ID, layouts, t.ColorSent, color, t.Text, t.Deleted)
			if err != nil {
				return nil, err
			}
			tileID = t.ID
		case t.InsightID != 0:
			var ok bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM insights WHERE project_id = $1 AND id = $2 AND NOT deleted)`,
				projectID, t.InsightID).Scan(&ok); err != nil {
				return nil, err
			}
			if !ok {
				return nil, bad(".insight: insight %d does not exist.", t.InsightID)
			}
			deleted := t.Deleted != nil && *t.Deleted
			if err := tx.QueryRowContext(ctx, `INSERT INTO dashboard_tiles (dashboard_id, insight_id, layouts, color, deleted, created_by)
				VALUES ($1, $2, COALESCE($3::jsonb, '{}'), $4, $5, $6)
				ON CONFLICT (dashboard_id, insight_id) WHERE insight_id IS NOT NULL DO UPDATE SET deleted = EXCLUDED.deleted,
				layouts = COALESCE($3::jsonb, dashboard_tiles.layouts), color = CASE WHEN $7 THEN $4 ELSE dashboard_tiles.color END,
				last_modified_at = now() RETURNING id`, id, t.InsightID, layouts, color, deleted, userID, t.ColorSent).Scan(&tileID); err != nil {
				return nil, err
			}
		default:
			deleted := t.Deleted != nil && *t.Deleted
			if err := tx.QueryRowContext(ctx, `INSERT INTO dashboard_tiles (dashboard_id, text_body, layouts, color, deleted, created_by)
				VALUES ($1, $2, COALESCE($3::jsonb, '{}'), $4, $5, $6) RETURNING id`, id, *t.Text, layouts, color, deleted, userID).Scan(&tileID); err != nil {
				return nil, err
			}
		}
		touched = append(touched, tileID)
	}
	return touched, nil
}

// setInsightDashboards makes the insight's tiles those of the dashboards
// named (nil: unchanged): tiles are added, restored or soft-deleted. It
// returns the change for the insight's activity, nil when none.
func setInsightDashboards(ctx context.Context, tx *sqlx.Tx, projectID, insightID, userID int64, ids []int64) (*Change, error) {
	if ids == nil {
		return nil, nil
	}
	want := slices.Clone(ids)
	slices.Sort(want)
	want = slices.Compact(want)
	var found []int64
	if err := tx.SelectContext(ctx, &found, `SELECT id FROM dashboards WHERE project_id = $1 AND id = ANY($2) AND NOT deleted`,
		projectID, pq.Array(want)); err != nil {
		return nil, err
	}
	for _, id := range want {
		if !slices.Contains(found, id) {
			return nil, &ValidationError{Attr: "dashboards", Detail: fmt.Sprintf("Dashboard %d does not exist.", id)}
		}
	}
	var before []int64
	if err := tx.SelectContext(ctx, &before, `SELECT t.dashboard_id FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id
		WHERE t.insight_id = $1 AND NOT t.deleted AND NOT d.deleted ORDER BY 1`, insightID); err != nil {
		return nil, err
	}
	if slices.Equal(before, want) {
		return nil, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO dashboard_tiles (dashboard_id, insight_id, created_by)
		SELECT unnest($2::bigint[]), $1, $3
		ON CONFLICT (dashboard_id, insight_id) WHERE insight_id IS NOT NULL
		DO UPDATE SET deleted = false, last_modified_at = now() WHERE dashboard_tiles.deleted`, insightID, pq.Array(want), userID); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE dashboard_tiles SET deleted = true, last_modified_at = now()
		WHERE insight_id = $1 AND NOT deleted AND NOT (dashboard_id = ANY($2))`, insightID, pq.Array(want)); err != nil {
		return nil, err
	}
	if before == nil {
		before = []int64{}
	}
	return &Change{Type: "Insight", Field: "dashboards", Action: "changed", Before: before, After: want}, nil
}

func dashboardActivity(p *Project, d *Dashboard, userID int64, activity string, changes []Change) Activity {
	return Activity{OrganizationID: p.OrganizationID, ProjectID: &p.ID, Scope: "Dashboard", ItemID: fmt.Sprint(d.ID),
		Activity: activity, UserID: userID, Detail: ActivityDetail{Name: d.Name, Changes: changes}}
}
