package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
)

// TestAnalysesTakeEveryRequestForm: PostHog's clients send a filter as a
// JSON body, a query string or a form; each gives the same answer, and
// the oldest properties form reads a property named key as a property.
func TestAnalysesTakeEveryRequestForm(t *testing.T) {
	f := newFixture(t)
	team, key := f.a.ProjectID, f.a.PersonalAPIKey
	w := olap.NewWriter(engine, quietLog(), olap.WriterConfig{})
	defer w.Close()
	at := time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)
	var cs []olap.Capture
	for i, props := range []string{`{"key": "val"}`, `{"key": "val"}`, `{"key": "other"}`, `{}`} {
		cs = append(cs, olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: "$pageview",
			DistinctID: fmt.Sprintf("u%d", i), Timestamp: at, Properties: props}})
	}
	if res := w.Write(context.Background(), cs); res.Err != nil {
		t.Fatal(res.Err)
	}
	events := `[{"id": "$pageview", "properties": {"key": "val"}}]`
	form := url.Values{"events": {events}, "date_from": {"2026-03-05"}, "date_to": {"2026-03-05"}, "display": {"BoldNumber"}}
	check := func(t *testing.T, st int, out map[string]any) {
		t.Helper()
		res, _ := out["result"].([]any)
		if st != 200 || len(res) != 1 || res[0].(map[string]any)["aggregated_value"] != 2.0 {
			t.Fatalf("%d %v", st, out)
		}
	}
	t.Run("a JSON body", func(t *testing.T) {
		st, out := call(t, f.h, "POST", f.trend(team), key, map[string]any{"events": []any{map[string]any{"id": "$pageview",
			"properties": map[string]any{"key": "val"}}}, "date_from": "2026-03-05", "date_to": "2026-03-05", "display": "BoldNumber"})
		check(t, st, out)
	})
	t.Run("a query string", func(t *testing.T) {
		st, out := call(t, f.h, "GET", f.trend(team)+"?"+form.Encode(), key, nil)
		check(t, st, out)
	})
	for name, body := range map[string]string{
		"a form":                   form.Encode(),
		"a form holding filters":   url.Values{"filters": {`{"events": ` + events + `, "date_from": "2026-03-05", "date_to": "2026-03-05", "display": "BoldNumber"}`}}.Encode(),
		"a form with refresh=true": form.Encode() + "&refresh=true",
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("POST", f.trend(team), strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+key)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
			st, out := do(t, f.h, r)
			check(t, st.Code, out)
		})
	}
	t.Run("a form with a bad value is a 400 naming it", func(t *testing.T) {
		r := httptest.NewRequest("POST", f.trend(team), strings.NewReader(url.Values{"events": {events}, "interval": {"fortnight"}}.Encode()))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w, out := do(t, f.h, r)
		wantError(t, w, out, 400, "invalid_input")
		if out["attr"] != "interval" {
			t.Fatalf("%v", out)
		}
	})
}
