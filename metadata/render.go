package metadata

import (
	"context"

	"github.com/lib/pq"
)

// RenderState is what a rendered answer of a project was made of, as far
// as the store can tell it in one round trip: the project's and the
// users' render generations (moved by triggers on every change to what an
// answer shows, migration 0007) and, for each cache key asked about, when
// its stored result was computed (Unix microseconds; 0 when there is
// none). Member tells whether the user asking is a member of the
// project's organization (the access projects' reads check).
type RenderState struct {
	Project, Users int64
	Computed       []int64
	Member         bool
}

// RenderState reads the project's render state for keys (none: the
// generations only), as user userID may see it.
func (s *Store) RenderState(ctx context.Context, projectID, userID int64, keys []string) (*RenderState, error) {
	return recallRead(s, recallKey("render", []any{projectID, userID, keys}), func() (*RenderState, error) {
		return s.renderState(ctx, projectID, userID, keys)
	})
}

func (s *Store) renderState(ctx context.Context, projectID, userID int64, keys []string) (*RenderState, error) {
	st, err := s.prepared(ctx, `SELECT
		coalesce((SELECT generation FROM render_generations WHERE project_id = $1), 0),
		coalesce((SELECT generation FROM render_generations WHERE project_id = 0), 0),
		ARRAY(SELECT coalesce((extract(epoch FROM c.computed_at) * 1000000)::bigint, 0)
			FROM unnest($2::text[]) WITH ORDINALITY AS k(cache_key, n)
			LEFT JOIN cached_results c ON c.project_id = $1 AND c.cache_key = k.cache_key
			ORDER BY k.n),
		EXISTS (SELECT 1 FROM projects p JOIN memberships m ON m.organization_id = p.organization_id AND m.user_id = $3
			WHERE p.id = $1)`)
	if err != nil {
		return nil, err
	}
	var r RenderState
	var computed pq.Int64Array
	if err := st.QueryRowxContext(ctx, projectID, pq.StringArray(keys), userID).Scan(&r.Project, &r.Users, &computed, &r.Member); err != nil {
		return nil, err
	}
	r.Computed = computed
	return &r, nil
}
