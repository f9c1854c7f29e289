package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
)

func (s *Server) insightRoutes(api *gin.RouterGroup) {
	// Project access is checked by each handler (another organization's
	// project answers 404); format is checked before anything runs.
	g := api.Group("/projects/:project_id/insights", checkFormat)
	read, write := requireScope("insight:read"), requireScope("insight:write")
	g.GET("", read, s.listInsights)
	g.POST("", write, s.createInsight)
	g.GET("/activity", requireScope("activity_log:read"), s.projectInsightActivity)
	g.GET("/my_last_viewed", read, s.myLastViewedInsights)
	g.POST("/cancel", read, s.cancelInsightQuery)
	g.GET("/:id", read, s.getInsight)
	g.PATCH("/:id", write, s.updateInsight)
	// No insight field is required, so a full update (PUT) is a PATCH
	// with the same validation; likewise for sharing.
	g.PUT("/:id", write, s.updateInsight)
	g.DELETE("/:id", write, s.deleteInsight)
	g.POST("/:id/viewed", read, s.insightViewed)
	g.GET("/:id/activity", requireScope("activity_log:read"), s.insightActivity)
	g.GET("/:id/sharing", requireScope("sharing_configuration:read"), s.getInsightSharing)
	g.PATCH("/:id/sharing", requireScope("sharing_configuration:write"), s.updateInsightSharing)
	g.PUT("/:id/sharing", requireScope("sharing_configuration:write"), s.updateInsightSharing)
}

// pathInsightProject loads the path's project for the caller; on failure
// it has written the error (404 for another organization's project) and
// returns false.
func (s *Server) pathInsightProject(c *gin.Context) (*metadata.Project, bool) {
	id, err := pathID(c, "project_id")
	var p *metadata.Project
	if err == nil {
		p, err = s.store.ProjectForUser(c.Request.Context(), principal(c).User.ID, id)
	}
	if err != nil {
		writeError(c, err)
		return nil, false
	}
	return p, true
}

// pathInsight loads the path's project and its insight; a deleted insight
// answers 404 like one that never existed.
func (s *Server) pathInsight(c *gin.Context) (*metadata.Project, *metadata.Insight, bool) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return nil, nil, false
	}
	id, err := insightID(c)
	var i *metadata.Insight
	if err == nil {
		i, err = s.store.GetInsight(c.Request.Context(), p.ID, id)
	}
	if err == nil && i.Deleted {
		err = NotFound()
	}
	if err != nil {
		writeError(c, err)
		return nil, nil, false
	}
	return p, i, true
}

func insightID(c *gin.Context) (int64, error) { return pathID(c, "id") }

// pathID reads a numeric id from the path; anything else names nothing
// that exists: 404.
func pathID(c *gin.Context, param string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(param), 10, 64)
	if err != nil || id < 1 {
		return 0, NotFound()
	}
	return id, nil
}

func (s *Server) listInsights(c *gin.Context) {
	limit, offset, err := page(c)
	if err != nil {
		writeError(c, err)
		return
	}
	f, err := insightListFilter(c)
	if err != nil {
		writeError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	is, total, err := s.store.ListInsights(c.Request.Context(), p.ID, f, limit, offset)
	if err != nil {
		writeError(c, err)
		return
	}
	renderPage(c, total, limit, offset, insightObjects(is, p))
}

// insightListFilter reads the list's filters from the query string.
func insightListFilter(c *gin.Context) (metadata.InsightFilter, error) {
	var f metadata.InsightFilter
	var err error
	if v, ok := c.GetQuery("short_id"); ok {
		if err = checkQueryText("short_id", v); err != nil {
			return f, err
		}
		f.ShortID = &v
	}
	if v, ok := c.GetQuery("created_by"); ok {
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n < 1 {
			return f, Invalid("created_by", "created_by must be a user id (a positive integer).")
		}
		f.CreatedBy = &n
	}
	if f.Saved, err = queryBool(c, "saved"); err != nil {
		return f, err
	}
	if f.Favorited, err = queryBool(c, "favorited"); err != nil {
		return f, err
	}
	f.Search = c.Query("search")
	if err = checkQueryText("search", f.Search); err != nil {
		return f, err
	}
	f.Kind = c.Query("insight")
	if f.Kind != "" && !slices.Contains(metadata.InsightKinds(), strings.ToUpper(f.Kind)) {
		return f, Invalid("insight", "insight must be one of "+strings.Join(metadata.InsightKinds(), ", ")+".")
	}
	return f, nil
}

// checkQueryText refuses query-string values PostgreSQL cannot compare
// with text: invalid UTF-8 and NUL.
func checkQueryText(name, v string) error {
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return Invalid(name, name+" must be UTF-8 text without NUL characters.")
	}
	return nil
}

