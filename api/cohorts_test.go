package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata"
)

// upload sends a multipart/form-data body: form fields and a csv file.
func upload(t *testing.T, h http.Handler, method, path, key string, fields map[string]string, csv string) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := w.CreateFormFile("csv", "people.csv")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte(csv))
	w.Close()
	r := httptest.NewRequest(method, path, &buf)
	r.Header.Set("Content-Type", w.FormDataContentType())
	r.Host = "insightd.test"
	r.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %d %q", method, path, rec.Code, rec.Body)
	}
	return rec.Code, out
}

func TestCohortsAPI(t *testing.T) {
	env := newFunnelEnv(t)
	now := time.Now().UTC()
	p := env.project(t, cohortEvents(now))
	other := env.project(t, nil)
	base := fmt.Sprintf("/api/projects/%d/cohorts/", p.id)
	key := p.key
	proGroups := []any{map[string]any{"properties": []any{map[string]any{"key": "plan", "value": "pro", "type": "person"}}}}
	count := func() float64 {
		st, out := call(t, env.h, "GET", base, key, nil)
		if st != 200 {
			t.Fatalf("list: %d %v", st, out)
		}
		return out["count"].(float64)
	}

	st, created := call(t, env.h, "POST", base, key, map[string]any{"name": "Pro", "description": "Paying", "groups": proGroups})
	if st != http.StatusCreated || created["name"] != "Pro" || created["is_static"] != false || created["deleted"] != false ||
		created["is_calculating"] != true || created["count"] != nil || created["last_calculation"] != nil {
		t.Fatalf("create: %d %v", st, created)
	}
	id := int64(created["id"].(float64))
	path := fmt.Sprintf("%s%d/", base, id)

	t.Run("calculated: count, is_calculating and last_calculation", func(t *testing.T) {
		co := p.waitCohort(t, id, 1)
		last, err := time.Parse(time.RFC3339Nano, fmt.Sprint(co["last_calculation"]))
		if co["count"] != float64(2) || co["is_calculating"] != false || err != nil || time.Since(last) > time.Minute {
			t.Fatalf("%v", co)
		}
	})
	t.Run("retrieve, PATCH and PUT", func(t *testing.T) {
		if st, out := call(t, env.h, "GET", path, key, nil); st != 200 || out["id"] != created["id"] || out["description"] != "Paying" {
			t.Fatalf("retrieve: %d %v", st, out)
		}
		if st, out := call(t, env.h, "PATCH", path, key, map[string]any{"name": "Pro plan"}); st != 200 || out["name"] != "Pro plan" || out["version"] != float64(1) {
			t.Fatalf("rename (no recalculation): %d %v", st, out)
		}
		free := []any{map[string]any{"properties": []any{map[string]any{"key": "plan", "value": "free", "type": "person"}}}}
		st, out := call(t, env.h, "PUT", path, key, map[string]any{"name": "Free plan", "groups": free})
		if st != 200 || out["name"] != "Free plan" || out["is_calculating"] != true {
			t.Fatalf("put: %d %v", st, out)
		}
		if co := p.waitCohort(t, id, 2); co["count"] != float64(2) { // c and d
			t.Fatalf("after put: %v", co)
		}
	})
	t.Run("list paginated, newest first", func(t *testing.T) {
		for _, name := range []string{"Second", "Third"} {
			if st, out := call(t, env.h, "POST", base, key, map[string]any{"name": name, "groups": proGroups}); st != 201 {
				t.Fatalf("%d %v", st, out)
			}
		}
		st, out := call(t, env.h, "GET", base+"?limit=2", key, nil)
		results, _ := out["results"].([]any)
		if st != 200 || out["count"] != float64(3) || len(results) != 2 || out["next"] == nil ||
			results[0].(map[string]any)["name"] != "Third" {
			t.Fatalf("page 1: %d %v", st, out)
		}
		st, out = call(t, env.h, "GET", base+"?limit=2&offset=2", key, nil)
		results, _ = out["results"].([]any)
		if st != 200 || len(results) != 1 || out["next"] != nil || results[0].(map[string]any)["id"] != created["id"] {
			t.Fatalf("page 2: %d %v", st, out)
		}
	})
	t.Run("static from persons; members paginated", func(t *testing.T) {
		st, out := call(t, env.h, "POST", base, key, map[string]any{"name": "Listed", "is_static": true, "persons": []string{"a", "b", "c", "nobody"}})
		if st != 201 || out["is_static"] != true {
			t.Fatalf("%d %v", st, out)
		}
		sid := int64(out["id"].(float64))
		if co := p.waitCohort(t, sid, 1); co["count"] != float64(3) { // nobody has no person
			t.Fatalf("%v", co)
		}
		st, out = call(t, env.h, "GET", fmt.Sprintf("%s%d/persons/?limit=2", base, sid), key, nil)
		results, _ := out["results"].([]any)
		if st != 200 || len(results) != 2 || out["next"] == nil {
			t.Fatalf("page 1: %d %v", st, out)
		}
		seen := map[string]bool{}
		for _, off := range []int{0, 2} {
			_, out = call(t, env.h, "GET", fmt.Sprintf("%s%d/persons/?limit=2&offset=%d", base, sid, off), key, nil)
			for _, r := range out["results"].([]any) {
				for _, d := range r.(map[string]any)["distinct_ids"].([]any) {
					seen[d.(string)] = true
				}
			}
		}
		if len(seen) != 3 || !seen["a"] || !seen["b"] || !seen["c"] {
			t.Fatalf("members: %v", seen)
		}
		if _, out = call(t, env.h, "GET", fmt.Sprintf("%s%d/persons/?offset=1000", base, sid), key, nil); out["count"] != float64(3) ||
			len(out["results"].([]any)) != 0 || out["next"] != nil {
			t.Fatalf("past the end: %v", out)
		}
		// Persons added by PATCH join at the next calculation.
		if st, out := call(t, env.h, "PATCH", fmt.Sprintf("%s%d/", base, sid), key, map[string]any{"persons": []string{"d"}}); st != 200 || out["is_calculating"] != true {
			t.Fatalf("add d: %d %v", st, out)
		}
		if co := p.waitCohort(t, sid, 2); co["count"] != float64(4) {
			t.Fatalf("%v", co)
		}
	})
	t.Run("static from a csv upload", func(t *testing.T) {
		st, out := upload(t, env.h, "POST", base, key, map[string]string{"name": "Uploaded"}, "email,distinct_id\nx@y.z,a\n,e\n\"q\",a\n")
		if st != 201 || out["is_static"] != true || out["name"] != "Uploaded" {
			t.Fatalf("%d %v", st, out)
		}
		if co := p.waitCohort(t, int64(out["id"].(float64)), 1); co["count"] != float64(2) { // a, e; a twice
			t.Fatalf("%v", co)
		}
		// The first column when no header names distinct_id.
		st, out = upload(t, env.h, "POST", base, key, map[string]string{"name": "Bare"}, "b\nc\n")
		if st != 201 {
			t.Fatalf("%d %v", st, out)
		}
		if co := p.waitCohort(t, int64(out["id"].(float64)), 1); co["count"] != float64(2) {
			t.Fatalf("%v", co)
		}
	})
	t.Run("a csv with a bad row is a 400 naming the line; nothing is stored", func(t *testing.T) {
		before := count()
		for name, tc := range map[string]struct{ csv, says string }{
			"an empty id":       {"distinct_id\na\n\nb\n   \n", "Line 5"},
			"a short row":       {"name,distinct_id\nx,a\ny\n", "Line 3"},
			"a broken quote":    {"distinct_id\na\n\"b\n", "Line 3"},
			"an id too long":    {"distinct_id\na\nb\n" + strings.Repeat("x", 201) + "\n", "Line 4"},
			"no ids at all":     {"distinct_id\n", "no distinct ids"},
			"a NUL in an id":    {"distinct_id\na\x00b\n", "Line 2"},
			"invalid UTF-8 row": {"distinct_id\nok\n\xff\xfe\n", "Line 3"},
		} {
			t.Run(name, func(t *testing.T) {
				st, out := upload(t, env.h, "POST", base, key, map[string]string{"name": "Bad"}, tc.csv)
				if st != 400 || out["attr"] != "csv" || !strings.Contains(fmt.Sprint(out["detail"]), tc.says) {
					t.Fatalf("%d %v", st, out)
				}
			})
		}
		if after := count(); after != before {
			t.Fatalf("%v cohorts after bad uploads, %v before", after, before)
		}
	})
	t.Run("every definition is checked, naming the field", func(t *testing.T) {
		behavioural := map[string]any{"type": "behavioral", "key": "purchase", "value": "performed_event", "time_value": 7, "time_interval": "day"}
		props := func(conds ...any) map[string]any {
			return map[string]any{"properties": map[string]any{"type": "AND", "values": conds}}
		}
		before := count()
		for name, tc := range map[string]struct {
			body map[string]any
			attr string
			says string
		}{
			"no name":                          {map[string]any{"groups": proGroups}, "name", "required"},
			"no definition":                    {map[string]any{"name": "x"}, "filters", "dynamic cohort needs"},
			"empty groups":                     {map[string]any{"name": "x", "groups": []any{}}, "groups", "no conditions"},
			"a group without conditions":       {map[string]any{"name": "x", "groups": []any{map[string]any{"properties": []any{}}}}, "groups", "group 0"},
			"a legacy action group":            {map[string]any{"name": "x", "groups": []any{map[string]any{"action_id": 3, "days": 7}}}, "groups", "not supported"},
			"empty filters":                    {map[string]any{"name": "x", "filters": props()}, "filters", "no conditions"},
			"PostHog's empty editor":           {map[string]any{"name": "x", "filters": props(map[string]any{"type": "AND", "values": []any{}})}, "filters", "no conditions"},
			"an event condition":               {map[string]any{"name": "x", "filters": props(map[string]any{"key": "$browser", "value": "Chrome", "type": "event"})}, "filters", "not event properties"},
			"a session condition":              {map[string]any{"name": "x", "groups": []any{map[string]any{"properties": []any{map[string]any{"key": "$session_duration", "value": 5, "operator": "gt", "type": "session"}}}}}, "groups", "not session properties"},
			"an event condition beside others": {map[string]any{"name": "x", "filters": props(behavioural, map[string]any{"key": "a", "value": "b", "type": "event"})}, "filters", "not event"},
			"a NUL in groups":                  {map[string]any{"name": "x", "groups": []any{map[string]any{"properties": []any{map[string]any{"key": "plan", "value": "p\x00ro", "type": "person"}}}}}, "groups", "NUL"},
			"a NUL in filters":                 {map[string]any{"name": "x", "filters": props(map[string]any{"key": "pl\x00an", "value": "pro", "type": "person"})}, "filters", "NUL"},
			"a bad operator":                   {map[string]any{"name": "x", "filters": props(map[string]any{"key": "plan", "operator": "sounds_like", "type": "person"})}, "filters", "operator"},
			"a behaviour without a window":     {map[string]any{"name": "x", "filters": props(map[string]any{"type": "behavioral", "key": "purchase", "value": "performed_event"})}, "filters", "time_value"},
			"an action's behaviour":            {map[string]any{"name": "x", "filters": props(map[string]any{"type": "behavioral", "key": 12, "event_type": "actions", "value": "performed_event", "time_value": 1, "time_interval": "day"})}, "filters", "event_type"},
			"an unknown behaviour":             {map[string]any{"name": "x", "filters": props(map[string]any{"type": "behavioral", "key": "purchase", "value": "stopped_performing_event", "time_value": 1, "time_interval": "day"})}, "filters", "performed_event"},
			"a count that is not one":          {map[string]any{"name": "x", "filters": props(map[string]any{"type": "behavioral", "key": "purchase", "value": "performed_event_multiple", "operator": "gte", "operator_value": "many", "time_value": 1, "time_interval": "day"})}, "filters", "operator_value"},
			"a cohort that does not exist":     {map[string]any{"name": "x", "filters": props(map[string]any{"type": "cohort", "key": "id", "value": 987654})}, "filters", "cohort 987654"},
			"groups not a list":                {map[string]any{"name": "x", "groups": "pro"}, "groups", "list"},
			"persons not a list":               {map[string]any{"name": "x", "is_static": true, "persons": "a"}, "persons", "list"},
			"an empty distinct id":             {map[string]any{"name": "x", "is_static": true, "persons": []string{"a", ""}}, "persons", "persons[1]"},
		} {
			t.Run(name, func(t *testing.T) {
				st, out := call(t, env.h, "POST", base, key, tc.body)
				if st != 400 || out["attr"] != tc.attr || !strings.Contains(fmt.Sprint(out["detail"]), tc.says) {
					t.Fatalf("%d %v", st, out)
				}
			})
		}
		if after := count(); after != before {
			t.Fatalf("%v cohorts after refusals, %v before", after, before)
		}
		t.Run("on update too: itself, a change of kind, persons in a dynamic cohort, NUL", func(t *testing.T) {
			for name, tc := range map[string]struct {
				body map[string]any
				attr string
			}{
				"itself":             {map[string]any{"filters": props(map[string]any{"type": "cohort", "key": "id", "value": id})}, "filters"},
				"static":             {map[string]any{"is_static": true}, "is_static"},
				"persons":            {map[string]any{"persons": []string{"a"}}, "persons"},
				"a NUL":              {map[string]any{"groups": []any{map[string]any{"properties": []any{map[string]any{"key": "plan", "value": "\x00", "type": "person"}}}}}, "groups"},
				"an event condition": {map[string]any{"groups": []any{map[string]any{"properties": []any{map[string]any{"key": "plan", "value": "x", "type": "event"}}}}}, "groups"},
				"no conditions":      {map[string]any{"groups": []any{}}, "groups"},
			} {
				st, out := call(t, env.h, "PATCH", path, key, tc.body)
				if st != 400 || out["attr"] != tc.attr {
					t.Errorf("%s: %d %v", name, st, out)
				}
			}
		})
	})
	t.Run("a cohort naming a behavioural cohort is accepted", func(t *testing.T) {
		st, out := call(t, env.h, "POST", base, key, map[string]any{"name": "Buyers", "filters": map[string]any{"properties": []any{
			map[string]any{"type": "behavioral", "key": "purchase", "value": "performed_event", "time_value": 7, "time_interval": "day"}}}})
		if st != 201 {
			t.Fatalf("%d %v", st, out)
		}
		buyers := int64(out["id"].(float64))
		p.waitCohort(t, buyers, 1)
		st, out = call(t, env.h, "POST", base, key, map[string]any{"name": "Pro buyers", "filters": map[string]any{"properties": []any{
			map[string]any{"type": "cohort", "key": "id", "value": buyers},
			map[string]any{"type": "person", "key": "plan", "value": "pro"}}}})
		if st != 201 {
			t.Fatalf("%d %v", st, out)
		}
		if co := p.waitCohort(t, int64(out["id"].(float64)), 1); co["count"] != float64(2) { // a, b
			t.Fatalf("%v", co)
		}
	})
	t.Run("calculate/ asks for a recalculation", func(t *testing.T) {
		st, out := call(t, env.h, "POST", path+"calculate/", key, nil)
		if st != http.StatusAccepted || out["is_calculating"] != true {
			t.Fatalf("%d %v", st, out)
		}
		p.waitCohort(t, id, 3)
	})
	t.Run("a cohort naming one deleted since can be renamed and deleted", func(t *testing.T) {
		st, inner := call(t, env.h, "POST", base, key, map[string]any{"name": "Inner", "groups": proGroups})
		if st != http.StatusCreated {
			t.Fatalf("%d %v", st, inner)
		}
		outerFilters := map[string]any{"properties": map[string]any{"type": "AND", "values": cohortCond(int64(inner["id"].(float64)), false)}}
		st, outer := call(t, env.h, "POST", base, key, map[string]any{"name": "Outer", "filters": outerFilters})
		if st != http.StatusCreated {
			t.Fatalf("%d %v", st, outer)
		}
		outerPath := fmt.Sprintf("%s%v/", base, outer["id"])
		if st, out := call(t, env.h, "PATCH", fmt.Sprintf("%s%v/", base, inner["id"]), key, map[string]any{"deleted": true}); st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		// PostHog's editor saves the whole cohort, its definition as read.
		for _, change := range []map[string]any{{"name": "Outer, renamed"}, {"name": "Outer again", "filters": outer["filters"]}, {"deleted": true}} {
			if st, out := call(t, env.h, "PATCH", outerPath, key, change); st != 200 {
				t.Fatalf("%v: %d %v", change, st, out)
			}
		}
	})
	t.Run("soft delete: 404 after, an insight naming it is a 400, restore", func(t *testing.T) {
		if st, _ := call(t, env.h, "DELETE", path, key, nil); st != http.StatusMethodNotAllowed {
			t.Fatalf("hard delete: %d", st)
		}
		before := count()
		if st, out := call(t, env.h, "PATCH", path, key, map[string]any{"deleted": true}); st != 200 || out["deleted"] != true {
			t.Fatalf("soft delete: %d %v", st, out)
		}
		for _, sub := range []string{"", "persons/"} {
			if st, _ := call(t, env.h, "GET", path+sub, key, nil); st != 404 {
				t.Fatalf("deleted %s: %d", sub, st)
			}
		}
		if after := count(); after != before-1 {
			t.Fatalf("listed after delete: %v, before %v", after, before)
		}
		if st, out := call(t, env.h, "PATCH", path, key, map[string]any{"name": "Ghost"}); st != 404 {
			t.Fatalf("patch of a deleted cohort: %d %v", st, out)
		}
		p.wantInvalid(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "properties": cohortCond(id, false)}, "properties")
		if st, out := call(t, env.h, "PATCH", path, key, map[string]any{"deleted": false}); st != 200 || out["deleted"] != false {
			t.Fatalf("restore: %d %v", st, out)
		}
		if after := count(); after != before {
			t.Fatalf("listed after restore: %v, before %v", after, before)
		}
		st, out := call(t, env.h, "GET", path+"activity/", key, nil)
		if st != 200 || out["count"].(float64) < 4 { // created, updated..., deleted, restored
			t.Fatalf("activity: %d %v", st, out)
		}
	})
	t.Run("scopes and other organizations", func(t *testing.T) {
		scoped := func(scopes ...string) string {
			k, err := env.s.store.CreateKey(context.Background(), "funnel1@example.com", "test", scopes, metadata.KeyScope{})
			if err != nil {
				t.Fatal(err)
			}
			return k.Key
		}
		readOnly := scoped("cohort:read", "person:read")
		if st, _ := call(t, env.h, "GET", path, readOnly, nil); st != 200 {
			t.Fatalf("read with cohort:read: %d", st)
		}
		if st, _ := call(t, env.h, "GET", path+"persons/", readOnly, nil); st != 200 {
			t.Fatalf("persons with cohort:read and person:read: %d", st)
		}
		if st, _ := call(t, env.h, "GET", base, readOnly, nil); st != 200 {
			t.Fatalf("list with cohort:read: %d", st)
		}
		for name, req := range map[string][2]string{"create": {"POST", base}, "patch": {"PATCH", path}, "calculate": {"POST", path + "calculate/"}} {
			if st, _ := call(t, env.h, req[0], req[1], readOnly, map[string]any{"name": "y", "groups": proGroups}); st != 403 {
				t.Errorf("%s with cohort:read: %d", name, st)
			}
		}
		if st, _ := call(t, env.h, "GET", path+"persons/", scoped("cohort:read"), nil); st != 403 {
			t.Fatalf("persons without person:read: %d", st)
		}
		if st, _ := call(t, env.h, "GET", path, scoped("insight:read"), nil); st != 403 {
			t.Fatalf("read without cohort:read: %d", st)
		}
		writer := scoped("cohort:write")
		if st, out := call(t, env.h, "PATCH", path, writer, map[string]any{"description": "by a writer"}); st != 200 {
			t.Fatalf("patch with cohort:write: %d %v", st, out)
		}
		if st, _ := call(t, env.h, "GET", path, other.key, nil); st != 404 {
			t.Fatalf("another organization's cohort: %d", st)
		}
		otherPath := fmt.Sprintf("/api/projects/%d/cohorts/%d/", other.id, id)
		for _, m := range []string{"GET", "PATCH"} {
			if st, _ := call(t, env.h, m, otherPath, other.key, map[string]any{"name": "mine"}); st != 404 {
				t.Fatalf("%s the cohort through another project: %d", m, st)
			}
		}
		if st, _ := call(t, env.h, "GET", otherPath+"persons/", other.key, nil); st != 404 {
			t.Fatalf("members through another project: %d", st)
		}
		// A cohort of another project is unknown in this one's analyses.
		oc := other.cohortOf(t, map[string]any{"name": "Theirs", "is_static": true, "persons": []string{uuid.NewString()}})
		p.wantInvalid(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "properties": cohortCond(oc, false)}, "properties")
	})
}

// A numeric distinct id in a static cohort's persons is its JSON text, as
// capture stores it: it was formatted through float64 (12345678901234567890
// became 12345678901234567168, 123.5 became 123.500000).
func TestStaticCohortPersonsKeepNumericDistinctIDs(t *testing.T) {
	got, err := distinctIDList(json.RawMessage(`[12345678901234567890, 123.5, 7, "a"]`))
	if err != nil || fmt.Sprint(got) != "[12345678901234567890 123.5 7 a]" {
		t.Fatalf("%v %v", got, err)
	}
}
