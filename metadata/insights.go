package metadata

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/types"
	"github.com/lib/pq"

	"github.com/insightd/insightd/querybuilder"
)

// Insight is a saved (or ad-hoc) analysis of a project, with its creator
// and last modifier joined in.
type Insight struct {
	ID             int64              `db:"id"`
	ProjectID      int64              `db:"project_id"`
	ShortID        string             `db:"short_id"`
	Name           sql.NullString     `db:"name"`
	DerivedName    sql.NullString     `db:"derived_name"`
	Description    string             `db:"description"`
	Filters        types.JSONText     `db:"filters"`
	Query          types.NullJSONText `db:"query"`
	Order          sql.NullInt64      `db:"order"`
	Deleted        bool               `db:"deleted"`
	Favorited      bool               `db:"favorited"`
	Saved          bool               `db:"saved"`
	IsSample       bool               `db:"is_sample"`
	Tags           pq.StringArray     `db:"tags"`
	CreatedAt      time.Time          `db:"created_at"`
	UpdatedAt      time.Time          `db:"updated_at"`
	LastModifiedAt time.Time          `db:"last_modified_at"`
	CreatedBy      *User              `db:"-"` // nil once the user is gone
	LastModifiedBy *User              `db:"-"`
	// DashboardTiles lists the insight's tiles as JSON [{id,
	// dashboard_id, deleted}], deleted when the tile or its dashboard is.
	DashboardTiles types.JSONText `db:"dashboard_tiles"`
}

// title is what activity entries call the insight: its name, else the
// name the client derived from its filters.
func (i *Insight) title() string {
	if i.Name.Valid && i.Name.String != "" {
		return i.Name.String
	}
	return i.DerivedName.String
}

// userRef is a user read through a LEFT JOIN: every column may be null.
type userRef struct {
	ID              *int64     `db:"id"`
	UUID            *uuid.UUID `db:"uuid"`
	DistinctID      *string    `db:"distinct_id"`
	Email           *string    `db:"email"`
	FirstName       *string    `db:"first_name"`
	LastName        *string    `db:"last_name"`
	IsEmailVerified *bool      `db:"is_email_verified"`
	HedgehogConfig  []byte     `db:"hedgehog_config"`
}

func (u *userRef) user() *User {
	if u.ID == nil {
		return nil
	}
	return &User{ID: *u.ID, UUID: *u.UUID, DistinctID: *u.DistinctID, Email: *u.Email, FirstName: *u.FirstName,
		LastName: *u.LastName, IsEmailVerified: *u.IsEmailVerified, HedgehogConfig: u.HedgehogConfig}
}

// insightRow is how an insight query's row scans: the insight, its two
// users under prefixed column names, and the list's window count.
type insightRow struct {
	Insight
	CreatedBy      userRef `db:"created_by"`
	LastModifiedBy userRef `db:"last_modified_by"`
	Total          int     `db:"total"`
}

func (r *insightRow) insight() Insight {
	i := r.Insight
	i.CreatedBy, i.LastModifiedBy = r.CreatedBy.user(), r.LastModifiedBy.user()
	return i
}

func userColumns(alias, prefix string) string {
	cols := []string{"id", "uuid", "distinct_id", "email", "first_name", "last_name", "is_email_verified", "hedgehog_config"}
	for k, c := range cols {
		cols[k] = fmt.Sprintf(`%s.%s AS "%s.%s"`, alias, c, prefix, c)
	}
	return strings.Join(cols, ", ")
}

// insightSelect reads insights with both users in one query; callers add
// the WHERE clause (and the window count, for lists).
var insightSelect = `SELECT i.id, i.project_id, i.short_id, i.name, i.derived_name, i.description, i.filters, i.query,
	i."order", i.deleted, i.favorited, i.saved, i.is_sample, i.tags, i.created_at, i.updated_at, i.last_modified_at, ` + insightTilesColumn + ", " +
	userColumns("cu", "created_by") + ", " + userColumns("mu", "last_modified_by")

