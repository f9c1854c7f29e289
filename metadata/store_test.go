package metadata_test

import (
	"context"
	"strings"
	"testing"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
)

func TestMigrationsRunTwiceAreANoOp(t *testing.T) {
	store := metadatatest.NewStore(t)
	applied, err := store.Migrate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 0 {
		t.Fatalf("migrating a migrated database applied %v", applied)
	}
	var n int
	if err := store.DB().Get(&n, "SELECT count(*) FROM schema_migrations"); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no migration is recorded")
	}
}

func TestBootstrapCreatesOwnerProjectAndAllScopeKey(t *testing.T) {
	store := metadatatest.NewStore(t)
	b := metadatatest.Bootstrap(t, store, "ada@example.com", "Acme", "Web")
	if !strings.HasPrefix(b.ProjectAPIToken, "phc_") || len(b.ProjectAPIToken) != 4+43 {
		t.Errorf("project token %q: want phc_ and 43 characters", b.ProjectAPIToken)
	}
	if !strings.HasPrefix(b.PersonalAPIKey, "phx_") {
		t.Errorf("personal key %q", b.PersonalAPIKey)
	}
	var level int
	if err := store.DB().Get(&level, "SELECT level FROM memberships WHERE organization_id = $1 AND user_id = $2", b.OrganizationID, b.UserID); err != nil {
		t.Fatal(err)
	}
	if level != 15 {
		t.Errorf("membership level %d, want 15 (owner)", level)
	}
	var stored, scopes string
	if err := store.DB().QueryRow("SELECT secure_value, array_to_string(scopes, ',') FROM personal_api_keys WHERE user_id = $1", b.UserID).Scan(&stored, &scopes); err != nil {
		t.Fatal(err)
	}
	if stored == b.PersonalAPIKey || stored != metadata.HashKey(b.PersonalAPIKey) {
		t.Errorf("stored key %q is not the hash of the key", stored)
	}
	if scopes != "*" {
		t.Errorf("scopes %q, want *", scopes)
	}

	again := metadatatest.Bootstrap(t, store, "ADA@example.com", "Second org", "Other")
	if again.UserID != b.UserID {
		t.Errorf("the same email made a second user")
	}
	if again.OrganizationID == b.OrganizationID || again.PersonalAPIKey == b.PersonalAPIKey {
		t.Errorf("a second bootstrap reused the organization or key")
	}
}

func TestBootstrapRejectsBadInput(t *testing.T) {
	store := metadatatest.NewStore(t)
	for _, tc := range []struct{ email, org, project string }{
		{"not an email", "Acme", "Web"},
		{"a@b.c", "", "Web"},
		{"a@b.c", "Acme", strings.Repeat("x", 201)},
	} {
		if _, err := store.Bootstrap(context.Background(), tc.email, tc.org, tc.project); err == nil {
			t.Errorf("bootstrap %+v succeeded", tc)
		}
	}
}

func TestCreateKeyValidatesScopesAndUser(t *testing.T) {
	store := metadatatest.NewStore(t)
	ctx := context.Background()
	metadatatest.Bootstrap(t, store, "ada@example.com", "Acme", "Web")
	k, err := store.CreateKey(ctx, "ada@example.com", "ci", []string{"insight:read", "project:read"}, metadata.KeyScope{})
	if err != nil {
		t.Fatal(err)
	}
	var scopes string
	if err := store.DB().Get(&scopes, "SELECT array_to_string(scopes, ',') FROM personal_api_keys WHERE id = $1", k.ID); err != nil {
		t.Fatal(err)
	}
	if scopes != "insight:read,project:read" {
		t.Errorf("scopes %q", scopes)
	}
	if _, err := store.CreateKey(ctx, "ada@example.com", "", []string{"insight:read", "root:everything"}, metadata.KeyScope{}); err == nil {
		t.Error("an unknown scope was accepted")
	}
	if _, err := store.CreateKey(ctx, "ada@example.com", "", nil, metadata.KeyScope{}); err == nil {
		t.Error("an empty scope list was accepted")
	}
	if _, err := store.CreateKey(ctx, "nobody@example.com", "", []string{"*"}, metadata.KeyScope{}); err == nil {
		t.Error("a key was made for a user that does not exist")
	}
}
