package metadata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/types"
	"github.com/lib/pq"
)

// Project is a project (PostHog's team) as stored, with the caller's
// membership level joined in.
type Project struct {
	ID                                          int64              `db:"id"`
	UUID                                        uuid.UUID          `db:"uuid"`
	OrganizationID                              uuid.UUID          `db:"organization_id"`
	APIToken                                    string             `db:"api_token"`
	LiveEventsToken                             string             `db:"live_events_token"`
	Name                                        string             `db:"name"`
	AppURLs                                     pq.StringArray     `db:"app_urls"`
	SlackIncomingWebhook                        sql.NullString     `db:"slack_incoming_webhook"`
	AnonymizeIPs                                bool               `db:"anonymize_ips"`
	CompletedSnippetOnboarding                  bool               `db:"completed_snippet_onboarding"`
	IngestedEvent                               bool               `db:"ingested_event"`
	TestAccountFilters                          types.JSONText     `db:"test_account_filters"`
	TestAccountFiltersDefaultChecked            bool               `db:"test_account_filters_default_checked"`
	PathCleaningFilters                         types.JSONText     `db:"path_cleaning_filters"`
	IsDemo                                      bool               `db:"is_demo"`
	GeneratingDemoData                          bool               `db:"generating_demo_data"`
	Timezone                                    string             `db:"timezone"`
	DataAttributes                              types.JSONText     `db:"data_attributes"`
	PersonDisplayNameProperties                 pq.StringArray     `db:"person_display_name_properties"`
	CorrelationConfig                           types.JSONText     `db:"correlation_config"`
	AutocaptureOptOut                           bool               `db:"autocapture_opt_out"`
	AutocaptureExceptionsOptIn                  bool               `db:"autocapture_exceptions_opt_in"`
	AutocaptureWebVitalsOptIn                   bool               `db:"autocapture_web_vitals_opt_in"`
	AutocaptureExceptionsErrorsToIgnore         types.JSONText     `db:"autocapture_exceptions_errors_to_ignore"`
	CaptureConsoleLogOptIn                      bool               `db:"capture_console_log_opt_in"`
	CapturePerformanceOptIn                     bool               `db:"capture_performance_opt_in"`
	SessionRecordingOptIn                       bool               `db:"session_recording_opt_in"`
	SessionRecordingSampleRate                  sql.NullString     `db:"session_recording_sample_rate"`
	SessionRecordingMinimumDurationMilliseconds sql.NullInt64      `db:"session_recording_minimum_duration_milliseconds"`
	SessionRecordingLinkedFlag                  types.NullJSONText `db:"session_recording_linked_flag"`
	SessionRecordingNetworkPayloadCaptureConfig types.NullJSONText `db:"session_recording_network_payload_capture_config"`
	SessionReplayConfig                         types.NullJSONText `db:"session_replay_config"`
	AccessControl                               bool               `db:"access_control"`
	WeekStartDay                                sql.NullInt64      `db:"week_start_day"`
	PrimaryDashboard                            sql.NullInt64      `db:"primary_dashboard"`
	LiveEventsColumns                           pq.StringArray     `db:"live_events_columns"`
	RecordingDomains                            pq.StringArray     `db:"recording_domains"`
	InjectWebApps                               bool               `db:"inject_web_apps"`
	ExtraSettings                               types.JSONText     `db:"extra_settings"`
	Modifiers                                   types.JSONText     `db:"modifiers"`
	HasCompletedOnboardingFor                   types.JSONText     `db:"has_completed_onboarding_for"`
	SurveysOptIn                                bool               `db:"surveys_opt_in"`
	HeatmapsOptIn                               bool               `db:"heatmaps_opt_in"`
	CreatedAt                                   time.Time          `db:"created_at"`
	UpdatedAt                                   time.Time          `db:"updated_at"`
	MembershipLevel                             int                `db:"membership_level"`
}

const projectSelect = `SELECT p.*, m.level AS membership_level
	FROM projects p JOIN memberships m ON m.organization_id = p.organization_id AND m.user_id = $1`

// ListProjects returns one page of the organization's projects, oldest
// first, and the total count. The caller has resolved the membership.
func (s *Store) ListProjects(ctx context.Context, userID int64, org uuid.UUID, limit, offset int) ([]Project, int, error) {
	var total int
	if err := s.db.GetContext(ctx, &total, "SELECT count(*) FROM projects WHERE organization_id = $1", org); err != nil {
		return nil, 0, err
	}
	var ps []Project
	err := s.db.SelectContext(ctx, &ps, projectSelect+` WHERE p.organization_id = $2 ORDER BY p.id LIMIT $3 OFFSET $4`,
		userID, org, limit, offset)
	return ps, total, err
}

// GetProject returns a project of the organization visible to the user;
// ErrNotFound otherwise (another organization's project does not exist for them).
func (s *Store) GetProject(ctx context.Context, userID int64, org uuid.UUID, id int64) (*Project, error) {
	return s.getProject(ctx, s.db, userID, "p.organization_id = $2 AND p.id = $3", org, id)
}

// ProjectForUser returns a project by id if the user belongs to its
// organization (the /api/projects/:id routes).
func (s *Store) ProjectForUser(ctx context.Context, userID, id int64) (*Project, error) {
	return s.getProject(ctx, s.db, userID, "p.id = $2", id)
}

