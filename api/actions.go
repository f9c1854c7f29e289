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

// actionRoutes serve actions: saved definitions of an event that counts,
// entities of every analysis (type "actions").
func (s *Server) actionRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id/actions")
	read, write := requireScope("action:read"), requireScope("action:write")
	g.GET("", read, s.listActions)
	g.POST("", write, s.createAction)
	g.GET("/:id", read, s.getAction)
	g.PATCH("/:id", write, s.updateAction)
	g.PUT("/:id", write, s.updateAction)
	g.DELETE("/:id", write, s.deleteAction)
	g.GET("/:id/activity", requireScope("activity_log:read"), s.actionActivity)
}

func (s *Server) listActions(c *gin.Context) {
	p, limit, offset, search, ok := s.searchPage(c)
	if !ok {
		return
	}
	as, total, err := s.store.ListActions(c.Request.Context(), p.ID, search, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]actionJSON, len(as))
	for i := range as {
		out[i] = actionObject(&as[i])
	}
	httpx.Paginated(c, total, limit, offset, out)
}

func (s *Server) createAction(c *gin.Context) {
	p, in, ok := s.actionInput(c)
	if !ok {
		return
	}
	if _, sent := in.Values["steps"]; !sent {
		in.Values["steps"] = json.RawMessage("[]")
	}
	a, err := s.store.CreateAction(c.Request.Context(), p, principal(c).User.ID, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusCreated, actionObject(a))
}

func (s *Server) getAction(c *gin.Context) {
	if _, a, ok := inProject(s, c, byID(s.store.GetAction)); ok {
		c.JSON(http.StatusOK, actionObject(a))
	}
}

// updateAction applies any subset of the writeable fields; deleted: true
// soft-deletes (insights using the action then answer 400 naming it).
func (s *Server) updateAction(c *gin.Context) {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, in, ok := s.actionInput(c)
	if !ok {
		return
	}
	a, err := s.store.UpdateAction(c.Request.Context(), p, principal(c).User.ID, id, in)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, actionObject(a))
}

// deleteAction refuses hard deletion, as PostHog does.
func (s *Server) deleteAction(c *gin.Context) {
	if _, _, ok := inProject(s, c, byID(s.store.GetAction)); ok {
		c.Header("Allow", "GET, PATCH, PUT")
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindMethodNotAllowed, Code: "method_not_allowed",
			Detail: "Hard delete of this action is not allowed. Use PATCH with {\"deleted\": true} to soft delete it."})
	}
}

func (s *Server) actionActivity(c *gin.Context) {
	if p, a, ok := inProject(s, c, byID(s.store.GetAction)); ok {
		s.renderActivity(c, p, "Action", strconv.FormatInt(a.ID, 10))
	}
}

// actionInput reads and checks an action body, its steps as analyses
// will read them.
func (s *Server) actionInput(c *gin.Context) (*metadata.Project, metadata.ActionInput, bool) {
	body, err := httpx.JSONObject(c)
	var in metadata.ActionInput
	if err == nil {
		in, err = metadata.ParseActionInput(body)
	}
	if err != nil {
		httpx.WriteError(c, err)
		return nil, in, false
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return nil, in, false
	}
	if steps, sent := in.Values["steps"].(json.RawMessage); sent {
		env, err := s.analysis.Entities(c.Request.Context(), p, querybuilder.Params{"steps": steps})
		if err == nil {
			err = querybuilder.CheckAction(env, steps)
		}
		if err != nil {
			httpx.WriteError(c, err)
			return nil, in, false
		}
	}
	return p, in, true
}

// actionJSON is an action in PostHog's shape.
type actionJSON struct {
	ID            int64           `json:"id"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Steps         json.RawMessage `json:"steps"`
	Tags          []string        `json:"tags"`
	Deleted       bool            `json:"deleted"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	CreatedBy     *userJSON       `json:"created_by"`
	IsCalculating bool            `json:"is_calculating"`
	PostToSlack   bool            `json:"post_to_slack"`
}

func actionObject(a *metadata.Action) actionJSON {
	tags := []string(a.Tags)
	if tags == nil {
		tags = []string{}
	}
	return actionJSON{ID: a.ID, Name: a.Name, Description: a.Description, Steps: a.Steps, Tags: tags, Deleted: a.Deleted,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, CreatedBy: userObject(a.CreatedBy)}
}
