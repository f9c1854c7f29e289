package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/querybuilder"
)

// captureFixture is a server with one project to send events to.
type captureFixture struct {
	h     http.Handler
	s     *Server
	token string
	team  int64
}

func newCaptureFixture(t *testing.T, cfg Config) *captureFixture {
	t.Helper()
	s := New(cfg, quietLog(), metadatatest.NewStore(t), engine)
	t.Cleanup(s.writer.Close)
	b, err := s.store.Bootstrap(context.Background(), "cap@example.com", "Capture", "Web")
	if err != nil {
		t.Fatal(err)
	}
	return &captureFixture{h: validated(t, s.Handler()), s: s, token: b.ProjectAPIToken, team: b.ProjectID}
}

type req struct {
	path, query string
	body        []byte
	header      map[string]string
}

func (f *captureFixture) send(t *testing.T, r req) (int, map[string]any) {
	t.Helper()
	target := r.path
	if r.query != "" {
		target += "?" + r.query
	}
	hr := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(r.body))
	hr.Header.Set("Content-Type", "application/json")
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, hr)
	var out map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("POST %s: %d, body is not a JSON object: %q", target, w.Code, w.Body.String())
	}
	return w.Code, out
}

func (f *captureFixture) count(t *testing.T, where string, params map[string]any) int64 {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["team"] = f.team
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL: "SELECT count() FROM events WHERE team_id = {team:Int64}" + where, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	return int64(rows.Data[0][0].(uint64))
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

type obj = map[string]any

func TestEveryCaptureEndpointAndTokenLocationStoresTheEvent(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	ev := func(name string) obj {
		return obj{"event": name, "distinct_id": "d1", "properties": obj{"$browser": "Firefox"}}
	}
	withProps := func(name, key string) obj {
		return obj{"event": name, "distinct_id": "d1", "properties": obj{key: f.token}}
	}
	cases := []struct {
		name string
		r    req
	}{
		{"/batch/ with api_key", req{path: "/batch/", body: mustJSON(t, obj{"api_key": f.token, "batch": []obj{ev("batch-api-key")}})}},
		{"/batch/ with token", req{path: "/batch", body: mustJSON(t, obj{"token": f.token, "batch": []obj{ev("batch-token")}})}},
		{"/batch/ with $token", req{path: "/batch/", body: mustJSON(t, obj{"$token": f.token, "batch": []obj{ev("batch-dollar-token")}})}},
		{"/batch/ with the token query parameter", req{path: "/batch/", query: "token=" + f.token, body: mustJSON(t, obj{"batch": []obj{ev("batch-query")}})}},
		{"/batch/ with the token in an event's properties", req{path: "/batch/", body: mustJSON(t, obj{"batch": []obj{withProps("batch-props", "token")}})}},
		{"/capture/ with one event and api_key", req{path: "/capture/", body: mustJSON(t, obj{"api_key": f.token, "event": "capture-single", "distinct_id": "d1"})}},
		{"/capture/ with $token in properties", req{path: "/capture/", body: mustJSON(t, withProps("capture-props", "$token"))}},
		{"/e/ with a batch", req{path: "/e/", body: mustJSON(t, obj{"api_key": f.token, "batch": []obj{ev("e-batch")}})}},
		{"/e/ with a bare list, as posthog-js sends", req{path: "/e/", body: mustJSON(t, []obj{withProps("e-list", "token")})}},
		{"/i/v0/e/ with one event and token", req{path: "/i/v0/e/", body: mustJSON(t, obj{"token": f.token, "event": "i-single", "distinct_id": "d1"})}},
		{"/i/v0/e/ with a batch", req{path: "/i/v0/e", body: mustJSON(t, obj{"api_key": f.token, "batch": []obj{ev("i-batch")}})}},
		{"gzip by Content-Encoding", req{path: "/batch/", body: gz(t, mustJSON(t, obj{"api_key": f.token, "batch": []obj{ev("gzip-header")}})),
			header: map[string]string{"Content-Encoding": "gzip"}}},
		{"gzip-js by query parameter", req{path: "/e/", query: "compression=gzip-js&ver=1.2.3", body: gz(t, mustJSON(t, []obj{withProps("gzip-js", "token")})),
			header: map[string]string{"Content-Type": "text/plain"}}},
		{"gzip bytes without saying so", req{path: "/batch/", body: gz(t, mustJSON(t, obj{"api_key": f.token, "batch": []obj{ev("gzip-sniffed")}}))}},
		{"a form with base64 data", req{path: "/e/", body: []byte("data=" + url.QueryEscape(base64.StdEncoding.EncodeToString(mustJSON(t, withProps("form-base64", "token"))))),
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.send(t, tc.r)
			if code != http.StatusOK || body["status"] != float64(1) {
				t.Fatalf("want 200 {status: 1}, got %d %v", code, body)
			}
			name := eventName(t, tc.r.body)
			if got := f.count(t, " AND event = {e:String}", obj{"e": name}); got != 1 {
				t.Fatalf("want the event %q stored once, got %d", name, got)
			}
		})
	}
	if p, err := f.s.store.ProjectForToken(context.Background(), f.token); err != nil || !p.IngestedEvent {
		t.Fatalf("the project's ingested_event should be true after its first event (%v, %v)", p, err)
	}
}

// eventName digs the one event name out of a request body (decompressing
// and decoding as needed) so each case checks its own event.
func eventName(t *testing.T, body []byte) string {
	t.Helper()
	if bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(zr)
		body = buf.Bytes()
	}
	if s, ok := strings.CutPrefix(string(body), "data="); ok {
		u, _ := url.QueryUnescape(s)
		body, _ = base64.StdEncoding.DecodeString(u)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	for {
		switch x := v.(type) {
		case []any:
			v = x[0]
		case map[string]any:
			if b, ok := x["batch"]; ok {
				v = b
				continue
			}
			return x["event"].(string)
		}
	}
}

func TestBadCaptureInputIsRefusedWholeAndNamesTheField(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	good := obj{"event": "ok", "distinct_id": "d"}
	batch := func(bad obj) []byte {
		return mustJSON(t, obj{"api_key": f.token, "batch": []obj{good, good, bad}})
	}
	cases := []struct {
		name   string
		body   []byte
		status int
		attr   any
	}{
		{"malformed JSON", []byte(`{"api_key": "` + f.token + `", "batch": [`), 400, nil},
		{"not an object or list", []byte(`"hello"`), 400, nil},
		{"an empty batch", mustJSON(t, obj{"api_key": f.token, "batch": []obj{}}), 400, "batch"},
		{"a batch that is not a list", mustJSON(t, obj{"api_key": f.token, "batch": "x"}), 400, "batch"},
		{"an event that is not an object", mustJSON(t, obj{"api_key": f.token, "batch": []any{good, 7}}), 400, "batch[1]"},
		{"a missing event name", batch(obj{"distinct_id": "d"}), 400, "batch[2].event"},
		{"an empty event name", batch(obj{"event": "", "distinct_id": "d"}), 400, "batch[2].event"},
		{"an event name that is not a string", batch(obj{"event": 5, "distinct_id": "d"}), 400, "batch[2].event"},
		{"an event name of 201 characters", batch(obj{"event": strings.Repeat("é", 201), "distinct_id": "d"}), 400, "batch[2].event"},
		{"a missing distinct_id", batch(obj{"event": "e"}), 400, "batch[2].distinct_id"},
		{"an empty distinct_id", batch(obj{"event": "e", "distinct_id": " "}), 400, "batch[2].distinct_id"},
		{"an object distinct_id", batch(obj{"event": "e", "distinct_id": obj{}}), 400, "batch[2].distinct_id"},
		{"properties that are not an object", batch(obj{"event": "e", "distinct_id": "d", "properties": []int{1}}), 400, "batch[2].properties"},
		{"properties that are a string", batch(obj{"event": "e", "distinct_id": "d", "properties": "{}"}), 400, "batch[2].properties"},
		{"an unparseable timestamp", batch(obj{"event": "e", "distinct_id": "d", "timestamp": "yesterday"}), 400, "batch[2].timestamp"},
		{"a numeric timestamp", batch(obj{"event": "e", "distinct_id": "d", "timestamp": 1700000000}), 400, "batch[2].timestamp"},
		{"a timestamp past 2299", batch(obj{"event": "e", "distinct_id": "d", "timestamp": "2400-01-01T00:00:00Z"}), 400, "batch[2].timestamp"},
		{"a bad sent_at", batch(obj{"event": "e", "distinct_id": "d", "sent_at": "soon"}), 400, "batch[2].sent_at"},
		{"a negative offset", batch(obj{"event": "e", "distinct_id": "d", "offset": -5}), 400, "batch[2].offset"},
		{"a bad uuid", batch(obj{"event": "e", "distinct_id": "d", "uuid": "not-a-uuid"}), 400, "batch[2].uuid"},
		{"a $set that is not an object", batch(obj{"event": "e", "distinct_id": "d", "properties": obj{"$set": "x"}}), 400, "batch[2].properties.$set"},
		{"an $identify with an object $anon_distinct_id", batch(obj{"event": "$identify", "distinct_id": "d", "properties": obj{"$anon_distinct_id": obj{}}}), 400, "batch[2].properties.$anon_distinct_id"},
		{"a single event without distinct_id", mustJSON(t, obj{"api_key": f.token, "event": "e"}), 400, "distinct_id"},
		{"no token anywhere", mustJSON(t, obj{"batch": []obj{good}}), 401, nil},
		{"an unknown token", mustJSON(t, obj{"api_key": "phc_nope", "batch": []obj{good}}), 401, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.send(t, req{path: "/batch/", body: tc.body})
			if code != tc.status {
				t.Fatalf("want %d, got %d %v", tc.status, code, body)
			}
			if body["attr"] != tc.attr || body["type"] == nil || body["code"] == nil || body["detail"] == "" {
				t.Fatalf("want an error body naming %v, got %v", tc.attr, body)
			}
		})
	}
	if got := f.count(t, "", nil); got != 0 {
		t.Fatalf("nothing from a refused request may be stored, found %d events", got)
	}
}

