package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// personsRoutes serve persons: the list, one person, the values of a
// property, and the actors behind the numbers of every kind of the
// registry that counts actors (persons/<kind>/).
func (s *Server) personsRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id/persons", httpx.CheckFormat)
	read := requireScope("person:read")
	g.GET("", read, s.listPersons)
	g.GET("/values", read, s.personValues)
	g.GET("/:id", read, s.getPerson)
	g.PATCH("/:id", requireScope("person:write"), s.updatePerson)
	g.DELETE("/:id", requireScope("person:write"), s.deletePerson)
	// Persons have one editable field, so a full update (PUT) is a PATCH.
	g.PUT("/:id", requireScope("person:write"), s.updatePerson)
	for _, route := range querybuilder.PersonsRoutes() {
		h := s.actors(route)
		g.GET("/"+route, read, h)
		g.POST("/"+route, read, h)
	}
	api.GET("/projects/:project_id/events/values", requireScope("event:read"), s.eventValues)
}

// personJSON is a person as PostHog answers one. id is the person's uuid:
// insightd's persons have no other id.
type personJSON struct {
	ID           string          `json:"id"`
	UUID         string          `json:"uuid"`
	Name         string          `json:"name"`
	DistinctIDs  []string        `json:"distinct_ids"`
	Properties   json.RawMessage `json:"properties"`
	CreatedAt    time.Time       `json:"created_at"`
	IsIdentified bool            `json:"is_identified"`
}

// defaultDisplayNames name a person when the project names no properties
// for it (PostHog's defaults).
var defaultDisplayNames = []string{"email", "name", "username"}

// readPersons runs a persons statement (querybuilder.PersonsColumns) and
// gives the persons and the total the statement counted.
func (s *Server) readPersons(ctx context.Context, p *metadata.Project, stmt querybuilder.Statement) ([]personJSON, int, error) {
	rows, err := s.analysis.Query(ctx, p.ID, stmt)
	if err != nil {
		return nil, 0, err
	}
	names := []string(p.PersonDisplayNameProperties)
	if len(names) == 0 {
		names = defaultDisplayNames
	}
	out := make([]personJSON, 0, len(rows.Data))
	total := 0
	for _, r := range rows.Data {
		id, _ := r[0].(string)
		props, _ := r[1].(string)
		created, _ := r[2].(time.Time)
		identified, _ := r[3].(uint64)
		person := personJSON{ID: id, UUID: id, Properties: json.RawMessage(props), CreatedAt: created, IsIdentified: identified == 1,
			DistinctIDs: []string{}}
		if !json.Valid(person.Properties) {
			person.Properties = json.RawMessage("{}")
		}
		if ids, ok := r[4].([]any); ok {
			for _, d := range ids {
				if ds, ok := d.(string); ok {
					person.DistinctIDs = append(person.DistinctIDs, ds)
				}
			}
		}
		person.Name = displayName(person, names)
		if n, ok := r[5].(uint64); ok {
			total = int(n)
		}
		out = append(out, person)
	}
	return out, total, nil
}

// displayName is the first of names the person has, else their first
// distinct id.
func displayName(p personJSON, names []string) string {
	var props map[string]any
	_ = json.Unmarshal(p.Properties, &props) // checked valid by the caller
	for _, n := range names {
		if v, ok := props[n].(string); ok && v != "" {
			return v
		}
	}
	if len(p.DistinctIDs) > 0 {
		return p.DistinctIDs[0]
	}
	return p.ID
}

func (s *Server) listPersons(c *gin.Context) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	params := querybuilder.ParseQuery(c.Request.URL.Query())
	// The cohorts the conditions name (and the test-account filters').
	env, err := s.analysis.Entities(c.Request.Context(), p, params)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	q, err := querybuilder.ParsePersons(params, env)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	persons, total, err := s.readPersons(c.Request.Context(), p, q.Build())
	if err == nil && len(persons) == 0 && q.Offset > 0 {
		// Past the last page no row carries the total: read it from the first.
		first := *q
		first.Limit, first.Offset = 1, 0
		_, total, err = s.readPersons(c.Request.Context(), p, first.Build())
	}
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	httpx.RenderPage(c, total, q.Limit, q.Offset, persons)
}

// pathPerson reads the path's project and the person id it names (a
// uuid; anything else names no person: 404). It has answered the error
// when ok is false.
func (s *Server) pathPerson(c *gin.Context) (*metadata.Project, uuid.UUID, bool) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		httpx.WriteError(c, httpx.NotFound())
		return nil, id, false
	}
	p, ok := s.pathInsightProject(c)
	return p, id, ok
}

