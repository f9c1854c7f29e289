package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
)

func (s *Server) insightRoutes(api *gin.RouterGroup) {
	// Project access is checked by each handler (another organization's
	// project answers 404); format is checked before anything runs.
	g := api.Group("/projects/:project_id/insights", httpx.CheckFormat)
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
	id, err := httpx.PathID(c, "project_id")
	var p *metadata.Project
	if err == nil {
		p, err = s.store.ProjectForUser(c.Request.Context(), principal(c).User.ID, id)
	}
	if err != nil {
		httpx.WriteError(c, err)
		return nil, false
	}
	return p, true
}

// shortIDShape is what may be a short_id: PostHog's 8 letters and digits,
// and the - and _ of the url-safe ones insightd gave before (which
// PostHog's tools send as numeric ids, so they must resolve here too).
var shortIDShape = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// pathInsightID is the insight the path's :id names in p: a number is
// its id (new short ids are never all digits), anything else of a short
// id's shape its short_id, as PostHog's tools send either; whether that
// insight exists is the caller's read.
func (s *Server) pathInsightID(c *gin.Context, p *metadata.Project) (int64, error) {
	ref := c.Param("id")
	if _, err := strconv.ParseInt(ref, 10, 64); err == nil || !shortIDShape.MatchString(ref) {
		return httpx.PathID(c, "id")
	}
	return s.store.InsightIDByShortID(c.Request.Context(), p.ID, ref)
}

// pathInsight reads the insight pathInsightID names, for inProjectBy.
func (s *Server) pathInsight(c *gin.Context) func(p *metadata.Project) (*metadata.Insight, error) {
	return func(p *metadata.Project) (*metadata.Insight, error) {
		id, err := s.pathInsightID(c, p)
		if err != nil {
			return nil, err
		}
		return s.store.GetInsight(c.Request.Context(), p.ID, id)
	}
}

func (s *Server) listInsights(c *gin.Context) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	f, err := insightListFilter(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	is, total, err := s.store.ListInsights(c.Request.Context(), p.ID, f, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.RenderPage(c, total, limit, offset, insightObjects(is, p))
}

// insightListFilter reads the list's filters from the query string.
func insightListFilter(c *gin.Context) (metadata.InsightFilter, error) {
	var f metadata.InsightFilter
	var err error
	if v, ok := c.GetQuery("short_id"); ok {
		if err = httpx.CheckQueryText("short_id", v); err != nil {
			return f, err
		}
		f.ShortID = &v
	}
	if v, ok := c.GetQuery("created_by"); ok {
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n < 1 {
			return f, httpx.Invalid("created_by", "created_by must be a user id (a positive integer).")
		}
		f.CreatedBy = &n
	}
	if f.Saved, err = httpx.QueryBool(c, "saved"); err != nil {
		return f, err
	}
	if f.Favorited, err = httpx.QueryBool(c, "favorited"); err != nil {
		return f, err
	}
	f.Search = c.Query("search")
	if err = httpx.CheckQueryText("search", f.Search); err != nil {
		return f, err
	}
	f.Kind = c.Query("insight")
	if f.Kind != "" && !slices.Contains(metadata.InsightKinds(), strings.ToUpper(f.Kind)) {
		return f, httpx.Invalid("insight", "insight must be one of "+strings.Join(metadata.InsightKinds(), ", ")+".")
	}
	return f, nil
}

func (s *Server) createInsight(c *gin.Context) {
	in, err := httpx.Bind(c, metadata.ParseInsightInput)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	i, err := s.store.CreateInsight(c.Request.Context(), p, principal(c).User.ID, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.Render(c, http.StatusCreated, insightObject(i, p))
}

func (s *Server) getInsight(c *gin.Context) {
	// refresh asks for a recomputed result when the cached one is older
	// than its refresh window (insightRefreshMode).
	if v, ok := c.GetQuery("refresh"); ok && !slices.Contains(analysis.RefreshValues, strings.ToLower(v)) {
		httpx.WriteError(c, httpx.Invalid("refresh", "refresh must be one of "+strings.Join(analysis.RefreshValues, ", ")+"."))
		return
	}
	var fromDashboard int64
	if v, ok := c.GetQuery("from_dashboard"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			httpx.WriteError(c, httpx.Invalid("from_dashboard", "from_dashboard must be a dashboard id (a positive integer)."))
			return
		}
		fromDashboard = n
	}
	p, i, ok := inProjectBy(s, c, s.pathInsight(c))
	if !ok {
		return
	}
	d, err := s.contextDashboard(c, p, fromDashboard)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := insightObject(i, p)
	if err := s.insightResult(c, p, i, d, analysis.InsightRefresh(c.Query("refresh")), &out); err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.Render(c, http.StatusOK, out)
}

func (s *Server) updateInsight(c *gin.Context) {
	in, err := httpx.Bind(c, metadata.ParseInsightInput)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	id, err := s.pathInsightID(c, p)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	i, err := s.store.UpdateInsight(c.Request.Context(), p, principal(c).User.ID, id, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.Render(c, http.StatusOK, insightObject(i, p))
}

// deleteInsight refuses hard deletion, as PostHog does, once the insight
// is known to exist for the caller (others get 404 as everywhere).
func (s *Server) deleteInsight(c *gin.Context) {
	if _, _, ok := inProjectBy(s, c, s.pathInsight(c)); ok {
		c.Header("Allow", "GET, PATCH")
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindMethodNotAllowed, Code: "method_not_allowed",
			Detail: "Hard delete of this insight is not allowed. Use PATCH with {\"deleted\": true} to soft delete it."})
	}
}

