package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

func (s *Server) projectRoutes(api *gin.RouterGroup) {
	// Membership is checked by each store call, in the same query.
	read, write := requireScope("project:read"), requireScope("project:write")
	g := api.Group("/organizations/:organization_id/projects")
	g.GET("", read, s.listProjects)
	g.POST("", write, s.createProject)
	g.GET("/:id", read, s.getProject)
	g.PATCH("/:id", write, s.updateProject)
	g.PUT("/:id", write, s.replaceProject)
	g.DELETE("/:id", write, s.deleteProject)
	g.GET("/:id/activity", requireScope("activity_log:read"), s.projectActivity)
	g.GET("/:id/is_generating_demo_data", read, s.isGeneratingDemoData)
	g.PATCH("/:id/reset_token", write, s.resetProjectToken)

	// The same projects without the organization, as PostHog serves them:
	// the list is the key's current organization's. The parameter is
	// project_id because the insight routes below it name it so.
	p := api.Group("/projects")
	p.GET("", read, s.listCurrentProjects)
	p.GET("/:project_id", read, s.getProjectByID)
	p.PATCH("/:project_id", write, s.updateProjectByID)
	p.PUT("/:project_id", write, s.replaceProjectByID)
}

// organization is the path's organization reference: a UUID or
// "@current", resolved already for a key limited to some organizations
// (checkKeyLimits). One the caller is not a member of answers 404,
// exactly as one that does not exist.
func organization(c *gin.Context) string {
	if org := c.GetString(organizationKey); org != "" {
		return org
	}
	return c.Param("organization_id")
}

func projectID(c *gin.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, httpx.NotFound()
	}
	return id, nil
}

func (s *Server) listProjects(c *gin.Context) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.renderProjects(c, organization(c), limit, offset)
}

// listCurrentProjects lists the projects of the key's current
// organization: the oldest one it may touch.
func (s *Server) listCurrentProjects(c *gin.Context) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	org := "@current"
	if p := principal(c); p.Limited() {
		m, err := s.store.ResolveOrganization(c.Request.Context(), p.User.ID, p.KeyScope, org)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		org = m.OrganizationID.String()
	}
	s.renderProjects(c, org, limit, offset)
}

// renderProjects writes a page of the organization's projects the key
// may touch.
func (s *Server) renderProjects(c *gin.Context, org string, limit, offset int) {
	p := principal(c)
	ps, total, err := s.store.ListProjects(c.Request.Context(), p.User.ID, org, p.Teams, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]projectSummaryJSON, len(ps))
	for i := range ps {
		out[i] = projectSummary(&ps[i])
	}
	httpx.Paginated(c, total, limit, offset, out)
}

