package analysis

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// How long a computed result serves, by whether its range was still open
// (it ended less than openMargin before the computation started, so new
// events can change it) or closed. See analytics.md, envelope and caching.
const (
	// openMargin lets late events (SDK batches, retries) count as new
	// for a range that ended just before the computation.
	openMargin = time.Hour
	// refreshOpenShort and refreshOpen bound how often refresh=true
	// recomputes an open range: PostHog's 3 minutes for hourly or
	// short (up to 8 days) ranges, 15 minutes for others.
	refreshOpenShort = 3 * time.Minute
	refreshOpen      = 15 * time.Minute
	refreshClosed    = time.Hour
	// staleOpen and StaleClosed are when any retrieve recomputes. An open
	// range is stale earlier as soon as the project received events after
	// the computation started (ingestClock).
	staleOpen   = time.Hour
	StaleClosed = 24 * time.Hour
	// pruneEvery is how often the server deletes results that have been
	// stale for pruneAfter (relative ranges move on and leave them behind).
	pruneEvery = time.Hour
	pruneAfter = 24 * time.Hour
	// cacheVersion changes every key when a result's shape or the key's
	// make-up changes (3: action series labelled with the action's own
	// name, whatever name a request carries).
	cacheVersion = 3
	// ClockPrecision is how finely a key tells instants of the clock apart
	// (the ends of a relative hourly range, relative dates in property
	// conditions): requests within one minute share a result.
	ClockPrecision = time.Minute
)

// cachePolicy is what judging a result's age needs to know of its request.
type cachePolicy struct {
	projectID int64
	key       string
	// rangeEnd is the end of the analysed range; short marks an hourly
	// range or one of at most 8 days.
	rangeEnd time.Time
	short    bool
}

// rangePolicy caches a result of request c over its range. date_from=all
// is a long range, whatever the first event turns out to be.
func rangePolicy(projectID int64, key string, c *querybuilder.Common) cachePolicy {
	r := c.Range
	return cachePolicy{projectID: projectID, key: key, rangeEnd: r.To,
		short: r.Interval == querybuilder.IntervalHour || (!c.FromAll() && r.To.Sub(r.From) <= 8*24*time.Hour)}
}

// open reports whether new events could still change a result computed at
// computedAt.
func (p cachePolicy) open(computedAt time.Time) bool {
	return !p.rangeEnd.Before(computedAt.Add(-openMargin))
}

// nextRefresh is when refresh=true may recompute a result computed at
// computedAt (next_allowed_client_refresh).
func (p cachePolicy) nextRefresh(computedAt time.Time) time.Time {
	switch {
	case !p.open(computedAt):
		return computedAt.Add(refreshClosed)
	case p.short:
		return computedAt.Add(refreshOpenShort)
	}
	return computedAt.Add(refreshOpen)
}

// staleAt is when any retrieve recomputes a result computed at computedAt
// (cache_target_age), events aside.
func (p cachePolicy) staleAt(computedAt time.Time) time.Time {
	if p.open(computedAt) {
		return computedAt.Add(staleOpen)
	}
	return computedAt.Add(StaleClosed)
}

// cachedResult is an analysis result and where it came from.
type cachedResult struct {
	metadata.CachedResult
	// Cached is true when the result was read from the cache rather than
	// computed for this request (or the request it joined).
	Cached bool
}

// usable reports whether r may answer a request in mode at now, given the
// project's last ingest.
func (p cachePolicy) usable(r *metadata.CachedResult, mode Refresh, now, lastIngest time.Time) bool {
	switch mode {
	case RefreshNever:
		return true
	case RefreshAlways:
		return false
	}
	if !now.Before(r.StaleAt) {
		return false
	}
	if p.open(r.ComputedAt) && r.ComputedAt.Before(lastIngest) {
		return false
	}
	return mode != RefreshIfAllowed || now.Before(p.nextRefresh(r.ComputedAt))
}

// cached answers a's result: the cached one when its refresh allows it,
// else computed (once for all concurrent requests of the same key) and
// cached. With RefreshNever and nothing cached it returns nil. An answer
// is timed by its cache outcome: a hit (found cached, also by the second
// look inside a computation), a miss (this request computed it) or
// shared (it waited for another request's computation).
func (s *Service) cached(ctx context.Context, a *Analysis) (*cachedResult, error) {
	if s.cfg.Metrics == nil {
		return s.cachedOrComputed(ctx, a, nil)
	}
	start := time.Now()
	var computed atomic.Bool
	r, err := s.cachedOrComputed(ctx, a, &computed)
	if err == nil && r != nil {
		outcome := metrics.CacheShared
		if r.Cached {
			outcome = metrics.CacheHit
		} else if computed.Load() {
			outcome = metrics.CacheMiss
		}
		s.cfg.Metrics.ObserveAnalysis(a.kind.Name, outcome, time.Since(start))
	}
	return r, err
}

