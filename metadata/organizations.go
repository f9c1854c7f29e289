package metadata

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// Organization is an organization as one of its members sees it.
type Organization struct {
	ID              uuid.UUID `db:"id"`
	Name            string    `db:"name"`
	CreatedAt       time.Time `db:"created_at"`
	UpdatedAt       time.Time `db:"updated_at"`
	MembershipLevel int       `db:"level"`
	MemberCount     int       `db:"member_count"`
	// Projects are the organization's projects the key may touch.
	Projects []ProjectSummary `db:"-"`
}

const organizationSelect = `SELECT o.id, o.name, o.created_at, o.updated_at, m.level,
		(SELECT count(*) FROM memberships c WHERE c.organization_id = o.id) AS member_count
	FROM organizations o JOIN memberships m ON m.organization_id = o.id AND m.user_id = $1`

// ListOrganizations returns a page of the user's organizations the key
// may touch, oldest membership first, with their projects, and the
// total count.
func (s *Store) ListOrganizations(ctx context.Context, userID int64, scope KeyScope, limit, offset int) ([]Organization, int, error) {
	var rows []struct {
		Organization
		Total int `db:"total"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT o.id, o.name, o.created_at, o.updated_at, m.level,
			(SELECT count(*) FROM memberships c WHERE c.organization_id = o.id) AS member_count,
			count(*) OVER () AS total
		FROM organizations o JOIN memberships m ON m.organization_id = o.id AND m.user_id = $1
		WHERE (cardinality($2::uuid[]) = 0 OR o.id = ANY($2::uuid[]))
			AND (cardinality($3::bigint[]) = 0 OR EXISTS (SELECT 1 FROM projects p
				WHERE p.organization_id = o.id AND p.id = ANY($3::bigint[])))
		ORDER BY m.created_at, o.id LIMIT $4 OFFSET $5`,
		userID, scope.uuidArray(), scope.teamArray(), limit, offset)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	orgs := make([]Organization, len(rows))
	for i := range rows {
		orgs[i], total = rows[i].Organization, rows[i].Total
	}
	if len(rows) == 0 && offset > 0 {
		// A page past the end has no row to carry the count.
		err = s.db.GetContext(ctx, &total, `SELECT count(*) FROM memberships m WHERE m.user_id = $1
			AND (cardinality($2::uuid[]) = 0 OR m.organization_id = ANY($2::uuid[]))
			AND (cardinality($3::bigint[]) = 0 OR EXISTS (SELECT 1 FROM projects p
				WHERE p.organization_id = m.organization_id AND p.id = ANY($3::bigint[])))`,
			userID, scope.uuidArray(), scope.teamArray())
		if err != nil {
			return nil, 0, err
		}
	}
	if err := s.attachProjects(ctx, orgs, scope); err != nil {
		return nil, 0, err
	}
	return orgs, total, nil
}

// GetOrganization returns the user's organization with its projects the
// key may touch; ErrNotFound when the user is not a member.
func (s *Store) GetOrganization(ctx context.Context, userID int64, scope KeyScope, id uuid.UUID) (*Organization, error) {
	var o Organization
	if err := s.getOne(ctx, nil, &o, organizationSelect+" WHERE o.id = $2", userID, id); err != nil {
		return nil, err
	}
	orgs := []Organization{o}
	if err := s.attachProjects(ctx, orgs, scope); err != nil {
		return nil, err
	}
	return &orgs[0], nil
}

// attachProjects fills each organization's projects in one query.
func (s *Store) attachProjects(ctx context.Context, orgs []Organization, scope KeyScope) error {
	if len(orgs) == 0 {
		return nil
	}
	ids := make(pq.StringArray, len(orgs))
	at := map[uuid.UUID]int{}
	for i, o := range orgs {
		ids[i] = o.ID.String()
		at[o.ID] = i
		orgs[i].Projects = []ProjectSummary{}
	}
	var ps []ProjectSummary
	err := s.db.SelectContext(ctx, &ps, `SELECT p.id, p.uuid, p.organization_id, p.api_token, p.name, p.completed_snippet_onboarding,
			p.has_completed_onboarding_for, p.ingested_event, p.is_demo, p.timezone, p.access_control
		FROM projects p WHERE p.organization_id = ANY($1::uuid[])
			AND (cardinality($2::bigint[]) = 0 OR p.id = ANY($2::bigint[]))
		ORDER BY p.id`, ids, scope.teamArray())
	if err != nil {
		return err
	}
	for _, p := range ps {
		i := at[p.OrganizationID]
		orgs[i].Projects = append(orgs[i].Projects, p)
	}
	return nil
}