func TestCaptureLimits(t *testing.T) {
	cfg := testConfig()
	cfg.BodyLimit = 20 << 20
	f := newCaptureFixture(t, cfg)
	t.Run("a batch of 100 001 events is too large", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{"api_key":"` + f.token + `","batch":[`)
		for i := range 100_001 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"event":"e","distinct_id":"d"}`)
		}
		b.WriteString("]}")
		code, body := f.send(t, req{path: "/batch/", body: []byte(b.String())})
		if code != http.StatusRequestEntityTooLarge || body["attr"] != "batch" {
			t.Fatalf("want 413 naming batch, got %d %v", code, body)
		}
	})
	t.Run("a body over 20 MiB is too large, also once decompressed", func(t *testing.T) {
		big := mustJSON(t, obj{"api_key": f.token, "event": "e", "distinct_id": "d", "properties": obj{"pad": strings.Repeat("x", 21<<20)}})
		if code, _ := f.send(t, req{path: "/capture/", body: big}); code != http.StatusRequestEntityTooLarge {
			t.Fatalf("plain: want 413, got %d", code)
		}
		if code, _ := f.send(t, req{path: "/capture/", query: "compression=gzip-js", body: gz(t, big)}); code != http.StatusRequestEntityTooLarge {
			t.Fatalf("gzip: want 413, got %d", code)
		}
	})
	if got := f.count(t, "", nil); got != 0 {
		t.Fatalf("nothing from a refused request may be stored, found %d events", got)
	}
}

