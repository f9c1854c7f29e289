package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// cohortRoutes serve cohorts: saved sets of persons, usable as property
// conditions and breakdowns. Members are computed in the background
// (cohort_calc.go).
func (s *Server) cohortRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id/cohorts")
	read, write := requireScope("cohort:read"), requireScope("cohort:write")
	g.GET("", read, s.listCohorts)
	g.POST("", write, s.createCohort)
	g.GET("/:id", read, s.getCohort)
	g.PATCH("/:id", write, s.updateCohort)
	g.PUT("/:id", write, s.updateCohort)
	g.DELETE("/:id", write, s.deleteCohort)
	g.GET("/:id/persons", read, requireScope("person:read"), s.cohortPersons)
	g.POST("/:id/calculate", write, s.calculateCohortNow)
	g.GET("/:id/activity", requireScope("activity_log:read"), s.cohortActivity)
}

func (s *Server) listCohorts(c *gin.Context) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	cs, total, err := s.store.ListCohorts(c.Request.Context(), p.ID, limit, offset)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := make([]cohortJSON, len(cs))
	for i := range cs {
		out[i] = cohortObject(&cs[i])
	}
	httpx.Paginated(c, total, limit, offset, out)
}

func (s *Server) createCohort(c *gin.Context) {
	in, people, err := cohortBody(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	static, _ := in.Values["is_static"].(bool)
	if len(people) > 0 && !static {
		in.Values["is_static"], static = true, true
	}
	if !static {
		if _, g := in.Values["groups"]; !g && in.Values["filters"] == nil {
			httpx.WriteError(c, httpx.Invalid("filters", "A dynamic cohort needs filters (or groups); a static one is_static with persons or a csv."))
			return
		}
	}
	if err := s.checkCohort(c, p, in, nil); err != nil {
		httpx.WriteError(c, err)
		return
	}
	co, err := s.store.CreateCohort(c.Request.Context(), p, principal(c).User.ID, in, people)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.cohorts.Schedule(co.ID, p.ID)
	c.JSON(http.StatusCreated, cohortObject(co))
}

func (s *Server) getCohort(c *gin.Context) {
	if _, co, ok := inProject(s, c, byID(s.store.GetCohort)); ok {
		c.JSON(http.StatusOK, cohortObject(co))
	}
}

// updateCohort applies any subset of the writeable fields, and adds
// persons (persons or a csv) to a static cohort; a new definition or new
// persons start a recalculation.
func (s *Server) updateCohort(c *gin.Context) {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	in, people, err := cohortBody(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, before, ok := s.pathCohortAny(c, id)
	if !ok {
		return
	}
	if v, sent := in.Values["is_static"]; sent && v != before.IsStatic {
		httpx.WriteError(c, httpx.Invalid("is_static", "A cohort cannot change between static and dynamic."))
		return
	}
	if len(people) > 0 && !before.IsStatic {
		httpx.WriteError(c, httpx.Invalid("persons", "Persons are listed in static cohorts only."))
		return
	}
	// The definition is checked when it changes: a cohort naming one
	// deleted since can still be renamed, deleted or restored, its
	// definition sent back as it is or not at all.
	if in.ChangesDefinition(before) {
		if err := s.checkCohort(c, p, in, before); err != nil {
			httpx.WriteError(c, err)
			return
		}
	}
	co, err := s.store.UpdateCohort(c.Request.Context(), p, principal(c).User.ID, id, in, people)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if co.PendingVersion > co.Version {
		s.cohorts.Schedule(co.ID, p.ID)
	}
	c.JSON(http.StatusOK, cohortObject(co))
}

// pathCohortAny is pathCohort letting a deleted cohort through (to be
// restored).
func (s *Server) pathCohortAny(c *gin.Context, id int64) (*metadata.Project, *metadata.Cohort, bool) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return nil, nil, false
	}
	co, err := s.store.GetCohort(c.Request.Context(), p.ID, id)
	if err != nil {
		httpx.WriteError(c, err)
		return nil, nil, false
	}
	return p, co, true
}

func (s *Server) deleteCohort(c *gin.Context) {
	if _, _, ok := inProject(s, c, byID(s.store.GetCohort)); ok {
		c.Header("Allow", "GET, PATCH, PUT")
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindMethodNotAllowed, Code: "method_not_allowed",
			Detail: "Hard delete of this cohort is not allowed. Use PATCH with {\"deleted\": true} to soft delete it."})
	}
}

func (s *Server) calculateCohortNow(c *gin.Context) {
	p, co, ok := inProject(s, c, byID(s.store.GetCohort))
	if !ok {
		return
	}
	co, err := s.store.RequestCohortCalculation(c.Request.Context(), p.ID, co.ID)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	s.cohorts.Schedule(co.ID, p.ID)
	c.JSON(http.StatusAccepted, cohortObject(co))
}

func (s *Server) cohortActivity(c *gin.Context) {
	if p, co, ok := inProject(s, c, byID(s.store.GetCohort)); ok {
		s.renderActivity(c, p, "Cohort", strconv.FormatInt(co.ID, 10))
	}
}