func (s *Server) createProject(c *gin.Context) {
	in, err := httpx.Bind(c, metadata.ParseProjectInput)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, err := s.store.CreateProject(c.Request.Context(), principal(c).User.ID, organization(c), in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if p.IsDemo {
		// The project answers at once; its is_generating_demo_data is
		// true until the demo product is written.
		cfg := DemoSize
		cfg.Team, cfg.Progress = p.ID, s.demoProgress
		if err := s.store.SetGeneratingDemoData(c.Request.Context(), p.ID, true); err != nil {
			httpx.WriteError(c, err)
			return
		}
		p.GeneratingDemoData = true
		s.background(func(ctx context.Context) {
			_, err := runDemo(ctx, s.store, s.writer, s.log, cfg)
			s.analysis.Ingest().Note(p.ID) // cached results of open ranges are now stale
			if err != nil {
				s.log.Error("demo data failed", "project_id", p.ID, "error", err)
			}
		})
	}
	c.JSON(http.StatusCreated, projectFull(p))
}

// pathProject loads the path's project for the caller; on failure it has
// written the error and returns false.
func (s *Server) pathProject(c *gin.Context) (*metadata.Project, bool) {
	id, err := projectID(c)
	if err == nil {
		var p *metadata.Project
		if p, err = s.store.GetProject(c.Request.Context(), principal(c).User.ID, organization(c), id); err == nil {
			return p, true
		}
	}
	httpx.WriteError(c, err)
	return nil, false
}

func (s *Server) getProject(c *gin.Context) {
	if p, ok := s.pathProject(c); ok {
		c.JSON(http.StatusOK, projectFull(p))
	}
}

// getProjectByID is getProject for /api/projects/:project_id.
func (s *Server) getProjectByID(c *gin.Context) {
	if p, ok := s.pathInsightProject(c); ok {
		c.JSON(http.StatusOK, projectFull(p))
	}
}

func (s *Server) updateProject(c *gin.Context)  { s.writeProject(c, false) }
func (s *Server) replaceProject(c *gin.Context) { s.writeProject(c, true) }

// writeProject updates the path's project: any subset of the writeable
// fields (PATCH), or with full a whole project (PUT), which must carry
// what a create must. Fields a PUT leaves out keep their values, as
// Django REST framework's full updates do.
func (s *Server) writeProject(c *gin.Context, full bool) {
	id, err := projectID(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.updateProjectIn(c, organization(c), id, full)
}

func (s *Server) updateProjectByID(c *gin.Context)  { s.writeProjectByID(c, false) }
func (s *Server) replaceProjectByID(c *gin.Context) { s.writeProjectByID(c, true) }

// writeProjectByID is writeProject for /api/projects/:project_id: the
// project's organization is looked up first (404 when the caller is in
// none of its organizations).
func (s *Server) writeProjectByID(c *gin.Context, full bool) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	s.updateProjectIn(c, p.OrganizationID.String(), p.ID, full)
}

func (s *Server) updateProjectIn(c *gin.Context, org string, id int64, full bool) {
	in, err := httpx.Bind(c, metadata.ParseProjectInput)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if _, ok := in.Values["name"]; full && !ok {
		httpx.WriteError(c, httpx.Invalid("name", "This field is required (PUT replaces the project: send every field a create needs)."))
		return
	}
	p, err := s.store.UpdateProject(c.Request.Context(), principal(c).User.ID, org, id, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, projectFull(p))
}

func (s *Server) deleteProject(c *gin.Context) {
	id, err := projectID(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if err := s.store.DeleteProject(c.Request.Context(), principal(c).User.ID, organization(c), id); err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.background(func(ctx context.Context) { s.deleteProjectData(ctx, id) })
	c.Status(http.StatusNoContent)
}

// deleteProjectData removes a deleted project's rows from every ClickHouse
// table keyed by project (events, persons, cohort members...). It runs
// after the response: the deletion is a mutation that may take a while on
// a big table, and the metadata is already gone. The tables are the
// engine's, where the data is stored, whatever analyses read.
func (s *Server) deleteProjectData(ctx context.Context, id int64) {
	schema := s.engine.Schema()
	for _, table := range schema.TeamTables() {
		// Table names come from the schema, the project id is bound.
		err := s.engine.Exec(ctx, querybuilder.Statement{
			SQL:    "ALTER TABLE " + schema.MutationTarget(table) + " DELETE WHERE team_id = {team:Int64}",
			Params: map[string]any{"team": id},
		})
		if err != nil {
			s.log.Error("deleting a deleted project's data", "project_id", id, "table", table, "err", err)
			continue
		}
	}
	s.log.Info("deleted project data from ClickHouse", "project_id", id)
}

func (s *Server) resetProjectToken(c *gin.Context) {
	id, err := projectID(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, err := s.store.ResetProjectToken(c.Request.Context(), principal(c).User.ID, organization(c), id)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, projectFull(p))
}

func (s *Server) isGeneratingDemoData(c *gin.Context) {
	p, ok := s.pathProject(c)
	if !ok {
		return
	}
	out := projectFull(p)
	out.IsGeneratingDemoData = &p.GeneratingDemoData
	c.JSON(http.StatusOK, out)
}

func (s *Server) projectActivity(c *gin.Context) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, ok := s.pathProject(c)
	if !ok {
		return
	}
	entries, total, err := s.store.ListActivity(c.Request.Context(), p.ID, "Project", strconv.FormatInt(p.ID, 10), limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]activityJSON, len(entries))
	for i := range entries {
		out[i] = activityEntry(&entries[i])
	}
	httpx.Paginated(c, total, limit, offset, out)
}

// projectSummaryJSON is the reduced project of the list endpoint.
type projectSummaryJSON struct {
	ID                         int64           `json:"id"`
	UUID                       uuid.UUID       `json:"uuid"`
	Organization               uuid.UUID       `json:"organization"`
	APIToken                   string          `json:"api_token"`
	Name                       string          `json:"name"`
	CompletedSnippetOnboarding bool            `json:"completed_snippet_onboarding"`
	HasCompletedOnboardingFor  json.RawMessage `json:"has_completed_onboarding_for"`
	IngestedEvent              bool            `json:"ingested_event"`
	IsDemo                     bool            `json:"is_demo"`
	Timezone                   string          `json:"timezone"`
	AccessControl              bool            `json:"access_control"`
}

