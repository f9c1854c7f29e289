package metadata

import (
	"context"
	"database/sql"
	"errors"
)

// SetGeneratingDemoData records whether demo data is being written into a
// project (the project's is_generating_demo_data). Starting fails with
// ErrNotFound for an unknown project and with ErrDemoRunning when a run is
// already going, so two runs never interleave.
func (s *Store) SetGeneratingDemoData(ctx context.Context, projectID int64, running bool) error {
	res, err := s.db.ExecContext(ctx, `UPDATE projects SET generating_demo_data = $2
		WHERE id = $1 AND (NOT $2 OR NOT generating_demo_data)`, projectID, running)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	var exists bool
	err = s.db.QueryRowContext(ctx, "SELECT true FROM projects WHERE id = $1", projectID).Scan(&exists)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return ErrDemoRunning
}

// ErrDemoRunning says demo data is already being generated for a project.
var ErrDemoRunning = errors.New("demo data is already being generated for this project")