// insightTilesColumn is the insight's tiles, one subquery per row.
const insightTilesColumn = `COALESCE((SELECT json_agg(json_build_object('id', t.id, 'dashboard_id', t.dashboard_id,
	'deleted', t.deleted OR d.deleted) ORDER BY t.id) FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id
	WHERE t.insight_id = i.id), '[]') AS dashboard_tiles`

const insightJoins = ` FROM insights i LEFT JOIN users cu ON cu.id = i.created_by LEFT JOIN users mu ON mu.id = i.last_modified_by`

// InsightFilter narrows the insight list; nil and empty fields do not filter.
type InsightFilter struct {
	ShortID   *string
	CreatedBy *int64
	Saved     *bool
	Favorited *bool
	Search    string // a substring of the name, derived name or description, any case
	Kind      string // one of InsightKinds, any case
}

// insightListWhere is the list's condition: every filter is a parameter
// that is null when unused, so the statement text is one and is prepared once.
const insightListWhere = ` WHERE i.project_id = $1 AND NOT i.deleted
	AND ($2::text IS NULL OR i.short_id = $2)
	AND ($3::bigint IS NULL OR i.created_by = $3)
	AND ($4::boolean IS NULL OR i.saved = $4)
	AND ($5::boolean IS NULL OR i.favorited = $5)
	AND ($6::text IS NULL OR i.name ILIKE $6 OR i.derived_name ILIKE $6 OR i.description ILIKE $6)
	AND ($7::text IS NULL OR ` + insightKindSQL + ` = $7)`

// insightKindSQL is the analysis an insight computes, as the list's
// insight filter names it: its query node's kind when it has one (the
// query wins over filters), else filters' insight, else TRENDS for
// filters with events or actions (legacy filters may leave it out). A
// node kind is looked up in the registry's nodes ($8) and their insights
// ($9), bound as arrays (querybuilder.NodeInsights), so the text stays
// one and a registered kind is classified as TranslateNode computes it.
const insightKindSQL = `COALESCE(
		($9::text[])[array_position($8::text[], COALESCE(i.query->'source'->>'kind', i.query->>'kind'))],
		NULLIF(upper(i.filters->>'insight'), ''),
		CASE WHEN jsonb_typeof(i.filters) = 'object' AND (i.filters ? 'events' OR i.filters ? 'actions') THEN 'TRENDS' END)`

// ListInsights returns one page of the project's insights that are not
// deleted, most recently modified first, and the total count.
func (s *Store) ListInsights(ctx context.Context, projectID int64, f InsightFilter, limit, offset int) ([]Insight, int, error) {
	var search, kind *string
	if f.Search != "" {
		// The search is a literal substring: ILIKE's wildcards are escaped.
		p := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(f.Search) + "%"
		search = &p
	}
	if f.Kind != "" {
		k := strings.ToUpper(f.Kind)
		kind = &k
	}
	nodes, insights := querybuilder.NodeInsights()
	args := []any{projectID, f.ShortID, f.CreatedBy, f.Saved, f.Favorited, search, kind, pq.StringArray(nodes), pq.StringArray(insights)}
	st, err := s.prepared(ctx, insightSelect+", count(*) OVER () AS total"+insightJoins+insightListWhere+
		` ORDER BY i.last_modified_at DESC, i.id DESC LIMIT $10 OFFSET $11`)
	if err != nil {
		return nil, 0, err
	}
	var rows []insightRow
	if err := st.SelectContext(ctx, &rows, append(args, limit, offset)...); err != nil {
		return nil, 0, err
	}
	out := make([]Insight, len(rows))
	for k := range rows {
		out[k] = rows[k].insight()
	}
	if len(rows) > 0 {
		return out, rows[0].Total, nil
	}
	if offset == 0 {
		return out, 0, nil
	}
	// A page past the end has no row to carry the count.
	var total int
	err = s.db.GetContext(ctx, &total, "SELECT count(*) FROM insights i"+insightListWhere, args...)
	return out, total, err
}

