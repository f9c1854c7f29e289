package metadata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MaxGroupTypes is how many group types a project may have (indexes 0 to
// 4), as in PostHog: events carry one materialized column per index.
const MaxGroupTypes = 5

// GroupType is one of a project's group types (PostHog's
// GroupTypeMapping); see migrations/postgres/0005.
type GroupType struct {
	ProjectID    int64          `db:"project_id"`
	GroupType    string         `db:"group_type"`
	Index        int            `db:"group_type_index"`
	NameSingular sql.NullString `db:"name_singular"`
	NamePlural   sql.NullString `db:"name_plural"`
	CreatedAt    time.Time      `db:"created_at"`
}

// ErrGroupTypesFull is returned when a project already has MaxGroupTypes
// types and another is asked for.
var ErrGroupTypesFull = errors.New("the project already has the most group types it may have")

// GroupTypes returns the project's group types by index.
func (s *Store) GroupTypes(ctx context.Context, projectID int64) ([]GroupType, error) {
	var out []GroupType
	err := s.db.SelectContext(ctx, &out, `SELECT project_id, group_type, group_type_index, name_singular, name_plural, created_at
		FROM group_type_mappings WHERE project_id = $1 ORDER BY group_type_index`, projectID)
	if out == nil {
		out = []GroupType{}
	}
	return out, err
}

// EnsureGroupType returns the index of the project's group type named
// groupType, creating it with the lowest free index when it is new
// (ErrGroupTypesFull when no index is free). The project's row is locked
// while a type is created, so two captures naming new types at once get
// different indexes, and the first type sets has_group_types.
func (s *Store) EnsureGroupType(ctx context.Context, projectID int64, groupType string) (int, error) {
	var idx int
	err := s.db.GetContext(ctx, &idx, `SELECT group_type_index FROM group_type_mappings
		WHERE project_id = $1 AND group_type = $2`, projectID, groupType)
	if err == nil {
		return idx, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	var locked int64
	if err := tx.GetContext(ctx, &locked, `SELECT id FROM projects WHERE id = $1 FOR UPDATE`, projectID); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, ErrNotFound
		}
		return 0, err
	}
	var types []GroupType
	if err := tx.SelectContext(ctx, &types, `SELECT project_id, group_type, group_type_index, name_singular, name_plural, created_at
		FROM group_type_mappings WHERE project_id = $1 ORDER BY group_type_index`, projectID); err != nil {
		return 0, err
	}
	used := map[int]bool{}
	for _, t := range types {
		if t.GroupType == groupType {
			return t.Index, nil // created meanwhile by another capture
		}
		used[t.Index] = true
	}
	idx = -1
	for i := 0; i < MaxGroupTypes; i++ {
		if !used[i] {
			idx = i
			break
		}
	}
	if idx < 0 {
		return 0, ErrGroupTypesFull
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO group_type_mappings (project_id, group_type, group_type_index)
		VALUES ($1, $2, $3)`, projectID, groupType, idx); err != nil {
		return 0, fmt.Errorf("create group type: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE projects SET has_group_types = true WHERE id = $1 AND NOT has_group_types`, projectID); err != nil {
		return 0, err
	}
	return idx, tx.Commit()
}