func (s *Store) getProject(ctx context.Context, q sqlx.QueryerContext, userID int64, where string, args ...any) (*Project, error) {
	var p Project
	err := sqlx.GetContext(ctx, q, &p, projectSelect+" WHERE "+where, append([]any{userID}, args...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// CreateProject creates a project with the given fields (already checked
// by ParseProjectInput) and records the creation.
func (s *Store) CreateProject(ctx context.Context, userID int64, org uuid.UUID, in ProjectInput) (*Project, error) {
	if _, ok := in.Values["name"]; !ok {
		return nil, &ValidationError{Attr: "name", Detail: "This field is required."}
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	cols := []string{"uuid", "organization_id", "api_token", "live_events_token"}
	args := []any{uuid.New(), org, randomToken("phc_"), randomToken("phe_")}
	for _, f := range projectFields {
		if v, ok := in.Values[f.name]; ok {
			cols = append(cols, pq.QuoteIdentifier(f.name))
			args = append(args, v)
		}
	}
	query := "INSERT INTO projects (" + strings.Join(cols, ", ") + ") VALUES (" + placeholders(len(args)) + ") RETURNING id"
	var id int64
	if err := tx.QueryRowContext(ctx, query, args...).Scan(&id); err != nil {
		return nil, err
	}
	p, err := s.getProject(ctx, tx, userID, "p.id = $2", id)
	if err != nil {
		return nil, err
	}
	if err := logActivity(ctx, tx, Activity{OrganizationID: org, ProjectID: &id, Scope: "Project", ItemID: fmt.Sprint(id),
		Activity: "created", UserID: userID, Detail: ActivityDetail{Name: p.Name}}); err != nil {
		return nil, err
	}
	return p, tx.Commit()
}

// UpdateProject applies the given fields. Fields whose value does not
// change are not written and not logged; an update that changes nothing
// touches nothing.
func (s *Store) UpdateProject(ctx context.Context, userID int64, org uuid.UUID, id int64, in ProjectInput) (*Project, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	before, err := s.getProject(ctx, tx, userID, "p.organization_id = $2 AND p.id = $3 FOR UPDATE OF p", org, id)
	if err != nil {
		return nil, err
	}
	var sets []string
	var args []any
	var changes []Change
	for _, f := range projectFields {
		v, ok := in.Values[f.name]
		if !ok {
			continue
		}
		old := f.get(before)
		if jsonEqual(old, v) {
			continue
		}
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", pq.QuoteIdentifier(f.name), len(args)))
		changes = append(changes, Change{Type: "Project", Field: f.name, Action: "changed", Before: old, After: v})
	}
	if len(sets) == 0 {
		return before, nil
	}
	args = append(args, id)
	query := fmt.Sprintf("UPDATE projects SET %s, updated_at = now() WHERE id = $%d", strings.Join(sets, ", "), len(args))
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return nil, err
	}
	after, err := s.getProject(ctx, tx, userID, "p.id = $2", id)
	if err != nil {
		return nil, err
	}
	if err := logActivity(ctx, tx, Activity{OrganizationID: org, ProjectID: &id, Scope: "Project", ItemID: fmt.Sprint(id),
		Activity: "updated", UserID: userID, Detail: ActivityDetail{Name: after.Name, Changes: changes}}); err != nil {
		return nil, err
	}
	return after, tx.Commit()
}

// ResetProjectToken gives the project a new api_token; the old one stops
// working for ingestion with this commit.
func (s *Store) ResetProjectToken(ctx context.Context, userID int64, org uuid.UUID, id int64) (*Project, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE projects SET api_token = $1, updated_at = now()
		WHERE id = $2 AND organization_id = $3 AND EXISTS (SELECT 1 FROM memberships WHERE organization_id = $3 AND user_id = $4)`,
		randomToken("phc_"), id, org, userID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, ErrNotFound
	}
	p, err := s.getProject(ctx, tx, userID, "p.id = $2", id)
	if err != nil {
		return nil, err
	}
	// The token itself is a secret: the log says it changed, not to what.
	if err := logActivity(ctx, tx, Activity{OrganizationID: org, ProjectID: &id, Scope: "Project", ItemID: fmt.Sprint(id),
		Activity: "updated", UserID: userID, Detail: ActivityDetail{Name: p.Name,
			Changes: []Change{{Type: "Project", Field: "api_token", Action: "changed"}}}}); err != nil {
		return nil, err
	}
	return p, tx.Commit()
}

// DeleteProject removes the project and, by cascade, its insights, views,
// sharing, cached results and activity, in one transaction. An
// organization-level activity entry records the deletion. Events are the
// caller's to delete from ClickHouse (asynchronously); project ids are
// never reused, so none of them can surface in another project meanwhile.
func (s *Store) DeleteProject(ctx context.Context, userID int64, org uuid.UUID, id int64) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	p, err := s.getProject(ctx, tx, userID, "p.organization_id = $2 AND p.id = $3 FOR UPDATE OF p", org, id)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM projects WHERE id = $1", id); err != nil {
		return err
	}
	if err := logActivity(ctx, tx, Activity{OrganizationID: org, Scope: "Project", ItemID: fmt.Sprint(id),
		Activity: "deleted", UserID: userID, Detail: ActivityDetail{Name: p.Name}}); err != nil {
		return err
	}
	return tx.Commit()
}

func placeholders(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return strings.Join(ps, ", ")
}