// GetInsight returns an insight of the project, deleted or not (callers
// decide what a deleted one means for them); ErrNotFound otherwise.
func (s *Store) GetInsight(ctx context.Context, projectID, id int64) (*Insight, error) {
	return s.insightWhere(ctx, nil, "i.project_id = $1 AND i.id = $2", projectID, id)
}

// InsightIDByShortID is the id of the project's insight with this
// short_id, deleted or not (as GetInsight); ErrNotFound otherwise.
func (s *Store) InsightIDByShortID(ctx context.Context, projectID int64, shortID string) (int64, error) {
	var id int64
	err := s.getOne(ctx, nil, &id, "SELECT id FROM insights WHERE project_id = $1 AND short_id = $2", projectID, shortID)
	return id, err
}

// insightWhere reads the one insight that matches where.
func (s *Store) insightWhere(ctx context.Context, tx *sqlx.Tx, where string, args ...any) (*Insight, error) {
	return s.oneInsight(ctx, tx, insightSelect+insightJoins+" WHERE "+where, args...)
}

// oneInsight runs a query for one insight row through tx, or through the
// pool (nil) with a statement prepared once.
func (s *Store) oneInsight(ctx context.Context, tx *sqlx.Tx, query string, args ...any) (*Insight, error) {
	var row insightRow
	if err := s.getOne(ctx, tx, &row, query, args...); err != nil {
		return nil, err
	}
	i := row.insight()
	return &i, nil
}

// CreateInsight creates an insight in the project with the given fields
// (checked by ParseInsightInput), made and last modified by the user, and
// records the creation.
func (s *Store) CreateInsight(ctx context.Context, p *Project, userID int64, in InsightInput) (*Insight, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	id, err := insertInsight(ctx, tx, randomShortID, p.ID, userID, in)
	if err != nil {
		return nil, err
	}
	if _, err := setInsightDashboards(ctx, tx, p.ID, id, userID, in.Dashboards); err != nil {
		return nil, err
	}
	i, err := s.insightWhere(ctx, tx, "i.id = $1", id)
	if err != nil {
		return nil, err
	}
	if err := logActivity(ctx, tx, insightActivity(p, i, userID, "created", nil)); err != nil {
		return nil, err
	}
	return i, tx.Commit()
}

// shortIDAttempts bounds the retries on a short_id collision: with 62^8
// ids, even a second attempt is rare.
const shortIDAttempts = 5

// insertInsight inserts the row under a fresh short_id from newShortID,
// drawing again when the project already has that one.
func insertInsight(ctx context.Context, tx *sqlx.Tx, newShortID func() string, projectID, userID int64, in InsightInput) (int64, error) {
	cols := []string{"project_id", "created_by", "last_modified_by", "short_id"}
	args := []any{projectID, userID, userID, nil}
	for _, f := range insightFields {
		if v, ok := in.Values[f.name]; ok {
			cols = append(cols, pq.QuoteIdentifier(f.name))
			args = append(args, v)
		}
	}
	return withFreshShortID(ctx, tx, newShortID, projectID, "INSERT INTO insights ("+strings.Join(cols, ", ")+
		") VALUES ("+placeholders(len(args))+")", args, 3)
}

// withFreshShortID runs insert (an INSERT into insights, without its
// conflict clause) with a short_id from newShortID at args[shortIDArg],
// drawing again while the project already holds the one drawn, and
// returns the new row's id.
func withFreshShortID(ctx context.Context, tx *sqlx.Tx, newShortID func() string, projectID int64, insert string, args []any, shortIDArg int) (int64, error) {
	query := insert + " ON CONFLICT (project_id, short_id) DO NOTHING RETURNING id"
	for range shortIDAttempts {
		args[shortIDArg] = newShortID()
		var id int64
		err := tx.QueryRowContext(ctx, query, args...).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			continue // the short_id is taken
		}
		return id, err
	}
	return 0, fmt.Errorf("no free short_id in project %d after %d attempts", projectID, shortIDAttempts)
}

