package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// The taxonomy (analytics.md, "Taxonomy"): event_definitions/ and
// property_definitions/, read from the tables the event writer keeps
// (olap/taxonomy.go, querybuilder/taxonomy.go).
func (s *Server) taxonomyRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id")
	g.GET("/event_definitions", requireScope("event_definition:read"), s.listEventDefinitions)
	g.GET("/event_definitions/:id", requireScope("event_definition:read"), s.getEventDefinition)
	g.GET("/property_definitions", requireScope("property_definition:read"), s.listPropertyDefinitions)
	g.GET("/property_definitions/:id", requireScope("property_definition:read"), s.getPropertyDefinition)
}

// definitionSpace makes the definitions' ids: a name-based uuid of the
// project, kind and name, the same on every server and after a restart.
var definitionSpace = uuid.MustParse("4f1b6f0e-3c55-4d59-9a51-7d1f0c0c7a10")

func definitionID(team int64, kind string, gti int, name string) string {
	return uuid.NewSHA1(definitionSpace, []byte(fmt.Sprintf("%d\x00%s\x00%d\x00%s", team, kind, gti, name))).String()
}

type eventDefinitionJSON struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	CreatedAt        time.Time `json:"created_at"`
	LastSeenAt       time.Time `json:"last_seen_at"`
	LastUpdatedAt    time.Time `json:"last_updated_at"`
	Volume30Day      uint64    `json:"volume_30_day"`
	QueryUsage30Day  *int      `json:"query_usage_30_day"`
	Tags             []string  `json:"tags"`
	Description      *string   `json:"description"`
	IsAction         bool      `json:"is_action"`
	Verified         bool      `json:"verified"`
	Hidden           bool      `json:"hidden"`
	Owner            *int      `json:"owner"`
	PostToSlack      bool      `json:"post_to_slack"`
	IsCalculating    bool      `json:"is_calculating"`
	LastCalculatedAt *string   `json:"last_calculated_at"`
}

type propertyDefinitionJSON struct {
	ID                     string   `json:"id"`
	Name                   string   `json:"name"`
	PropertyType           *string  `json:"property_type"`
	IsNumerical            bool     `json:"is_numerical"`
	Type                   string   `json:"type"`
	GroupTypeIndex         *int     `json:"group_type_index"`
	IsSeenOnFilteredEvents *bool    `json:"is_seen_on_filtered_events"`
	Tags                   []string `json:"tags"`
	Description            *string  `json:"description"`
	Verified               bool     `json:"verified"`
	Hidden                 bool     `json:"hidden"`
	Example                *string  `json:"example"`
	VerifiedAt             *string  `json:"verified_at"`
	UpdatedAt              *string  `json:"updated_at"`
	PropertyTypeFormat     *string  `json:"property_type_format"`
}

func queryParams(c *gin.Context) map[string]string {
	params := map[string]string{}
	for k, vs := range c.Request.URL.Query() {
		if len(vs) > 0 {
			params[k] = vs[len(vs)-1]
		}
	}
	return params
}

// eventDefinitions runs one event_definitions/ page.
func (s *Server) eventDefinitions(ctx context.Context, p *metadata.Project, q querybuilder.EventDefinitionsQuery) ([]eventDefinitionJSON, int, error) {
	rows, err := s.analysis.Query(ctx, p.ID, querybuilder.BuildEventDefinitions(s.cfg.Schema, p.ID, q, time.Now().UTC()))
	if err != nil {
		return nil, 0, err
	}
	out := make([]eventDefinitionJSON, 0, len(rows.Data))
	total := 0
	for _, r := range rows.Data {
		d := eventDefinitionJSON{Tags: []string{}}
		d.Name, _ = r[0].(string)
		d.CreatedAt, _ = r[1].(time.Time)
		d.LastSeenAt, _ = r[2].(time.Time)
		d.LastUpdatedAt = d.LastSeenAt
		d.Volume30Day, _ = r[3].(uint64)
		total = cellInt(r[4])
		d.ID = definitionID(p.ID, "event", 0, d.Name)
		out = append(out, d)
	}
	return out, total, nil
}

