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

	"github.com/lib/pq"
)

// Scopes a personal API key may carry, as the API contract names them.
// "*" grants every scope.
var Scopes = []string{
	"project:read", "project:write",
	"insight:read", "insight:write",
	"sharing_configuration:read", "sharing_configuration:write",
	"activity_log:read",
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

// NewKey is a freshly created personal API key; Key is shown once.
type NewKey struct {
	ID     int64
	Key    string
	Scopes []string
}

type execer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func createKey(ctx context.Context, q execer, userID int64, label string, scopes []string) (NewKey, error) {
	if err := ValidateScopes(scopes); err != nil {
		return NewKey{}, err
	}
	key := randomToken("phx_")
	var id int64
	err := q.QueryRowContext(ctx, `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		userID, label, HashKey(key), maskKey(key), pq.Array(scopes)).Scan(&id)
	if err != nil {
		return NewKey{}, err
	}
	return NewKey{ID: id, Key: key, Scopes: scopes}, nil
}

// CreateKey makes a personal API key for the user with this email.
func (s *Store) CreateKey(ctx context.Context, email, label string, scopes []string) (NewKey, error) {
	var userID int64
	err := s.db.QueryRowContext(ctx, "SELECT id FROM users WHERE lower(email) = lower($1)", email).Scan(&userID)
	if errors.Is(err, sql.ErrNoRows) {
		return NewKey{}, fmt.Errorf("no user with email %q: %w", email, ErrNotFound)
	}
	if err != nil {
		return NewKey{}, err
	}
	return createKey(ctx, s.db, userID, label, scopes)
}
