package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
)

// defaultTileSlots bounds a dashboard's concurrent tiles when the engine
// does not tell its per-project share.
const defaultTileSlots = 4

// tileSlots is how many of a dashboard's tiles compute at once: the
// project's share of the engine's statement slots, so no tile queues in
// the engine behind its siblings (where it could wait out the queueing
// time and answer 429) and other projects keep theirs.
func (s *Server) tileSlots() int {
	if e, ok := s.engine.(interface{ ProjectSlots() int }); ok {
		return max(1, e.ProjectSlots())
	}
	return defaultTileSlots
}

// tileJob is one distinct computation of a dashboard: the tiles whose
// effective filters share a cache key are answered by one.
type tileJob struct {
	a    *analysis.Analysis
	outs []*insightJSON
	// r and err are its answer, once runTileJobs has it.
	r   *analysis.Result
	err error
}

// dashboardTiles renders d's tiles, each insight with its result for d as
// mode allows. Tiles are grouped by cache key, so identical filters are
// computed once, and the distinct ones run concurrently, at most
// tileSlots at a time, in tile order: concurrent retrieves of the same
// dashboard join the same computations (the cache's single flight)
// instead of each starting different ones. A tile the engine fails keeps
// a null result and a query_status saying why; the others still answer.
// The jobs are returned with their answers (renderedDashboard keeps
// what they were).
func (s *Server) dashboardTiles(ctx context.Context, p *metadata.Project, d *metadata.Dashboard, mode analysis.Refresh) ([]tileJSON, []*tileJob, error) {
	tiles, order, err := s.planTiles(ctx, p, d, mode)
	if err != nil {
		return nil, nil, err
	}
	if err := s.runTileJobs(ctx, p, order); err != nil {
		return nil, nil, err
	}
	for k := range tiles {
		if in := tiles[k].Insight; in != nil {
			tiles[k].LastRefresh, tiles[k].IsCached = in.LastRefresh, in.IsCached
		}
	}
	return tiles, order, nil
}

// planTiles is d's tiles without their results, and its distinct
// computations in tile order, each with the tiles it answers.
func (s *Server) planTiles(ctx context.Context, p *metadata.Project, d *metadata.Dashboard, mode analysis.Refresh) ([]tileJSON, []*tileJob, error) {
	var ids []int64
	for _, t := range d.Tiles {
		if t.InsightID.Valid {
			ids = append(ids, t.InsightID.Int64)
		}
	}
	insights, err := s.store.InsightsByID(ctx, p.ID, ids)
	if err != nil {
		return nil, nil, err
	}
	tiles := make([]tileJSON, 0, len(d.Tiles))
	jobs := map[string]*tileJob{}
	var order []*tileJob
	for _, t := range tilesInOrder(d.Tiles) {
		tj := tileJSON{ID: t.ID, Order: len(tiles), Layouts: json.RawMessage(t.Layouts), Color: strPtr(t.Color.String, t.Color.Valid)}
		if len(tj.Layouts) == 0 {
			tj.Layouts = json.RawMessage("{}")
		}
		if t.TextBody.Valid {
			tj.Text = &textJSON{ID: t.ID, Body: t.TextBody.String, LastModifiedAt: t.LastModifiedAt}
			tiles = append(tiles, tj)
			continue
		}
		i := insights[t.InsightID.Int64]
		if i == nil {
			continue // deleted since the dashboard was read
		}
		out := insightObject(i, p)
		tj.Insight = &out
		tiles = append(tiles, tj)
		a, err := s.savedAnalysis(ctx, p, i, d, mode, &out)
		if err != nil {
			return nil, nil, err
		}
		if a == nil {
			continue
		}
		j := jobs[a.Key()]
		if j == nil {
			j = &tileJob{a: a}
			jobs[a.Key()] = j
			order = append(order, j)
		}
		j.outs = append(j.outs, &out)
	}
	return tiles, order, nil
}

// tileLayoutDefault is where a tile without an "sm" x or y sits, as
// PostHog places it: below and right of tiles laid out in the first 100
// rows and columns.
const tileLayoutDefault = 100

// tilesInOrder is tiles in PostHog's reading order: by their "sm"
// layout's y, then x (tileLayoutDefault where missing), ties in id
// order. A tile's order is its place in this list: the tiles array is
// in it, and the same tiles with the same layouts give the same orders.
func tilesInOrder(tiles []metadata.Tile) []*metadata.Tile {
	type placed struct {
		t    *metadata.Tile
		y, x float64
	}
	ps := make([]placed, len(tiles))
	for k := range tiles {
		var l struct {
			SM struct{ X, Y any } `json:"sm"`
		}
		_ = json.Unmarshal(tiles[k].Layouts, &l) // layouts are an object: checked at save
		ps[k] = placed{t: &tiles[k], y: layoutOr(l.SM.Y), x: layoutOr(l.SM.X)}
	}
	slices.SortStableFunc(ps, func(a, b placed) int { return cmp.Or(cmp.Compare(a.y, b.y), cmp.Compare(a.x, b.x)) })
	out := make([]*metadata.Tile, len(ps))
	for k := range ps {
		out[k] = ps[k].t
	}
	return out
}

// layoutOr is a layout coordinate, tileLayoutDefault when it is missing
// or not a number.
func layoutOr(v any) float64 {
	if n, ok := v.(float64); ok {
		return n
	}
	return tileLayoutDefault
}

// runTileJobs answers every job, at most tileSlots at once.
func (s *Server) runTileJobs(ctx context.Context, p *metadata.Project, jobs []*tileJob) error {
	sem := make(chan struct{}, s.tileSlots())
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, j := range jobs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			// Each distinct computation runs under a query id of its own.
			r, err := s.analysis.Answer(ctx, j.a)
			j.r, j.err = r, err
			for _, out := range j.outs {
				if err := setSavedResult(r, err, out); err != nil {
					s.tileFailed(ctx, p, err, out)
				}
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// tileFailed records an engine failure in the tile's query_status.
func (s *Server) tileFailed(ctx context.Context, p *metadata.Project, err error, out *insightJSON) {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return // the request is gone: runTileJobs answers its error
	}
	e := httpx.ToError(err)
	if e.Kind == httpx.KindInternal {
		s.log.Error("dashboard tile failed", "project_id", p.ID, "insight_id", out.ID, "error", err)
	}
	b, _ := json.Marshal(queryStatusJSON{Complete: true, Error: true, ErrorMessage: e.Detail})
	out.QueryStatus = b
}

// contextDashboard is the dashboard a from_dashboard names (nil for 0).
// One that is not the project's, or deleted, gives no context: the
// insight computes as itself, as PostHog answers an unknown
// from_dashboard (and another organization's id reads as unknown).
func (s *Server) contextDashboard(c *gin.Context, p *metadata.Project, id int64) (*metadata.Dashboard, error) {
	if id == 0 {
		return nil, nil
	}
	d, err := s.store.GetDashboard(c.Request.Context(), p.ID, id)
	if errors.Is(err, metadata.ErrNotFound) || (err == nil && d.Deleted) {
		return nil, nil
	}
	return d, err
}
