package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/httpx"
)

// scanSeeds are bodies for the comparison of scanBatch with encoding/json:
// the usual batch shapes, then each kind of body scanBatch must leave to
// the slow way.
var scanSeeds = []string{
	`{"api_key":"tok","sent_at":"2026-01-02T03:04:05.678Z","batch":[{"event":"$pageview","distinct_id":"u1","uuid":"0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12","timestamp":"2026-01-02T03:04:05Z","properties":{"$current_url":"https://x.test/a","n":1.5e3,"a":[1,{"b":null}],"t":true}}]}`,
	`[{"event":"e","distinct_id":42,"properties":{"token":"tok","$set":{"plan":"pro"},"$set_once":{"first":"x"},"$unset":["old"]}}]`,
	`[{"event":"$identify","distinct_id":"u2","properties":{"token":"tok","$anon_distinct_id":"anon-1","$ignore_sent_at":true}, "$set": {"email": "a@b.c"}}]`,
	`{"batch":[{"event":"$create_alias","distinct_id":"u3","properties":{"alias":"u4","distinct_id":"u9"},"offset":1500}],"historical_migration":true,"token":"t"}`,
	`{"batch":[],"api_key":"tok"}`,
	`[]`,
	` [ { "event" : "e" , "distinct_id" : "u\u00e9" , "properties" : { } } ] `,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"x":"caf\u00e9 \"q\" \\ \/ \b\f\n\r\t"}}],"sent_at":null}`,
	// Left to the slow way: a single event, a duplicate field, another case,
	// escaped keys, wrong types, invalid JSON, trailing data.
	`{"event":"e","distinct_id":"u","api_key":"tok"}`,
	`{"batch":[{"event":"e","event":"f","distinct_id":"u"}]}`,
	`{"batch":[{"Event":"e","distinct_id":"u"}]}`,
	`{"BATCH":[{"event":"e","distinct_id":"u"}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"TOKEN":"x","$set":{}}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"\u0074oken":"x"}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"$ſet":{"a":1}}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"alias":"a","alias":"b"}}]}`,
	`{"batch":[{"ev\u0065nt":"e","distinct_id":"u"}]}`,
	`{"batch":null,"event":"e","distinct_id":"u"}`,
	`{"batch":{"event":"e"}}`,
	`{"batch":[null]}`,
	`{"batch":[1,2]}`,
	`{"batch":[{"event":"e","distinct_id":"u"}],"batch":[]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":"x"}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"a":01}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"a":1.}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"a":-}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"a":"\x"}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"a":"\u12"}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"a":tru}}]}`,
	`{"batch":[{"event":"e","distinct_id":"u",}]}`,
	`{"batch":[{"event":"e","distinct_id":"u"},]}`,
	`{"batch":[{"event":"e","distinct_id":"u"}]} x`,
	`{"batch":[{"event":"e","distinct_id":"u"}]}}`,
	"{\"batch\":[{\"event\":\"e\",\"distinct_id\":\"u\",\"properties\":{\"a\":\"\xff\xfe\"}}]}",
	"{\"batch\":[{\"event\":\"e\xff\",\"distinct_id\":\"u\"}]}",
	"{\"batch\":[{\"event\":\"e\",\"distinct_id\":\"u\",\"properties\":{\"a\":\"\x01\"}}]}",
	`{"batch":[{"event":"","distinct_id":"u"}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","uuid":"nope"}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","timestamp":"yesterday"}]}`,
	`{"batch":[{"event":"e","distinct_id":"u","properties":{"$set":[1]}}]}`,
}

// samePayload compares two parse results: the same error, or the same
// token and events (server-made uuids aside, which are random).
func samePayload(t *testing.T, body string, a, b *payload, errA, errB error) {
	t.Helper()
	if (errA == nil) != (errB == nil) {
		t.Fatalf("%q: scan error %v, encoding/json error %v", body, errA, errB)
	}
	if errA != nil {
		var ea, eb *httpx.Error
		if !errors.As(errA, &ea) || !errors.As(errB, &eb) || ea.Code != eb.Code || ea.Attr != eb.Attr || ea.Detail != eb.Detail {
			t.Fatalf("%q: scan error %v, encoding/json error %v", body, errA, errB)
		}
		return
	}
	if a.token != b.token || len(a.events) != len(b.events) {
		t.Fatalf("%q: scan gave token %q and %d events, encoding/json %q and %d", body, a.token, len(a.events), b.token, len(b.events))
	}
	for i := range a.events {
		x, y := a.events[i], b.events[i]
		if !x.ClientUUID {
			x.UUID = y.UUID
		}
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("%q: event %d: scan gave\n%+v\nencoding/json gave\n%+v", body, i, x, y)
		}
	}
}

