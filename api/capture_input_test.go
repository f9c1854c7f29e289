package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder"
)

// Each case was seen to lose a whole batch from a real client: an empty
// string stands for a field that is not there, as PostHog reads it.
func TestCaptureTakesEmptyFieldsAsAbsent(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	cases := []struct {
		name string
		ev   string // an event's JSON, after "event"
		// batch holds extra top-level fields of the batch.
		batch string
		// at is when the event must be stored: zero means now.
		at time.Time
	}{
		{name: "an empty uuid gets a generated one, as the Go SDK sends it", ev: `"uuid": ""`},
		{name: "an empty timestamp means now", ev: `"timestamp": ""`},
		{name: "an empty sent_at means none", ev: `"timestamp": "2026-02-03T04:05:06Z", "sent_at": ""`, at: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)},
		{name: "an empty batch sent_at means none", ev: `"timestamp": "2026-02-03T04:05:06Z"`, batch: `"sent_at": "",`, at: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)},
		{name: "an empty offset means none", ev: `"offset": ""`},
		{name: "a null offset means none", ev: `"offset": null`},
		{name: "null properties are no properties", ev: `"properties": null`},
		{name: "a null $set is no update", ev: `"$set": null, "$set_once": null`},
		{name: "a null $set in properties is no update", ev: `"properties": {"$set": null, "$set_once": null, "$unset": null}`},
		{name: "an empty top-level distinct_id gives way to properties.distinct_id", ev: `"distinct_id": "", "properties": {"distinct_id": "d-props"}`},
		{name: "an $identify with an empty $anon_distinct_id merges nothing", ev: `"properties": {"$anon_distinct_id": ""}`},
		{name: "every empty field at once", ev: `"uuid": "", "timestamp": "", "sent_at": "", "offset": "", "properties": null, "$set": null`},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "absent-" + string(rune('a'+i))
			if strings.Contains(tc.ev, "$anon_distinct_id") {
				name = "$identify"
			}
			ev := `{"event": "` + name + `", "distinct_id": "d1", ` + tc.ev + `}`
			if strings.Contains(tc.ev, `"distinct_id": ""`) {
				ev = `{"event": "` + name + `", ` + tc.ev + `}`
			}
			body := `{"api_key": "` + f.token + `", ` + tc.batch + ` "batch": [` + ev + `]}`
			before := time.Now().UTC()
			code, resp := f.send(t, req{path: "/batch/", body: []byte(body)})
			if code != http.StatusOK {
				t.Fatalf("want 200, got %d %v", code, resp)
			}
			rows, err := engine.Query(context.Background(), querybuilder.Statement{
				SQL:    "SELECT uuid, timestamp, distinct_id FROM events WHERE team_id = {team:Int64} AND event = {e:String}",
				Params: obj{"team": f.team, "e": name}})
			if err != nil || len(rows.Data) != 1 {
				t.Fatalf("want the event stored once: %v %v", err, rows)
			}
			if id, _ := uuid.Parse(rows.Data[0][0].(string)); id == uuid.Nil {
				t.Fatalf("no uuid was generated: %v", rows.Data[0])
			}
			stored := rows.Data[0][1].(time.Time)
			if tc.at.IsZero() {
				if stored.Before(before.Add(-time.Second)) || stored.After(time.Now().Add(time.Second)) {
					t.Fatalf("stored at %s, want now", stored)
				}
			} else if !stored.Equal(tc.at) {
				t.Fatalf("stored at %s, want %s", stored, tc.at)
			}
			if strings.Contains(tc.ev, "d-props") && rows.Data[0][2] != "d-props" {
				t.Fatalf("distinct_id %v, want the one in properties", rows.Data[0][2])
			}
		})
	}
	t.Run("an empty event name is still refused", func(t *testing.T) {
		code, body := f.send(t, req{path: "/batch/", body: []byte(`{"api_key": "` + f.token + `", "batch": [{"event": "", "distinct_id": "d"}]}`)})
		if code != 400 || body["attr"] != "batch[0].event" {
			t.Fatalf("%d %v", code, body)
		}
	})
}

