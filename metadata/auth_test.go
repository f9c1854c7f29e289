package metadata_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
)

func TestScopeRules(t *testing.T) {
	cases := []struct {
		have []string
		want string
		ok   bool
	}{
		{[]string{"*"}, "insight:write", true},
		{[]string{"project:read"}, "project:read", true},
		{[]string{"project:write"}, "project:read", true},
		{[]string{"project:read"}, "project:write", false},
		{[]string{"insight:write"}, "project:read", false},
		{[]string{"sharing_configuration:write"}, "sharing_configuration:read", true},
		{nil, "project:read", false},
	}
	for _, tc := range cases {
		p := &metadata.Principal{Scopes: tc.have}
		if got := p.HasScope(tc.want); got != tc.ok {
			t.Errorf("%v has %s = %v, want %v", tc.have, tc.want, got, tc.ok)
		}
	}
}

func TestAuthenticateCachesKnownKeysOnly(t *testing.T) {
	base := metadatatest.NewStore(t)
	ctx := context.Background()
	b := metadatatest.Bootstrap(t, base, "ada@example.com", "Acme", "Web")
	var db string
	if err := base.DB().Get(&db, "SELECT current_database()"); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(os.Getenv("DATABASE_URL"))
	u.Path = "/" + db
	cached, err := metadata.Open(ctx, metadata.Config{DatabaseURL: u.String(), MaxOpenConns: 2, AuthCacheTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()

	p, err := cached.Authenticate(ctx, b.PersonalAPIKey)
	if err != nil || p.User.Email != "ada@example.com" || !p.HasScope("insight:write") {
		t.Fatalf("%v %+v", err, p)
	}
	if _, err := base.DB().Exec("DELETE FROM personal_api_keys"); err != nil {
		t.Fatal(err)
	}
	if _, err := base.Authenticate(ctx, b.PersonalAPIKey); !errors.Is(err, metadata.ErrNotFound) {
		t.Fatalf("uncached store: deleted key gave %v", err)
	}
	if _, err := cached.Authenticate(ctx, b.PersonalAPIKey); err != nil {
		t.Fatalf("within the TTL the cached key should still work: %v", err)
	}
	time.Sleep(350 * time.Millisecond)
	if _, err := cached.Authenticate(ctx, b.PersonalAPIKey); !errors.Is(err, metadata.ErrNotFound) {
		t.Fatalf("after the TTL a deleted key must fail, got %v", err)
	}
	for range 2 {
		if _, err := cached.Authenticate(ctx, "phx_unknown"); !errors.Is(err, metadata.ErrNotFound) {
			t.Fatalf("unknown key: %v", err)
		}
	}
}
