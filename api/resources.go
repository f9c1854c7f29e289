package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
)

// inProject loads the path's project (pathInsightProject) and the
// resource its :id names inside it, read by get; a deleted one answers
// 404 like one that never existed. On failure it has written the error
// and returns false.
func inProject[T metadata.Deletable](s *Server, c *gin.Context, get func(ctx context.Context, p *metadata.Project, id int64) (T, error)) (*metadata.Project, T, bool) {
	return inProjectBy(s, c, func(p *metadata.Project) (T, error) {
		id, err := httpx.PathID(c, "id")
		if err != nil {
			var zero T
			return zero, err
		}
		return get(c.Request.Context(), p, id)
	})
}

// inProjectBy is inProject for a resource whose :id load reads itself
// (an insight's is its numeric id or its short_id).
func inProjectBy[T metadata.Deletable](s *Server, c *gin.Context, load func(p *metadata.Project) (T, error)) (*metadata.Project, T, bool) {
	var zero T
	p, ok := s.pathInsightProject(c)
	if !ok {
		return nil, zero, false
	}
	r, err := load(p)
	if err == nil && r.IsDeleted() {
		err = httpx.NotFound()
	}
	if err != nil {
		httpx.WriteError(c, err)
		return nil, zero, false
	}
	return p, r, true
}

// byID adapts a store read keyed by the project's id to inProject.
func byID[T any](get func(ctx context.Context, projectID, id int64) (T, error)) func(context.Context, *metadata.Project, int64) (T, error) {
	return func(ctx context.Context, p *metadata.Project, id int64) (T, error) { return get(ctx, p.ID, id) }
}
