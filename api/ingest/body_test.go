package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
)

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return b.String()
}

// Every body form PostHog's capture reads gives the same events' JSON,
// and every other body is a 400 naming what is wrong.
func TestCaptureBodyReadsEveryFormPostHogsCaptureReads(t *testing.T) {
	const events = `{"api_key":"phc_x","batch":[{"event":"e","distinct_id":"d","properties":{"q":"a b+c"}}]}`
	b64 := base64.StdEncoding.EncodeToString([]byte(events))
	lz := lzCases(t)["batch"]
	const form = "application/x-www-form-urlencoded"
	cases := []struct {
		name, ctype, cenc, query, body string
		want                           string // the JSON read; empty when refused
		status                         int
		attr                           string
	}{
		{name: "JSON", ctype: "application/json", body: events, want: events},
		{name: "JSON without a Content-Type", body: events, want: events},
		{name: "JSON as text/plain, as posthog-js sends it", ctype: "text/plain", body: events, want: events},
		{name: "gzip bytes without saying so", body: gzipped(t, events), want: events},
		{name: "gzip by compression=gzip-js", query: "compression=gzip-js", body: gzipped(t, events), want: events},
		{name: "gzip-js by Content-Encoding", cenc: "gzip-js", body: gzipped(t, events), want: events},
		{name: "a gzip hint on a body already JSON", query: "compression=gzip", body: events, want: events},
		{name: "base64 of JSON", ctype: "text/plain", body: b64, want: events},
		{name: "base64 by compression=base64", query: "compression=base64", body: b64, want: events},
		{name: "base64 of gzip", body: base64.StdEncoding.EncodeToString([]byte(gzipped(t, events))), want: events},
		{name: "lz64 by compression=lz64", query: "compression=lz64", ctype: "text/plain", body: lz.LZ64, want: lz.Plain},
		{name: "lz64 by Content-Encoding: lz64", cenc: "lz64", body: lz.LZ64, want: lz.Plain},
		{name: "a form with JSON data", ctype: form, body: "data=" + url.QueryEscape(events) + "&ver=1.2.3", want: events},
		{name: "a form with base64 data", ctype: form, body: "ver=1.2.3&data=" + url.QueryEscape(b64), want: events},
		{name: "a form with base64 data and its + left unescaped", ctype: form, body: "data=" + b64, want: events},
		{name: "a form with lz64 data by its compression field", ctype: form + "; charset=utf-8", body: "data=" + url.QueryEscape(lz.LZ64) + "&compression=lz64", want: lz.Plain},
		{name: "a form with lz64 data by the query", ctype: form, query: "compression=lz64&ver=1.2.3", body: "data=" + url.QueryEscape(lz.LZ64), want: lz.Plain},
		{name: "a form with gzip data", ctype: form, query: "compression=gzip-js", body: "data=" + url.QueryEscape(gzipped(t, events)), want: events},
		{name: "an empty body is for the payload parser to name", ctype: "application/json", body: "", want: ""},
		{name: "an empty form likewise", ctype: form, body: "", want: ""},

		{name: "JSON sent as a form, as curl -d sends it", ctype: form, body: events, status: 400, attr: "data"},
		{name: "a list sent as a form", ctype: form, body: `[{"event":"e"}]`, status: 400, attr: "data"},
		{name: "a form without data", ctype: form, body: "ver=1.2.3&_=1700000000000", status: 400, attr: "data"},
		{name: "a form that does not parse", ctype: form, body: "data%zz&x=%", status: 400, attr: "data"},
		{name: "a form whose data is nothing known", ctype: form, body: "data=hello+there", status: 400, attr: "data"},
		{name: "lz64 that is not", query: "compression=lz64", body: "not*lz64", status: 400},
		{name: "gzip that is not", query: "compression=gzip-js", body: "\x00\x01\x02", status: 400},
		{name: "gzip cut short", body: gzipped(t, events)[:20], status: 400},
		{name: "base64 that is not", query: "compression=base64", body: "!!!", status: 400},
		{name: "gzip past the limit", body: gzipped(t, string(bytes.Repeat([]byte{' '}, 5000))), status: 413},
		{name: "lz64 past the limit", query: "compression=lz64", body: lzCases(t)["repetitive"].LZ64, status: 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(w)
			c.Request = httptest.NewRequest(http.MethodPost, "/batch?"+tc.query, bytes.NewReader([]byte(tc.body)))
			if tc.ctype != "" {
				c.Request.Header.Set("Content-Type", tc.ctype)
			}
			if tc.cenc != "" {
				c.Request.Header.Set("Content-Encoding", tc.cenc)
			}
			got, err := captureBody(c, 4096)
			if tc.status != 0 {
				e := httpx.ToError(err)
				if err == nil || e.Kind.Status() != tc.status || e.Attr != tc.attr {
					t.Fatalf("want %d naming %q, got %v (%q)", tc.status, tc.attr, err, got)
				}
				if e.Detail == "" || e.Code == "" {
					t.Fatalf("an error says what is wrong: %+v", e)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", truncate(string(got), 100), err, truncate(tc.want, 100))
			}
		})
	}
}