func TestScanBatchGivesWhatEncodingJSONGives(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
	for _, body := range scanSeeds {
		t.Run(body, func(t *testing.T) {
			a, errA := parsePayloadScan([]byte(body), now, nil, true)
			b, errB := parsePayloadScan([]byte(body), now, nil, false)
			samePayload(t, body, a, b, errA, errB)
		})
	}
}

func TestScanBatchTakesTheUsualBatchesAndLeavesTheRest(t *testing.T) {
	cases := []struct {
		body string
		fast bool
	}{
		{scanSeeds[0], true},
		{scanSeeds[1], true},
		{scanSeeds[3], true},
		{`{"batch":[],"api_key":"tok"}`, true},
		{`{"event":"e","distinct_id":"u"}`, false},
		{`{"batch":[{"event":"e","event":"f"}]}`, false},
		{`{"batch":[{"Event":"e"}]}`, false},
		{`{"batch":[{"event":"e","properties":{"TOKEN":"x"}}]}`, false},
		{`{"batch":[{"event":"e","properties":{"\u0074oken":"x"}}]}`, false},
		{`{"batch":[{"event":"e"}]} x`, false},
		{`{"batch":[{"event":"e","properties":{"a":01}}]}`, false},
	}
	for _, c := range cases {
		t.Run(c.body, func(t *testing.T) {
			if _, _, _, ok := scanBatch([]byte(c.body)); ok != c.fast {
				t.Fatalf("scanBatch took it: %v, want %v", ok, c.fast)
			}
		})
	}
	t.Run("fields are slices of the body", func(t *testing.T) {
		body := []byte(scanSeeds[0])
		_, wes, heads, ok := scanBatch(body)
		if !ok || len(wes) != 1 || len(heads) != 1 {
			t.Fatalf("ok %v, %d events", ok, len(wes))
		}
		if got := string(wes[0].Properties); !bytes.HasPrefix(body[bytes.Index(body, []byte(`{"$current_url"`)):], []byte(got)) || got[len(got)-1] != '}' {
			t.Fatalf("properties %q", got)
		}
	})
}

// A body of nothing but "event" strings (20 MiB from a few kB of gzip)
// once sized the event lists by its count, 1.3 GB, before refusing it.
func TestScanBatchSizesItsListsByWhatABatchCanHold(t *testing.T) {
	body := []byte(`{"batch":[` + strings.Repeat(`"event",`, 20<<20/8) + `{}]}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, _, ok := scanBatch(body)
	runtime.ReadMemStats(&after)
	if ok {
		t.Fatal("taken")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 100<<20 {
		t.Fatalf("allocated %d MB for a refused 20 MB body", got>>20)
	}
}

func FuzzScanBatch(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		a, errA := parsePayloadScan(body, now, nil, true)
		b, errB := parsePayloadScan(body, now, nil, false)
		samePayload(t, string(body), a, b, errA, errB)
	})
}

// BenchmarkParsePayload parses a posthog-js-like batch of 1 000 $pageviews
// (about 500 bytes of properties each), as ingestload sends.
func BenchmarkParsePayload(b *testing.B) {
	var body bytes.Buffer
	body.WriteString(`{"api_key":"tok","sent_at":"2026-01-02T03:04:05.678Z","batch":[`)
	for i := range 1000 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"event":"$pageview","distinct_id":"user-%d","uuid":"0190d6a2-5b7e-7c3a-9f1e-%012d","timestamp":"2026-01-02T03:04:05.%03dZ",`+
			`"properties":{"$current_url":"https://shop.example.com/pricing","$host":"shop.example.com","$pathname":"/pricing","$browser":"Chrome",`+
			`"$browser_version":124,"$os":"Mac OS X","$device_type":"Desktop","$screen_height":1080,"$screen_width":1920,"$viewport_height":950,`+
			`"$viewport_width":1900,"$lib":"web","$lib_version":"1.150.0","$session_id":"0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12",`+
			`"$window_id":"0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e13","$referrer":"https://www.google.com/","$referring_domain":"www.google.com",`+
			`"$insert_id":"%d"}}`, i%200, i, i%1000, i*7919)
	}
	body.WriteString(`]}`)
	now := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
	for _, scan := range []bool{true, false} {
		b.Run(fmt.Sprintf("scan=%v", scan), func(b *testing.B) {
			b.SetBytes(int64(body.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parsePayloadScan(body.Bytes(), now, nil, scan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
