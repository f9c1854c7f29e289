package metadata

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/types"
	"github.com/lib/pq"
)

// Project is a project (PostHog's team) as stored, with the caller's
// membership level joined in: the summary's columns and all the others.
type Project struct {
	ProjectSummary
	LiveEventsToken                             string             `db:"live_events_token"`
	AppURLs                                     pq.StringArray     `db:"app_urls"`
	SlackIncomingWebhook                        sql.NullString     `db:"slack_incoming_webhook"`
	AnonymizeIPs                                bool               `db:"anonymize_ips"`
	TestAccountFilters                          types.JSONText     `db:"test_account_filters"`
	TestAccountFiltersDefaultChecked            bool               `db:"test_account_filters_default_checked"`
	PathCleaningFilters                         types.JSONText     `db:"path_cleaning_filters"`
	GeneratingDemoData                          bool               `db:"generating_demo_data"`
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
	WeekStartDay                                sql.NullInt64      `db:"week_start_day"`
	HasGroupTypes                               bool               `db:"has_group_types"`
	PrimaryDashboard                            sql.NullInt64      `db:"primary_dashboard"`
	LiveEventsColumns                           pq.StringArray     `db:"live_events_columns"`
	RecordingDomains                            pq.StringArray     `db:"recording_domains"`
	InjectWebApps                               bool               `db:"inject_web_apps"`
	ExtraSettings                               types.JSONText     `db:"extra_settings"`
	Modifiers                                   types.JSONText     `db:"modifiers"`
	SurveysOptIn                                bool               `db:"surveys_opt_in"`
	HeatmapsOptIn                               bool               `db:"heatmaps_opt_in"`
	CreatedAt                                   time.Time          `db:"created_at"`
	UpdatedAt                                   time.Time          `db:"updated_at"`
	MembershipLevel                             int                `db:"membership_level"`
}

// projectColumns lists the columns Project reads, by name: a column a
// later migration adds does not break a running (older) server, as p.*
// would, and prepared statements keep their result type.
var projectColumns = func() string {
	var cols []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous {
				walk(f.Type)
			} else if tag := f.Tag.Get("db"); tag != "" && tag != "membership_level" {
				cols = append(cols, "p."+tag)
			}
		}
	}
	walk(reflect.TypeOf(Project{}))
	return strings.Join(cols, ", ")
}()

var projectSelect = `SELECT ` + projectColumns + `, m.level AS membership_level
	FROM projects p JOIN memberships m ON m.organization_id = p.organization_id AND m.user_id = $1`

// orgCondition is the SQL condition on p.organization_id for an
// organization reference: a UUID, or "@current" (the user's oldest
// membership), with the user as $1 and the organization as $2. Membership
// itself is checked by projectSelect's join, in the same query.
func orgCondition(org string) (string, any, error) {
	if org == "@current" {
		return `p.organization_id = (SELECT organization_id FROM memberships
			WHERE user_id = $1 AND $2::text = '@current' ORDER BY created_at, organization_id LIMIT 1)`, org, nil
	}
	id, err := uuid.Parse(org)
	if err != nil {
		return "", nil, ErrNotFound
	}
	return "p.organization_id = $2", id, nil
}

// ProjectSummary is the reduced project the list endpoint returns.
type ProjectSummary struct {
	ID                         int64          `db:"id"`
	UUID                       uuid.UUID      `db:"uuid"`
	OrganizationID             uuid.UUID      `db:"organization_id"`
	APIToken                   string         `db:"api_token"`
	Name                       string         `db:"name"`
	CompletedSnippetOnboarding bool           `db:"completed_snippet_onboarding"`
	HasCompletedOnboardingFor  types.JSONText `db:"has_completed_onboarding_for"`
	IngestedEvent              bool           `db:"ingested_event"`
	IsDemo                     bool           `db:"is_demo"`
	Timezone                   string         `db:"timezone"`
	AccessControl              bool           `db:"access_control"`
}