// Invalid UTF-8 and lone surrogate escapes made ClickHouse read every
// property of the event as missing; now only the string that held them
// changes, to U+FFFD.
func TestCaptureCleansTextTheEngineCannotRead(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	cases := []struct {
		name, raw, want string // raw: the JSON text of the bad value; want: what is stored
	}{
		{"a byte that is not UTF-8", "\"bad\xffbyte\"", "bad\ufffdbyte"},
		{"a truncated UTF-8 sequence", "\"cut\xe2\x82\"", "cut\ufffd\ufffd"},
		{"a lone high surrogate escape", `"lone\ud800"`, "lone\ufffd"},
		{"a lone low surrogate escape", `"\udc00low"`, "\ufffdlow"},
		{"two high surrogates", `"\uD83D\uD83D"`, "\ufffd\ufffd"},
		{"a surrogate pair stays", `"pair \ud83e\udd94"`, "pair 🦔"},
		{"an escaped backslash before u is no escape", `"\\ud800"`, `\ud800`},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "clean-" + string(rune('a'+i))
			body := `{"api_key": "` + f.token + `", "batch": [{"event": "` + name + `", "distinct_id": "d",
				"properties": {"bad": ` + tc.raw + `, "nested": {"k": ` + tc.raw + `}, "$browser": "Firefox", "plan": "pro"}}]}`
			if code, resp := f.send(t, req{path: "/batch/", body: []byte(body)}); code != 200 {
				t.Fatalf("want 200, got %d %v", code, resp)
			}
			rows, err := engine.Query(context.Background(), querybuilder.Statement{
				SQL: `SELECT JSONExtractString(properties, 'bad'), JSONExtractString(properties, 'nested', 'k'),
					JSONExtractString(properties, 'plan'), mat_browser FROM events WHERE team_id = {team:Int64} AND event = {e:String}`,
				Params: obj{"team": f.team, "e": name}})
			if err != nil || len(rows.Data) != 1 {
				t.Fatalf("%v %v", err, rows)
			}
			got := rows.Data[0]
			if got[0] != tc.want || got[1] != tc.want || got[2] != "pro" || got[3] != "Firefox" {
				t.Fatalf("stored %q, want %q and the other properties intact", got, tc.want)
			}
		})
	}
	t.Run("an event name and distinct id that are not UTF-8 are stored with U+FFFD", func(t *testing.T) {
		body := "{\"api_key\": \"" + f.token + "\", \"batch\": [{\"event\": \"ev\xff\", \"distinct_id\": \"who\\udc00\"}]}"
		if code, resp := f.send(t, req{path: "/batch/", body: []byte(body)}); code != 200 {
			t.Fatalf("want 200, got %d %v", code, resp)
		}
		if n := f.count(t, " AND event = {e:String} AND distinct_id = {d:String}", obj{"e": "ev\ufffd", "d": "who\ufffd"}); n != 1 {
			t.Fatalf("found %d", n)
		}
	})
	t.Run("a person property that is not UTF-8 leaves the person readable", func(t *testing.T) {
		body := "{\"api_key\": \"" + f.token + "\", \"batch\": [{\"event\": \"$identify\", \"distinct_id\": \"utf-person\", " +
			"\"$set\": {\"name\": \"A\xffB\", \"plan\": \"pro\"}}]}"
		if code, resp := f.send(t, req{path: "/batch/", body: []byte(body)}); code != 200 {
			t.Fatalf("want 200, got %d %v", code, resp)
		}
		rows, err := engine.Query(context.Background(), querybuilder.Statement{
			SQL: `SELECT JSONExtractString(argMax(properties, version), 'plan'), JSONExtractString(argMax(properties, version), 'name')
				FROM persons WHERE team_id = {team:Int64} GROUP BY id
				HAVING JSONHas(argMax(properties, version), 'name')`, Params: obj{"team": f.team}})
		if err != nil || len(rows.Data) != 1 || rows.Data[0][0] != "pro" || rows.Data[0][1] != "A\ufffdB" {
			t.Fatalf("%v %v", err, rows)
		}
	})
}

