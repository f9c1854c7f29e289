package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// dashboardRoutes serve dashboards: named sets of tiles (insights and
// texts) whose filters override their insights' (analytics.md,
// Dashboards).
func (s *Server) dashboardRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id/dashboards")
	read, write := requireScope("dashboard:read"), requireScope("dashboard:write")
	g.GET("", read, s.listDashboards)
	g.POST("", write, s.createDashboard)
	g.GET("/:id", read, s.getDashboard)
	g.PATCH("/:id", write, s.updateDashboard)
	g.PUT("/:id", write, s.updateDashboard)
	g.DELETE("/:id", write, s.deleteDashboard)
	g.GET("/:id/activity", requireScope("activity_log:read"), s.dashboardActivity)
}

func (s *Server) listDashboards(c *gin.Context) {
	p, limit, offset, search, ok := s.searchPage(c)
	if !ok {
		return
	}
	ds, total, err := s.store.ListDashboards(c.Request.Context(), p.ID, search, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]dashboardBasicJSON, len(ds))
	for i := range ds {
		out[i] = dashboardBasic(&ds[i])
	}
	httpx.Paginated(c, total, limit, offset, out)
}

// dashboardInput reads a dashboard's checked fields from the body, for
// the path's project; it has answered the error when ok is false.
func (s *Server) dashboardInput(c *gin.Context) (p *metadata.Project, in metadata.DashboardInput, ok bool) {
	in, err := httpx.Bind(c, metadata.ParseDashboardInput)
	if err != nil {
		httpx.WriteError(c, err)
		return nil, in, false
	}
	if p, ok = s.pathInsightProject(c); !ok {
		return nil, in, false
	}
	if err := s.checkDashboardFilters(c.Request.Context(), p, in); err != nil {
		httpx.WriteError(c, err)
		return nil, in, false
	}
	return p, in, true
}

func (s *Server) createDashboard(c *gin.Context) {
	p, in, ok := s.dashboardInput(c)
	if !ok {
		return
	}
	d, err := s.store.CreateDashboard(c.Request.Context(), p, principal(c).User.ID, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.renderDashboard(c, http.StatusCreated, p, d)
}

// getDashboard answers a dashboard with every tile's insight and its
// result: cached ones when fresh, the others computed (refresh as for an
// insight's retrieve). A plain retrieve answers the dashboard's kept
// answer when it is still the answer (dashboard_render.go).
func (s *Server) getDashboard(c *gin.Context) {
	if v, ok := c.GetQuery("refresh"); ok && !slices.Contains(analysis.RefreshValues, strings.ToLower(v)) {
		httpx.WriteError(c, httpx.Invalid("refresh", "refresh must be one of "+strings.Join(analysis.RefreshValues, ", ")+"."))
		return
	}
	mode := analysis.InsightRefresh(c.Query("refresh"))
	project, perr := httpx.PathID(c, "project_id")
	id, ierr := httpx.PathID(c, "id")
	if mode == analysis.RefreshIfStale && perr == nil && ierr == nil {
		if s.answerRendered(c, project, id) {
			return
		}
		// Concurrent plain retrieves wait for one rendering, then answer
		// what it kept (or render themselves when it kept nothing).
		done, leader := s.renders.begin(project, id)
		if leader {
			defer s.renders.end(project, id)
		} else {
			select {
			case <-done:
			case <-c.Request.Context().Done():
				httpx.WriteError(c, c.Request.Context().Err())
				return
			}
			if s.answerRendered(c, project, id) {
				return
			}
		}
	}
	// The generations are read before anything the answer shows (a
	// malformed path keeps nothing; pathDashboard answers it).
	var origin *renderOrigin
	stateErr := perr
	if perr == nil {
		origin, stateErr = s.renderOrigin(c, project)
	}
	minute := time.Now().Truncate(analysis.ClockPrecision)
	p, d, ok := inProject(s, c, byID(s.store.GetDashboard))
	if !ok {
		return
	}
	if mode == analysis.RefreshIfStale && stateErr == nil && s.rekeyRendered(c, origin, p, d, minute) {
		return
	}
	tiles, jobs, err := s.dashboardTiles(c.Request.Context(), p, d, mode)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	body, err := json.Marshal(dashboardJSON{dashboardBasicJSON: dashboardBasic(d), Tiles: tiles})
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.Data(http.StatusOK, jsonContentType, body)
	if mode == analysis.RefreshIfStale && stateErr == nil {
		s.keepRendered(p, d, tiles, body, origin, minute, jobs)
	}
}

// updateDashboard applies any subset of the writeable fields and tiles;
// deleted: true soft-deletes it (its tiles read as deleted, its insights
// stay). The answer carries cached results only.
func (s *Server) updateDashboard(c *gin.Context) {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, in, ok := s.dashboardInput(c)
	if !ok {
		return
	}
	d, err := s.store.UpdateDashboard(c.Request.Context(), p, principal(c).User.ID, id, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.renderDashboard(c, http.StatusOK, p, d)
}

// checkDashboardFilters refuses, at save, property filters no tile could
// apply (an unknown operator, a regex the engine cannot compile, a
// cohort that does not exist), as the dates are: saved, they would make
// every tile answer an error until someone fixed them. They are read as
// a request's properties are.
func (s *Server) checkDashboardFilters(ctx context.Context, p *metadata.Project, in metadata.DashboardInput) error {
	v, ok := in.Values["filters"]
	if !ok {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var f struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &f) != nil || len(f.Properties) == 0 || httpx.IsJSONNull(f.Properties) {
		return nil
	}
	_, err = s.analysis.Prepare(ctx, analysis.Request{Project: p, Route: "trend",
		Filter: querybuilder.Params{"events": json.RawMessage(`[{"id": "$pageview"}]`), "properties": f.Properties}})
	if ves := querybuilder.ValidationErrors(err); len(ves) > 0 {
		return httpx.Invalid("filters", "filters."+ves[0].Error())
	}
	return err
}

// deleteDashboard refuses hard deletion, as for insights.
func (s *Server) deleteDashboard(c *gin.Context) {
	if _, _, ok := inProject(s, c, byID(s.store.GetDashboard)); ok {
		c.Header("Allow", "GET, PATCH, PUT")
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindMethodNotAllowed, Code: "method_not_allowed",
			Detail: "Hard delete of this dashboard is not allowed. Use PATCH with {\"deleted\": true} to soft delete it."})
	}
}

