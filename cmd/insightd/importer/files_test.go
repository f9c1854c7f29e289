package importer

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// exportRow is a row of PostHog's events batch export, as its Parquet
// files hold it.
type exportRow struct {
	UUID       string    `parquet:"uuid"`
	Event      string    `parquet:"event"`
	Properties string    `parquet:"properties"`
	Set        string    `parquet:"set,optional"`
	SetOnce    string    `parquet:"set_once,optional"`
	DistinctID string    `parquet:"distinct_id"`
	TeamID     int64     `parquet:"team_id"`
	Timestamp  time.Time `parquet:"timestamp,timestamp(microsecond)"`
	CreatedAt  time.Time `parquet:"created_at,timestamp(microsecond)"`
	IP         string    `parquet:"ip,optional"`
	SiteURL    string    `parquet:"site_url,optional"`
}

func TestImportReadsBatchExportFiles(t *testing.T) {
	s, _, _ := newServer(t)
	dst := id(s.call(t, "POST", "/api/organizations/@current/projects/", map[string]any{"name": "From files"}, 201))
	dir := t.TempDir()
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	// JSON lines: PostHog's export writes properties as a string, $set
	// beside them as set.
	var jl strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&jl, `{"uuid": "0193a000-0000-7000-8000-%012d", "event": "$pageview", "properties": "{\"$current_url\": \"/j/%d\"}", "set": "{\"source\": \"jsonl\"}", "set_once": null, "distinct_id": "j-%d", "team_id": 4242, "timestamp": "%s", "created_at": "%s", "elements_chain": "", "ip": null, "site_url": null}`+"\n",
			i, i, i%2, at.Add(time.Duration(i)*time.Second).Format("2006-01-02 15:04:05.000000"), at.Format(time.RFC3339))
		if i == 2 {
			jl.WriteString("\n") // a blank line is skipped
		}
	}
	plain := filepath.Join(dir, "export.jsonl")
	if err := os.WriteFile(plain, []byte(jl.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// The same events gzipped under another name: sent again, counted once.
	gz := filepath.Join(dir, "export.jsonl.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(jl.String()))
	zw.Close()
	f.Close()
	var rows []exportRow
	for i := 0; i < 4; i++ {
		rows = append(rows, exportRow{UUID: fmt.Sprintf("0193b000-0000-7000-8000-%012d", i), Event: "signup", Properties: `{"plan": "pro"}`,
			Set: `{"source": "parquet"}`, DistinctID: "p-1", TeamID: 4242, Timestamp: at.Add(time.Duration(i) * time.Minute), CreatedAt: at})
	}
	pq := filepath.Join(dir, "export.parquet")
	if err := parquet.WriteFile(pq, rows); err != nil {
		t.Fatal(err)
	}
	run := func(files ...string) *Report {
		im, err := New(Config{Target: NewClient(s.base, s.key, dst), Files: files, PageSize: 3, Only: map[string]bool{"events": true},
			Checkpoint: filepath.Join(dir, "checkpoint.json")})
		if err != nil {
			t.Fatal(err)
		}
		r, err := im.Run(t.Context())
		if err != nil {
			t.Fatalf("import %v: %v", files, err)
		}
		return r
	}
	if r := run(plain, gz, pq); r.Events.Total != 14 || r.Events.Copied != 14 {
		t.Fatalf("first run: %+v", r.Events)
	}
	if r := run(plain, gz, pq); r.Events.Copied != 0 {
		t.Errorf("the checkpoint's files were sent again: %+v", r.Events)
	}
	q := func(text string) any {
		return obj(s.call(t, "POST", fmt.Sprintf("/api/projects/%d/query/", dst), map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": text}}, 200))["results"]
	}
	equal(t, "events", q("SELECT event, count(), count(DISTINCT distinct_id) FROM events GROUP BY event ORDER BY event"), [][]any{{"$pageview", 5, 2}, {"signup", 4, 1}})
	equal(t, "person properties", q("SELECT properties.source, count() FROM persons GROUP BY properties.source ORDER BY properties.source"), [][]any{{"jsonl", 2}, {"parquet", 1}})
	equal(t, "a timestamp", q("SELECT toString(timestamp) FROM events WHERE event = 'signup' ORDER BY timestamp LIMIT 1"), [][]any{{at.Format("2006-01-02 15:04:05.000000")}})

	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"uuid": "0193c000-0000-7000-8000-000000000001", "event": "x", "distinct_id": "d", "timestamp": "2026-12-01T00:00:00Z"}`+"\n"+`{"uuid": "nope", "event": "x"}`+"\n"), 0o600)
	im, _ := New(Config{Target: NewClient(s.base, s.key, dst), Files: []string{bad}, Only: map[string]bool{"events": true}})
	if _, err := im.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "bad.jsonl line 2: uuid \"nope\"") {
		t.Errorf("a bad row: %v", err)
	}
}
