package api

import (
	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
)

// searchPage reads what every searchable list of a project takes: its
// page (limit, offset), a `search` text and the path's project. It has
// answered the error when ok is false.
func (s *Server) searchPage(c *gin.Context) (p *metadata.Project, limit, offset int, search string, ok bool) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return nil, 0, 0, "", false
	}
	search = c.Query("search")
	if err := httpx.CheckQueryText("search", search); err != nil {
		httpx.WriteError(c, err)
		return nil, 0, 0, "", false
	}
	p, ok = s.pathInsightProject(c)
	return p, limit, offset, search, ok
}
