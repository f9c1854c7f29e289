package metadata_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
)

func TestShortIDCollisionsDrawAgain(t *testing.T) {
	store := metadatatest.NewStore(t)
	ctx := context.Background()
	a := metadatatest.Bootstrap(t, store, "ada@example.com", "Acme", "Web")
	b := metadatatest.Bootstrap(t, store, "bob@example.com", "Beta", "App")
	shortID := func(id int64) string {
		var s string
		if err := store.DB().Get(&s, "SELECT short_id FROM insights WHERE id = $1", id); err != nil {
			t.Fatal(err)
		}
		return s
	}
	first, err := store.InsertInsightWithShortIDs(ctx, a.ProjectID, a.UserID, "AAAAAAAA")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a taken short_id is drawn again", func(t *testing.T) {
		id, err := store.InsertInsightWithShortIDs(ctx, a.ProjectID, a.UserID, "AAAAAAAA", "BBBBBBBB")
		if err != nil || id == first || shortID(id) != "BBBBBBBB" {
			t.Fatalf("id %d err %v", id, err)
		}
	})
	t.Run("another project may hold the same short_id", func(t *testing.T) {
		id, err := store.InsertInsightWithShortIDs(ctx, b.ProjectID, b.UserID, "AAAAAAAA")
		if err != nil || shortID(id) != "AAAAAAAA" {
			t.Fatalf("id %d err %v", id, err)
		}
	})
	t.Run("endless collisions end in an error, not a loop", func(t *testing.T) {
		if _, err := store.InsertInsightWithShortIDs(ctx, a.ProjectID, a.UserID, "AAAAAAAA"); err == nil ||
			!strings.Contains(err.Error(), "short_id") {
			t.Fatalf("err %v", err)
		}
	})
}

// FuzzParseInsightInput checks that whatever a client sends, the parser
// either names a field or returns values PostgreSQL can store: text
// without NUL, and documents that are JSON objects without NUL.
func FuzzParseInsightInput(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"name": "x", "filters": {"insight": "TRENDS", "events": [{"id": "$pageview"}]}}`,
		`{"query": "{\"kind\": \"TrendsQuery\"}"}`, `{"query": {"kind": "\u0000"}}`, `{"filters": {"a": "\ud800"}}`,
		`{"tags": ["a", " a ", "b"], "order": 2147483647, "deleted": true}`, `{"description": null, "name": null}`,
		`{"dashboards": [], "filters": {"insight": "funnels"}}`, `{"query": "[[[[1]]]]"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &fields) != nil {
			return
		}
		in, err := metadata.ParseInsightInput(fields)
		if err != nil {
			return
		}
		for name, v := range in.Values {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if strings.Contains(string(b), `\u0000`) {
				t.Fatalf("%s holds a NUL: %s", name, b)
			}
			if (name == "filters" || name == "query") && v != nil && (len(b) == 0 || b[0] != '{') {
				t.Fatalf("%s is not an object: %s", name, b)
			}
		}
	})
}
