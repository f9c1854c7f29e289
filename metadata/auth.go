package metadata

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// User is a person who signs in and owns API keys.
type User struct {
	ID              int64     `db:"id"`
	UUID            uuid.UUID `db:"uuid"`
	DistinctID      string    `db:"distinct_id"`
	Email           string    `db:"email"`
	FirstName       string    `db:"first_name"`
	LastName        string    `db:"last_name"`
	IsEmailVerified bool      `db:"is_email_verified"`
	HedgehogConfig  []byte    `db:"hedgehog_config"`
	// DateJoined is when the user was created; only Authenticate reads it.
	DateJoined time.Time `db:"created_at"`
}

// Principal is who a request acts as: a user, through one of their keys.
type Principal struct {
	User   User
	KeyID  int64
	Scopes []string
	// KeyScope limits the key to some of the user's organizations and
	// projects.
	KeyScope
}

// KeyScope is what a key may touch among what its user may: the
// organizations and projects (PostHog's teams) it is limited to. An empty
// list limits nothing.
type KeyScope struct {
	Organizations []uuid.UUID
	Teams         []int64
}

// Limited reports whether the key is limited to some organizations or
// projects.
func (k KeyScope) Limited() bool { return len(k.Organizations) > 0 || len(k.Teams) > 0 }

// AllowsOrganization reports whether the key may touch the organization.
func (k KeyScope) AllowsOrganization(id uuid.UUID) bool {
	return len(k.Organizations) == 0 || slices.Contains(k.Organizations, id)
}

// AllowsProject reports whether the key may touch the project of this
// organization.
func (k KeyScope) AllowsProject(org uuid.UUID, id int64) bool {
	return k.AllowsOrganization(org) && (len(k.Teams) == 0 || slices.Contains(k.Teams, id))
}

// uuidArray is the key scope's organizations as a PostgreSQL uuid[].
func (k KeyScope) uuidArray() pq.StringArray {
	out := make(pq.StringArray, len(k.Organizations))
	for i, id := range k.Organizations {
		out[i] = id.String()
	}
	return out
}

// teamArray is the key scope's projects as a PostgreSQL bigint[].
func (k KeyScope) teamArray() pq.Int64Array {
	if k.Teams == nil {
		return pq.Int64Array{}
	}
	return pq.Int64Array(k.Teams)
}

// HasScope reports whether the key grants scope. "*" grants all, and a
// :write scope grants the :read scope of the same object, as in PostHog.
func (p *Principal) HasScope(scope string) bool {
	for _, s := range p.Scopes {
		if s == AllScopes || s == scope {
			return true
		}
		if obj, ok := cutSuffix(scope, ":read"); ok && s == obj+":write" {
			return true
		}
	}
	return false
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

// keyTouchInterval bounds how often last_used_at is written: a busy key
// does not turn every read into a write.
const keyTouchInterval = time.Minute

// Authenticate finds the user behind a personal API key; ErrNotFound for
// an unknown key.
func (s *Store) Authenticate(ctx context.Context, key string) (*Principal, error) {
	hash := HashKey(key)
	if p, ok := s.keys.get(hash); ok {
		p.Scopes = slices.Clone(p.Scopes)
		p.Organizations, p.Teams = slices.Clone(p.Organizations), slices.Clone(p.Teams)
		return &p, nil
	}
	var row struct {
		User
		KeyID      int64          `db:"key_id"`
		Secure     string         `db:"secure_value"`
		Scopes     pq.StringArray `db:"scopes"`
		Orgs       pq.StringArray `db:"scoped_organizations"`
		Teams      pq.Int64Array  `db:"scoped_teams"`
		LastUsedAt sql.NullTime   `db:"last_used_at"`
	}
	if err := s.getOne(ctx, nil, &row, `SELECT k.id AS key_id, k.secure_value, k.scopes, k.scoped_organizations, k.scoped_teams, k.last_used_at,
			u.id, u.uuid, u.distinct_id, u.email, u.first_name, u.last_name, u.is_email_verified, u.hedgehog_config, u.created_at
		FROM personal_api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.secure_value = $1`, hash); err != nil {
		return nil, err
	}
	// The index lookup matched the hash already; compare again in constant
	// time so no code path branches on a partial match of secret material.
	if subtle.ConstantTimeCompare([]byte(row.Secure), []byte(hash)) != 1 {
		return nil, ErrNotFound
	}
	if !s.Down() && (!row.LastUsedAt.Valid || time.Since(row.LastUsedAt.Time) > keyTouchInterval) {
		// While PostgreSQL is down a remembered key works without its
		// touch (outage.go).
		if _, err := s.db.ExecContext(ctx, "UPDATE personal_api_keys SET last_used_at = now() WHERE id = $1", row.KeyID); err != nil && !Unavailable(err) {
			return nil, err
		}
	}
	p := &Principal{User: row.User, KeyID: row.KeyID, Scopes: row.Scopes}
	for _, o := range row.Orgs {
		id, err := uuid.Parse(o)
		if err != nil {
			return nil, fmt.Errorf("key %d: scoped organization %q: %w", row.KeyID, o, err)
		}
		p.Organizations = append(p.Organizations, id)
	}
	if len(row.Teams) > 0 {
		p.Teams = []int64(row.Teams)
	}
	s.keys.put(hash, *p)
	return p, nil
}

// Membership is a user's place in an organization.
type Membership struct {
	OrganizationID uuid.UUID `db:"organization_id"`
	Level          int       `db:"level"`
}

// ResolveOrganization returns the caller's membership in the organization
// given as a UUID or "@current": the oldest membership the key may touch
// (an organization it is limited to, holding a project it is limited to).
// ErrNotFound when the user is not a member: another organization does not
// exist for them. A named organization outside the key's scope is still
// returned; the caller refuses it (403), as PostHog does.
func (s *Store) ResolveOrganization(ctx context.Context, userID int64, scope KeyScope, org string) (Membership, error) {
	var m Membership
	var err error
	if org == "@current" {
		err = s.db.GetContext(ctx, &m, `SELECT m.organization_id, m.level FROM memberships m
			WHERE m.user_id = $1
				AND (cardinality($2::uuid[]) = 0 OR m.organization_id = ANY($2::uuid[]))
				AND (cardinality($3::bigint[]) = 0 OR EXISTS (SELECT 1 FROM projects p
					WHERE p.organization_id = m.organization_id AND p.id = ANY($3::bigint[])))
			ORDER BY m.created_at, m.organization_id LIMIT 1`, userID, scope.uuidArray(), scope.teamArray())
	} else {
		id, perr := uuid.Parse(org)
		if perr != nil {
			return m, ErrNotFound
		}
		err = s.db.GetContext(ctx, &m, `SELECT organization_id, level FROM memberships
			WHERE user_id = $1 AND organization_id = $2`, userID, id)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return m, ErrNotFound
	}
	return m, err
}
