package metadatatest

import (
	"context"
	"os"
	"testing"

	"github.com/insightd/insightd/metadata"
)

// Reopen returns a second store on store's database, as a second server
// sharing one PostgreSQL has; it is closed when the test ends.
func Reopen(t testing.TB, store *metadata.Store) *metadata.Store {
	t.Helper()
	var name string
	if err := store.DB().Get(&name, "SELECT current_database()"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	second, err := metadata.Open(ctx, metadata.Config{DatabaseURL: withDatabase(t, os.Getenv("DATABASE_URL"), name), MaxOpenConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	return second
}
