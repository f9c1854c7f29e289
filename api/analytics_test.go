package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/chdb"
	"github.com/insightd/insightd/querybuilder"
)

func (f *fixture) trend(projectID int64) string {
	return fmt.Sprintf("/api/projects/%d/insights/trend/", projectID)
}

// writeEvents stores $pageview events for a project, one per time, each
// by its own distinct id unless ids says otherwise.
func writeEvents(t *testing.T, team int64, times []time.Time, ids []string) {
	t.Helper()
	w := olap.NewWriter(engine, quietLog(), olap.WriterConfig{})
	defer w.Close()
	var cs []olap.Capture
	for i, at := range times {
		id := fmt.Sprintf("user-%d", i)
		if ids != nil {
			id = ids[i]
		}
		cs = append(cs, olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: "$pageview",
			DistinctID: id, Timestamp: at, Properties: `{"$browser": "Chrome"}`}})
	}
	if res := w.Write(context.Background(), cs); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func dataOf(t *testing.T, body map[string]any) []any {
	t.Helper()
	res, _ := body["result"].([]any)
	if len(res) != 1 {
		t.Fatalf("result %v", body)
	}
	s := res[0].(map[string]any)
	return s["data"].([]any)
}

func TestTrendEndpoint(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	team := f.a.ProjectID
	// 03:30 UTC on 6 March is still 5 March in New York.
	writeEvents(t, team, []time.Time{
		time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 6, 3, 30, 0, 0, time.UTC),
		time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 7, 15, 0, 0, 0, time.UTC),
	}, []string{"u1", "u1", "u2", "u1"})
	filter := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-05", "date_to": "2026-03-07"}

	t.Run("POST with the filter at the top level answers the trend envelope", func(t *testing.T) {
		st, body := call(t, f.h, "POST", f.trend(team), key, filter)
		if st != 200 {
			t.Fatalf("%d %v", st, body)
		}
		if fmt.Sprint(dataOf(t, body)) != "[1 2 1]" || body["is_cached"] != false || body["timezone"] != "UTC" {
			t.Fatalf("body %v", body)
		}
		if _, err := time.Parse(time.RFC3339, body["last_refresh"].(string)); err != nil {
			t.Fatalf("last_refresh %v", body["last_refresh"])
		}
		s := body["result"].([]any)[0].(map[string]any)
		for _, k := range []string{"action", "label", "count", "data", "days", "labels", "filter", "persons_urls"} {
			if _, ok := s[k]; !ok {
				t.Errorf("series lacks %s", k)
			}
		}
		if s["label"] != "$pageview" || s["count"] != 4.0 || fmt.Sprint(s["labels"]) != "[5-Mar-2026 6-Mar-2026 7-Mar-2026]" {
			t.Errorf("series %v", s)
		}
		if _, ok := body["debug"]; ok {
			t.Error("debug without debug=true")
		}
	})
	t.Run("POST under filters and GET with JSON-encoded values agree", func(t *testing.T) {
		st, body := call(t, f.h, "POST", f.trend(team), key, map[string]any{"filters": filter})
		if st != 200 || fmt.Sprint(dataOf(t, body)) != "[1 2 1]" {
			t.Fatalf("%d %v", st, body)
		}
		q := url.Values{"events": {`[{"id": "$pageview", "math": "dau"}]`}, "date_from": {"2026-03-05"}, "date_to": {`"2026-03-07"`}}
		st, body = call(t, f.h, "GET", f.trend(team)+"?"+q.Encode(), key, nil)
		if st != 200 || fmt.Sprint(dataOf(t, body)) != "[1 2 1]" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("a personal API key sent as a parameter stays out of the answer and its cache key", func(t *testing.T) {
		q := url.Values{"events": {`[{"id": "$pageview"}]`}, "date_from": {"2026-03-05"}, "date_to": {"2026-03-07"}}
		st, plain := call(t, f.h, "GET", f.trend(team)+"?"+q.Encode(), key, nil)
		if st != 200 {
			t.Fatalf("%d %v", st, plain)
		}
		q.Set("personal_api_key", key)
		st, body := call(t, f.h, "GET", f.trend(team)+"?"+q.Encode(), "", nil)
		if st != 200 || body["is_cached"] != true {
			t.Fatalf("want the cached answer of the same filter: %d %v", st, body)
		}
		withBody := map[string]any{"personal_api_key": key}
		for k, v := range filter {
			withBody[k] = v
		}
		st, posted := call(t, f.h, "POST", f.trend(team), "", withBody)
		if st != 200 {
			t.Fatalf("%d %v", st, posted)
		}
		for _, b := range []map[string]any{body, posted} {
			if raw, _ := json.Marshal(b); strings.Contains(string(raw), key) {
				t.Fatalf("the key is in the answer: %s", raw)
			}
		}
	})
	t.Run("buckets follow the project's timezone", func(t *testing.T) {
		if st, body := call(t, f.h, "PATCH", f.project(f.a.OrganizationID, team), key, map[string]any{"timezone": "America/New_York"}); st != 200 {
			t.Fatalf("%d %v", st, body)
		}
		defer call(t, f.h, "PATCH", f.project(f.a.OrganizationID, team), key, map[string]any{"timezone": "UTC"})
		st, body := call(t, f.h, "POST", f.trend(team), key, filter)
		if st != 200 || fmt.Sprint(dataOf(t, body)) != "[2 1 1]" || body["timezone"] != "America/New_York" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("date_from=all starts at the project's first event", func(t *testing.T) {
		q := url.Values{"events": {`[{"id": "$pageview"}]`}, "date_from": {"all"}, "date_to": {"2026-03-07"}}
		st, body := call(t, f.h, "GET", f.trend(team)+"?"+q.Encode(), key, nil)
		if st != 200 || fmt.Sprint(dataOf(t, body)) != "[1 2 1]" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("debug=true returns the SQL and its parameters", func(t *testing.T) {
		st, body := call(t, f.h, "POST", f.trend(team)+"?debug=true", key, filter)
		if st != 200 {
			t.Fatalf("%d %v", st, body)
		}
		d, _ := body["debug"].(map[string]any)
		sql, _ := d["sql"].(string)
		params, _ := d["params"].(map[string]any)
		if !strings.Contains(sql, "FROM events AS e") || !strings.Contains(sql, "max_execution_time") || params["p0"] != "$pageview" {
			t.Fatalf("debug %v", d)
		}
	})
	t.Run("format=csv is one row per series", func(t *testing.T) {
		w := send(t, f, "POST", f.trend(team)+"?format=csv", key, `{"events": [{"id": "$pageview"}], "date_from": "2026-03-05", "date_to": "2026-03-07"}`)
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		rows, err := csv.NewReader(strings.NewReader(w.Body.String())).ReadAll()
		if err != nil || len(rows) != 2 || strings.Join(rows[0], ",") != "series,5-Mar-2026,6-Mar-2026,7-Mar-2026" ||
			strings.Join(rows[1], ",") != "$pageview,1,2,1" {
			t.Fatalf("%v %v", rows, err)
		}
	})

	bad := []struct {
		name, body, attr string
	}{
		{"an unknown math", `{"events": [{"id": "$pageview", "math": "mode"}]}`, "events"},
		{"a regex RE2 cannot compile", `{"events": [{"id": "$pageview"}], "properties": [{"key": "a", "value": "(?=x)", "operator": "regex"}]}`, "properties"},
		{"an unknown operator", `{"events": [{"id": "$pageview"}], "properties": [{"key": "a", "value": "x", "operator": "like"}]}`, "properties"},
		{"a formula with other characters", `{"events": [{"id": "$pageview"}], "formula": "A; DROP TABLE events"}`, "formula"},
		{"dates the wrong way round", `{"events": [{"id": "$pageview"}], "date_from": "2026-03-07", "date_to": "2026-03-01"}`, "date_from"},
		{"an unknown interval", `{"events": [{"id": "$pageview"}], "interval": "minute"}`, "interval"},
		{"no entities", `{"date_from": "-7d"}`, "events"},
		{"a body that is not an object", `[1, 2]`, "body"},
		{"a bad client_query_id", `{"events": [{"id": "$pageview"}], "client_query_id": "no spaces allowed"}`, "client_query_id"},
	}
	for _, tc := range bad {
		t.Run(tc.name+" is a 400 naming "+tc.attr, func(t *testing.T) {
			w := send(t, f, "POST", f.trend(team), key, tc.body)
			if w.Code != 400 || !strings.Contains(w.Body.String(), `"attr":"`+tc.attr+`"`) {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
		})
	}
	t.Run("a GET with a bad value is a 400 too", func(t *testing.T) {
		st, body := call(t, f.h, "GET", f.trend(team)+"?events=[{\"id\":\"x\"}]&date_from=yesterday", key, nil)
		if st != 400 || body["attr"] != "date_from" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("a key without insight:read is refused and another organization's project does not exist", func(t *testing.T) {
		if st, body := call(t, f.h, "POST", f.trend(team), f.key(t, "ada@example.com", "project:read"), filter); st != 403 {
			t.Fatalf("%d %v", st, body)
		}
		if st, body := call(t, f.h, "POST", f.trend(f.b.ProjectID), key, filter); st != 404 {
			t.Fatalf("%d %v", st, body)
		}
	})
}

func TestAnalysisEngineErrorsHaveTheirStatuses(t *testing.T) {
	for code, status := range map[int32]int{159: 504, 394: 499, 396: 400, 241: 503, 427: 400} {
		err := fmt.Errorf("query: %w", &chdb.Exception{Code: code, Message: "x"})
		if got := httpx.ToError(err).Kind.Status(); got != status {
			t.Errorf("code %d: status %d, want %d", code, got, status)
		}
	}
}

// slowEngine runs every trend statement as a long computation that keeps
// the statement's SETTINGS and runs under the caller's context (and so
// its query id), to show what the handler asks of the engine when an
// analysis runs long.
type slowEngine struct{ olap.Engine }

func (e slowEngine) Query(ctx context.Context, stmt querybuilder.Statement) (*olap.Rows, error) {
	if strings.Contains(stmt.SQL, "FROM events AS e") {
		settings := ""
		if i := strings.Index(stmt.SQL, "\nSETTINGS "); i >= 0 {
			settings = stmt.SQL[i:]
		}
		stmt = querybuilder.Statement{SQL: "SELECT count() FROM numbers(1e11) WHERE NOT ignore(sipHash64(number))" + settings}
	}
	return e.Engine.Query(ctx, stmt)
}

func TestLongTrendsCanBeCancelledAndTimeOut(t *testing.T) {
	f := newFixture(t)
	f.s.useEngine(slowEngine{engine})
	key, team := f.a.PersonalAPIKey, f.a.ProjectID

	// cancelled sends body to path under client_query_id id, cancels it
	// through insights/cancel once it runs, and wants the 499.
	cancelled := func(t *testing.T, path, body, id string) {
		t.Helper()
		done := make(chan int, 1)
		go func() {
			// send, not call: call may stop the test, which only the test's goroutine may do.
			done <- send(t, f, "POST", path, key, body).Code
		}()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, out := call(t, f.h, "POST", f.insights(team)+"cancel/", key, map[string]any{"client_query_id": id})
			if st != 201 {
				t.Fatalf("cancel: %d %v", st, out)
			}
			if out["cancelled"] == true {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never ran under its client_query_id", path)
			}
			time.Sleep(20 * time.Millisecond)
		}
		select {
		case st := <-done:
			if st != 499 {
				t.Fatalf("the cancelled request answered %d", st)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the cancelled request still runs")
		}
	}
	t.Run("insights/cancel with the client_query_id stops the trend: 499", func(t *testing.T) {
		cancelled(t, f.trend(team), `{"events": [{"id": "$pageview"}], "client_query_id": "slow-trend-1"}`, "slow-trend-1")
	})
	t.Run("insights/cancel with the client_query_id stops a HogQL query: 499", func(t *testing.T) {
		query := fmt.Sprintf("/api/projects/%d/query/", team)
		cancelled(t, query, `{"query": {"kind": "HogQLQuery", "query": "SELECT count() FROM events"}, "client_query_id": "slow-hogql-1"}`, "slow-hogql-1")
		st, out := call(t, f.h, "POST", query, key,
			map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT 1"}, "client_query_id": "no spaces allowed"})
		if st != 400 || out["attr"] != "client_query_id" {
			t.Fatalf("a bad client_query_id: %d %v", st, out)
		}
	})
	t.Run("a trend past max_execution_time answers 504", func(t *testing.T) {
		defer f.s.useLimits(f.s.cfg.Limits)
		l := f.s.cfg.Limits
		l.MaxExecutionTime = 1
		f.s.useLimits(l)
		start := time.Now()
		st, out := call(t, f.h, "POST", f.trend(team), key, map[string]any{"events": []any{map[string]any{"id": "$pageview"}}})
		if st != 504 || out["code"] != "query_timeout" {
			t.Fatalf("%d %v", st, out)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Fatalf("answered after %s", d)
		}
	})
}