// cachedOrComputed is cached; computed, when given, is set when this
// caller's computation is the one that runs.
func (s *Service) cachedOrComputed(ctx context.Context, a *Analysis, computed *atomic.Bool) (*cachedResult, error) {
	pol, mode := a.pol, a.refresh
	if mode != RefreshAlways {
		r, err := s.store.CachedResult(ctx, pol.projectID, pol.key)
		switch {
		case err == nil:
			if pol.usable(r, mode, time.Now(), s.ingest.Last(pol.projectID)) {
				return &cachedResult{CachedResult: *r, Cached: true}, nil
			}
		case errors.Is(err, metadata.ErrNotFound):
		default:
			// The cache is an optimisation: without it, compute.
			s.log.Warn("could not read a cached result", "project_id", pol.projectID, "error", err)
		}
		if mode == RefreshNever {
			if err == nil {
				return &cachedResult{CachedResult: *r, Cached: true}, nil
			}
			return nil, nil
		}
	}
	flightKey := strconv.FormatInt(pol.projectID, 10) + "/" + pol.key
	return s.flights.do(ctx, flightKey, func(ctx context.Context) (*cachedResult, error) {
		if mode != RefreshAlways {
			// A request that missed the cache just before another one
			// stored its result finds it here instead of computing again.
			if r, err := s.store.CachedResult(ctx, pol.projectID, pol.key); err == nil &&
				pol.usable(r, mode, time.Now(), s.ingest.Last(pol.projectID)) {
				return &cachedResult{CachedResult: *r, Cached: true}, nil
			}
		}
		// PostgreSQL keeps microseconds: a cached answer reads the same
		// last_refresh as the fresh one did.
		start := time.Now().UTC().Truncate(time.Microsecond)
		if computed != nil {
			computed.Store(true)
		}
		raw, err := s.compute(ctx, a)
		if err != nil {
			return nil, err
		}
		r := metadata.CachedResult{Result: raw, ComputedAt: start, StaleAt: pol.staleAt(start)}
		if err := s.store.PutCachedResult(ctx, pol.projectID, pol.key, r); err != nil {
			s.log.Warn("could not cache a result", "project_id", pol.projectID, "error", err)
		}
		s.maybePrune()
		return &cachedResult{CachedResult: r}, nil
	})
}

// maybePrune deletes long-stale results, at most once per pruneEvery.
func (s *Service) maybePrune() {
	now := time.Now().UnixNano()
	last := s.lastPrune.Load()
	if now-last < int64(pruneEvery) || !s.lastPrune.CompareAndSwap(last, now) {
		return
	}
	s.cfg.Background(func(ctx context.Context) {
		if _, err := s.store.PruneCachedResults(ctx, time.Now().Add(-pruneAfter)); err != nil {
			s.log.Warn("could not prune cached results", "error", err)
		}
	})
}

// cacheIgnored are parameters that do not change a result.
var cacheIgnored = map[string]bool{"client_query_id": true, "debug": true, "refresh": true, "format": true,
	"insight": true, "from_dashboard": true}

// cacheScope is what of the project and the clock a result depends on
// besides its filter: the project's timezone, week start and (when
// applied) test-account filters, the resolved range, so a relative range
// that moved on (a new day) is a new entry rather than yesterday's
// buckets answered as today's, and what relative dates in property
// conditions resolved to, for the same reason. date_from=all keys its
// start as such: the first event is the engine's to tell, and a key is
// computed without the engine.
type cacheScope struct {
	Project      querybuilder.Project
	Location     *time.Location
	From, To     time.Time
	FromAll      bool
	Relative     []time.Time
	TestAccounts bool
	Settings     map[string]json.RawMessage
}

// newCacheScope is the scope of a parsed request.
func newCacheScope(c *querybuilder.Common) cacheScope {
	sc := cacheScope{Project: c.Project, Location: c.Location(), From: c.Range.From, To: c.Range.To,
		Relative: c.RelativeInstants(), TestAccounts: c.FilterTestAccounts, FromAll: c.FromAll(), Settings: c.SettingsUsed()}
	if sc.FromAll {
		sc.From = time.Time{}
	}
	return sc
}

// cacheKey names a result of an analysis kind (trends, funnel, timing):
// the normalized filter and its scope.
func cacheKey(kind string, params querybuilder.Params, sc cacheScope) (string, error) {
	filter, err := canonicalParams(params)
	if err != nil {
		return "", err
	}
	k := struct {
		V            int             `json:"v"`
		Kind         string          `json:"kind"`
		Filter       json.RawMessage `json:"filter"`
		Timezone     string          `json:"tz"`
		WeekStart    int             `json:"week_start"`
		TestAccounts json.RawMessage `json:"test_accounts,omitempty"`
		From         int64           `json:"from"`
		FromAll      bool            `json:"from_all,omitempty"`
		To           int64           `json:"to"`
		Relative     []int64         `json:"relative,omitempty"`
		Settings     json.RawMessage `json:"settings,omitempty"`
	}{V: cacheVersion, Kind: kind, Filter: filter, Timezone: sc.Location.String(), WeekStart: sc.Project.WeekStartDay,
		From: sc.From.Truncate(ClockPrecision).UnixMicro(), FromAll: sc.FromAll, To: sc.To.Truncate(ClockPrecision).UnixMicro()}
	for _, t := range sc.Relative {
		k.Relative = append(k.Relative, t.Truncate(ClockPrecision).UnixMicro())
	}
	if len(sc.Settings) > 0 {
		if k.Settings, err = canonicalParams(sc.Settings); err != nil {
			return "", err
		}
	}
	if sc.TestAccounts && len(sc.Project.TestAccountFilters) > 0 {
		if k.TestAccounts, err = canonicalJSON(sc.Project.TestAccountFilters); err != nil {
			return "", err
		}
	}
	b, err := json.Marshal(k)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return kind + "_" + hex.EncodeToString(sum[:]), nil
}

// canonicalParams is the filter as one JSON text with sorted keys, without
// the parameters that do not change the result and without nulls, so a
// GET and a POST of the same filter, or a saved insight's filters, share
// a key.
func canonicalParams(params querybuilder.Params) (json.RawMessage, error) {
	m := make(map[string]json.RawMessage, len(params))
	for k, raw := range params {
		if cacheIgnored[k] || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		c, err := canonicalJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("cache key: %s: %w", k, err)
		}
		m[k] = c
	}
	return json.Marshal(m) // map keys are sorted
}

// canonicalJSON re-encodes a JSON value with object keys sorted and
// numbers as they were written.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
