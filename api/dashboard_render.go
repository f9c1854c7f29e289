package api

import (
	lru "container/list"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap/metrics"
)

// renderCacheBytes bounds the memory the rendered dashboards keep; an
// answer larger than a quarter of it is not kept.
const renderCacheBytes = 64 << 20

// jsonContentType is what gin's c.JSON answers with.
const jsonContentType = "application/json; charset=utf-8"

// renderedDashboard is a dashboard's answer as a retrieve wrote it, with
// what it was made of, so that a later retrieve can tell with one round
// trip to the store that it would write the same bytes, and write them
// without reading or re-encoding any tile (a dashboard's answer is
// mostly its results: hundreds of kilobytes of JSON). It is the same
// answer when:
//   - the project's and the users' render generations, read before any of
//     the metadata it shows, have not moved (every change to insights,
//     dashboards, tiles, actions, cohorts, group types, the project or a
//     user moves one: migration 0007's triggers);
//   - each distinct tile's result under its cache key is the one it
//     showed (same computation time);
//   - the clock is in the minute its cache keys were made in (relative
//     ranges and dates make other keys in other minutes);
//   - every result is still usable as a plain retrieve judges it: none
//     stale yet, and no events since the earliest computation of a result
//     whose range was open.
//
// A retrieve that computed tiles says is_cached false for them, which a
// later retrieve must not: what is kept is its answer with them read as
// cached, as a later retrieve would write it (the results are stored as
// the text they were answered with, computed_at to the microsecond).
type renderedDashboard struct {
	project, dashboard int64
	body               []byte
	state              metadata.RenderState
	keys               []string
	// minute is the clock minute the keys were made in; staleAt the
	// earliest result's stale_at; openFrom the earliest computation of a
	// result whose range was open (zero: none was).
	minute, staleAt, openFrom time.Time
}

// usable reports whether e's results would all still be answered from
// the cache at now, given the project's last ingest.
func (e *renderedDashboard) usable(now, lastIngest time.Time) bool {
	return now.Truncate(clockPrecision).Equal(e.minute) && now.Before(e.staleAt) &&
		(e.openFrom.IsZero() || !e.openFrom.Before(lastIngest))
}

// current reports whether the store still holds what e was made of.
func (e *renderedDashboard) current(st *metadata.RenderState) bool {
	return st.Project == e.state.Project && st.Users == e.state.Users && slices.Equal(st.Computed, e.state.Computed)
}

// renderCache keeps the latest rendered answer of the most recently
// retrieved dashboards, at most renderCacheBytes of them. Its zero value
// is ready.
type renderCache struct {
	mu    sync.Mutex
	size  int
	order lru.List // *renderedDashboard, most recently used first
	byKey map[[2]int64]*lru.Element
	// rendering holds, for each dashboard a plain retrieve is rendering,
	// a channel closed when it is done.
	rendering map[[2]int64]chan struct{}
}

// begin claims the rendering of a dashboard: leader is true when the
// caller renders it (and must call end), else done closes when the one
// rendering it has finished.
func (c *renderCache) begin(project, dashboard int64) (done <-chan struct{}, leader bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := [2]int64{project, dashboard}
	if ch, ok := c.rendering[k]; ok {
		return ch, false
	}
	if c.rendering == nil {
		c.rendering = map[[2]int64]chan struct{}{}
	}
	c.rendering[k] = make(chan struct{})
	return nil, true
}

func (c *renderCache) end(project, dashboard int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := [2]int64{project, dashboard}
	close(c.rendering[k])
	delete(c.rendering, k)
}

func (c *renderCache) get(project, dashboard int64) *renderedDashboard {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.byKey[[2]int64{project, dashboard}]
	if el == nil {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*renderedDashboard)
}

func (c *renderCache) put(e *renderedDashboard) {
	if len(e.body) > renderCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[[2]int64]*lru.Element{}
	}
	k := [2]int64{e.project, e.dashboard}
	if el := c.byKey[k]; el != nil {
		c.size -= len(el.Value.(*renderedDashboard).body)
		c.order.Remove(el)
	}
	c.byKey[k] = c.order.PushFront(e)
	c.size += len(e.body)
	for c.size > renderCacheBytes {
		old := c.order.Remove(c.order.Back()).(*renderedDashboard)
		delete(c.byKey, [2]int64{old.project, old.dashboard})
		c.size -= len(old.body)
	}
}

// answerRendered answers a plain retrieve of dashboard id of project
// project with its kept answer when that is still the answer and the
// caller may see the project (checked in the same round trip); false when
// the retrieve must render it (or answer why not).
func (s *Server) answerRendered(c *gin.Context, project, id int64) bool {
	e := s.renders.get(project, id)
	if e == nil || !e.usable(time.Now(), s.ingest.last(project)) {
		return false
	}
	start := time.Now()
	st, err := s.store.RenderState(c.Request.Context(), project, principal(c).User.ID, e.keys)
	if err != nil || !st.Member || !e.current(st) {
		return false
	}
	c.Data(http.StatusOK, jsonContentType, e.body)
	if s.cfg.Metrics != nil {
		for _, k := range e.keys {
			s.cfg.Metrics.ObserveAnalysis(analysisKind(k), metrics.CacheHit, time.Since(start))
		}
	}
	return true
}

// keepRendered keeps the answer of dashboard d of project p, body,
// rendered as tiles from jobs' results after state was read and in the
// clock minute minute. When tiles were computed it is marshalled again
// with them read as cached.
func (s *Server) keepRendered(p *metadata.Project, d *metadata.Dashboard, tiles []tileJSON, body []byte,
	state *metadata.RenderState, minute time.Time, jobs []*tileJob) {
	if !time.Now().Truncate(clockPrecision).Equal(minute) {
		return
	}
	e := &renderedDashboard{project: p.ID, dashboard: d.ID, body: body, state: *state, minute: minute,
		staleAt: time.Now().Add(staleClosed)}
	e.state.Computed = nil
	computed := false
	for _, j := range jobs {
		if j.err != nil || j.r == nil {
			return
		}
		computed = computed || !j.r.Cached
		for _, out := range j.outs {
			out.IsCached = true
		}
		e.keys = append(e.keys, j.a.pol.key)
		e.state.Computed = append(e.state.Computed, j.r.ComputedAt.UnixMicro())
		e.staleAt = earliest(e.staleAt, j.r.StaleAt)
		if j.a.pol.open(j.r.ComputedAt) && (e.openFrom.IsZero() || j.r.ComputedAt.Before(e.openFrom)) {
			e.openFrom = j.r.ComputedAt
		}
	}
	if computed {
		for k := range tiles {
			if in := tiles[k].Insight; in != nil {
				tiles[k].IsCached = in.IsCached
			}
		}
		var err error
		if e.body, err = json.Marshal(dashboardJSON{dashboardBasicJSON: dashboardBasic(d), Tiles: tiles}); err != nil {
			return
		}
	}
	s.renders.put(e)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