func TestCaptureTimestamps(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	send := func(ev obj) {
		t.Helper()
		ev["api_key"] = f.token
		if code, body := f.send(t, req{path: "/capture/", body: mustJSON(t, ev)}); code != 200 {
			t.Fatalf("want 200, got %d %v", code, body)
		}
	}
	stored := func(id string) time.Time {
		t.Helper()
		rows, err := engine.Query(context.Background(), querybuilder.Statement{
			SQL:    "SELECT timestamp FROM events WHERE team_id = {team:Int64} AND uuid = {id:UUID}",
			Params: obj{"team": f.team, "id": id}})
		if err != nil || len(rows.Data) != 1 {
			t.Fatalf("event %s: %v %v", id, err, rows)
		}
		return rows.Data[0][0].(time.Time)
	}
	ids := func() string { return uuid.NewString() }
	near := func(name string, got, want time.Time, tol time.Duration) {
		t.Helper()
		if d := got.Sub(want); d < -tol || d > tol {
			t.Fatalf("%s: stored %s, want %s (±%s)", name, got, want, tol)
		}
	}
	a := ids()
	send(obj{"event": "e", "distinct_id": "d", "uuid": a, "timestamp": "2026-03-04T05:06:07.123456+02:00"})
	near("a timestamp with a zone", stored(a), time.Date(2026, 3, 4, 3, 6, 7, 123456000, time.UTC), 0)

	b := ids()
	send(obj{"event": "e", "distinct_id": "d", "uuid": b, "timestamp": "2026-03-04 05:06:07"})
	near("a timestamp without a zone is UTC", stored(b), time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), 0)

	// The client's clock is an hour fast: its timestamp and sent_at both
	// are, so the event lands at the right server time.
	c := ids()
	now := time.Now().UTC()
	send(obj{"event": "e", "distinct_id": "d", "uuid": c,
		"timestamp": now.Add(time.Hour - 10*time.Second).Format(time.RFC3339Nano), "sent_at": now.Add(time.Hour).Format(time.RFC3339Nano)})
	near("sent_at corrects clock skew", stored(c), now.Add(-10*time.Second), 2*time.Second)

	d := ids()
	send(obj{"event": "e", "distinct_id": "d", "uuid": d, "offset": 60000})
	near("offset counts back from now", stored(d), time.Now().Add(-time.Minute), 2*time.Second)

	e := ids()
	send(obj{"event": "e", "distinct_id": "d", "uuid": e})
	near("no timestamp means now", stored(e), time.Now(), 2*time.Second)

	g := ids()
	send(obj{"event": "e", "distinct_id": "d", "uuid": g, "timestamp": "2026-03-04T05:06:07Z",
		"sent_at": now.Add(time.Hour).Format(time.RFC3339), "properties": obj{"$ignore_sent_at": true}})
	near("$ignore_sent_at keeps the timestamp", stored(g), time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), 0)

	// posthog-js says when it sent the request in the "_" query
	// parameter (milliseconds): it corrects the skew when the body does
	// not say; the body's sent_at wins; a "_" that is not a time is a
	// cache buster and changes nothing.
	viaQuery := func(id, underscore string, ev obj) {
		t.Helper()
		ev["api_key"], ev["event"], ev["distinct_id"], ev["uuid"] = f.token, "e", "d", id
		if code, body := f.send(t, req{path: "/e/", query: "_=" + underscore + "&ver=1.200.0", body: mustJSON(t, ev)}); code != 200 {
			t.Fatalf("want 200, got %d %v", code, body)
		}
	}
	fast := strconv.FormatInt(now.Add(time.Hour).UnixMilli(), 10)
	h := ids()
	viaQuery(h, fast, obj{"timestamp": now.Add(time.Hour - 10*time.Second).Format(time.RFC3339Nano)})
	near("_ corrects clock skew", stored(h), now.Add(-10*time.Second), 2*time.Second)
	i := ids()
	viaQuery(i, fast, obj{"timestamp": "2026-03-04T05:06:07Z", "sent_at": "2026-03-04T05:06:17Z"})
	near("sent_at wins over _", stored(i), now.Add(-10*time.Second), 2*time.Second)
	j := ids()
	viaQuery(j, "abc", obj{"timestamp": "2026-03-04T05:06:07Z"})
	near("a _ that is not a time changes nothing", stored(j), time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), 0)
}

