package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/querybuilder"
)

// The taxonomy (analytics.md, "Taxonomy"): event_definitions/ and
// property_definitions/, read from the tables the event writer keeps
// (api/taxonomy answers them).
func (s *Server) taxonomyRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id")
	g.GET("/event_definitions", requireScope("event_definition:read"), s.listEventDefinitions)
	g.GET("/event_definitions/:id", requireScope("event_definition:read"), s.getEventDefinition)
	g.GET("/property_definitions", requireScope("property_definition:read"), s.listPropertyDefinitions)
	g.GET("/property_definitions/:id", requireScope("property_definition:read"), s.getPropertyDefinition)
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
	defs, total, err := s.taxonomy.Events(c.Request.Context(), p.ID, q)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, taxonomyPage(c, q.Limit, q.Offset, total, defs))
}

// taxonomyPage is PostHog's page of a list: count, next, previous,
// results.
func taxonomyPage(c *gin.Context, limit, offset, total int, results any) gin.H {
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
	d, err := s.taxonomy.Event(c.Request.Context(), p.ID, c.Param("id"))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, d)
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
	defs, total, err := s.taxonomy.Properties(c.Request.Context(), p.ID, q)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, taxonomyPage(c, q.Limit, q.Offset, total, defs))
}

func (s *Server) getPropertyDefinition(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	d, err := s.taxonomy.Property(c.Request.Context(), p.ID, c.Param("id"))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, d)
}
