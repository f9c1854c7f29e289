package metadata

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Cohort is a saved set of persons (analytics.md, Entities); see
// migrations/postgres/0004. Version is the computed membership analyses
// read; PendingVersion the last one asked for.
type Cohort struct {
	ID                int64           `db:"id"`
	ProjectID         int64           `db:"project_id"`
	Name              string          `db:"name"`
	Description       string          `db:"description"`
	Groups            json.RawMessage `db:"groups"`
	Filters           json.RawMessage `db:"filters"`
	IsStatic          bool            `db:"is_static"`
	Deleted           bool            `db:"deleted"`
	Version           int64           `db:"version"`
	PendingVersion    int64           `db:"pending_version"`
	Count             sql.NullInt64   `db:"count"`
	IsCalculating     bool            `db:"is_calculating"`
	LastCalculation   sql.NullTime    `db:"last_calculation"`
	ErrorsCalculating int             `db:"errors_calculating"`
	LastError         sql.NullString  `db:"last_error"`
	CreatedAt         time.Time       `db:"created_at"`
	UpdatedAt         time.Time       `db:"updated_at"`
	CreatedBy         *User           `db:"-"`
}

type cohortRow struct {
	Cohort
	CreatedBy userRef `db:"created_by"`
	Total     int     `db:"total"`
}

func (r *cohortRow) record() Cohort {
	c := r.Cohort
	c.CreatedBy = r.CreatedBy.user()
	return c
}

func (r *cohortRow) total() int { return r.Total }

// cohortSelect reads a cohort; filters NULL (static and legacy cohorts)
// reads as JSON null, which json.RawMessage can hold.
var cohortSelect = `SELECT c.id, c.project_id, c.name, c.description, c.groups, coalesce(c.filters, 'null'::jsonb) AS filters, c.is_static, c.deleted, c.version,
	c.pending_version, c.count, c.is_calculating, c.last_calculation, c.errors_calculating, c.last_error, c.created_at, c.updated_at, ` +
	userColumns("u", "created_by")

const cohortJoins = ` FROM cohorts c LEFT JOIN users u ON u.id = c.created_by`

// ListCohorts returns one page of the project's cohorts that are not
// deleted, newest first, and the total.
func (s *Store) ListCohorts(ctx context.Context, projectID int64, limit, offset int) ([]Cohort, int, error) {
	const where = " WHERE c.project_id = $1 AND NOT c.deleted"
	return listPage[Cohort, cohortRow](ctx, s, cohortSelect+", count(*) OVER () AS total"+cohortJoins+where+
		" ORDER BY c.id DESC LIMIT $2 OFFSET $3", "SELECT count(*) FROM cohorts c"+where, []any{projectID}, limit, offset)
}

// GetCohort returns one of the project's cohorts, deleted or not.
func (s *Store) GetCohort(ctx context.Context, projectID, id int64) (*Cohort, error) {
	return s.cohortWhere(ctx, nil, "c.project_id = $1 AND c.id = $2", projectID, id)
}

// CohortsByID returns the project's cohorts with these ids, deleted ones
// included, by id.
func (s *Store) CohortsByID(ctx context.Context, projectID int64, ids []int64) (map[int64]*Cohort, error) {
	return recordsByID[Cohort, cohortRow](ctx, s, cohortSelect+cohortJoins+" WHERE c.project_id = $1 AND c.id = ANY($2)",
		projectID, ids, func(c *Cohort) int64 { return c.ID })
}

func (s *Store) cohortWhere(ctx context.Context, tx *sqlx.Tx, where string, args ...any) (*Cohort, error) {
	return getRecord[Cohort, cohortRow](ctx, s, tx, cohortSelect+cohortJoins+" WHERE "+where, args...)
}

// CreateCohort creates a cohort with the given fields (ParseCohortInput;
// name required), its static persons' distinct ids if any, and asks for
// its first calculation (PendingVersion 1).
func (s *Store) CreateCohort(ctx context.Context, p *Project, userID int64, in CohortInput, distinctIDs []string) (*Cohort, error) {
	if err := required(in.Values, "name"); err != nil {
		return nil, err
	}
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Cohort, error) {
		id, err := insertRecord(ctx, tx, "cohorts", []string{"project_id", "created_by", "pending_version", "is_calculating"},
			[]any{p.ID, userID, 1, true}, cohortFields, in.Values)
		if err != nil {
			return nil, err
		}
		c, err := s.finishCohortWrite(ctx, tx, id, distinctIDs)
		if err != nil {
			return nil, err
		}
		return c, logActivity(ctx, tx, cohortActivity(p, c, userID, "created", nil))
	})
}

// UpdateCohort applies the given fields and adds static persons; a change
// of definition or persons asks for a recalculation. A deleted cohort
// can only be restored.
func (s *Store) UpdateCohort(ctx context.Context, p *Project, userID, id int64, in CohortInput, distinctIDs []string) (*Cohort, error) {
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Cohort, error) {
		before, err := s.cohortWhere(ctx, tx, "c.project_id = $1 AND c.id = $2 FOR UPDATE OF c", p.ID, id)
		if err != nil {
			return nil, err
		}
		if err := onlyRestore(before.Deleted, in.Values); err != nil {
			return nil, err
		}
		sets, args, changes := changedFields("Cohort", cohortFields, before, in.Values)
		recalc := len(distinctIDs) > 0
		for _, ch := range changes {
			recalc = recalc || ch.Field == "groups" || ch.Field == "filters"
		}
		if recalc {
			sets = append(sets, "pending_version = pending_version + 1", "is_calculating = true")
		}
		if len(sets) == 0 {
			return before, nil
		}
		if err := updateRecord(ctx, tx, "cohorts", append(sets, "updated_at = now()"), args, id); err != nil {
			return nil, err
		}
		after, err := s.finishCohortWrite(ctx, tx, id, distinctIDs)
		if err != nil {
			return nil, err
		}
		return after, logActivity(ctx, tx, cohortActivity(p, after, userID, editActivity(before.Deleted, after.Deleted), changes))
	})
}

