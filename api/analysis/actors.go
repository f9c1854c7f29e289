package analysis

import (
	"context"
	"errors"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// The actors behind one number of an analysis: the persons/* endpoints
// and the query API's ActorsQuery both list them here, so that they list
// the same actors for the same number.

// ActorsRequest names one number's actors: Filter is the analysis
// request of the Kind with the selection's parameters beside it (series,
// bucket, funnel_step...), as a people URL carries them.
type ActorsRequest struct {
	Project *metadata.Project
	Kind    *querybuilder.Kind
	Filter  querybuilder.Params
}

// Actors is a prepared actors request: parsed, its entities loaded and
// the engine's facts read, ready to list pages of or export.
type Actors struct {
	Lister querybuilder.ActorsLister
	Params querybuilder.Params
	Facts  querybuilder.Facts
	Type   querybuilder.ActorType
	// EventCounts says whether the kind counts each actor's events.
	EventCounts bool
	project     *metadata.Project
}

// ActorsPage is one page of a number's actors, in the page's order.
type ActorsPage struct {
	IDs []string
	// Appearances are a retention row's: per actor, 0 or 1 per interval.
	Appearances [][]int
	// EventCounts are each actor's matching events (Page.EventCounts).
	EventCounts []int64
	// Total is how many actors the number counts.
	Total int
}

// ErrNoActors is a request of a kind whose numbers list no actors.
var ErrNoActors = errors.New("the kind's numbers list no actors")

// PrepareActors parses an actors request as its kind parses analyses and
// reads the facts its statements depend on.
func (s *Service) PrepareActors(ctx context.Context, req ActorsRequest) (*Actors, error) {
	env, err := s.Entities(ctx, req.Project, req.Filter)
	if err != nil {
		return nil, err
	}
	q, err := req.Kind.Parse(req.Filter, env)
	if err != nil {
		return nil, err
	}
	lister, ok := q.(querybuilder.ActorsLister)
	if !ok {
		return nil, ErrNoActors
	}
	f, err := olap.ReadFacts(ctx, s.engine, s.cfg.Schema, req.Project.ID, q.Needs())
	if err != nil {
		return nil, err
	}
	_, counts := q.(querybuilder.ActorEventCounter)
	return &Actors{Lister: lister, Params: req.Filter, Facts: f, Type: lister.ActorType(req.Filter), EventCounts: counts,
		project: req.Project}, nil
}

// Page lists one page of a's actors with the number's total.
func (s *Service) Page(ctx context.Context, a *Actors, page querybuilder.Page) (*ActorsPage, error) {
	page.EventCounts = page.EventCounts && a.EventCounts
	stmt, err := a.Lister.Actors(a.Params, a.Facts, page)
	if err != nil {
		return nil, err
	}
	rows, err := s.Query(ctx, a.project.ID, stmt)
	if err != nil {
		return nil, err
	}
	out := &ActorsPage{Total: total(rows)}
	if len(rows.Data) == 0 && page.Offset > 0 {
		// Past the last page no row carries the total: read it from the first.
		first := page
		first.Limit, first.Offset = 1, 0
		stmt, err := a.Lister.Actors(a.Params, a.Facts, first)
		if err == nil {
			rows, err = s.Query(ctx, a.project.ID, stmt)
		}
		if err != nil {
			return nil, err
		}
		out.Total = total(rows)
		return out, nil
	}
	for _, r := range rows.Data {
		id, _ := r[0].(string)
		out.IDs = append(out.IDs, id)
		for i, col := range rows.Columns {
			switch col.Name {
			case "appearances":
				out.Appearances = append(out.Appearances, intList(r[i]))
			case "event_count":
				n, _ := r[i].(uint64)
				out.EventCounts = append(out.EventCounts, int64(n))
			}
		}
	}
	return out, nil
}

// total is an actors statement's total column.
func total(rows *olap.Rows) int {
	if len(rows.Data) == 0 {
		return 0
	}
	n, _ := rows.Data[0][1].(uint64)
	return int(n)
}

// intList reads an engine array of unsigned integers.
func intList(v any) []int {
	list, _ := v.([]any)
	out := make([]int, 0, len(list))
	for _, x := range list {
		n, _ := x.(uint64)
		out = append(out, int(n))
	}
	return out
}
