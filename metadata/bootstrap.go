package metadata

import (
	"context"
	"fmt"
	"net/mail"
	"strings"

	"github.com/google/uuid"
)

// Bootstrapped is what `insightd admin bootstrap` prints.
type Bootstrapped struct {
	OrganizationID  uuid.UUID `json:"organization_id"`
	ProjectID       int64     `json:"project_id"`
	ProjectAPIToken string    `json:"project_api_token"`
	UserID          int64     `json:"user_id"`
	PersonalAPIKey  string    `json:"personal_api_key"`
}

// Bootstrap creates, in one transaction, an organization owned by the user
// with this email (created if new), a project in it, and a personal API key
// with every scope for the user.
func (s *Store) Bootstrap(ctx context.Context, email, orgName, projectName string) (Bootstrapped, error) {
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != strings.TrimSpace(email) {
		return Bootstrapped{}, fmt.Errorf("invalid email %q", email)
	}
	if n := len([]rune(orgName)); n < 1 || n > 200 || strings.ContainsRune(orgName, 0) {
		return Bootstrapped{}, fmt.Errorf("organization name must be 1-200 characters without NUL")
	}
	if n := len([]rune(projectName)); n < 1 || n > 200 || strings.ContainsRune(projectName, 0) {
		return Bootstrapped{}, fmt.Errorf("project name must be 1-200 characters without NUL")
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Bootstrapped{}, err
	}
	defer tx.Rollback()

	var out Bootstrapped
	err = tx.QueryRowContext(ctx, `INSERT INTO users (uuid, distinct_id, email) VALUES ($1, $2, $3)
		ON CONFLICT ((lower(email))) DO UPDATE SET email = users.email
		RETURNING id`, uuid.New(), randomToken(""), addr.Address).Scan(&out.UserID)
	if err != nil {
		return out, fmt.Errorf("user: %w", err)
	}
	out.OrganizationID = uuid.New()
	if _, err := tx.ExecContext(ctx, "INSERT INTO organizations (id, name) VALUES ($1, $2)", out.OrganizationID, orgName); err != nil {
		return out, fmt.Errorf("organization: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO memberships (organization_id, user_id, level) VALUES ($1, $2, 15)", out.OrganizationID, out.UserID); err != nil {
		return out, fmt.Errorf("membership: %w", err)
	}
	out.ProjectAPIToken = randomToken("phc_")
	err = tx.QueryRowContext(ctx, `INSERT INTO projects (uuid, organization_id, api_token, live_events_token, name)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		uuid.New(), out.OrganizationID, out.ProjectAPIToken, randomToken("phe_"), projectName).Scan(&out.ProjectID)
	if err != nil {
		return out, fmt.Errorf("project: %w", err)
	}
	key, err := createKey(ctx, tx, out.UserID, "bootstrap", []string{AllScopes}, KeyScope{})
	if err != nil {
		return out, fmt.Errorf("personal API key: %w", err)
	}
	out.PersonalAPIKey = key.Key
	return out, tx.Commit()
}