// RequestCohortCalculation asks for a recalculation (PendingVersion + 1)
// and returns the cohort.
func (s *Store) RequestCohortCalculation(ctx context.Context, projectID, id int64) (*Cohort, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE cohorts SET pending_version = pending_version + 1, is_calculating = true
		WHERE project_id = $1 AND id = $2 AND NOT deleted`, projectID, id)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, ErrNotFound
	}
	return s.GetCohort(ctx, projectID, id)
}

// CohortsToCalculate are the cohorts (of every project) whose asked-for
// version is not computed yet, oldest request first.
func (s *Store) CohortsToCalculate(ctx context.Context, limit int) ([]Cohort, error) {
	return selectRecords[Cohort, cohortRow](ctx, s, cohortSelect+cohortJoins+
		" WHERE NOT c.deleted AND c.pending_version > c.version ORDER BY c.updated_at LIMIT $1", limit)
}

// ChangesDefinition reports whether in sets groups or filters other than
// co's, by their JSON meaning: PostHog's cohort editor saves the whole
// cohort, its definition unchanged, to rename it.
func (in CohortInput) ChangesDefinition(co *Cohort) bool {
	for name, stored := range map[string]json.RawMessage{"groups": co.Groups, "filters": co.Filters} {
		if v, sent := in.Values[name]; sent && !jsonEqual(v, stored) {
			return true
		}
	}
	return false
}

// CohortsDue asks for a recalculation of the cohorts the schedule owes
// one, at now: dynamic cohorts last computed (or, never computed, last
// tried) before behaviouralSince: behavioural conditions depend on the
// clock, other cohorts they name change, and persons' properties change
// what a property-only cohort's count and members page show (analyses
// inline those); and cohorts whose last calculation failed (static ones
// too: their listed persons changed), again after a backoff that doubles
// with each failure from a minute up to an hour (updated_at is the last
// failure then). It returns how many it asked for.
func (s *Store) CohortsDue(ctx context.Context, now, behaviouralSince time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE cohorts SET pending_version = version + 1, is_calculating = true
		WHERE NOT deleted AND pending_version = version AND (
		  (NOT is_static AND coalesce(last_calculation, updated_at) < $2::timestamptz)
		  OR (errors_calculating > 0
		      AND updated_at < $1::timestamptz - least(interval '1 minute' * power(2, least(errors_calculating, 7) - 1), interval '1 hour')))`,
		now, behaviouralSince)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// CohortCalculated records a finished calculation: version (unless a
// later one is recorded already) and the count; errors_calculating
// counts the failures since (PostHog's meaning).
func (s *Store) CohortCalculated(ctx context.Context, id, version, count int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE cohorts SET version = greatest(version, $2), count = $3, last_calculation = now(),
		is_calculating = pending_version > greatest(version, $2), last_error = NULL, errors_calculating = 0 WHERE id = $1`, id, version, count)
	return err
}

// CohortCalculationFailed records a failed calculation at now; the cohort
// keeps its last members and is tried again (CohortsDue) after a backoff
// counted from updated_at.
func (s *Store) CohortCalculationFailed(ctx context.Context, id, version int64, cause string, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE cohorts SET errors_calculating = errors_calculating + 1, last_error = $3,
		pending_version = version, is_calculating = false, updated_at = $4 WHERE id = $1 AND pending_version = $2`,
		id, version, truncate(cause, 1000), now)
	return err
}

// StaticPeople are a static cohort's listed distinct ids.
func (s *Store) StaticPeople(ctx context.Context, id int64) ([]string, error) {
	var ids []string
	err := s.db.SelectContext(ctx, &ids, "SELECT distinct_id FROM cohort_static_people WHERE cohort_id = $1 ORDER BY distinct_id", id)
	return ids, err
}

// finishCohortWrite ends a create or an update of cohort id: it lists the
// static persons' distinct ids the write adds, then reads the cohort back
// as the write left it.
func (s *Store) finishCohortWrite(ctx context.Context, tx *sqlx.Tx, id int64, ids []string) (*Cohort, error) {
	for start := 0; start < len(ids); start += 5000 {
		chunk := ids[start:min(start+5000, len(ids))]
		if _, err := tx.ExecContext(ctx, `INSERT INTO cohort_static_people (cohort_id, distinct_id)
			SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`, id, pq.Array(chunk)); err != nil {
			return nil, err
		}
	}
	return s.cohortWhere(ctx, tx, "c.id = $1", id)
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

func cohortActivity(p *Project, c *Cohort, userID int64, activity string, changes []Change) Activity {
	return Activity{OrganizationID: p.OrganizationID, ProjectID: &c.ProjectID, Scope: "Cohort", ItemID: fmt.Sprint(c.ID),
		Activity: activity, UserID: userID, Detail: ActivityDetail{Name: c.Name, Changes: changes}}
}

// ProjectByID returns a project whoever asks (background work of the
// server's own, such as cohort calculations).
func (s *Store) ProjectByID(ctx context.Context, id int64) (*Project, error) {
	var p Project
	if err := s.getOne(ctx, nil, &p, `SELECT `+projectColumns+`, 0 AS membership_level FROM projects p WHERE p.id = $1`, id); err != nil {
		return nil, err
	}
	return &p, nil
}