// shortIDAlphabet and shortIDLength are PostHog's: its MCP server and CLI
// take only /^[A-Za-z0-9]{8}$/ for a short id and send anything else as
// a numeric id.
const (
	shortIDAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	shortIDLength   = 8
)

// randomShortID is a fresh short id: 8 letters and digits.
func randomShortID() string {
	// One read of the source serves the whole id, skipped bytes included.
	id, err := shortIDFrom(bufio.NewReaderSize(rand.Reader, 2*shortIDLength))
	if err != nil {
		panic(err) // as randomToken: no entropy source at all
	}
	return id
}

// shortIDFrom draws a short id from random bytes: uniform over the
// alphabet (bytes past the last whole multiple of 62 are skipped), and
// never all digits, because a path segment of digits names an insight by
// its numeric id (the insight routes take either).
func shortIDFrom(r io.Reader) (string, error) {
	const usable = 256 - 256%len(shortIDAlphabet)
	id := make([]byte, 0, shortIDLength)
	var b [1]byte
	for {
		id = id[:0]
		for len(id) < shortIDLength {
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return "", err
			}
			if int(b[0]) < usable {
				id = append(id, shortIDAlphabet[int(b[0])%len(shortIDAlphabet)])
			}
		}
		if strings.Trim(string(id), "0123456789") != "" {
			return string(id), nil
		}
	}
}

// UpdateInsight applies the given fields to an insight of the project.
// Fields whose value does not change are not written; an update that
// changes nothing touches nothing (last_modified_at/by stay) and logs
// nothing. A deleted insight can only be restored (deleted: false, with
// other fields or not): any other update of it is ErrNotFound, as for an
// insight that does not exist.
func (s *Store) UpdateInsight(ctx context.Context, p *Project, userID, id int64, in InsightInput) (*Insight, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	before, err := s.insightWhere(ctx, tx, "i.project_id = $1 AND i.id = $2 FOR UPDATE OF i", p.ID, id)
	if err != nil {
		return nil, err
	}
	if before.Deleted && in.Values["deleted"] != false {
		return nil, ErrNotFound
	}
	sets, args, changes := changedFields("Insight", insightFields, before, in.Values)
	dashboards, err := setInsightDashboards(ctx, tx, p.ID, id, userID, in.Dashboards)
	if err != nil {
		return nil, err
	}
	if dashboards != nil {
		changes = append(changes, *dashboards)
	}
	if len(changes) == 0 {
		return before, nil
	}
	args = append(args, userID, id)
	sets = append(sets, "updated_at = now()")
	query := fmt.Sprintf("UPDATE insights SET %s, last_modified_at = now(), last_modified_by = $%d WHERE id = $%d",
		strings.Join(sets, ", "), len(args)-1, len(args))
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return nil, err
	}
	after, err := s.insightWhere(ctx, tx, "i.id = $1", id)
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
	if err := logActivity(ctx, tx, insightActivity(p, after, userID, activity, changes)); err != nil {
		return nil, err
	}
	return after, tx.Commit()
}

func insightActivity(p *Project, i *Insight, userID int64, activity string, changes []Change) Activity {
	return Activity{OrganizationID: p.OrganizationID, ProjectID: &p.ID, Scope: "Insight", ItemID: fmt.Sprint(i.ID),
		Activity: activity, UserID: userID, Detail: ActivityDetail{Name: i.title(), ShortID: i.ShortID, Changes: changes}}
}

// RecordInsightView records that the user viewed the insight now and
// returns the insight; a deleted insight is ErrNotFound. One statement.
func (s *Store) RecordInsightView(ctx context.Context, projectID, id, userID int64) (*Insight, error) {
	return s.oneInsight(ctx, nil, `WITH viewed AS (
			INSERT INTO insight_views (insight_id, user_id, last_viewed_at)
			SELECT id, $3, now() FROM insights WHERE project_id = $1 AND id = $2 AND NOT deleted
			ON CONFLICT (insight_id, user_id) DO UPDATE SET last_viewed_at = EXCLUDED.last_viewed_at
			RETURNING insight_id) `+
		insightSelect+insightJoins+" JOIN viewed ON viewed.insight_id = i.id", projectID, id, userID)
}