// ListProjects returns one page of the organization's projects, oldest
// first, and their total count, in one query that reads only the
// summary's columns. teams, when not empty, keeps only those projects (a
// key limited to them). An organization the user is not a member of is
// ErrNotFound.
func (s *Store) ListProjects(ctx context.Context, userID int64, org string, teams []int64, limit, offset int) ([]ProjectSummary, int, error) {
	cond, orgArg, err := orgCondition(org)
	if err != nil {
		return nil, 0, err
	}
	var rows []struct {
		ProjectSummary
		Total int `db:"total"`
	}
	st, err := s.prepared(ctx, `SELECT p.id, p.uuid, p.organization_id, p.api_token, p.name, p.completed_snippet_onboarding,
			p.has_completed_onboarding_for, p.ingested_event, p.is_demo, p.timezone, p.access_control,
			count(*) OVER () AS total
		FROM projects p JOIN memberships m ON m.organization_id = p.organization_id AND m.user_id = $1
		WHERE `+cond+` AND (cardinality($5::bigint[]) = 0 OR p.id = ANY($5::bigint[]))
		ORDER BY p.id LIMIT $3 OFFSET $4`)
	if err != nil {
		return nil, 0, err
	}
	teamList := KeyScope{Teams: teams}.teamArray()
	if err := st.SelectContext(ctx, &rows, userID, orgArg, limit, offset, teamList); err != nil {
		return nil, 0, err
	}
	if len(rows) > 0 {
		ps := make([]ProjectSummary, len(rows))
		for i := range rows {
			ps[i] = rows[i].ProjectSummary
		}
		return ps, rows[0].Total, nil
	}
	// An empty page: past the end, an empty organization, or none at all.
	if _, err := s.ResolveOrganization(ctx, userID, KeyScope{}, org); err != nil {
		return nil, 0, err
	}
	var total int
	err = s.db.GetContext(ctx, &total, `SELECT count(*) FROM projects p
		JOIN memberships m ON m.organization_id = p.organization_id AND m.user_id = $1
		WHERE `+cond+` AND (cardinality($3::bigint[]) = 0 OR p.id = ANY($3::bigint[]))`, userID, orgArg, teamList)
	return []ProjectSummary{}, total, err
}

// GetProject returns a project of the organization visible to the user;
// ErrNotFound otherwise (another organization's project does not exist for them).
func (s *Store) GetProject(ctx context.Context, userID int64, org string, id int64) (*Project, error) {
	return s.projectInOrg(ctx, nil, userID, org, id, "")
}

// lockProject begins a transaction and locks the caller's project in it
// for an update; the caller commits, and rolls back on return (a no-op
// after the commit).
func (s *Store) lockProject(ctx context.Context, userID int64, orgRef string, id int64) (*sqlx.Tx, *Project, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.projectInOrg(ctx, tx, userID, orgRef, id, " FOR UPDATE OF p")
	if err != nil {
		tx.Rollback()
		return nil, nil, err
	}
	return tx, p, nil
}

// projectInOrg reads a project by organization reference and id; suffix
// may add a locking clause.
func (s *Store) projectInOrg(ctx context.Context, tx *sqlx.Tx, userID int64, org string, id int64, suffix string) (*Project, error) {
	cond, orgArg, err := orgCondition(org)
	if err != nil {
		return nil, err
	}
	return s.getProject(ctx, tx, userID, cond+" AND p.id = $3"+suffix, orgArg, id)
}

// ProjectForUser returns a project by id if the user belongs to its
// organization (the /api/projects/:id routes).
func (s *Store) ProjectForUser(ctx context.Context, userID, id int64) (*Project, error) {
	return s.getProject(ctx, nil, userID, "p.id = $2", id)
}

// getProject reads one project through q: a transaction, or the pool
// (nil), where the statement is prepared once and reused.
func (s *Store) getProject(ctx context.Context, tx *sqlx.Tx, userID int64, where string, args ...any) (*Project, error) {
	var p Project
	query := projectSelect + " WHERE " + where
	args = append([]any{userID}, args...)
	if err := s.getOne(ctx, tx, &p, query, args...); err != nil {
		return nil, err
	}
	return &p, nil
}