// cohortPersons lists a page of the cohort's members (as last computed).
func (s *Server) cohortPersons(c *gin.Context) {
	limit, offset, err := httpx.Page(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	p, co, ok := inProject(s, c, byID(s.store.GetCohort))
	if !ok {
		return
	}
	ctx := c.Request.Context()
	stmt := querybuilder.CohortMembersPage(s.analysis.Env(p), analysis.CohortEnv(co), querybuilder.Page{Limit: limit, Offset: offset})
	rows, err := s.engine.Query(olap.WithProject(ctx, p.ID), stmt)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	total := httpx.PageTotal(rows, 1)
	if len(rows.Data) == 0 && offset > 0 {
		// Past the last page no row carries the total: read it from the first.
		first, err := s.engine.Query(olap.WithProject(ctx, p.ID),
			querybuilder.CohortMembersPage(s.analysis.Env(p), analysis.CohortEnv(co), querybuilder.Page{Limit: 1}))
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		total = httpx.PageTotal(first, 1)
	}
	var ids []string
	for _, r := range rows.Data {
		id, _ := r[0].(string)
		ids = append(ids, id)
	}
	people, err := s.actorsOf(ctx, p, ids)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.Paginated(c, total, limit, offset, people)
}

// checkCohort checks the definition a cohort will have, as its
// calculation reads it (the cohorts it names must exist).
func (s *Server) checkCohort(c *gin.Context, p *metadata.Project, in metadata.CohortInput, before *metadata.Cohort) error {
	co := querybuilder.Cohort{}
	if before != nil {
		co = analysis.CohortEnv(before)
	}
	if v, ok := in.Values["groups"].(json.RawMessage); ok {
		co.Groups = v
	}
	if v, sent := in.Values["filters"]; sent {
		co.Filters, _ = v.(json.RawMessage)
	}
	if v, ok := in.Values["is_static"].(bool); ok {
		co.IsStatic = v
	}
	if co.IsStatic {
		return nil
	}
	env, err := s.analysis.Entities(c.Request.Context(), p, querybuilder.Params{"groups": co.Groups, "filters": co.Filters})
	if err != nil {
		return err
	}
	if before != nil && env.Cohorts != nil {
		if _, self := env.Cohorts[before.ID]; self {
			return httpx.Invalid("filters", "A cohort cannot contain itself.")
		}
	}
	return querybuilder.CheckCohort(env, co)
}

// cohortBody reads a cohort body: JSON, or multipart/form-data with the
// fields as form values and a csv file of distinct ids. It returns the
// checked fields and the distinct ids listed (persons, or the csv).
func cohortBody(c *gin.Context) (metadata.CohortInput, []string, error) {
	var body map[string]json.RawMessage
	var people []string
	if strings.HasPrefix(c.ContentType(), "multipart/form-data") {
		form, err := c.MultipartForm()
		if err != nil {
			return metadata.CohortInput{}, nil, httpx.Invalid("csv", "The form could not be read: "+err.Error())
		}
		body = map[string]json.RawMessage{}
		for k, vs := range form.Value {
			if len(vs) == 0 {
				continue
			}
			v := vs[0]
			if json.Valid([]byte(v)) && (k == "groups" || k == "filters" || k == "is_static" || k == "deleted") {
				body[k] = json.RawMessage(v)
			} else {
				b, _ := json.Marshal(v)
				body[k] = b
			}
		}
		if files := form.File["csv"]; len(files) > 0 {
			f, err := files[0].Open()
			if err != nil {
				return metadata.CohortInput{}, nil, httpx.Invalid("csv", "The csv file could not be read.")
			}
			defer f.Close()
			ids, err := distinctIDsFromCSV(f)
			if err != nil {
				return metadata.CohortInput{}, nil, err
			}
			people = ids
			body["is_static"] = json.RawMessage("true")
		}
	} else {
		var err error
		if body, err = httpx.JSONObject(c); err != nil {
			return metadata.CohortInput{}, nil, err
		}
	}
	if raw, ok := body["persons"]; ok && !httpx.IsJSONNull(raw) {
		ids, err := distinctIDList(raw)
		if err != nil {
			return metadata.CohortInput{}, nil, err
		}
		people = append(people, ids...)
	}
	in, err := metadata.ParseCohortInput(body)
	return in, people, err
}

// cohortJSON is a cohort in PostHog's shape.
type cohortJSON struct {
	ID                int64           `json:"id"`
	Name              string          `json:"name"`
	Description       string          `json:"description"`
	Groups            json.RawMessage `json:"groups"`
	Filters           json.RawMessage `json:"filters"`
	IsStatic          bool            `json:"is_static"`
	Deleted           bool            `json:"deleted"`
	Count             *int64          `json:"count"`
	IsCalculating     bool            `json:"is_calculating"`
	LastCalculation   *time.Time      `json:"last_calculation"`
	ErrorsCalculating int             `json:"errors_calculating"`
	CreatedAt         time.Time       `json:"created_at"`
	CreatedBy         *userJSON       `json:"created_by"`
	Version           int64           `json:"version"`
}

func cohortObject(co *metadata.Cohort) cohortJSON {
	out := cohortJSON{ID: co.ID, Name: co.Name, Description: co.Description, Groups: co.Groups, Filters: co.Filters,
		IsStatic: co.IsStatic, Deleted: co.Deleted, Count: intPtr(co.Count.Int64, co.Count.Valid), IsCalculating: co.IsCalculating,
		ErrorsCalculating: co.ErrorsCalculating, CreatedAt: co.CreatedAt, CreatedBy: userObject(co.CreatedBy), Version: co.Version}
	if len(out.Filters) == 0 {
		out.Filters = json.RawMessage("null")
	}
	if co.LastCalculation.Valid {
		t := co.LastCalculation.Time.UTC()
		out.LastCalculation = &t
	}
	return out
}