func TestCaptureKeepsHostileStringsAsData(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	hostile := []string{`'; DROP TABLE events; --`, `{name:String}`, "tab\there\nnewline", `back\slash`, `"quoted"`, "nul\x00byte", "emoji 🦔", `\N`}
	var batch []obj
	for i, h := range hostile {
		batch = append(batch, obj{"event": h, "distinct_id": h, "properties": obj{h: h, "$current_url": h, "i": i}})
	}
	if code, body := f.send(t, req{path: "/batch/", body: mustJSON(t, obj{"api_key": f.token, "batch": batch})}); code != 200 {
		t.Fatalf("want 200, got %d %v", code, body)
	}
	for _, h := range hostile {
		n := f.count(t, " AND event = {h:String} AND distinct_id = {h:String} AND mat_current_url = {h:String} AND JSONExtractString(properties, {h:String}) = {h:String}", obj{"h": h})
		if n != 1 {
			t.Fatalf("%q was not stored as sent (found %d)", h, n)
		}
	}
}

func TestCaptureCountsARetriedEventOnce(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	body := mustJSON(t, obj{"api_key": f.token, "batch": []obj{
		{"event": "purchase", "distinct_id": "buyer", "uuid": uuid.NewString(), "properties": obj{"amount": 10}},
		{"event": "purchase", "distinct_id": "buyer", "uuid": uuid.NewString(), "properties": obj{"amount": 20}},
	}})
	for range 3 {
		if code, resp := f.send(t, req{path: "/batch/", body: body}); code != 200 {
			t.Fatalf("want 200, got %d %v", code, resp)
		}
	}
	if got := f.count(t, "", nil); got != 2 {
		t.Fatalf("the same two events sent three times: want 2 stored, got %d", got)
	}
}

