package metadata

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
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
}

// Principal is who a request acts as: a user, through one of their keys.
type Principal struct {
	User   User
	KeyID  int64
	Scopes []string
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
		return &p, nil
	}
	var row struct {
		User
		KeyID      int64          `db:"key_id"`
		Secure     string         `db:"secure_value"`
		Scopes     pq.StringArray `db:"scopes"`
		LastUsedAt sql.NullTime   `db:"last_used_at"`
	}
	st, err := s.prepared(ctx, `SELECT k.id AS key_id, k.secure_value, k.scopes, k.last_used_at,
			u.id, u.uuid, u.distinct_id, u.email, u.first_name, u.last_name, u.is_email_verified, u.hedgehog_config
		FROM personal_api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.secure_value = $1`)
	if err != nil {
		return nil, err
	}
	err = st.GetContext(ctx, &row, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	// The index lookup matched the hash already; compare again in constant
	// time so no code path branches on a partial match of secret material.
	if subtle.ConstantTimeCompare([]byte(row.Secure), []byte(hash)) != 1 {
		return nil, ErrNotFound
	}
	if !row.LastUsedAt.Valid || time.Since(row.LastUsedAt.Time) > keyTouchInterval {
		if _, err := s.db.ExecContext(ctx, "UPDATE personal_api_keys SET last_used_at = now() WHERE id = $1", row.KeyID); err != nil {
			return nil, err
		}
	}
	p := &Principal{User: row.User, KeyID: row.KeyID, Scopes: row.Scopes}
	s.keys.put(hash, *p)
	return p, nil
}

// Membership is a user's place in an organization.
type Membership struct {
	OrganizationID uuid.UUID `db:"organization_id"`
	Level          int       `db:"level"`
}

// ResolveOrganization returns the caller's membership in the organization
// given as a UUID or "@current" (their oldest membership). ErrNotFound when
// the user is not a member: another organization does not exist for them.
func (s *Store) ResolveOrganization(ctx context.Context, userID int64, org string) (Membership, error) {
	var m Membership
	var err error
	if org == "@current" {
		err = s.db.GetContext(ctx, &m, `SELECT organization_id, level FROM memberships
			WHERE user_id = $1 ORDER BY created_at, organization_id LIMIT 1`, userID)
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