// queryBool reads an optional boolean query parameter (true/false, 1/0).
func queryBool(c *gin.Context, name string) (*bool, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return nil, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, Invalid(name, name+" must be true or false.")
	}
	return &b, nil
}

func (s *Server) createInsight(c *gin.Context) {
	in, err := insightInput(c)
	if err != nil {
		writeError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	i, err := s.store.CreateInsight(c.Request.Context(), p, principal(c).User.ID, in)
	if err != nil {
		writeError(c, err)
		return
	}
	render(c, http.StatusCreated, insightObject(i, p))
}

// refreshModes are the values PostHog clients send as refresh: the legacy
// booleans and the execution modes of newer clients.
var refreshModes = []string{"true", "false", "1", "0", "blocking", "async", "lazy_async", "force_blocking", "force_async", "force_cache"}

func (s *Server) getInsight(c *gin.Context) {
	// refresh asks for a recomputed result when the cached one is older
	// than its refresh window (insightRefreshMode).
	if v, ok := c.GetQuery("refresh"); ok && !slices.Contains(refreshModes, strings.ToLower(v)) {
		writeError(c, Invalid("refresh", "refresh must be one of "+strings.Join(refreshModes, ", ")+"."))
		return
	}
	var fromDashboard int64
	if v, ok := c.GetQuery("from_dashboard"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			writeError(c, Invalid("from_dashboard", "from_dashboard must be a dashboard id (a positive integer)."))
			return
		}
		fromDashboard = n
	}
	p, i, ok := s.pathInsight(c)
	if !ok {
		return
	}
	d, err := s.contextDashboard(c, p, fromDashboard)
	if err != nil {
		writeError(c, err)
		return
	}
	out := insightObject(i, p)
	if err := s.insightResult(c, p, i, d, insightRefreshMode(c.Query("refresh")), &out); err != nil {
		writeError(c, err)
		return
	}
	render(c, http.StatusOK, out)
}

