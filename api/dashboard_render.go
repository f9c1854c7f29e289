package api

import (
	lru "container/list"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/metadata"
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
// The round trip is made once per user and change, not per request:
// while the store hears PostgreSQL's notifications of changes to all of
// the above (metadata/render_watch.go, migration 0008), an answer the
// store confirmed current for a user under the project's stamp is
// current for them until the stamp moves. At 32 clients the round trip
// per request was half of a warm retrieve's CPU (PostgreSQL's ~250 µs
// of ~650 µs, at load 6-9 on 2 cores); without it the CPU left is
// writing and reading 509 KB over loopback HTTP.
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

	// checks says for whom and under which stamp the store showed it
	// current (dashboard_checks.go).
	checks renderChecks
}

// usable reports whether e's results would all still be answered from
// the cache at now, given the project's last ingest.
func (e *renderedDashboard) usable(now, lastIngest time.Time) bool {
	return now.Truncate(analysis.ClockPrecision).Equal(e.minute) && e.fresh(now, lastIngest)
}

// fresh is usable but for the clock minute.
func (e *renderedDashboard) fresh(now, lastIngest time.Time) bool {
	return now.Before(e.staleAt) && (e.openFrom.IsZero() || !e.openFrom.Before(lastIngest))
}

// current reports whether the store still holds what e was made of.
func (e *renderedDashboard) current(st *metadata.RenderState) bool {
	return st.Project == e.state.Project && st.Users == e.state.Users && slices.Equal(st.Computed, e.state.Computed)
}

// renderCache keeps the latest rendered answer of the most recently
// retrieved dashboards, at most renderCacheBytes of them. Its zero value
// is ready.
type renderCache struct {
	// roundTrips counts the store round trips kept answers were checked
	// with (tests tell by it that a retrieve made none).
	roundTrips atomic.Int64

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
// caller may see the project (checked in the same round trip, unless
// nothing changed since the store last showed both); false when the
// retrieve must render it (or answer why not).
func (s *Server) answerRendered(c *gin.Context, project, id int64) bool {
	e := s.renders.get(project, id)
	if e == nil || !e.usable(time.Now(), s.analysis.Ingest().Last(project)) {
		return false
	}
	start := time.Now()
	ctx, user := c.Request.Context(), principal(c).User.ID
	roundTrip := func() bool {
		s.renders.roundTrips.Add(1)
		st, err := s.store.RenderState(ctx, project, user, e.keys)
		return err == nil && st.Member && e.current(st)
	}
	stamp, watching := s.store.RenderStamp(project)
	if watching && !e.checks.confirm(ctx, user, stamp, roundTrip) || !watching && !roundTrip() {
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

// renderOrigin is what a rendering read before anything its answer
// shows: the project's stamp (when the store gave one) and its render
// state, as the user rendering sees it.
type renderOrigin struct {
	user     int64
	stamp    metadata.RenderStamp
	watching bool
	state    *metadata.RenderState
}

// renderOrigin reads the render state of a project a plain retrieve is
// about to render, after taking its stamp: a change committed after the
// stamp was taken moves the stamp, one committed before it is in the state.
func (s *Server) renderOrigin(c *gin.Context, project int64) (*renderOrigin, error) {
	o := &renderOrigin{user: principal(c).User.ID}
	o.stamp, o.watching = s.store.RenderStamp(project)
	var err error
	o.state, err = s.store.RenderState(c.Request.Context(), project, o.user, nil)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// rekeyRendered answers a plain retrieve of dashboard d of project p,
// about to be rendered in clock minute minute after o was read, with the
// answer kept in an earlier minute when that is still the answer: the
// tiles' cache keys made in this minute are the ones it was made of
// (ranges with fixed ends make the same keys in every minute), and the
// store holds what it was made of. Rendering it again would read every
// result and encode them again (~7.5 ms of CPU for 509 KB, which the
// first 32 retrieves of each minute waited for); planning the tiles reads
// metadata only. False when it must be rendered.
func (s *Server) rekeyRendered(c *gin.Context, o *renderOrigin, p *metadata.Project, d *metadata.Dashboard, minute time.Time) bool {
	e := s.renders.get(p.ID, d.ID)
	if e == nil || e.minute.Equal(minute) || !e.fresh(time.Now(), s.analysis.Ingest().Last(p.ID)) ||
		o.state.Project != e.state.Project || o.state.Users != e.state.Users {
		return false
	}
	ctx := c.Request.Context()
	_, jobs, err := s.planTiles(ctx, p, d, analysis.RefreshIfStale)
	if err != nil || len(jobs) != len(e.keys) || !time.Now().Truncate(analysis.ClockPrecision).Equal(minute) {
		return false
	}
	for k, j := range jobs {
		if j.a.Key() != e.keys[k] {
			return false
		}
	}
	s.renders.roundTrips.Add(1)
	st, err := s.store.RenderState(ctx, p.ID, o.user, e.keys)
	if err != nil || !st.Member || !e.current(st) {
		return false
	}
	next := &renderedDashboard{project: e.project, dashboard: e.dashboard, body: e.body, state: e.state, keys: e.keys,
		minute: minute, staleAt: e.staleAt, openFrom: e.openFrom}
	if o.watching {
		next.checks.record(o.user, o.stamp)
	}
	s.renders.put(next)
	c.Data(http.StatusOK, jsonContentType, next.body)
	return true
}

// keepRendered keeps the answer of dashboard d of project p, body,
// rendered as tiles from jobs' results after o was read and in the
// clock minute minute. When tiles were computed it is marshalled again
// with them read as cached. The rendering showed the answer current
// under o's stamp for the user rendering it (who had to be a member).
func (s *Server) keepRendered(p *metadata.Project, d *metadata.Dashboard, tiles []tileJSON, body []byte,
	o *renderOrigin, minute time.Time, jobs []*tileJob) {
	if !time.Now().Truncate(analysis.ClockPrecision).Equal(minute) {
		return
	}
	e := &renderedDashboard{project: p.ID, dashboard: d.ID, body: body, state: *o.state, minute: minute,
		staleAt: time.Now().Add(analysis.StaleClosed)}
	if o.watching {
		e.checks.record(o.user, o.stamp)
	}
	e.state.Computed = nil
	computed := false
	for _, j := range jobs {
		if j.err != nil || j.r == nil || j.r.Raw == nil {
			return
		}
		computed = computed || !j.r.Cached
		for _, out := range j.outs {
			out.IsCached = true
		}
		e.keys = append(e.keys, j.a.Key())
		e.state.Computed = append(e.state.Computed, j.r.ComputedAt.UnixMicro())
		e.staleAt = earliest(e.staleAt, j.r.StaleAt)
		if j.a.Open(j.r.ComputedAt) && (e.openFrom.IsZero() || j.r.ComputedAt.Before(e.openFrom)) {
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

// noteRenderWrites moves the render stamp of the project a request that
// may have written names (every project's, for a route that names none)
// once it is done, before its answer is complete: the notification of
// the write may reach this process after the client's next request.
func (s *Server) noteRenderWrites(c *gin.Context) {
	c.Next()
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return
	}
	project, err := httpx.PathID(c, "project_id")
	if err != nil {
		project = 0
	}
	s.store.RenderChanged(project)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
