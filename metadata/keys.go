package metadata

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// Scopes a personal API key may carry, as the API contract names them.
// "*" grants every scope.
var Scopes = []string{
	"project:read", "project:write",
	"insight:read", "insight:write",
	"sharing_configuration:read", "sharing_configuration:write",
	"activity_log:read",
	"annotation:read", "annotation:write",
	"event:read",
	"user:read",
	"organization:read",
	"person:read", "person:write",
	"action:read", "action:write",
	"cohort:read", "cohort:write",
	"group:read", "group:write",
	"dashboard:read", "dashboard:write",
	"query:read",
}

// AllScopes is the scope that grants every other.
const AllScopes = "*"

// ValidateScopes checks a requested scope list: non-empty, known scopes only.
func ValidateScopes(scopes []string) error {
	if len(scopes) == 0 {
		return errors.New("at least one scope is required")
	}
	for _, s := range scopes {
		if s != AllScopes && !slices.Contains(Scopes, s) {
			return fmt.Errorf("unknown scope %q (known: *, %s)", s, strings.Join(Scopes, ", "))
		}
	}
	return nil
}

// ErrNotFound is returned when a looked-up record does not exist (or is
// not visible to the caller).
var ErrNotFound = errors.New("not found")

// randomToken returns prefix + 43 url-safe characters (256 random bits).
func randomToken(prefix string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand never fails on Linux; a failure here means no entropy
		// source at all, and no key may be made without one.
		panic(err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// HashKey is how a personal API key is stored and looked up: hex SHA-256.
// The key has 256 random bits, so a fast hash is enough.
func HashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

func maskKey(key string) string {
	if len(key) < 12 {
		return "****"
	}
	return key[:6] + "..." + key[len(key)-4:]
}

// labelMax is PostHog's length limit on a key's label.
const labelMax = 40

// NewKey is a freshly created personal API key; Key is shown once.
type NewKey struct {
	ID     int64
	Key    string
	Scopes []string
}

type execer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func createKey(ctx context.Context, q execer, userID int64, label string, scopes []string, limit KeyScope) (NewKey, error) {
	if err := ValidateScopes(scopes); err != nil {
		return NewKey{}, err
	}
	if problem := checkText(label, labelMax); problem != "" {
		return NewKey{}, &ValidationError{Attr: "label", Detail: problem}
	}
	key := randomToken("phx_")
	var id int64
	err := q.QueryRowContext(ctx, `INSERT INTO personal_api_keys
			(user_id, label, secure_value, mask_value, scopes, scoped_organizations, scoped_teams)
		VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7::bigint[]) RETURNING id`,
		userID, label, HashKey(key), maskKey(key), pq.Array(scopes), limit.uuidArray(), limit.teamArray()).Scan(&id)
	if err != nil {
		return NewKey{}, err
	}
	return NewKey{ID: id, Key: key, Scopes: scopes}, nil
}

// CreateKey makes a personal API key for the user with this email,
// limited to the organizations and projects of limit (none: all of the
// user's). The user must belong to each of them, as PostHog requires.
func (s *Store) CreateKey(ctx context.Context, email, label string, scopes []string, limit KeyScope) (NewKey, error) {
	var userID int64
	err := s.db.QueryRowContext(ctx, "SELECT id FROM users WHERE lower(email) = lower($1)", email).Scan(&userID)
	if errors.Is(err, sql.ErrNoRows) {
		return NewKey{}, fmt.Errorf("no user with email %q: %w", email, ErrNotFound)
	}
	if err != nil {
		return NewKey{}, err
	}
	if err := s.checkKeyScope(ctx, userID, limit); err != nil {
		return NewKey{}, err
	}
	return createKey(ctx, s.db, userID, label, scopes, limit)
}

// checkKeyScope refuses a limit naming an organization or project the
// user does not belong to: such a key would open nothing, silently.
func (s *Store) checkKeyScope(ctx context.Context, userID int64, limit KeyScope) error {
	for _, org := range limit.Organizations {
		if _, err := s.ResolveOrganization(ctx, userID, KeyScope{}, org.String()); err != nil {
			return fmt.Errorf("scoped organization %s: the user is not a member: %w", org, err)
		}
	}
	for _, team := range limit.Teams {
		p, err := s.ProjectForUser(ctx, userID, team)
		if err != nil {
			return fmt.Errorf("scoped project %d: not a project of the user's organizations: %w", team, err)
		}
		if !limit.AllowsOrganization(p.OrganizationID) {
			return fmt.Errorf("scoped project %d is outside the scoped organizations", team)
		}
	}
	return nil
}

// KeyInfo is a personal API key as its owner may see it: everything but
// the secret.
type KeyInfo struct {
	ID         int64          `db:"id"`
	UserID     int64          `db:"user_id"`
	Label      string         `db:"label"`
	MaskValue  string         `db:"mask_value"`
	Scopes     pq.StringArray `db:"scopes"`
	CreatedAt  time.Time      `db:"created_at"`
	LastUsedAt sql.NullTime   `db:"last_used_at"`
	KeyScope   `db:"-"`
}

// Key returns the key with this id; ErrNotFound when it is gone.
func (s *Store) Key(ctx context.Context, id int64) (*KeyInfo, error) {
	var row struct {
		KeyInfo
		Orgs  pq.StringArray `db:"scoped_organizations"`
		Teams pq.Int64Array  `db:"scoped_teams"`
	}
	err := s.getOne(ctx, nil, &row, `SELECT id, user_id, label, mask_value, scopes, created_at, last_used_at,
		scoped_organizations, scoped_teams FROM personal_api_keys WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	k := row.KeyInfo
	for _, o := range row.Orgs {
		org, err := uuid.Parse(o)
		if err != nil {
			return nil, fmt.Errorf("key %d: scoped organization %q: %w", id, o, err)
		}
		k.Organizations = append(k.Organizations, org)
	}
	k.Teams = []int64(row.Teams)
	return &k, nil
}