func (s *Server) dashboardActivity(c *gin.Context) {
	if p, d, ok := inProject(s, c, byID(s.store.GetDashboard)); ok {
		s.renderActivity(c, p, "Dashboard", strconv.FormatInt(d.ID, 10))
	}
}

// renderDashboard answers a created or updated dashboard with its tiles'
// cached results only (nothing computes).
func (s *Server) renderDashboard(c *gin.Context, status int, p *metadata.Project, d *metadata.Dashboard) {
	tiles, _, err := s.dashboardTiles(c.Request.Context(), p, d, analysis.RefreshNever)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(status, dashboardJSON{dashboardBasicJSON: dashboardBasic(d), Tiles: tiles})
}

// dashboardBasicJSON is a dashboard as PostHog lists it.
type dashboardBasicJSON struct {
	ID                        int64           `json:"id"`
	Name                      string          `json:"name"`
	Description               string          `json:"description"`
	Pinned                    bool            `json:"pinned"`
	CreatedAt                 time.Time       `json:"created_at"`
	CreatedBy                 *userJSON       `json:"created_by"`
	LastModifiedAt            time.Time       `json:"last_modified_at"`
	LastAccessedAt            *time.Time      `json:"last_accessed_at"`
	IsShared                  bool            `json:"is_shared"`
	Deleted                   bool            `json:"deleted"`
	CreationMode              string          `json:"creation_mode"`
	Filters                   json.RawMessage `json:"filters"`
	Variables                 json.RawMessage `json:"variables"`
	Tags                      []string        `json:"tags"`
	RestrictionLevel          int64           `json:"restriction_level"`
	EffectiveRestrictionLevel int64           `json:"effective_restriction_level"`
	EffectivePrivilegeLevel   int             `json:"effective_privilege_level"`
	UserAccessLevel           string          `json:"user_access_level"`
}

// dashboardJSON is a retrieved dashboard: its tiles too.
type dashboardJSON struct {
	dashboardBasicJSON
	Tiles []tileJSON `json:"tiles"`
}

// tileJSON is one tile: an insight (with its result for the dashboard)
// or a text.
type tileJSON struct {
	ID int64 `json:"id"`
	// Order is the tile's place in the dashboard's tiles (tilesInOrder);
	// read-only, as PostHog's serializer makes it.
	Order       int             `json:"order"`
	Insight     *insightJSON    `json:"insight"`
	Text        *textJSON       `json:"text"`
	Layouts     json.RawMessage `json:"layouts"`
	Color       *string         `json:"color"`
	LastRefresh *time.Time      `json:"last_refresh"`
	IsCached    bool            `json:"is_cached"`
	Deleted     bool            `json:"deleted"`
}

type textJSON struct {
	ID             int64     `json:"id"`
	Body           string    `json:"body"`
	LastModifiedAt time.Time `json:"last_modified_at"`
}

func dashboardBasic(d *metadata.Dashboard) dashboardBasicJSON {
	// Every member edits every dashboard until access control exists.
	return dashboardBasicJSON{ID: d.ID, Name: d.Name, Description: d.Description, Pinned: d.Pinned, CreatedAt: d.CreatedAt,
		CreatedBy: userObject(d.CreatedBy), LastModifiedAt: d.LastModifiedAt, Deleted: d.Deleted, CreationMode: d.CreationMode,
		Filters: json.RawMessage(d.Filters), Variables: json.RawMessage("{}"), Tags: list(d.Tags),
		RestrictionLevel: d.RestrictionLevel, EffectiveRestrictionLevel: d.RestrictionLevel,
		EffectivePrivilegeLevel: privilegeCanEdit, UserAccessLevel: "editor"}
}
