package analysistest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/insightd/insightd/querybuilder/reference"
)

// Capture posts events to h's /batch/ under the project token, each
// $identify in a request of its own after the events before it (so that
// the merge it makes applies to what follows), and fails t unless every
// request is acknowledged.
func Capture(t testing.TB, h http.Handler, token string, events []reference.Event) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range events {
		if seen[strings.ToLower(e.UUID)] {
			t.Fatalf("uuid %s twice: ingestion would keep one of the events", e.UUID)
		}
		seen[strings.ToLower(e.UUID)] = true
	}
	var batch []any
	flush := func() {
		if len(batch) == 0 {
			return
		}
		body, err := json.Marshal(map[string]any{"api_key": token, "batch": batch})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("POST", "/batch/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("capture: %d %s", w.Code, w.Body)
		}
		batch = nil
	}
	for _, e := range events {
		if e.Event == "$identify" {
			flush()
		}
		batch = append(batch, map[string]any{"event": e.Event, "distinct_id": e.DistinctID, "uuid": e.UUID,
			"timestamp": e.At.UTC().Format("2006-01-02T15:04:05.000000Z"), "properties": e.Props})
		if e.Event == "$identify" {
			flush()
		}
	}
	flush()
}