func TestCaptureRefusesMalformedTokensWith401(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	ev := `{"event": "e", "distinct_id": "d"}`
	cases := []struct {
		name  string
		body  string
		query string
	}{
		{"a NUL in api_key", `{"api_key": "phc_\u0000x", "batch": [` + ev + `]}`, ""},
		{"a NUL alone", `{"api_key": "\u0000", "batch": [` + ev + `]}`, ""},
		{"a control character", `{"api_key": "phc_\u0007", "batch": [` + ev + `]}`, ""},
		{"a token of 10 000 characters", `{"api_key": "` + strings.Repeat("a", 10000) + `", "batch": [` + ev + `]}`, ""},
		{"a NUL in the token query parameter", `{"batch": [` + ev + `]}`, "token=phc_%00"},
		{"a token that is not UTF-8", "{\"token\": \"phc_\xff\", \"batch\": [" + ev + "]}", ""},
		{"a NUL in an event's token property", `{"batch": [{"event": "e", "distinct_id": "d", "properties": {"token": "\u0000"}}]}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is 401", func(t *testing.T) {
			code, body := f.send(t, req{path: "/batch/", query: tc.query, body: []byte(tc.body)})
			if code != http.StatusUnauthorized || body["code"] != "invalid_api_key" {
				t.Fatalf("want 401 invalid_api_key, got %d %v", code, body)
			}
		})
	}
	if n := f.count(t, "", nil); n != 0 {
		t.Fatalf("%d events stored", n)
	}
}

// A browser reads no answer without CORS headers: the SDK would report a
// network failure instead of the status. Every capture-side answer,
// errors included, carries them.
func TestCaptureSideAnswersCarryCORSHeaders(t *testing.T) {
	cfg := testConfig()
	f := newCaptureFixture(t, cfg)
	good := []byte(`{"api_key": "` + f.token + `", "batch": [{"event": "e", "distinct_id": "d"}]}`)
	cases := []struct {
		name, method, path string
		body               []byte
		header             map[string]string
		status             int
	}{
		{"a stored batch", "POST", "/batch/", good, nil, 200},
		{"a bad batch", "POST", "/e/", []byte(`{"batch": [`), nil, 400},
		{"an unknown token", "POST", "/i/v0/e/", []byte(`{"api_key": "phc_nope", "event": "e", "distinct_id": "d"}`), nil, 401},
		{"a body over the limit", "POST", "/batch/", bytes.Repeat([]byte("x"), int(cfg.BodyLimit)+1), nil, 413},
		{"a truncated gzip body", "POST", "/batch/", gz(t, good)[:20], map[string]string{"Content-Encoding": "gzip"}, 400},
		{"a method capture does not take", "GET", "/batch/", nil, nil, 405},
		{"a path that does not exist", "POST", "/s/", []byte(`{}`), nil, 404},
		{"flags", "POST", "/flags/?v=2", []byte(`{"token": "` + f.token + `", "distinct_id": "d"}`), nil, 200},
		{"flags with an unknown token", "POST", "/flags/", []byte(`{"token": "phc_nope"}`), nil, 401},
		{"remote config", "GET", "/array/" + f.token + "/config", nil, nil, 200},
		{"remote config of an unknown token", "GET", "/array/phc_nope/config.js", nil, nil, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name+" answers "+http.StatusText(tc.status)+" with CORS headers", func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.path, bytes.NewReader(tc.body))
			r.Header.Set("Origin", "https://shop.example")
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			f.h.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if w.Header().Get("Access-Control-Allow-Origin") != "https://shop.example" || w.Header().Get("Access-Control-Allow-Credentials") != "true" {
				t.Fatalf("no CORS headers: %v", w.Header())
			}
		})
	}
	t.Run("a preflight of any capture-side path is answered", func(t *testing.T) {
		for _, path := range []string{"/batch/", "/flags/", "/decide/", "/array/x/config", "/s/"} {
			r := httptest.NewRequest(http.MethodOptions, path, nil)
			r.Header.Set("Origin", "https://shop.example")
			r.Header.Set("Access-Control-Request-Headers", "content-type")
			w := httptest.NewRecorder()
			f.h.ServeHTTP(w, r)
			if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://shop.example" ||
				!strings.Contains(w.Header().Get("Access-Control-Allow-Methods"), "POST") ||
				w.Header().Get("Access-Control-Allow-Headers") != "content-type" {
				t.Fatalf("%s: %d %v", path, w.Code, w.Header())
			}
		}
	})
	t.Run("a request without an Origin gets the wildcard", func(t *testing.T) {
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, httptest.NewRequest("GET", "/array/"+f.token+"/config", nil))
		if w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%v", w.Header())
		}
	})
	t.Run("the personal-key API does not answer browsers", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/api/projects/", nil)
		r.Header.Set("Origin", "https://shop.example")
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%v", w.Header())
		}
	})
}

// Without a token of the batch's own, an event carrying another token
// than the others is refused with its batch, naming it: stored with them
// it landed in the first token's project, the wrong one for it. The same
// token on every event, or on some, is one project's batch; with the
// batch's own api_key, the events' token properties are not read.
func TestCaptureRefusesABatchOfTwoProjects(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	ev := func(token string) string {
		if token == "" {
			return `{"event": "e", "distinct_id": "d"}`
		}
		return `{"event": "e", "distinct_id": "d", "properties": {"token": "` + token + `"}}`
	}
	for _, tc := range []struct{ name, body, attr string }{
		{"events of two tokens", `{"batch": [` + ev(f.token) + `, ` + ev("phc_other") + `]}`, "batch[1]"},
		{"a bare list of two tokens", `[` + ev(f.token) + `, ` + ev("") + `, ` + ev("phc_other") + `]`, "batch[2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.send(t, req{path: "/batch/", body: []byte(tc.body)})
			if code != http.StatusBadRequest || body["attr"] != tc.attr {
				t.Fatalf("want 400 naming %s, got %d %v", tc.attr, code, body)
			}
		})
	}
	if n := f.count(t, "", nil); n != 0 {
		t.Fatalf("%d events stored", n)
	}
	code, body := f.send(t, req{path: "/batch/", body: []byte(`{"batch": [` + ev("") + `, ` + ev(f.token) + `, ` + ev(f.token) + `]}`)})
	if code != http.StatusOK {
		t.Fatalf("one token on some events: %d %v", code, body)
	}
	if n := f.count(t, "", nil); n != 3 {
		t.Fatalf("%d events stored, want 3", n)
	}
	// The batch's own api_key says whose events they are: a token
	// property of an event is then data, as in PostHog's capture.
	code, body = f.send(t, req{path: "/batch/", body: []byte(`{"api_key": "` + f.token + `", "batch": [` + ev("") + `, ` + ev("some-user-token") + `]}`)})
	if code != http.StatusOK {
		t.Fatalf("api_key and an event's token property: %d %v", code, body)
	}
	if n := f.count(t, "", nil); n != 5 {
		t.Fatalf("%d events stored, want 5", n)
	}
}

// Some clients send a form's base64 data with its '+' unescaped, which a
// form reads as a space; the batch was refused as not JSON.
func TestCaptureReadsFormBase64WithUnescapedPlus(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	raw := `{"api_key": "` + f.token + `", "batch": [{"event": "form-plus", "distinct_id": "d", "properties": {"x": "~~~>>>"}}]}`
	enc := base64.StdEncoding.EncodeToString([]byte(raw))
	if !strings.Contains(enc, "+") {
		t.Fatalf("the payload's base64 has no '+': %s", enc)
	}
	code, body := f.send(t, req{path: "/e/", body: []byte("data=" + enc),
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if code != http.StatusOK {
		t.Fatalf("%d %v", code, body)
	}
	if n := f.count(t, " AND event = 'form-plus' AND JSONExtractString(properties, 'x') = '~~~>>>'", nil); n != 1 {
		t.Fatalf("%d events stored", n)
	}
}

// A top-level $set (as posthog-python and posthog-go send identify) is
// folded into the properties without reading the others as Go values: a
// number past 2^53 came back rounded.
func TestCaptureFoldsTopLevelSetKeepingTheOtherProperties(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	body := `{"api_key": "` + f.token + `", "batch": [{"event": "$identify", "distinct_id": "u", "$set": {"plan": "pro"},
		"properties": {"order_id": 9007199254740993, "ratio": 0.1000000000000000055511151231257827, "nested": {"big": 12345678901234567890}}}]}`
	if code, resp := f.send(t, req{path: "/batch/", body: []byte(body)}); code != http.StatusOK {
		t.Fatalf("%d %v", code, resp)
	}
	cond := ` AND position(properties, '"order_id":9007199254740993') > 0` +
		` AND position(properties, '"nested":{"big":12345678901234567890}') > 0` +
		` AND position(properties, '"ratio":0.1000000000000000055511151231257827') > 0` +
		` AND position(properties, '"$set":{"plan":"pro"}') > 0`
	if n := f.count(t, cond, nil); n != 1 {
		t.Fatalf("%d events with the properties as sent", n)
	}
}
