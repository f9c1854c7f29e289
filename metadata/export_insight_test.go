package metadata

import "context"

// InsertInsightWithShortIDs creates an empty insight whose short_id is
// drawn from ids in turn, so tests can force collisions.
func (s *Store) InsertInsightWithShortIDs(ctx context.Context, projectID, userID int64, ids ...string) (int64, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	next := func() string {
		id := ids[0]
		if len(ids) > 1 {
			ids = ids[1:]
		}
		return id
	}
	id, err := insertInsight(ctx, tx, next, projectID, userID, InsightInput{})
	if err != nil {
		return 0, err
	}
	return id, tx.Commit()
}