func projectSummary(p *metadata.ProjectSummary) projectSummaryJSON {
	return projectSummaryJSON{
		ID: p.ID, UUID: p.UUID, Organization: p.OrganizationID, APIToken: p.APIToken, Name: p.Name,
		CompletedSnippetOnboarding: p.CompletedSnippetOnboarding, HasCompletedOnboardingFor: json.RawMessage(p.HasCompletedOnboardingFor),
		IngestedEvent: p.IngestedEvent, IsDemo: p.IsDemo, Timezone: p.Timezone, AccessControl: p.AccessControl,
	}
}

// projectJSON is the full project, every field of the contract's table:
// the list's summary and the rest.
type projectJSON struct {
	IsGeneratingDemoData *bool `json:"is_generating_demo_data,omitempty"`
	projectSummaryJSON
	AppURLs                                     []string        `json:"app_urls"`
	SlackIncomingWebhook                        *string         `json:"slack_incoming_webhook"`
	CreatedAt                                   time.Time       `json:"created_at"`
	UpdatedAt                                   time.Time       `json:"updated_at"`
	AnonymizeIPs                                bool            `json:"anonymize_ips"`
	TestAccountFilters                          json.RawMessage `json:"test_account_filters"`
	TestAccountFiltersDefaultChecked            bool            `json:"test_account_filters_default_checked"`
	PathCleaningFilters                         json.RawMessage `json:"path_cleaning_filters"`
	DataAttributes                              json.RawMessage `json:"data_attributes"`
	PersonDisplayNameProperties                 []string        `json:"person_display_name_properties"`
	CorrelationConfig                           json.RawMessage `json:"correlation_config"`
	AutocaptureOptOut                           bool            `json:"autocapture_opt_out"`
	AutocaptureExceptionsOptIn                  bool            `json:"autocapture_exceptions_opt_in"`
	AutocaptureWebVitalsOptIn                   bool            `json:"autocapture_web_vitals_opt_in"`
	AutocaptureExceptionsErrorsToIgnore         json.RawMessage `json:"autocapture_exceptions_errors_to_ignore"`
	CaptureConsoleLogOptIn                      bool            `json:"capture_console_log_opt_in"`
	CapturePerformanceOptIn                     bool            `json:"capture_performance_opt_in"`
	SessionRecordingOptIn                       bool            `json:"session_recording_opt_in"`
	SessionRecordingSampleRate                  *string         `json:"session_recording_sample_rate"`
	SessionRecordingMinimumDurationMilliseconds *int64          `json:"session_recording_minimum_duration_milliseconds"`
	SessionRecordingLinkedFlag                  json.RawMessage `json:"session_recording_linked_flag"`
	SessionRecordingNetworkPayloadCaptureConfig json.RawMessage `json:"session_recording_network_payload_capture_config"`
	SessionReplayConfig                         json.RawMessage `json:"session_replay_config"`
	EffectiveMembershipLevel                    int             `json:"effective_membership_level"`
	WeekStartDay                                *int64          `json:"week_start_day"`
	HasGroupTypes                               bool            `json:"has_group_types"`
	PrimaryDashboard                            *int64          `json:"primary_dashboard"`
	LiveEventsColumns                           []string        `json:"live_events_columns"`
	RecordingDomains                            []string        `json:"recording_domains"`
	PersonOnEventsQueryingEnabled               bool            `json:"person_on_events_querying_enabled"`
	InjectWebApps                               bool            `json:"inject_web_apps"`
	ExtraSettings                               json.RawMessage `json:"extra_settings"`
	Modifiers                                   json.RawMessage `json:"modifiers"`
	DefaultModifiers                            map[string]any  `json:"default_modifiers"`
	SurveysOptIn                                bool            `json:"surveys_opt_in"`
	HeatmapsOptIn                               bool            `json:"heatmaps_opt_in"`
	LiveEventsToken                             string          `json:"live_events_token"`
}

// defaultModifiers says how insightd runs queries, in PostHog's modifier
// names: persons are resolved through the distinct_id mapping at query
// time, not read from the event.
var defaultModifiers = map[string]any{"personsOnEventsMode": "disabled"}