// LastViewedInsights returns the user's n most recently viewed insights
// of the project that are not deleted, most recent first.
func (s *Store) LastViewedInsights(ctx context.Context, projectID, userID int64, n int) ([]Insight, error) {
	st, err := s.prepared(ctx, insightSelect+insightJoins+` JOIN insight_views v ON v.insight_id = i.id AND v.user_id = $2
		WHERE i.project_id = $1 AND NOT i.deleted ORDER BY v.last_viewed_at DESC, i.id DESC LIMIT $3`)
	if err != nil {
		return nil, err
	}
	var rows []insightRow
	if err := st.SelectContext(ctx, &rows, projectID, userID, n); err != nil {
		return nil, err
	}
	out := make([]Insight, len(rows))
	for k := range rows {
		out[k] = rows[k].insight()
	}
	return out, nil
}

// Sharing is an insight's sharing configuration: whether the insight can
// be seen without an account, through its access token.
type Sharing struct {
	Enabled     bool      `db:"enabled"`
	AccessToken string    `db:"access_token"`
	CreatedAt   time.Time `db:"created_at"`
}

// sharingGetOrCreate returns the configuration, creating it (disabled)
// when there is none. When a concurrent first read inserts between the
// insert and the select, the statement sees neither row: sql.ErrNoRows,
// and the caller asks again.
const sharingGetOrCreate = `WITH created AS (
		INSERT INTO sharing_configurations (insight_id, access_token) VALUES ($1, $2)
		ON CONFLICT (insight_id) DO NOTHING RETURNING enabled, access_token, created_at)
	SELECT enabled, access_token, created_at FROM created
	UNION ALL SELECT enabled, access_token, created_at FROM sharing_configurations WHERE insight_id = $1
	LIMIT 1`

// InsightSharing returns the insight's sharing configuration, created
// disabled on first read.
func (s *Store) InsightSharing(ctx context.Context, insightID int64) (*Sharing, error) {
	var sh Sharing
	err := s.db.GetContext(ctx, &sh, sharingGetOrCreate, insightID, randomToken(""))
	if errors.Is(err, sql.ErrNoRows) {
		err = s.db.GetContext(ctx, &sh, sharingGetOrCreate, insightID, randomToken(""))
	}
	return &sh, err
}

// SetInsightSharing turns sharing of the insight on or off and records a
// change in the insight's activity; setting the current value changes
// and records nothing. The access token stays the same either way.
func (s *Store) SetInsightSharing(ctx context.Context, p *Project, userID int64, i *Insight, enabled bool) (*Sharing, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// Insert, then lock: two concurrent changes apply and log one after the other.
	if _, err := tx.ExecContext(ctx, `INSERT INTO sharing_configurations (insight_id, access_token) VALUES ($1, $2)
		ON CONFLICT (insight_id) DO NOTHING`, i.ID, randomToken("")); err != nil {
		return nil, err
	}
	var sh Sharing
	if err := tx.GetContext(ctx, &sh, `SELECT enabled, access_token, created_at FROM sharing_configurations
		WHERE insight_id = $1 FOR UPDATE`, i.ID); err != nil {
		return nil, err
	}
	if sh.Enabled == enabled {
		return &sh, nil
	}
	if _, err := tx.ExecContext(ctx, "UPDATE sharing_configurations SET enabled = $1 WHERE insight_id = $2", enabled, i.ID); err != nil {
		return nil, err
	}
	change := Change{Type: "Insight", Field: "sharing_enabled", Action: "changed", Before: sh.Enabled, After: enabled}
	if err := logActivity(ctx, tx, insightActivity(p, i, userID, "updated", []Change{change})); err != nil {
		return nil, err
	}
	sh.Enabled = enabled
	return &sh, tx.Commit()
}
