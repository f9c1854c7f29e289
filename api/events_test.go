package api

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func (f *fixture) events(projectID int64) string {
	return fmt.Sprintf("/api/projects/%d/events/", projectID)
}

// capture sends a batch to Ada's project through the capture endpoint.
func (f *fixture) capture(t *testing.T, events ...map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"api_key": f.a.ProjectAPIToken, "batch": events})
	r := httptest.NewRequest("POST", "/batch/", strings.NewReader(string(body)))
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("capture: %d %s", w.Code, w.Body)
	}
}

// eventList gets a page (a path, or a next link) and returns its events
// and next link.
func (f *fixture) eventList(t *testing.T, target string) ([]map[string]any, string) {
	t.Helper()
	target = strings.TrimPrefix(target, "http://insightd.test")
	st, body := call(t, f.h, "GET", target, f.a.PersonalAPIKey, nil)
	if st != 200 {
		t.Fatalf("GET %s: %d %v", target, st, body)
	}
	var out []map[string]any
	for _, e := range body["results"].([]any) {
		out = append(out, e.(map[string]any))
	}
	next, _ := body["next"].(string)
	return out, next
}

func eventNames(es []map[string]any) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e["event"].(string))
	}
	return out
}

func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const hostileText = `'); DROP TABLE events; -- \ "q" {p0:String} ünï` + "\t\x00🦔"

func TestEventsListFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	at := func(min int) string { return time.Date(2026, 4, 1, 10, min, 0, 0, time.UTC).Format(time.RFC3339) }
	f.capture(t,
		map[string]any{"event": "$pageview", "distinct_id": "anon-1", "timestamp": at(0), "properties": map[string]any{"$browser": "Firefox", "$elements_chain": "a:nth-child(1)"}},
		map[string]any{"event": "signup", "distinct_id": "anon-1", "timestamp": at(1), "properties": map[string]any{"plan": "pro"}},
		map[string]any{"event": "$identify", "distinct_id": "ada", "timestamp": at(2), "properties": map[string]any{"$anon_distinct_id": "anon-1"},
			"$set": map[string]any{"email": "ada@example.com"}},
		map[string]any{"event": "purchase", "distinct_id": "ada", "timestamp": at(3), "properties": map[string]any{"amount": 30}},
		map[string]any{"event": "$pageview", "distinct_id": "bob", "timestamp": at(4), "properties": map[string]any{"$browser": "Chrome"}},
		map[string]any{"event": hostileText, "distinct_id": hostileText, "timestamp": at(5), "properties": map[string]any{hostileText: hostileText}},
	)
	all, _ := f.eventList(t, f.events(f.a.ProjectID))
	if got := eventNames(all); !reflect.DeepEqual(got, []string{hostileText, "$pageview", "purchase", "$identify", "signup", "$pageview"}) {
		t.Fatalf("newest first: %q", got)
	}
	t.Run("an event carries PostHog's fields and its person as they are now", func(t *testing.T) {
		pv := all[len(all)-1]
		if !reflect.DeepEqual(keys(pv), []string{"distinct_id", "elements", "elements_chain", "event", "id", "person", "properties", "timestamp"}) {
			t.Fatalf("fields %v", keys(pv))
		}
		if pv["timestamp"] != "2026-04-01T10:00:00Z" || pv["elements_chain"] != "a:nth-child(1)" || pv["properties"].(map[string]any)["$browser"] != "Firefox" {
			t.Fatalf("%v", pv)
		}
		person := pv["person"].(map[string]any)
		if person["is_identified"] != true || person["properties"].(map[string]any)["email"] != "ada@example.com" {
			t.Fatalf("the anonymous pageview's person is Ada now: %v", person)
		}
	})
	ada := all[len(all)-1]["person"].(map[string]any)["uuid"].(string)
	st, cohort := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/cohorts/", f.a.ProjectID), f.a.PersonalAPIKey, map[string]any{"name": "Ada",
		"groups": []any{map[string]any{"properties": []any{map[string]any{"key": "email", "value": "ada@example.com", "type": "person"}}}}})
	if st != 201 {
		t.Fatalf("cohort: %d %v", st, cohort)
	}
	inCohort := fmt.Sprintf(`[{"key": "id", "type": "cohort", "value": %v}]`, cohort["id"])
	for _, tc := range []struct {
		name  string
		query url.Values
		want  []string
	}{
		{"by event", url.Values{"event": {"$pageview"}}, []string{"$pageview", "$pageview"}},
		{"by distinct_id", url.Values{"distinct_id": {"anon-1"}}, []string{"signup", "$pageview"}},
		{"by person, merged identities included", url.Values{"person_id": {ada}}, []string{"purchase", "$identify", "signup", "$pageview"}},
		{"by person in upper case", url.Values{"person_id": {strings.ToUpper(ada)}}, []string{"purchase", "$identify", "signup", "$pageview"}},
		{"by event property", url.Values{"properties": {`[{"key": "$browser", "value": "Chrome"}]`}}, []string{"$pageview"}},
		{"by person property", url.Values{"properties": {`[{"key": "email", "value": "ada@example.com", "type": "person"}]`}, "event": {"$pageview"}}, []string{"$pageview"}},
		{"by cohort", url.Values{"properties": {inCohort}, "event": {"$pageview"}}, []string{"$pageview"}},
		{"by a property group", url.Values{"properties": {`{"type": "OR", "values": [{"key": "plan", "value": "pro"}, {"key": "amount", "value": 20, "operator": "gt"}]}`}}, []string{"purchase", "signup"}},
		{"after is exclusive", url.Values{"after": {at(3)}}, []string{hostileText, "$pageview"}},
		{"before is exclusive", url.Values{"before": {at(1)}}, []string{"$pageview"}},
		{"after and before", url.Values{"after": {at(0)}, "before": {"2026-04-01T10:03:00"}}, []string{"$identify", "signup"}},
		{"a relative after", url.Values{"after": {"-1d"}}, []string{}},
		{"oldest first", url.Values{"orderBy": {`["timestamp"]`}, "limit": {"2"}}, []string{"$pageview", "signup"}},
		{"a hostile event name is data", url.Values{"event": {hostileText}}, []string{hostileText}},
		{"a hostile distinct_id is data", url.Values{"distinct_id": {hostileText}}, []string{hostileText}},
		{"a hostile property key and value are data", url.Values{"properties": {`[{"key": ` + jsonText(hostileText) + `, "value": ` + jsonText(hostileText) + `}]`}}, []string{hostileText}},
		{"an SQL fragment matches nothing", url.Values{"event": {"x' OR '1'='1"}}, []string{}},
		{"an unknown person matches nothing", url.Values{"person_id": {uuid.NewString()}}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := f.eventList(t, f.events(f.a.ProjectID)+"?"+tc.query.Encode())
			if names := eventNames(got); !reflect.DeepEqual(names, tc.want) {
				t.Fatalf("%q, want %q", names, tc.want)
			}
		})
	}
	for _, tc := range []struct{ query, attr string }{
		{"person_id=not-a-uuid", "person_id"}, {"after=yesterday", "after"}, {"before=2026-13-45", "before"},
		{"before_uuid=" + uuid.NewString(), "before_uuid"}, {"before=2026-04-01&before_uuid=x", "before_uuid"},
		{"orderBy=timestamp", "orderBy"}, {`orderBy=["event"]`, "orderBy"}, {"limit=0", "limit"}, {"limit=abc", "limit"},
		{"limit=-5", "limit"}, {"properties=[{", "properties"}, {`properties=[{"key": "x", "operator": "nope"}]`, "properties"},
		{`properties=[{"key": "x", "type": "cohort", "value": 987654}]`, "properties"},
		{`orderBy=["timestamp"]&before=2026-04-01&before_uuid=` + uuid.NewString(), "orderBy"},
	} {
		t.Run(tc.query+" is 400 naming "+tc.attr, func(t *testing.T) {
			st, body := call(t, f.h, "GET", f.events(f.a.ProjectID)+"?"+strings.ReplaceAll(tc.query, " ", "%20"), f.a.PersonalAPIKey, nil)
			if st != 400 || body["attr"] != tc.attr {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	t.Run("a limit above 1000 is 1000", func(t *testing.T) {
		got, next := f.eventList(t, f.events(f.a.ProjectID)+"?limit=5000")
		if len(got) != 6 || next != "" {
			t.Fatalf("%d %q", len(got), next)
		}
	})
}

// Export tools page by after/before: following next must give every
// event once, also when many share a timestamp and while new events
// arrive between pages.
func TestEventsListPagesNeitherSkipNorRepeat(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var sent []string
	var batch []map[string]any
	for i := range 57 {
		id := uuid.NewString()
		sent = append(sent, id)
		// Ten instants for 57 events: most pages end inside a run of equal timestamps.
		ts := base.Add(time.Duration(i%10) * time.Second).Format(time.RFC3339Nano)
		batch = append(batch, map[string]any{"event": "e", "distinct_id": fmt.Sprint("u", i%4), "uuid": id, "timestamp": ts})
	}
	f.capture(t, batch...)
	// Noise the filter leaves out.
	f.capture(t, map[string]any{"event": "other", "distinct_id": "u0", "timestamp": base.Add(5 * time.Second).Format(time.RFC3339)})
	for _, order := range []string{"", `["timestamp"]`} {
		t.Run("order "+order, func(t *testing.T) {
			q := url.Values{"event": {"e"}, "limit": {"7"}}
			if order != "" {
				q.Set("orderBy", order)
			}
			next := f.events(f.a.ProjectID) + "?" + q.Encode()
			var seen []string
			var times []time.Time
			pages := 0
			for next != "" {
				page, n := f.eventList(t, next)
				pages++
				if n != "" && !strings.HasPrefix(n, "http://insightd.test"+f.events(f.a.ProjectID)+"?") || n != "" && !strings.Contains(n, "event=e") {
					t.Fatalf("next %q must keep the path and the filters", n)
				}
				for _, e := range page {
					seen = append(seen, e["id"].(string))
					ts, _ := time.Parse(time.RFC3339Nano, e["timestamp"].(string))
					times = append(times, ts)
				}
				// Events arriving meanwhile, at the newest and the oldest instants.
				f.capture(t, map[string]any{"event": "e", "distinct_id": "late", "timestamp": base.Add(time.Hour).Format(time.RFC3339)},
					map[string]any{"event": "e", "distinct_id": "late", "timestamp": base.Add(-time.Hour).Format(time.RFC3339)})
				next = n
				if pages > 30 {
					t.Fatal("paging does not end")
				}
			}
			ordered := slices.IsSortedFunc(times, func(a, b time.Time) int {
				if order == "" {
					return b.Compare(a)
				}
				return a.Compare(b)
			})
			if !ordered {
				t.Fatalf("pages are not in order: %v", times)
			}
			counts := map[string]int{}
			for _, id := range seen {
				counts[id]++
				if counts[id] > 1 {
					t.Fatalf("event %s repeated", id)
				}
			}
			for _, id := range sent {
				if counts[id] != 1 {
					t.Fatalf("event %s skipped (%d pages, %d events seen)", id, pages, len(seen))
				}
			}
		})
	}
}

func TestEventRetrieveAndAccess(t *testing.T) {
	f := newFixture(t)
	id := uuid.NewString()
	f.capture(t, map[string]any{"event": "signup", "distinct_id": "ada", "uuid": id, "timestamp": "2026-04-01T10:00:00.123456Z"})
	one := f.events(f.a.ProjectID) + id + "/"
	t.Run("an event is retrieved by its uuid", func(t *testing.T) {
		st, e := call(t, f.h, "GET", one, f.a.PersonalAPIKey, nil)
		if st != 200 || e["id"] != id || e["event"] != "signup" || e["timestamp"] != "2026-04-01T10:00:00.123456Z" {
			t.Fatalf("%d %v", st, e)
		}
		if st, _ := call(t, f.h, "GET", f.events(f.a.ProjectID)+strings.ToUpper(id), f.a.PersonalAPIKey, nil); st != 200 {
			t.Fatalf("upper case: %d", st)
		}
	})
	for _, tc := range []struct{ name, path, key string }{
		{"an unknown uuid", f.events(f.a.ProjectID) + uuid.NewString() + "/", f.a.PersonalAPIKey},
		{"a malformed uuid", f.events(f.a.ProjectID) + "1%27%20OR%201=1/", f.a.PersonalAPIKey},
		{"another organization's event", one, f.b.PersonalAPIKey},
		{"another organization's event through one's own project", f.events(f.b.ProjectID) + id + "/", f.b.PersonalAPIKey},
		{"another organization's event list", f.events(f.a.ProjectID), f.b.PersonalAPIKey},
	} {
		t.Run(tc.name+" is 404", func(t *testing.T) {
			if st, body := call(t, f.h, "GET", tc.path, tc.key, nil); st != 404 {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	for _, path := range []string{f.events(f.a.ProjectID), one} {
		t.Run(path+" needs event:read", func(t *testing.T) {
			st, body := call(t, f.h, "GET", path, f.key(t, "ada@example.com", "insight:read", "project:read"), nil)
			if st != 403 || !strings.Contains(body["detail"].(string), "event:read") {
				t.Fatalf("%d %v", st, body)
			}
			if st, _ := call(t, f.h, "GET", path, f.key(t, "ada@example.com", "event:read"), nil); st != 200 {
				t.Fatalf("with event:read: %d", st)
			}
		})
	}
}
