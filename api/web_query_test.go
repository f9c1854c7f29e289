package api

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
)

// The web analytics nodes answer through the query API under both
// prefixes, bare or inside a DataTableNode, with PostHog's response
// fields at the top; bad values are 400s naming the node's field, and
// hostile strings are values, not SQL.
func TestWebAnalyticsQueries(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	team := f.a.ProjectID
	w := olap.NewWriter(engine, quietLog(), olap.WriterConfig{})
	at := time.Now().UTC().Add(-48 * time.Hour)
	var cs []olap.Capture
	for i, path := range []string{"/", "/docs", "/"} {
		cs = append(cs, olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: "$pageview",
			DistinctID: fmt.Sprintf("u%d", i%2), Timestamp: at.Add(time.Duration(i) * time.Minute),
			Properties: fmt.Sprintf(`{"$session_id": "s%d", "$pathname": %q, "$browser": "Chrome"}`, i%2, path)}})
	}
	if res := w.Write(context.Background(), cs); res.Err != nil {
		t.Fatal(res.Err)
	}
	w.Close()
	for _, prefix := range []string{"projects", "environments"} {
		path := fmt.Sprintf("/api/%s/%d/query/", prefix, team)
		st, out := call(t, f.h, "POST", path, key, map[string]any{"query": map[string]any{"kind": "WebOverviewQuery",
			"dateRange": map[string]any{"date_from": "-7d"}, "compareFilter": map[string]any{"compare": true}}})
		if st != 200 {
			t.Fatalf("%s overview: %d %v", prefix, st, out)
		}
		items, _ := out["results"].([]any)
		if len(items) != 5 || items[0].(map[string]any)["key"] != "visitors" || items[0].(map[string]any)["value"] != 2.0 ||
			items[1].(map[string]any)["value"] != 3.0 || out["dateFrom"] == nil {
			t.Fatalf("%s overview: %v", prefix, out)
		}
		st, out = call(t, f.h, "POST", path, key, map[string]any{"query": map[string]any{"kind": "DataTableNode",
			"source": map[string]any{"kind": "WebStatsTableQuery", "breakdownBy": "Page", "dateRange": map[string]any{"date_from": "-7d"},
				"limit": 1}}})
		if st != 200 || out["hasMore"] != true || len(out["results"].([]any)) != 1 || out["columns"] == nil {
			t.Fatalf("%s stats: %d %v", prefix, st, out)
		}
		row := out["results"].([]any)[0].([]any)
		if row[0] != "/" || row[1].([]any)[0] != 1.0 || row[2].([]any)[0] != 2.0 {
			t.Fatalf("%s stats row: %v", prefix, row)
		}
	}
	path := fmt.Sprintf("/api/projects/%d/query/", team)
	for field, node := range map[string]map[string]any{
		"query.breakdownBy": {"kind": "WebStatsTableQuery", "breakdownBy": "'; DROP TABLE events; --"},
		"query.limit":       {"kind": "WebStatsTableQuery", "breakdownBy": "Page", "limit": 0},
		"query.bogus":       {"kind": "WebOverviewQuery", "bogus": 1},
	} {
		st, out := call(t, f.h, "POST", path, key, map[string]any{"query": node})
		if st != 400 || out["attr"] != field {
			t.Errorf("%s: %d %v", field, st, out)
		}
	}
	hostile := "x') OR 1=1 --\\'\""
	st, out := call(t, f.h, "POST", path, key, map[string]any{"query": map[string]any{"kind": "WebStatsTableQuery", "breakdownBy": "Browser",
		"properties": []any{map[string]any{"key": hostile, "value": hostile, "type": "event"}}}})
	if st != 200 || len(out["results"].([]any)) != 0 {
		t.Fatalf("hostile: %d %v", st, out)
	}
}