func (s *Server) insightViewed(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	id, err := s.pathInsightID(c, p)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	i, err := s.store.RecordInsightView(c.Request.Context(), p.ID, id, principal(c).User.ID)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.Render(c, http.StatusOK, insightObject(i, p))
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
		httpx.WriteError(c, err)
		return
	}
	// A plain list, not a page, as PostHog answers it.
	httpx.Render(c, http.StatusOK, insightObjects(is, p))
}

func (s *Server) insightActivity(c *gin.Context) {
	if p, i, ok := inProjectBy(s, c, s.pathInsight(c)); ok {
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
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	entries, total, err := s.store.ListActivity(c.Request.Context(), p.ID, "Insight", itemID, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]activityJSON, len(entries))
	for k := range entries {
		out[k] = activityEntry(&entries[k])
	}
	httpx.RenderPage(c, total, limit, offset, out)
}

// sharingJSON is an insight's sharing configuration.
type sharingJSON struct {
	CreatedAt   time.Time `json:"created_at"`
	Enabled     bool      `json:"enabled"`
	AccessToken string    `json:"access_token"`
}

func (s *Server) getInsightSharing(c *gin.Context) {
	_, i, ok := inProjectBy(s, c, s.pathInsight(c))
	if !ok {
		return
	}
	sh, err := s.store.InsightSharing(c.Request.Context(), i.ID)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.Render(c, http.StatusOK, sharingJSON{CreatedAt: sh.CreatedAt, Enabled: sh.Enabled, AccessToken: sh.AccessToken})
}

func (s *Server) updateInsightSharing(c *gin.Context) {
	body, err := httpx.JSONObject(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	var enabled *bool
	if raw, ok := body["enabled"]; ok {
		if err := json.Unmarshal(raw, &enabled); err != nil || enabled == nil {
			httpx.WriteError(c, httpx.Invalid("enabled", "enabled must be true or false."))
			return
		}
	}
	p, i, ok := inProjectBy(s, c, s.pathInsight(c))
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
		httpx.WriteError(c, err)
		return
	}
	httpx.Render(c, http.StatusOK, sharingJSON{CreatedAt: sh.CreatedAt, Enabled: sh.Enabled, AccessToken: sh.AccessToken})
}

func (s *Server) cancelInsightQuery(c *gin.Context) {
	body, err := httpx.JSONObject(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	var id string
	raw, ok := body["client_query_id"]
	if !ok || httpx.IsJSONNull(raw) {
		httpx.WriteError(c, httpx.Invalid("client_query_id", "client_query_id is required."))
		return
	}
	if json.Unmarshal(raw, &id) != nil || len(id) > analysis.ClientQueryIDMax || !olap.ValidQueryID(id) {
		httpx.WriteError(c, httpx.Invalid("client_query_id", fmt.Sprintf(
			"client_query_id must be 1 to %d characters of letters, digits, _ and -.", analysis.ClientQueryIDMax)))
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	cancelled, err := s.engine.Cancel(c.Request.Context(), analysis.ProjectQueryID(p.ID, id))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	// 201 either way: the client wants the query gone, and it is.
	httpx.Render(c, http.StatusCreated, gin.H{"client_query_id": id, "cancelled": cancelled})
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
	ID                       int64               `json:"id"`
	ShortID                  string              `json:"short_id"`
	Name                     *string             `json:"name"`
	DerivedName              *string             `json:"derived_name"`
	Filters                  json.RawMessage     `json:"filters"`
	Query                    json.RawMessage     `json:"query"`
	Order                    *int64              `json:"order"`
	Deleted                  bool                `json:"deleted"`
	Dashboards               []int64             `json:"dashboards"`
	DashboardTiles           []dashboardTileJSON `json:"dashboard_tiles"`
	LastRefresh              *time.Time          `json:"last_refresh"`
	CacheTargetAge           *string             `json:"cache_target_age"`
	NextAllowedClientRefresh *time.Time          `json:"next_allowed_client_refresh"`
	Result                   json.RawMessage     `json:"result"`
	Columns                  json.RawMessage     `json:"columns"`
	// Types and HasMore come with a HogQL statement's rows only.
	Types                     json.RawMessage `json:"types,omitempty"`
	HasMore                   *bool           `json:"hasMore,omitempty"`
	CreatedAt                 time.Time       `json:"created_at"`
	CreatedBy                 *userJSON       `json:"created_by"`
	Description               string          `json:"description"`
	UpdatedAt                 time.Time       `json:"updated_at"`
	Tags                      []string        `json:"tags"`
	Favorited                 bool            `json:"favorited"`
	Saved                     bool            `json:"saved"`
	LastModifiedAt            time.Time       `json:"last_modified_at"`
	LastModifiedBy            *userJSON       `json:"last_modified_by"`
	IsSample                  bool            `json:"is_sample"`
	EffectiveRestrictionLevel int             `json:"effective_restriction_level"`
	EffectivePrivilegeLevel   int             `json:"effective_privilege_level"`
	Timezone                  string          `json:"timezone"`
	IsCached                  bool            `json:"is_cached"`
	QueryStatus               json.RawMessage `json:"query_status"`
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
