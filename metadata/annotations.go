package metadata

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Annotation marks a moment on a project's graphs; see
// migrations/postgres/0003.
type Annotation struct {
	ID            int64          `db:"id"`
	ProjectID     int64          `db:"project_id"`
	Content       sql.NullString `db:"content"`
	DateMarker    sql.NullTime   `db:"date_marker"`
	CreationType  string         `db:"creation_type"`
	Scope         string         `db:"scope"`
	DashboardItem sql.NullInt64  `db:"dashboard_item"`
	Deleted       bool           `db:"deleted"`
	CreatedAt     time.Time      `db:"created_at"`
	UpdatedAt     time.Time      `db:"updated_at"`
	// The insight of dashboard_item, as PostHog's answer names it.
	InsightShortID     sql.NullString `db:"insight_short_id"`
	InsightName        sql.NullString `db:"insight_name"`
	InsightDerivedName sql.NullString `db:"insight_derived_name"`
	CreatedBy          *User          `db:"-"` // nil once the user is gone
}

// annotationRow is how an annotation query's row scans: the annotation,
// its creator under prefixed names, and the list's window count.
type annotationRow struct {
	Annotation
	CreatedBy userRef `db:"created_by"`
	Total     int     `db:"total"`
}

func (r *annotationRow) record() Annotation {
	a := r.Annotation
	a.CreatedBy = r.CreatedBy.user()
	return a
}

func (r *annotationRow) total() int { return r.Total }

var annotationSelect = `SELECT a.id, a.project_id, a.content, a.date_marker, a.creation_type, a.scope, a.dashboard_item,
	a.deleted, a.created_at, a.updated_at, i.short_id AS insight_short_id, i.name AS insight_name,
	i.derived_name AS insight_derived_name, ` + userColumns("u", "created_by")

const annotationJoins = ` FROM annotations a LEFT JOIN insights i ON i.id = a.dashboard_item
	LEFT JOIN users u ON u.id = a.created_by`

// annotationVisible is what a project ($1, of organization $2) sees: its
// own annotations and its organization's organization-wide ones.
const annotationVisible = `(a.project_id = $1 OR (a.scope = 'organization' AND a.organization_id = $2))`

// ListAnnotations returns one page of the annotations the project sees
// that are not deleted, latest date_marker first, and the total count.
// search, when not empty, keeps those whose content holds it (literally,
// any case).
func (s *Store) ListAnnotations(ctx context.Context, p *Project, search string, limit, offset int) ([]Annotation, int, error) {
	const where = ` WHERE ` + annotationVisible + ` AND NOT a.deleted AND ($3::text IS NULL OR a.content ILIKE $3)`
	return listPage[Annotation, annotationRow](ctx, s, annotationSelect+", count(*) OVER () AS total"+annotationJoins+where+
		` ORDER BY a.date_marker DESC NULLS LAST, a.id DESC LIMIT $4 OFFSET $5`, "SELECT count(*) FROM annotations a"+where,
		[]any{p.ID, p.OrganizationID, searchPattern(search)}, limit, offset)
}

// GetAnnotation returns an annotation the project sees, deleted or not
// (callers decide what a deleted one means); ErrNotFound otherwise.
func (s *Store) GetAnnotation(ctx context.Context, p *Project, id int64) (*Annotation, error) {
	return s.annotationWhere(ctx, nil, annotationVisible+" AND a.id = $3", p.ID, p.OrganizationID, id)
}

func (s *Store) annotationWhere(ctx context.Context, tx *sqlx.Tx, where string, args ...any) (*Annotation, error) {
	return getRecord[Annotation, annotationRow](ctx, s, tx, annotationSelect+annotationJoins+" WHERE "+where, args...)
}