func (s *Server) updateInsight(c *gin.Context) {
	in, err := insightInput(c)
	if err != nil {
		writeError(c, err)
		return
	}
	id, err := insightID(c)
	if err != nil {
		writeError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	i, err := s.store.UpdateInsight(c.Request.Context(), p, principal(c).User.ID, id, in)
	if err != nil {
		writeError(c, err)
		return
	}
	render(c, http.StatusOK, insightObject(i, p))
}

// deleteInsight refuses hard deletion, as PostHog does, once the insight
// is known to exist for the caller (others get 404 as everywhere).
func (s *Server) deleteInsight(c *gin.Context) {
	if _, _, ok := s.pathInsight(c); ok {
		c.Header("Allow", "GET, PATCH")
		writeError(c, &Error{Kind: KindMethodNotAllowed, Code: "method_not_allowed",
			Detail: "Hard delete of this insight is not allowed. Use PATCH with {\"deleted\": true} to soft delete it."})
	}
}

func (s *Server) insightViewed(c *gin.Context) {
	id, err := insightID(c)
	if err != nil {
		writeError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	i, err := s.store.RecordInsightView(c.Request.Context(), p.ID, id, principal(c).User.ID)
	if err != nil {
		writeError(c, err)
		return
	}
	render(c, http.StatusOK, insightObject(i, p))
}

// myLastViewedInsightsCount is the contract's "at most 5".
const myLastViewedInsightsCount = 5

func (s *Server) myLastViewedInsights(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	is, err := s.store.LastViewedInsights(c.Request.Context(), p.ID, principal(c).User.ID, myLastViewedInsightsCount)
	if err != nil {
		writeError(c, err)
		return
	}
	// A plain list, not a page, as PostHog answers it.
	render(c, http.StatusOK, insightObjects(is, p))
}

func (s *Server) insightActivity(c *gin.Context) {
	if p, i, ok := s.pathInsight(c); ok {
		s.renderInsightActivity(c, p, strconv.FormatInt(i.ID, 10))
	}
}

func (s *Server) projectInsightActivity(c *gin.Context) {
	if p, ok := s.pathInsightProject(c); ok {
		s.renderInsightActivity(c, p, "")
	}
}

// renderInsightActivity writes a page of the project's insight activity,
// for one insight or ("") all of them.
func (s *Server) renderInsightActivity(c *gin.Context, p *metadata.Project, itemID string) {
	limit, offset, err := page(c)
	if err != nil {
		writeError(c, err)
		return
	}
	entries, total, err := s.store.ListActivity(c.Request.Context(), p.ID, "Insight", itemID, limit, offset)
	if err != nil {
		writeError(c, err)
		return
	}
	out := make([]activityJSON, len(entries))
	for k := range entries {
		out[k] = activityEntry(&entries[k])
	}
	renderPage(c, total, limit, offset, out)
}

// sharingJSON is an insight's sharing configuration.
type sharingJSON struct {
	CreatedAt   time.Time `json:"created_at"`
	Enabled     bool      `json:"enabled"`
	AccessToken string    `json:"access_token"`
}

func (s *Server) getInsightSharing(c *gin.Context) {
	_, i, ok := s.pathInsight(c)
	if !ok {
		return
	}
	sh, err := s.store.InsightSharing(c.Request.Context(), i.ID)
	if err != nil {
		writeError(c, err)
		return
	}
	render(c, http.StatusOK, sharingJSON{CreatedAt: sh.CreatedAt, Enabled: sh.Enabled, AccessToken: sh.AccessToken})
}

func (s *Server) updateInsightSharing(c *gin.Context) {
	body, err := jsonObject(c)
	if err != nil {
		writeError(c, err)
		return
	}
	var enabled *bool
	if raw, ok := body["enabled"]; ok {
		if err := json.Unmarshal(raw, &enabled); err != nil || enabled == nil {
			writeError(c, Invalid("enabled", "enabled must be true or false."))
			return
		}
	}
	p, i, ok := s.pathInsight(c)
	if !ok {
		return
	}
	var sh *metadata.Sharing
	if enabled == nil { // nothing to change: the configuration as it is
		sh, err = s.store.InsightSharing(c.Request.Context(), i.ID)
	} else {
		sh, err = s.store.SetInsightSharing(c.Request.Context(), p, principal(c).User.ID, i, *enabled)
	}
	if err != nil {
		writeError(c, err)
		return
	}
	render(c, http.StatusOK, sharingJSON{CreatedAt: sh.CreatedAt, Enabled: sh.Enabled, AccessToken: sh.AccessToken})
}

// projectQueryID is the ClickHouse query id an analysis of the project
// runs under for a client's client_query_id. Query ids are global to the
// engine; prefixing the project keeps a caller from cancelling another
// project's query by guessing or reusing its id.
func projectQueryID(projectID int64, clientQueryID string) string {
	return fmt.Sprintf("p%d_%s", projectID, clientQueryID)
}

// clientQueryIDMax leaves room for projectQueryID's prefix (a 19-digit
// project id at most) within olap's 64-character query ids; PostHog
// clients send UUIDs (36 characters).
const clientQueryIDMax = 43

func (s *Server) cancelInsightQuery(c *gin.Context) {
	body, err := jsonObject(c)
	if err != nil {
		writeError(c, err)
		return
	}
	var id string
	raw, ok := body["client_query_id"]
	if !ok || isJSONNull(raw) {
		writeError(c, Invalid("client_query_id", "client_query_id is required."))
		return
	}
	if json.Unmarshal(raw, &id) != nil || len(id) > clientQueryIDMax || !olap.ValidQueryID(id) {
		writeError(c, Invalid("client_query_id", fmt.Sprintf(
			"client_query_id must be 1 to %d characters of letters, digits, _ and -.", clientQueryIDMax)))
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	cancelled, err := s.engine.Cancel(c.Request.Context(), projectQueryID(p.ID, id))
	if err != nil {
		writeError(c, err)
		return
	}
	// 201 either way: the client wants the query gone, and it is.
	render(c, http.StatusCreated, gin.H{"client_query_id": id, "cancelled": cancelled})
}

func isJSONNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// insightInput reads a JSON object body into checked insight fields.
func insightInput(c *gin.Context) (metadata.InsightInput, error) {
	body, err := jsonObject(c)
	if err != nil {
		return metadata.InsightInput{}, err
	}
	return metadata.ParseInsightInput(body)
}

// dashboardTileJSON is an insight's place on a dashboard.
type dashboardTileJSON struct {
	ID          int64 `json:"id"`
	DashboardID int64 `json:"dashboard_id"`
	Deleted     bool  `json:"deleted"`
}

// PostHog's access levels: 21 is the restriction level of an insight
// anyone in the project can edit, 37 the privilege of an editor. Every
// member edits every insight until access control exists.
const (
	restrictionEveryoneCanEdit = 21
	privilegeCanEdit           = 37
)

// insightJSON is an insight with every field of the contract.
type insightJSON struct {
	ID                        int64               `json:"id"`
	ShortID                   string              `json:"short_id"`
	Name                      *string             `json:"name"`
	DerivedName               *string             `json:"derived_name"`
	Filters                   json.RawMessage     `json:"filters"`
	Query                     json.RawMessage     `json:"query"`
	Order                     *int64              `json:"order"`
	Deleted                   bool                `json:"deleted"`
	Dashboards                []int64             `json:"dashboards"`
	DashboardTiles            []dashboardTileJSON `json:"dashboard_tiles"`
	LastRefresh               *time.Time          `json:"last_refresh"`
	CacheTargetAge            *string             `json:"cache_target_age"`
	NextAllowedClientRefresh  *time.Time          `json:"next_allowed_client_refresh"`
	Result                    json.RawMessage     `json:"result"`
	Columns                   json.RawMessage     `json:"columns"`
	CreatedAt                 time.Time           `json:"created_at"`
	CreatedBy                 *userJSON           `json:"created_by"`
	Description               string              `json:"description"`
	UpdatedAt                 time.Time           `json:"updated_at"`
	Tags                      []string            `json:"tags"`
	Favorited                 bool                `json:"favorited"`
	Saved                     bool                `json:"saved"`
	LastModifiedAt            time.Time           `json:"last_modified_at"`
	LastModifiedBy            *userJSON           `json:"last_modified_by"`
	IsSample                  bool                `json:"is_sample"`
	EffectiveRestrictionLevel int                 `json:"effective_restriction_level"`
	EffectivePrivilegeLevel   int                 `json:"effective_privilege_level"`
	Timezone                  string              `json:"timezone"`
	IsCached                  bool                `json:"is_cached"`
	QueryStatus               json.RawMessage     `json:"query_status"`
}

// insightObject renders an insight of project p. The analysis fields
// (result, columns, last_refresh, cache_target_age,
// next_allowed_client_refresh, is_cached, query_status) describe a
// computed result, which only a retrieve computes (insightResult); every
// other answer carries none: nulls and is_cached false.
func insightObject(i *metadata.Insight, p *metadata.Project) insightJSON {
	out := insightJSON{
		ID: i.ID, ShortID: i.ShortID, Name: strPtr(i.Name.String, i.Name.Valid),
		DerivedName: strPtr(i.DerivedName.String, i.DerivedName.Valid),
		Filters:     json.RawMessage(i.Filters), Query: nullJSON(i.Query.Valid, i.Query.JSONText),
		Order: intPtr(i.Order.Int64, i.Order.Valid), Deleted: i.Deleted,
		Dashboards: []int64{}, DashboardTiles: insightTiles(i),
		Result: nullJSON(false, nil), Columns: nullJSON(false, nil), QueryStatus: nullJSON(false, nil),
		CreatedAt: i.CreatedAt, CreatedBy: userObject(i.CreatedBy), Description: i.Description, UpdatedAt: i.UpdatedAt,
		Tags: list(i.Tags), Favorited: i.Favorited, Saved: i.Saved,
		LastModifiedAt: i.LastModifiedAt, LastModifiedBy: userObject(i.LastModifiedBy), IsSample: i.IsSample,
		EffectiveRestrictionLevel: restrictionEveryoneCanEdit, EffectivePrivilegeLevel: privilegeCanEdit,
		Timezone: p.Timezone,
	}
	for _, t := range out.DashboardTiles {
		if !t.Deleted {
			out.Dashboards = append(out.Dashboards, t.DashboardID)
		}
	}
	return out
}

// insightTiles are the insight's tiles as the store read them.
func insightTiles(i *metadata.Insight) []dashboardTileJSON {
	tiles := []dashboardTileJSON{}
	if len(i.DashboardTiles) > 0 {
		_ = json.Unmarshal(i.DashboardTiles, &tiles) // the store's own JSON
	}
	return tiles
}

func insightObjects(is []metadata.Insight, p *metadata.Project) []insightJSON {
	out := make([]insightJSON, len(is))
	for k := range is {
		out[k] = insightObject(&is[k], p)
	}
	return out
}
