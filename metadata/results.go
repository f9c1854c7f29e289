package metadata

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// CachedResult is a computed analysis result as stored: the result's JSON
// exactly as it was answered, when its computation started, and when it
// goes stale.
type CachedResult struct {
	Result     json.RawMessage
	ComputedAt time.Time
	StaleAt    time.Time
}

// CachedResult returns the project's result stored under key, stale or
// not (the caller judges); ErrNotFound when there is none.
func (s *Store) CachedResult(ctx context.Context, projectID int64, key string) (*CachedResult, error) {
	return recallRead(s, resultKey(projectID, key), func() (*CachedResult, error) { return s.cachedResult(ctx, projectID, key) })
}

// resultKey is the outage memory's key of a cached result (outage.go).
func resultKey(projectID int64, key string) string {
	return fmt.Sprintf("result\x00%d\x00%s", projectID, key)
}

func (s *Store) cachedResult(ctx context.Context, projectID int64, key string) (*CachedResult, error) {
	st, err := s.prepared(ctx, `SELECT result, computed_at, stale_at FROM cached_results WHERE project_id = $1 AND cache_key = $2`)
	if err != nil {
		return nil, err
	}
	var r CachedResult
	var raw []byte
	err = st.QueryRowxContext(ctx, projectID, key).Scan(&raw, &r.ComputedAt, &r.StaleAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r.Result = raw
	return &r, nil
}

// PutCachedResult stores a result under key. A result computed earlier
// than the one stored does not replace it: two computations that overlap
// leave the newer one.
func (s *Store) PutCachedResult(ctx context.Context, projectID int64, key string, r CachedResult) error {
	st, err := s.prepared(ctx, `INSERT INTO cached_results (project_id, cache_key, result, computed_at, stale_at)
	VALUES ($1, $2, $3, $4, $5)
	ON CONFLICT (project_id, cache_key) DO UPDATE
	SET result = excluded.result, computed_at = excluded.computed_at, stale_at = excluded.stale_at
	WHERE cached_results.computed_at <= excluded.computed_at`)
	if err != nil {
		return err
	}
	// As bytes, which the driver sends as they are (a string it copies
	// into bytes first): a result at the budget's edge is large
	// (benchmarks/results/reliability.md).
	_, err = st.ExecContext(ctx, projectID, key, []byte(r.Result), r.ComputedAt, r.StaleAt)
	if err == nil || Unavailable(err) {
		// Computed while PostgreSQL is down, it still answers from
		// memory until PostgreSQL is back.
		if old, ok := s.recall.get(resultKey(projectID, key)); !ok || !old.(*CachedResult).ComputedAt.After(r.ComputedAt) {
			s.recall.put(resultKey(projectID, key), &r, int64(len(r.Result)))
		}
	}
	// Even on an error: the row may have been written.
	s.RenderChanged(projectID)
	return err
}

// PruneCachedResults deletes results that went stale before the given
// time and returns how many it deleted.
func (s *Store) PruneCachedResults(ctx context.Context, staleBefore time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM cached_results WHERE stale_at < $1`, staleBefore)
	s.RenderChanged(0)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
