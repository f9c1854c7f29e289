package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// groupRoutes serve a project's group types and groups (created by
// capture, capture_groups.go), under PostHog's scope group:read.
func (s *Server) groupRoutes(api *gin.RouterGroup) {
	read := requireScope("group:read")
	api.GET("/projects/:project_id/groups_types", read, s.listGroupTypes)
	g := api.Group("/projects/:project_id/groups", httpx.CheckFormat)
	g.GET("", read, s.listGroups)
	g.GET("/find", read, s.findGroup)
}

// groupTypeJSON is a group type as PostHog answers one.
type groupTypeJSON struct {
	GroupType       string          `json:"group_type"`
	GroupTypeIndex  int             `json:"group_type_index"`
	NameSingular    *string         `json:"name_singular"`
	NamePlural      *string         `json:"name_plural"`
	DetailDashboard *int64          `json:"detail_dashboard"`
	DefaultColumns  json.RawMessage `json:"default_columns"`
	CreatedAt       time.Time       `json:"created_at"`
}

// groupJSON is a group as PostHog answers one.
type groupJSON struct {
	GroupTypeIndex  int             `json:"group_type_index"`
	GroupKey        string          `json:"group_key"`
	GroupProperties json.RawMessage `json:"group_properties"`
	CreatedAt       time.Time       `json:"created_at"`
}

// listGroupTypes answers the project's group types by index (not
// paginated, as PostHog).
func (s *Server) listGroupTypes(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	types, err := s.store.GroupTypes(c.Request.Context(), p.ID)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]groupTypeJSON, len(types))
	for i, t := range types {
		out[i] = groupTypeJSON{GroupType: t.GroupType, GroupTypeIndex: t.Index,
			NameSingular: strPtr(t.NameSingular.String, t.NameSingular.Valid), NamePlural: strPtr(t.NamePlural.String, t.NamePlural.Valid),
			DefaultColumns: json.RawMessage("null"), CreatedAt: t.CreatedAt}
	}
	c.JSON(http.StatusOK, out)
}

// groupsOfType reads the path's project and the group_type_index asked
// for; it has answered the error when ok is false.
func (s *Server) groupsOfType(c *gin.Context) (*metadata.Project, int, bool) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return nil, 0, false
	}
	idx, err := groupTypeIndexParam(c)
	if err != nil {
		httpx.WriteError(c, err)
		return nil, 0, false
	}
	return p, idx, true
}

// listGroups answers a page of the project's groups of group_type_index,
// newest first: search keeps those whose key or properties hold it (any
// case), group_key the one with that key.
func (s *Server) listGroups(c *gin.Context) {
	p, idx, ok := s.groupsOfType(c)
	if !ok {
		return
	}
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	q := querybuilder.GroupsQuery{Schema: s.cfg.Schema, ProjectID: p.ID, GroupTypeIndex: idx, Search: c.Query("search"),
		Limit: limit, Offset: offset}
	if k, given := c.GetQuery("group_key"); given {
		q.Key = &k
	}
	groups, total, err := s.readGroups(c, q)
	if err == nil && len(groups) == 0 && offset > 0 {
		// Past the last page no row carries the total: read it from the first.
		first := q
		first.Limit, first.Offset = 1, 0
		_, total, err = s.readGroups(c, first)
	}
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.RenderPage(c, total, limit, offset, groups)
}

// findGroup answers the group of group_type_index and group_key, or 404.
func (s *Server) findGroup(c *gin.Context) {
	p, idx, ok := s.groupsOfType(c)
	if !ok {
		return
	}
	key, given := c.GetQuery("group_key")
	if !given {
		httpx.WriteError(c, httpx.Invalid("group_key", "group_key is required."))
		return
	}
	groups, _, err := s.readGroups(c, querybuilder.GroupsQuery{Schema: s.cfg.Schema, ProjectID: p.ID, GroupTypeIndex: idx, Key: &key, Limit: 1})
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if len(groups) == 0 {
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	c.JSON(http.StatusOK, groups[0])
}

// groupTypeIndexParam reads the required group_type_index (0 to 4).
func groupTypeIndexParam(c *gin.Context) (int, error) {
	v, given := c.GetQuery("group_type_index")
	if !given || v == "" {
		return 0, httpx.Invalid("group_type_index", "group_type_index is required.")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= 5 {
		return 0, httpx.Invalid("group_type_index", "group_type_index must be a group type 0 to 4.")
	}
	return n, nil
}

// readGroups runs q as a user's statement of its project: under the
// engine limits and in the project's share of the engine.
func (s *Server) readGroups(c *gin.Context, q querybuilder.GroupsQuery) ([]groupJSON, int, error) {
	rows, err := s.analysis.Query(c.Request.Context(), q.ProjectID, q.Statement())
	if err != nil {
		return nil, 0, err
	}
	out := make([]groupJSON, 0, len(rows.Data))
	total := 0
	for _, r := range rows.Data {
		idx, _ := r[0].(uint64)
		key, _ := r[1].(string)
		props, _ := r[2].(string)
		created, _ := r[3].(time.Time)
		g := groupJSON{GroupTypeIndex: int(idx), GroupKey: key, GroupProperties: json.RawMessage(props), CreatedAt: created}
		if !json.Valid(g.GroupProperties) {
			g.GroupProperties = json.RawMessage("{}")
		}
		if n, ok := r[4].(uint64); ok {
			total = int(n)
		}
		out = append(out, g)
	}
	return out, total, nil
}