func TestCaptureIdentifyAndPersonProperties(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	send := func(events ...obj) {
		t.Helper()
		if code, body := f.send(t, req{path: "/batch/", body: mustJSON(t, obj{"api_key": f.token, "batch": events})}); code != 200 {
			t.Fatalf("want 200, got %d %v", code, body)
		}
	}
	send(obj{"event": "$pageview", "distinct_id": "anon-42", "timestamp": "2026-04-01T10:00:00Z", "properties": obj{"$set_once": obj{"first_url": "/"}}},
		obj{"event": "$pageview", "distinct_id": "anon-42", "timestamp": "2026-04-01T10:01:00Z"})
	// The server-side $set shorthand beside the event, as posthog-python sends it.
	send(obj{"event": "$identify", "distinct_id": "ada", "timestamp": "2026-04-01T10:02:00Z",
		"properties": obj{"$anon_distinct_id": "anon-42"}, "$set": obj{"email": "ada@example.com"}})
	send(obj{"event": "purchase", "distinct_id": "ada", "timestamp": "2026-04-01T10:03:00Z", "properties": obj{"$set": obj{"plan": "pro"}}})
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL: "SELECT uniqExact(" + querybuilder.EventPersonID + "), count() FROM events AS e " + querybuilder.EventPersonJoin +
			" WHERE e.team_id = {team:Int64}", Params: obj{"team": f.team}})
	if err != nil {
		t.Fatal(err)
	}
	if rows.Data[0][0] != uint64(1) || rows.Data[0][1] != uint64(4) {
		t.Fatalf("want 4 events of 1 person, got %v", rows.Data)
	}
	rows, err = engine.Query(context.Background(), querybuilder.Statement{
		SQL: `SELECT argMax(properties, version), argMax(is_identified, version) FROM persons
WHERE team_id = {team:Int64} GROUP BY id HAVING argMax(is_deleted, version) = 0`, Params: obj{"team": f.team}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"email":"ada@example.com","first_url":"/","plan":"pro"}`
	if len(rows.Data) != 1 || rows.Data[0][0] != want || rows.Data[0][1] != uint64(1) {
		t.Fatalf("want one identified person with %s, got %v", want, rows.Data)
	}
	if n := f.count(t, " AND event = '$identify' AND JSONExtractString(properties, '$set', 'email') = 'ada@example.com'", nil); n != 1 {
		t.Fatal("the $set sent beside the $identify must be kept in its properties")
	}
}

func TestCaptureUnderFiftyConcurrentSendersLosesNothing(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	const senders, requests, perRequest = 50, 8, 25
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range requests {
				batch := make([]obj, perRequest)
				for i := range batch {
					batch[i] = obj{"event": "$pageview", "distinct_id": fmt.Sprintf("u%d", (s+i)%40), "properties": obj{"r": r}}
				}
				hr := httptest.NewRequest(http.MethodPost, "/batch/", bytes.NewReader(mustJSON(t, obj{"api_key": f.token, "batch": batch})))
				w := httptest.NewRecorder()
				f.h.ServeHTTP(w, hr)
				if w.Code != 200 {
					t.Errorf("sender %d request %d: %d %s", s, r, w.Code, w.Body.String())
				}
			}
		}()
	}
	wg.Wait()
	if got, sent := f.count(t, "", nil), int64(senders*requests*perRequest); got != sent {
		t.Fatalf("sent %d events, %d stored", sent, got)
	}
}

func TestCaptureAnswersBrowserPreflights(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	r := httptest.NewRequest(http.MethodOptions, "/e/", nil)
	r.Header.Set("Origin", "https://shop.example")
	r.Header.Set("Access-Control-Request-Headers", "content-type")
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://shop.example" ||
		!strings.Contains(w.Header().Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight: %d %v", w.Code, w.Header())
	}
}

func TestCaptureRecordsTheSendersIPUnlessTheProjectAnonymizesThem(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	send := func(ev obj) {
		t.Helper()
		ev["api_key"] = f.token
		if code, body := f.send(t, req{path: "/capture/", body: mustJSON(t, ev)}); code != 200 {
			t.Fatalf("want 200, got %d %v", code, body)
		}
	}
	ip := func(event string) string {
		t.Helper()
		rows, err := engine.Query(context.Background(), querybuilder.Statement{
			SQL:    "SELECT JSONExtractString(properties, '$ip'), JSONExtractString(properties, 'k') FROM events WHERE team_id = {team:Int64} AND event = {e:String}",
			Params: obj{"team": f.team, "e": event}})
		if err != nil || len(rows.Data) != 1 {
			t.Fatalf("%s: %v %v", event, err, rows)
		}
		if event == "with-props" && rows.Data[0][1] != "v" {
			t.Fatalf("the event's own properties must be kept, got %v", rows.Data[0])
		}
		return rows.Data[0][0].(string)
	}
	send(obj{"event": "no-props", "distinct_id": "d"})
	send(obj{"event": "with-props", "distinct_id": "d", "properties": obj{"k": "v"}})
	send(obj{"event": "own-ip", "distinct_id": "d", "properties": obj{"$ip": "203.0.113.9"}})
	// httptest requests come from 192.0.2.1.
	if got := [3]string{ip("no-props"), ip("with-props"), ip("own-ip")}; got != [3]string{"192.0.2.1", "192.0.2.1", "203.0.113.9"} {
		t.Fatalf("$ip: %v", got)
	}
	if _, err := f.s.store.DB().Exec("UPDATE projects SET anonymize_ips = true WHERE id = $1", f.team); err != nil {
		t.Fatal(err)
	}
	send(obj{"event": "anonymized", "distinct_id": "d"})
	if got := ip("anonymized"); got != "" {
		t.Fatalf("a project that anonymizes IPs stores none, got %q", got)
	}
	// Nor one the client sent (server SDKs forward the end user's).
	send(obj{"event": "with-props", "distinct_id": "d2", "properties": obj{"$ip": "203.0.113.9", "k": "v", "n": 9007199254740993}})
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL:    "SELECT properties FROM events WHERE team_id = {team:Int64} AND distinct_id = 'd2'",
		Params: obj{"team": f.team}})
	if err != nil || len(rows.Data) != 1 || rows.Data[0][0] != `{"k":"v","n":9007199254740993}` {
		t.Fatalf("a project that anonymizes IPs drops the client's: %v %v", err, rows)
	}
}