func (s *Server) getPerson(c *gin.Context) {
	p, id, ok := s.pathPerson(c)
	if !ok {
		return
	}
	persons, _, err := s.readPersons(c.Request.Context(), p, querybuilder.PersonsByID(s.analysis.Env(p), []string{id.String()}))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if len(persons) == 0 {
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	httpx.Render(c, http.StatusOK, persons[0])
}

func (s *Server) personValues(c *gin.Context) { s.propertyValues(c, "person") }

func (s *Server) eventValues(c *gin.Context) { s.propertyValues(c, "event") }

// propertyValues answers [{name, count}] for a filter picker.
func (s *Server) propertyValues(c *gin.Context, typ string) {
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	stmt, err := querybuilder.PropertyValuesStatement(s.analysis.Env(p), typ, c.Query("key"), c.Query("event"))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	rows, err := s.analysis.Query(c.Request.Context(), p.ID, stmt)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	type value struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	out := make([]value, 0, len(rows.Data))
	for _, r := range rows.Data {
		name, _ := r[0].(string)
		n, _ := r[1].(uint64)
		out = append(out, value{Name: name, Count: int(n)})
	}
	httpx.Render(c, http.StatusOK, out)
}

// updatePerson sets properties of a person ($set semantics: the keys
// sent, the others kept), as an event of the person, so that the change
// goes through ingestion like any $set and analyses see it.
func (s *Server) updatePerson(c *gin.Context) {
	p, id, ok := s.pathPerson(c)
	if !ok {
		return
	}
	body, err := httpx.JSONObject(c)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	var props map[string]json.RawMessage
	if raw, ok := body["properties"]; !ok || json.Unmarshal(raw, &props) != nil || props == nil {
		httpx.WriteError(c, httpx.Invalid("properties", "properties must be an object of the properties to set."))
		return
	}
	for k := range props {
		if k == "" || len(k) > 400 || !utf8.ValidString(k) || strings.ContainsRune(k, 0) {
			httpx.WriteError(c, httpx.Invalid("properties", "Property names must be 1 to 400 characters of text."))
			return
		}
	}
	ctx := c.Request.Context()
	env := s.analysis.Env(p)
	persons, _, err := s.readPersons(ctx, p, querybuilder.PersonsByID(env, []string{id.String()}))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if len(persons) == 0 || len(persons[0].DistinctIDs) == 0 {
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	set, _ := json.Marshal(map[string]any{"$set": props})
	ev := olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: p.ID, Event: "$set",
		DistinctID: persons[0].DistinctIDs[0], Timestamp: time.Now().UTC(), Properties: string(set), CreatedAt: time.Now().UTC()},
		Person: &olap.PersonUpdate{Set: props}}
	if res := s.writer.Write(ctx, []olap.Capture{ev}); res.Err != nil {
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindUnavailable, Code: "ingestion_unavailable", Detail: "The update could not be stored; try again.", Err: res.Err})
		return
	}
	s.analysis.Ingest().Note(p.ID)
	persons, _, err = s.readPersons(ctx, p, querybuilder.PersonsByID(env, []string{id.String()}))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if len(persons) == 0 { // deleted since it was read above
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	httpx.Render(c, http.StatusOK, persons[0])
}

// deletePerson deletes a person, as PostHog's DELETE persons/:id/: the
// person's distinct ids are unmapped and its row marked deleted, so that
// their next event makes a new person; with delete_events=true the
// person's events go too (with those of the persons merged into it).
// Without it the events stay, still counted by event counts and under the
// deleted person's id. The rewrite runs inside ingestion's writer, between
// batches, the events' DELETE after it (olap.Writer.DeletePerson). A
// deleted person is not found again, except by delete_events=true, which
// runs the whole deletion again: that is how a deletion whose events'
// DELETE failed (503) is retried.
func (s *Server) deletePerson(c *gin.Context) {
	p, id, ok := s.pathPerson(c)
	if !ok {
		return
	}
	withEvents := false
	if v := c.Query("delete_events"); v != "" {
		var err error
		if withEvents, err = strconv.ParseBool(v); err != nil {
			httpx.WriteError(c, httpx.Invalid("delete_events", "delete_events must be true or false."))
			return
		}
	}
	ctx := c.Request.Context()
	env := s.analysis.Env(p)
	state, err := s.engine.Query(ctx, querybuilder.PersonStateStatement(env, id.String()))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if len(state.Data) == 0 || (state.Data[0][0] != "live" && !withEvents) {
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	rows, err := s.analysis.Query(ctx, p.ID, querybuilder.PersonMergedStatement(env, id.String()))
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	var merged []string
	for _, r := range rows.Data {
		if m, ok := r[0].(string); ok {
			merged = append(merged, m)
		}
	}
	var events []querybuilder.Statement
	if withEvents {
		events = append(events, querybuilder.PersonEventsDeleteStatement(env, id.String(), merged))
	}
	err = s.writer.DeletePerson(ctx, p.ID, func(version uint64) []querybuilder.Statement {
		return querybuilder.PersonDeleteStatements(env, id.String(), merged, version)
	}, events)
	s.analysis.Ingest().Note(p.ID)
	if err != nil {
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindUnavailable, Code: "ingestion_unavailable", Detail: "The person could not be deleted; try again.", Err: err})
		return
	}
	c.Status(http.StatusNoContent)
}