// CreateProject creates a project with the given fields (already checked
// by ParseProjectInput) and records the creation.
func (s *Store) CreateProject(ctx context.Context, userID int64, orgRef string, in ProjectInput) (*Project, error) {
	m, err := s.ResolveOrganization(ctx, userID, KeyScope{}, orgRef)
	if err != nil {
		return nil, err
	}
	org := m.OrganizationID
	if err := required(in.Values, "name"); err != nil {
		return nil, err
	}
	return inTx(ctx, s, func(tx *sqlx.Tx) (*Project, error) {
		id, err := insertRecord(ctx, tx, "projects", []string{"uuid", "organization_id", "api_token", "live_events_token"},
			[]any{uuid.New(), org, randomToken("phc_"), randomToken("phe_")}, projectFields, in.Values)
		if err != nil {
			return nil, err
		}
		if err := checkPrimaryDashboard(ctx, tx, id, in.Values); err != nil {
			return nil, err
		}
		p, err := s.getProject(ctx, tx, userID, "p.id = $2", id)
		if err != nil {
			return nil, err
		}
		return p, logActivity(ctx, tx, projectActivity(org, id, userID, "created", p.Name, nil))
	})
}

// UpdateProject applies the given fields. Fields whose value does not
// change are not written and not logged; an update that changes nothing
// touches nothing.
func (s *Store) UpdateProject(ctx context.Context, userID int64, orgRef string, id int64, in ProjectInput) (*Project, error) {
	tx, before, err := s.lockProject(ctx, userID, orgRef, id)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := checkPrimaryDashboard(ctx, tx, id, in.Values); err != nil {
		return nil, err
	}
	org := before.OrganizationID
	sets, args, changes := changedFields("Project", projectFields, before, in.Values)
	if len(sets) == 0 {
		return before, nil
	}
	if err := updateRecord(ctx, tx, "projects", append(sets, "updated_at = now()"), args, id); err != nil {
		return nil, err
	}
	after, err := s.getProject(ctx, tx, userID, "p.id = $2", id)
	if err != nil {
		return nil, err
	}
	if err := logActivity(ctx, tx, projectActivity(org, id, userID, "updated", after.Name, changes)); err != nil {
		return nil, err
	}
	return after, tx.Commit()
}

// ResetProjectToken gives the project a new api_token; the old one stops
// working for ingestion with this commit in this process, and within
// Config.AuthCacheTTL in any other process sharing the database.
func (s *Store) ResetProjectToken(ctx context.Context, userID int64, orgRef string, id int64) (*Project, error) {
	tx, before, err := s.lockProject(ctx, userID, orgRef, id)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	org := before.OrganizationID
	if _, err := tx.ExecContext(ctx, "UPDATE projects SET api_token = $1, updated_at = now() WHERE id = $2", randomToken("phc_"), id); err != nil {
		return nil, err
	}
	p, err := s.getProject(ctx, tx, userID, "p.id = $2", id)
	if err != nil {
		return nil, err
	}
	// The token itself is a secret: the log says it changed, not to what.
	change := Change{Type: "Project", Field: "api_token", Action: "changed"}
	if err := logActivity(ctx, tx, projectActivity(org, id, userID, "updated", p.Name, []Change{change})); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	s.tokens.drop(before.APIToken)
	return p, nil
}

// DeleteProject removes the project and, by cascade, its insights, views,
// sharing, cached results and activity, in one transaction. An
// organization-level activity entry records the deletion. Events are the
// caller's to delete from ClickHouse (asynchronously); project ids are
// never reused, so none of them can surface in another project meanwhile.
func (s *Store) DeleteProject(ctx context.Context, userID int64, orgRef string, id int64) error {
	tx, p, err := s.lockProject(ctx, userID, orgRef, id)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	org := p.OrganizationID
	if _, err := tx.ExecContext(ctx, "DELETE FROM projects WHERE id = $1", id); err != nil {
		return err
	}
	if err := logActivity(ctx, tx, Activity{OrganizationID: org, Scope: "Project", ItemID: fmt.Sprint(id),
		Activity: "deleted", UserID: userID, Detail: ActivityDetail{Name: p.Name}}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.tokens.drop(p.APIToken)
	return nil
}

// projectActivity is the activity entry of a change to project id of
// organization org, named name.
func projectActivity(org uuid.UUID, id, userID int64, activity, name string, changes []Change) Activity {
	return Activity{OrganizationID: org, ProjectID: &id, Scope: "Project", ItemID: fmt.Sprint(id),
		Activity: activity, UserID: userID, Detail: ActivityDetail{Name: name, Changes: changes}}
}

func placeholders(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return strings.Join(ps, ", ")
}
