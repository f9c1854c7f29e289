package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// actorsPageLimit is the most actors one page of a number's actors holds.
const actorsPageLimit = 100

// actors answers the actors behind one number of an analysis of the
// route's kind: {results: [{people, count}], next}, count being how many
// the number counted. format=csv streams every one of them (exportActors).
func (s *Server) actors(route string) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, ok := s.pathInsightProject(c)
		if !ok {
			return
		}
		params, err := analysisParams(c)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		kind, _ := querybuilder.ForPersons(route)
		ctx := c.Request.Context()
		a, err := s.analysis.PrepareActors(ctx, analysis.ActorsRequest{Project: p, Kind: kind, Filter: params})
		if errors.Is(err, analysis.ErrNoActors) {
			err = httpx.NotFound()
		}
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		page := querybuilder.Page{Limit: actorsPageLimit}
		for name, v := range map[string]*int{"limit": &page.Limit, "offset": &page.Offset} {
			if raw := c.Query(name); raw != "" {
				n, err := strconv.Atoi(raw)
				if err != nil || n < 0 {
					httpx.WriteError(c, httpx.Invalid(name, name+" must be a whole number, 0 or more."))
					return
				}
				*v = n
			}
		}
		page.Limit = min(max(page.Limit, 1), actorsPageLimit)
		if httpx.WantsCSV(c) {
			s.exportActors(c, p, a)
			return
		}
		listed, err := s.analysis.Page(ctx, a, page)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		people, err := s.actorsOfType(ctx, p, a.Type, listed.IDs)
		if err != nil {
			httpx.WriteError(c, err)
			return
		}
		if listed.Appearances != nil {
			withAppearances(people, listed.Appearances)
		}
		total, ids := listed.Total, listed.IDs
		var next *string
		if page.Offset+len(ids) < total {
			u := httpx.LinkWith(c, map[string]string{"limit": strconv.Itoa(page.Limit), "offset": strconv.Itoa(page.Offset + page.Limit)})
			next = &u
		}
		c.JSON(http.StatusOK, gin.H{"results": []gin.H{{"people": people, "count": total}}, "next": next})
	}
}

// actorsOf are the persons with these ids, in the ids' order.
func (s *Server) actorsOf(ctx context.Context, p *metadata.Project, ids []string) ([]any, error) {
	return s.actorsOfType(ctx, p, querybuilder.PersonActors, ids)
}

// actorsOfType are the actors of type typ with these ids (a page of
// them), in the ids' order: persons with their properties and distinct
// ids, groups with their properties, sessions by their id. The type is
// the query's: an id's shape does not tell a person from a session.
func (s *Server) actorsOfType(ctx context.Context, p *metadata.Project, typ querybuilder.ActorType, ids []string) ([]any, error) {
	out := make([]any, 0, len(ids))
	switch typ.Kind {
	case querybuilder.ActorSession:
		for _, id := range ids {
			out = append(out, sessionActor(id))
		}
		return out, nil
	case querybuilder.ActorGroup:
		rows, err := s.analysis.Query(ctx, p.ID, querybuilder.GroupsByKey(s.analysis.Env(p), typ.GroupTypeIndex, ids))
		if err != nil {
			return nil, err
		}
		byKey := map[string][]any{}
		for _, r := range rows.Data {
			key, _ := r[0].(string)
			byKey[key] = r[1:]
		}
		for _, id := range ids {
			props, created := "", time.Time{}
			if r, ok := byKey[id]; ok {
				props, _ = r[0].(string)
				created, _ = r[1].(time.Time)
			}
			out = append(out, groupActor(id, typ.GroupTypeIndex, props, created))
		}
		return out, nil
	}
	var valid []string
	for _, id := range ids {
		if _, err := uuid.Parse(id); err == nil {
			valid = append(valid, id)
		}
	}
	byID := map[string]personJSON{}
	if len(valid) > 0 {
		persons, _, err := s.readPersons(ctx, p, querybuilder.PersonsByID(s.analysis.Env(p), valid))
		if err != nil {
			return nil, err
		}
		for _, person := range persons {
			byID[person.ID] = person
		}
	}
	for _, id := range ids {
		person, ok := byID[id]
		if !ok {
			// A person counted by their events whose row is gone
			// (deleted since): listed by id, as counted.
			person = goneperson(id)
		}
		out = append(out, person)
	}
	return out, nil
}

// goneperson is a person counted whose row is gone.
func goneperson(id string) personJSON {
	return personJSON{ID: id, UUID: id, Name: id, DistinctIDs: []string{}, Properties: json.RawMessage("{}")}
}

// groupActor is a group as an actor: PostHog's {id, group_key,
// group_type_index, group_properties, created_at, type: "group"}; a group
// counted by its events that was never identified has no properties.
func groupActor(key string, index int, props string, created time.Time) gin.H {
	raw := json.RawMessage(props)
	if !json.Valid(raw) {
		raw = json.RawMessage("{}")
	}
	a := gin.H{"id": key, "group_key": key, "group_type_index": index, "group_properties": raw, "type": "group", "created_at": nil}
	if !created.IsZero() {
		a["created_at"] = created
	}
	return a
}

// sessionActor is a session (unique_session's actor).
func sessionActor(id string) gin.H {
	return gin.H{"id": id, "session_id": id, "type": "session"}
}
