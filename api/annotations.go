package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
)

func (s *Server) annotationRoutes(api *gin.RouterGroup) {
	// Project access is checked by each handler (another organization's
	// project answers 404), as for insights.
	g := api.Group("/projects/:project_id/annotations")
	read, write := requireScope("annotation:read"), requireScope("annotation:write")
	g.GET("", read, s.listAnnotations)
	g.POST("", write, s.createAnnotation)
	g.GET("/activity", requireScope("activity_log:read"), s.projectAnnotationActivity)
	g.GET("/:id", read, s.getAnnotation)
	// No annotation field is required, so a full update (PUT) is a PATCH
	// with the same validation.
	g.PATCH("/:id", write, s.updateAnnotation)
	g.PUT("/:id", write, s.updateAnnotation)
	g.DELETE("/:id", write, s.deleteAnnotation)
	g.GET("/:id/activity", requireScope("activity_log:read"), s.annotationActivity)
}

func (s *Server) listAnnotations(c *gin.Context) {
	p, limit, offset, search, ok := s.searchPage(c)
	if !ok {
		return
	}
	as, total, err := s.store.ListAnnotations(c.Request.Context(), p, search, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]annotationJSON, len(as))
	for i := range as {
		out[i] = annotationObject(&as[i])
	}
	httpx.Paginated(c, total, limit, offset, out)
}

func (s *Server) createAnnotation(c *gin.Context) {
	in, err := httpx.Bind(c, metadata.ParseAnnotationInput)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	a, err := s.store.CreateAnnotation(c.Request.Context(), p, principal(c).User.ID, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusCreated, annotationObject(a))
}

func (s *Server) getAnnotation(c *gin.Context) {
	if _, a, ok := inProject(s, c, s.store.GetAnnotation); ok {
		c.JSON(http.StatusOK, annotationObject(a))
	}
}

// updateAnnotation applies any subset of the writeable fields;
// deleted: true soft-deletes, deleted: false restores.
func (s *Server) updateAnnotation(c *gin.Context) {
	in, err := httpx.Bind(c, metadata.ParseAnnotationInput)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	id, err := httpx.PathID(c, "id")
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	a, err := s.store.UpdateAnnotation(c.Request.Context(), p, principal(c).User.ID, id, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, annotationObject(a))
}

// deleteAnnotation refuses hard deletion, as PostHog does, once the
// annotation is known to exist for the caller.
func (s *Server) deleteAnnotation(c *gin.Context) {
	if _, _, ok := inProject(s, c, s.store.GetAnnotation); ok {
		c.Header("Allow", "GET, PATCH, PUT")
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindMethodNotAllowed, Code: "method_not_allowed",
			Detail: "Hard delete of this annotation is not allowed. Use PATCH with {\"deleted\": true} to soft delete it."})
	}
}

func (s *Server) annotationActivity(c *gin.Context) {
	if p, a, ok := inProject(s, c, s.store.GetAnnotation); ok {
		s.renderActivity(c, p, "Annotation", strconv.FormatInt(a.ID, 10))
	}
}

func (s *Server) projectAnnotationActivity(c *gin.Context) {
	if p, ok := s.pathInsightProject(c); ok {
		s.renderActivity(c, p, "Annotation", "")
	}
}

// renderActivity writes a page of the project's log of one kind of item,
// for one item or ("") all of them, newest first.
func (s *Server) renderActivity(c *gin.Context, p *metadata.Project, scope, itemID string) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	entries, total, err := s.store.ListActivity(c.Request.Context(), p.ID, scope, itemID, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]activityJSON, len(entries))
	for k := range entries {
		out[k] = activityEntry(&entries[k])
	}
	httpx.Paginated(c, total, limit, offset, out)
}

// annotationJSON is an annotation in PostHog's shape. Dashboards do not
// exist here, so dashboard_id and dashboard_name are always null.
type annotationJSON struct {
	ID                 int64      `json:"id"`
	Content            *string    `json:"content"`
	DateMarker         *time.Time `json:"date_marker"`
	CreationType       string     `json:"creation_type"`
	DashboardItem      *int64     `json:"dashboard_item"`
	DashboardID        *int64     `json:"dashboard_id"`
	DashboardName      *string    `json:"dashboard_name"`
	InsightShortID     *string    `json:"insight_short_id"`
	InsightName        *string    `json:"insight_name"`
	InsightDerivedName *string    `json:"insight_derived_name"`
	CreatedBy          *userJSON  `json:"created_by"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
	Deleted            bool       `json:"deleted"`
	Scope              string     `json:"scope"`
}

func annotationObject(a *metadata.Annotation) annotationJSON {
	out := annotationJSON{ID: a.ID, Content: strPtr(a.Content.String, a.Content.Valid), CreationType: a.CreationType,
		DashboardItem:      intPtr(a.DashboardItem.Int64, a.DashboardItem.Valid),
		InsightShortID:     strPtr(a.InsightShortID.String, a.InsightShortID.Valid),
		InsightName:        strPtr(a.InsightName.String, a.InsightName.Valid),
		InsightDerivedName: strPtr(a.InsightDerivedName.String, a.InsightDerivedName.Valid),
		CreatedBy:          userObject(a.CreatedBy), CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		Deleted: a.Deleted, Scope: a.Scope}
	if a.DateMarker.Valid {
		t := a.DateMarker.Time.UTC()
		out.DateMarker = &t
	}
	return out
}
