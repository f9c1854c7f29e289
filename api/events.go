package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/api/ingest"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

func (s *Server) eventRoutes(api *gin.RouterGroup) {
	g := api.Group("/projects/:project_id/events")
	read := requireScope("event:read")
	g.GET("", read, s.listEvents)
	g.GET("/:id", read, s.getEvent)
}

// cursorLayout is how a next link writes the last event's time: to the
// microsecond the events table keeps, so the cursor is exact.
const cursorLayout = "2006-01-02T15:04:05.000000Z07:00"

// listEvents answers a page of the project's events, newest first, and
// the link to the next page: {"next", "results"}, as PostHog's list. The
// link carries the last event's (timestamp, uuid) as before and
// before_uuid (after and after_uuid oldest first), so following it
// neither skips nor repeats an event, whatever arrives meanwhile.
func (s *Server) listEvents(c *gin.Context) {
	params := map[string]string{}
	for k, vs := range c.Request.URL.Query() {
		if len(vs) > 0 {
			params[k] = vs[0]
		}
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	// The cohorts the conditions name (and the test-account filters').
	refs := querybuilder.Params{}
	if v, ok := params["properties"]; ok && json.Valid([]byte(v)) {
		refs["properties"] = json.RawMessage(v)
	}
	env, err := s.analysis.Entities(c.Request.Context(), p, refs)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	q, err := querybuilder.ParseEventsList(params, env)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	f, err := olap.ReadFacts(c.Request.Context(), s.engine, s.cfg.Schema, p.ID, q.Needs())
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	stmt, err := querybuilder.BuildEventsList(q, f)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	events, more, err := s.readEvents(c.Request.Context(), p, stmt, q.Limit)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	var next *string
	if more && len(events) > 0 {
		last := events[len(events)-1]
		set := map[string]string{"limit": strconv.Itoa(q.Limit)}
		if q.Ascending {
			set["after"], set["after_uuid"] = last.Timestamp.UTC().Format(cursorLayout), last.ID
		} else {
			set["before"], set["before_uuid"] = last.Timestamp.UTC().Format(cursorLayout), last.ID
		}
		u := httpx.LinkWith(c, set)
		next = &u
	}
	c.JSON(http.StatusOK, gin.H{"next": next, "results": events})
}

func (s *Server) getEvent(c *gin.Context) {
	id, ok := querybuilder.CanonicalUUID(c.Param("id"))
	if !ok {
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	p, ok := s.pathInsightProject(c)
	if !ok {
		return
	}
	f, err := olap.ReadFacts(c.Request.Context(), s.engine, s.cfg.Schema, p.ID, querybuilder.Needs{PersonOverrides: true})
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	events, _, err := s.readEvents(c.Request.Context(), p, querybuilder.EventStatement(s.analysis.Env(p), id, f), 1)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	if len(events) == 0 {
		httpx.WriteError(c, &httpx.Error{Kind: httpx.KindNotFound, Code: "not_found", Detail: fmt.Sprintf("No event exists with uuid %s.", id)})
		return
	}
	c.JSON(http.StatusOK, events[0])
}

// eventJSON is an event in PostHog's shape. Elements are not split out
// of autocapture events here: elements is empty and elements_chain is
// the event's $elements_chain property, if any.
type eventJSON struct {
	ID            string           `json:"id"`
	DistinctID    string           `json:"distinct_id"`
	Properties    json.RawMessage  `json:"properties"`
	Event         string           `json:"event"`
	Timestamp     time.Time        `json:"timestamp"`
	Person        *eventPersonJSON `json:"person"`
	Elements      []any            `json:"elements"`
	ElementsChain string           `json:"elements_chain"`
}

// eventPersonJSON is the person an event belongs to now.
type eventPersonJSON struct {
	UUID         string          `json:"uuid"`
	IsIdentified bool            `json:"is_identified"`
	Properties   json.RawMessage `json:"properties"`
}

// readEvents runs an events statement (the columns of
// querybuilder.BuildEventsList), keeps the events of its first max rows
// with their persons, and says whether it gave more rows than that.
func (s *Server) readEvents(ctx context.Context, p *metadata.Project, stmt querybuilder.Statement, max int) ([]eventJSON, bool, error) {
	rows, err := s.analysis.Query(ctx, p.ID, stmt)
	if err != nil {
		return nil, false, err
	}
	more := len(rows.Data) > max
	if more {
		rows.Data = rows.Data[:max]
	}
	out := make([]eventJSON, 0, len(rows.Data))
	var personIDs []string
	seen := map[string]bool{}
	for _, r := range rows.Data {
		ev := eventJSON{Elements: []any{}}
		ev.ID, _ = r[0].(string)
		if n := len(out); n > 0 && out[n-1].ID == ev.ID {
			continue // the same event stored twice (a retry not yet merged away)
		}
		ev.Event, _ = r[1].(string)
		ev.DistinctID, _ = r[2].(string)
		props, _ := r[3].(string)
		ev.Properties = eventProperties(props)
		ev.Timestamp, _ = r[4].(time.Time)
		var head struct {
			Chain string `json:"$elements_chain"`
		}
		_ = json.Unmarshal(ev.Properties, &head) // a chain of another type is no chain
		ev.ElementsChain = head.Chain
		if pid, _ := r[5].(string); pid != "" {
			ev.Person = &eventPersonJSON{UUID: pid}
			if !seen[pid] {
				seen[pid] = true
				personIDs = append(personIDs, pid)
			}
		}
		out = append(out, ev)
	}
	persons, err := s.eventPersons(ctx, p.ID, personIDs)
	if err != nil {
		return nil, false, err
	}
	for i := range out {
		if out[i].Person == nil {
			continue
		}
		if found, ok := persons[out[i].Person.UUID]; ok {
			out[i].Person = found
		} else {
			out[i].Person = nil // an event whose person was never written
		}
	}
	return out, more, nil
}

// eventPersons reads the persons of a page of events, each at its latest
// version, in one point lookup by id.
func (s *Server) eventPersons(ctx context.Context, team int64, ids []string) (map[string]*eventPersonJSON, error) {
	out := map[string]*eventPersonJSON{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.analysis.Query(ctx, team, querybuilder.Statement{
		SQL: `SELECT id, argMax(properties, version), argMax(is_identified, version) FROM ` + s.cfg.Schema.Persons + `
WHERE team_id = {team:Int64} AND id IN {ids:Array(UUID)}
GROUP BY id HAVING argMax(is_deleted, version) = 0`,
		Params: map[string]any{"team": team, "ids": ids}})
	if err != nil {
		return nil, err
	}
	for _, r := range rows.Data {
		id, _ := r[0].(string)
		props, _ := r[1].(string)
		identified, _ := r[2].(uint64)
		out[id] = &eventPersonJSON{UUID: id, IsIdentified: identified == 1, Properties: eventProperties(props)}
	}
	return out, nil
}

// eventProperties is a stored properties document as JSON. Capture
// stores valid UTF-8 JSON objects; rows written before it cleaned
// text are cleaned here the same way.
func eventProperties(text string) json.RawMessage {
	b := ingest.CleanJSONText([]byte(text))
	if !json.Valid(b) {
		return json.RawMessage("{}")
	}
	return b
}
