package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// actorsQueryResponse is PostHog's ActorsQueryResponse: one row per
// actor, one cell per selected column.
type actorsQueryResponse struct {
	Columns  []string `json:"columns"`
	Types    []string `json:"types"`
	Results  [][]any  `json:"results"`
	HasMore  bool     `json:"hasMore"`
	Limit    int      `json:"limit"`
	Offset   int      `json:"offset"`
	HogQL    string   `json:"hogql"`
	Timezone string   `json:"timezone"`
	// MissingActorsCount is how many actors counted have no row (deleted
	// since): always listed here, by id, so none are missing.
	MissingActorsCount int `json:"missing_actors_count"`
}

// actorsQuery answers an ActorsQuery node: the actors behind one number
// of its source's insight, listed by the same service call the persons/*
// endpoints list them with, so both list the same actors.
func (s *Server) actorsQuery(c *gin.Context, p *metadata.Project, raw json.RawMessage) {
	n, err := querybuilder.TranslateActorsNode(raw, "query")
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	ctx := c.Request.Context()
	a, err := s.analysis.PrepareActors(ctx, analysis.ActorsRequest{Project: p, Kind: n.Kind, Filter: n.Params()})
	if errors.Is(err, analysis.ErrNoActors) {
		err = httpx.Invalid("query.source", "query.source lists no actors.")
	}
	if err != nil {
		httpx.WriteError(c, querybuilder.NodeErrors(n.Source, err))
		return
	}
	page := querybuilder.Page{Limit: n.Limit, Offset: n.Offset, Order: n.Order}
	for _, col := range n.Select {
		page.EventCounts = page.EventCounts || col.What == "event_count"
	}
	listed, err := s.analysis.Page(ctx, a, page)
	if err != nil {
		httpx.WriteError(c, querybuilder.NodeErrors(n.Source, err))
		return
	}
	actors, err := s.actorsOfType(ctx, p, a.Type, listed.IDs)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	out := actorsQueryResponse{Results: make([][]any, 0, len(actors)), Limit: n.Limit, Offset: n.Offset,
		HasMore: n.Offset+len(listed.IDs) < listed.Total, Timezone: p.Timezone}
	for _, col := range n.Select {
		out.Columns = append(out.Columns, col.Name)
		out.Types = append(out.Types, actorsColumnType(col))
	}
	for i, actor := range actors {
		row := make([]any, len(n.Select))
		for j, col := range n.Select {
			switch col.What {
			case "actor":
				row[j] = actor
			case "id":
				row[j] = listed.IDs[i]
			case "created_at":
				row[j] = actorCreatedAt(actor)
			case "event_count":
				row[j] = 0
				if i < len(listed.EventCounts) {
					row[j] = listed.EventCounts[i]
				}
			case "matched_recordings":
				row[j] = []any{} // insightd keeps no session recordings
			case "appearance":
				row[j] = 0
				if i < len(listed.Appearances) && col.Interval < len(listed.Appearances[i]) {
					row[j] = listed.Appearances[i][col.Interval]
				}
			}
		}
		out.Results = append(out.Results, row)
	}
	c.JSON(http.StatusOK, out)
}

// actorsColumnType is a column's type as PostHog's response names it.
func actorsColumnType(col querybuilder.ActorsColumn) string {
	switch col.What {
	case "actor":
		return "Tuple"
	case "id":
		return "String"
	case "created_at":
		return "DateTime64(6, 'UTC')"
	case "matched_recordings":
		return "Array(Tuple)"
	}
	return "UInt64"
}

// actorCreatedAt is an actor's created_at (null for a session, or for an
// actor whose row is gone).
func actorCreatedAt(actor any) any {
	switch a := actor.(type) {
	case personJSON:
		if a.CreatedAt.IsZero() {
			return nil
		}
		return a.CreatedAt
	case gin.H:
		return a["created_at"]
	}
	return nil
}