func cellInt(v any) int {
	switch n := v.(type) {
	case uint64:
		return int(n)
	case int64:
		return int(n)
	}
	return 0
}

func (s *Server) listEventDefinitions(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	q, err := querybuilder.ParseEventDefinitions(queryParams(c))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	defs, total, err := s.eventDefinitions(c.Request.Context(), p, q)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, s.taxonomyPage(c, q.Limit, q.Offset, total, defs))
}

// taxonomyPage is PostHog's page of a list: count, next, previous,
// results.
func (s *Server) taxonomyPage(c *gin.Context, limit, offset, total int, results any) gin.H {
	var next, prev *string
	if offset+limit < total {
		u := httpx.LinkWith(c, map[string]string{"limit": strconv.Itoa(limit), "offset": strconv.Itoa(offset + limit)})
		next = &u
	}
	if offset > 0 {
		u := httpx.LinkWith(c, map[string]string{"limit": strconv.Itoa(limit), "offset": strconv.Itoa(max(0, offset-limit))})
		prev = &u
	}
	return gin.H{"count": total, "next": next, "previous": prev, "results": results}
}

func (s *Server) getEventDefinition(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	id := c.Param("id")
	defs, _, err := s.eventDefinitions(c.Request.Context(), p, querybuilder.EventDefinitionsQuery{Limit: 1 << 30, Order: "name"})
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	for _, d := range defs {
		if d.ID == id {
			c.JSON(http.StatusOK, d)
			return
		}
	}
	httpx.WriteError(c, &httpx.Error{Kind: httpx.KindNotFound, Code: "not_found", Detail: "No event definition has this id."})
}

// propertyDefinitions runs one property_definitions/ page.
func (s *Server) propertyDefinitions(ctx context.Context, p *metadata.Project, q querybuilder.PropertyDefinitionsQuery) ([]propertyDefinitionJSON, int, error) {
	rows, err := s.analysis.Query(ctx, p.ID, querybuilder.BuildPropertyDefinitions(s.cfg.Schema, p.ID, q))
	if err != nil {
		return nil, 0, err
	}
	out := make([]propertyDefinitionJSON, 0, len(rows.Data))
	total := 0
	for _, r := range rows.Data {
		d := propertyDefinitionJSON{Tags: []string{}, Type: q.Type}
		d.Name, _ = r[0].(string)
		if t, _ := r[1].(string); t != "" {
			d.PropertyType = &t
			d.IsNumerical = t == "Numeric"
		}
		if q.EventNames != nil {
			seen := cellInt(r[2]) == 1 || r[2] == true
			d.IsSeenOnFilteredEvents = &seen
		}
		gti := 0
		if q.Kind == 3 {
			gti = q.GroupTypeIndex
			d.GroupTypeIndex = &gti
		}
		total = cellInt(r[3])
		d.ID = definitionID(p.ID, q.Type, gti, d.Name)
		out = append(out, d)
	}
	return out, total, nil
}

func (s *Server) listPropertyDefinitions(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	q, err := querybuilder.ParsePropertyDefinitions(queryParams(c))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	defs, total, err := s.propertyDefinitions(c.Request.Context(), p, q)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, s.taxonomyPage(c, q.Limit, q.Offset, total, defs))
}

func (s *Server) getPropertyDefinition(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	id := c.Param("id")
	kinds := []querybuilder.PropertyDefinitionsQuery{{Kind: 1, Type: "event"}, {Kind: 2, Type: "person"}}
	for g := 0; g <= 4; g++ {
		kinds = append(kinds, querybuilder.PropertyDefinitionsQuery{Kind: 3, Type: "group", GroupTypeIndex: g})
	}
	for _, q := range kinds {
		q.Limit = 1 << 30
		defs, _, err := s.propertyDefinitions(c.Request.Context(), p, q)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		for _, d := range defs {
			if d.ID == id {
				c.JSON(http.StatusOK, d)
				return
			}
		}
	}
	httpx.WriteError(c, &httpx.Error{Kind: httpx.KindNotFound, Code: "not_found", Detail: "No property definition has this id."})
}