// CreateAnnotation creates an annotation in the project with the given
// fields (checked by ParseAnnotationInput), made by the user, and records
// the creation.
func (s *Store) CreateAnnotation(ctx context.Context, p *Project, userID int64, in AnnotationInput) (*Annotation, error) {
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Annotation, error) {
		if err := checkAnnotation(ctx, tx, p, in.Values, nil); err != nil {
			return nil, err
		}
		id, err := insertRecord(ctx, tx, "annotations", []string{"organization_id", "project_id", "created_by"},
			[]any{p.OrganizationID, p.ID, userID}, annotationFields, in.Values)
		if err != nil {
			return nil, err
		}
		a, err := s.annotationWhere(ctx, tx, "a.id = $1", id)
		if err != nil {
			return nil, err
		}
		return a, logActivity(ctx, tx, annotationActivity(p, a, userID, "created", nil))
	})
}

// UpdateAnnotation applies the given fields to an annotation the project
// sees, as UpdateInsight does to insights: unchanged fields are not
// written, an update that changes nothing logs nothing, and a deleted
// annotation can only be restored (anything else is ErrNotFound).
func (s *Store) UpdateAnnotation(ctx context.Context, p *Project, userID, id int64, in AnnotationInput) (*Annotation, error) {
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Annotation, error) {
		before, err := s.annotationWhere(ctx, tx, annotationVisible+" AND a.id = $3 FOR UPDATE OF a", p.ID, p.OrganizationID, id)
		if err != nil {
			return nil, err
		}
		if err := onlyRestore(before.Deleted, in.Values); err != nil {
			return nil, err
		}
		if err := checkAnnotation(ctx, tx, p, in.Values, before); err != nil {
			return nil, err
		}
		sets, args, changes := changedFields("Annotation", annotationFields, before, in.Values)
		if len(sets) == 0 {
			return before, nil
		}
		if err := updateRecord(ctx, tx, "annotations", append(sets, "updated_at = now()"), args, id); err != nil {
			return nil, err
		}
		after, err := s.annotationWhere(ctx, tx, "a.id = $1", id)
		if err != nil {
			return nil, err
		}
		return after, logActivity(ctx, tx, annotationActivity(p, after, userID, editActivity(before.Deleted, after.Deleted), changes))
	})
}

// checkAnnotation checks what one field cannot alone: the annotation as
// it will be (before, updated by values) must name an insight of the
// project when its scope is dashboard_item, and any insight it names must
// be one of the project's.
func checkAnnotation(ctx context.Context, tx *sqlx.Tx, p *Project, values map[string]any, before *Annotation) error {
	scope, item := "project", any(nil)
	if before != nil {
		scope = before.Scope
		if before.DashboardItem.Valid {
			item = before.DashboardItem.Int64
		}
	}
	if v, ok := values["scope"]; ok {
		scope = v.(string)
	}
	v, sent := values["dashboard_item"]
	if sent {
		item = v
	}
	if scope == "dashboard_item" && item == nil {
		return &ValidationError{Attr: "dashboard_item", Detail: "An annotation of scope dashboard_item needs the insight's id in dashboard_item."}
	}
	if !sent || item == nil {
		return nil
	}
	// The annotation's own project: an organization-wide one of another
	// project, updated through this one, stays that project's.
	project := p.ID
	if before != nil {
		project = before.ProjectID
	}
	var found bool
	err := tx.GetContext(ctx, &found, `SELECT EXISTS (SELECT 1 FROM insights WHERE id = $1 AND project_id = $2 AND NOT deleted)`, item, project)
	if err != nil {
		return err
	}
	if !found {
		return &ValidationError{Attr: "dashboard_item", Detail: fmt.Sprintf("Insight %d does not exist in this project.", item)}
	}
	return nil
}

func annotationActivity(p *Project, a *Annotation, userID int64, activity string, changes []Change) Activity {
	return Activity{OrganizationID: p.OrganizationID, ProjectID: &a.ProjectID, Scope: "Annotation", ItemID: fmt.Sprint(a.ID),
		Activity: activity, UserID: userID, Detail: ActivityDetail{Name: a.Content.String, Changes: changes}}
}