func projectFull(p *metadata.Project) projectJSON {
	return projectJSON{
		projectSummaryJSON: projectSummary(&p.ProjectSummary),
		AppURLs:            list(p.AppURLs), SlackIncomingWebhook: strPtr(p.SlackIncomingWebhook.String, p.SlackIncomingWebhook.Valid),
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, AnonymizeIPs: p.AnonymizeIPs,
		TestAccountFilters: json.RawMessage(p.TestAccountFilters), TestAccountFiltersDefaultChecked: p.TestAccountFiltersDefaultChecked,
		PathCleaningFilters: json.RawMessage(p.PathCleaningFilters),
		DataAttributes:      json.RawMessage(p.DataAttributes), PersonDisplayNameProperties: list(p.PersonDisplayNameProperties),
		CorrelationConfig: json.RawMessage(p.CorrelationConfig), AutocaptureOptOut: p.AutocaptureOptOut,
		AutocaptureExceptionsOptIn: p.AutocaptureExceptionsOptIn, AutocaptureWebVitalsOptIn: p.AutocaptureWebVitalsOptIn,
		AutocaptureExceptionsErrorsToIgnore: json.RawMessage(p.AutocaptureExceptionsErrorsToIgnore),
		CaptureConsoleLogOptIn:              p.CaptureConsoleLogOptIn, CapturePerformanceOptIn: p.CapturePerformanceOptIn,
		SessionRecordingOptIn:                       p.SessionRecordingOptIn,
		SessionRecordingSampleRate:                  strPtr(p.SessionRecordingSampleRate.String, p.SessionRecordingSampleRate.Valid),
		SessionRecordingMinimumDurationMilliseconds: intPtr(p.SessionRecordingMinimumDurationMilliseconds.Int64, p.SessionRecordingMinimumDurationMilliseconds.Valid),
		SessionRecordingLinkedFlag:                  nullJSON(p.SessionRecordingLinkedFlag.Valid, p.SessionRecordingLinkedFlag.JSONText),
		SessionRecordingNetworkPayloadCaptureConfig: nullJSON(p.SessionRecordingNetworkPayloadCaptureConfig.Valid, p.SessionRecordingNetworkPayloadCaptureConfig.JSONText),
		SessionReplayConfig:                         nullJSON(p.SessionReplayConfig.Valid, p.SessionReplayConfig.JSONText),
		EffectiveMembershipLevel:                    p.MembershipLevel,
		WeekStartDay:                                intPtr(p.WeekStartDay.Int64, p.WeekStartDay.Valid),
		HasGroupTypes:                               p.HasGroupTypes,
		PrimaryDashboard:                            intPtr(p.PrimaryDashboard.Int64, p.PrimaryDashboard.Valid),
		LiveEventsColumns:                           list(p.LiveEventsColumns), RecordingDomains: list(p.RecordingDomains),
		InjectWebApps: p.InjectWebApps, ExtraSettings: json.RawMessage(p.ExtraSettings), Modifiers: json.RawMessage(p.Modifiers),
		DefaultModifiers: defaultModifiers,
		SurveysOptIn:     p.SurveysOptIn, HeatmapsOptIn: p.HeatmapsOptIn, LiveEventsToken: p.LiveEventsToken,
	}
}

func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func strPtr(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}

func intPtr(n int64, ok bool) *int64 {
	if !ok {
		return nil
	}
	return &n
}

func nullJSON(ok bool, raw []byte) json.RawMessage {
	if !ok || len(raw) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(raw)
}

// userJSON is the user object of the contract.
type userJSON struct {
	ID              int64           `json:"id"`
	UUID            uuid.UUID       `json:"uuid"`
	DistinctID      string          `json:"distinct_id"`
	FirstName       string          `json:"first_name"`
	LastName        string          `json:"last_name"`
	Email           string          `json:"email"`
	IsEmailVerified bool            `json:"is_email_verified"`
	HedgehogConfig  json.RawMessage `json:"hedgehog_config"`
}

func userObject(u *metadata.User) *userJSON {
	if u == nil {
		return nil
	}
	return &userJSON{ID: u.ID, UUID: u.UUID, DistinctID: u.DistinctID, FirstName: u.FirstName, LastName: u.LastName,
		Email: u.Email, IsEmailVerified: u.IsEmailVerified, HedgehogConfig: nullJSON(len(u.HedgehogConfig) > 0, u.HedgehogConfig)}
}

// activityJSON is one change-log entry in PostHog's activity shape.
type activityJSON struct {
	ID        int64                   `json:"id"`
	User      *userJSON               `json:"user"`
	Activity  string                  `json:"activity"`
	Scope     string                  `json:"scope"`
	ItemID    string                  `json:"item_id"`
	Detail    metadata.ActivityDetail `json:"detail"`
	CreatedAt time.Time               `json:"created_at"`
	IsSystem  bool                    `json:"is_system"`
	Unread    bool                    `json:"unread"`
}

func activityEntry(a *metadata.Activity) activityJSON {
	return activityJSON{ID: a.ID, User: userObject(a.User), Activity: a.Activity, Scope: a.Scope, ItemID: a.ItemID,
		Detail: a.Detail, CreatedAt: a.CreatedAt, IsSystem: a.User == nil}
}
