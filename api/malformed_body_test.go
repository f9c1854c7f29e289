package api

import (
	"encoding/json"
	"testing"
	"time"
)

// A body whose chunked transfer encoding is malformed is the client's
// malformed request, a 400 naming it, not the 499 of a client that hung
// up (the hostile-request probe of issue 38, item 5).
func TestAMalformedChunkedBodyIs400(t *testing.T) {
	l := serveReal(t, func(*Config) {})
	for _, path := range []string{"/batch/", "/e/", "/test/read-then-wait"} {
		c := l.dial(t)
		if err := c.write("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, body, err := c.response(5 * time.Second)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if resp.StatusCode != 400 {
			t.Fatalf("%s: %d %s, want 400", path, resp.StatusCode, body)
		}
		if path == "/test/read-then-wait" {
			continue // the probe route answers its own error body
		}
		var e struct{ Type, Code, Detail string }
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Type != "validation_error" || e.Detail == "" {
			t.Fatalf("%s: body %s", path, body)
		}
	}
	if n := l.errors.n.Load(); n != 0 {
		t.Fatalf("%d error-level log records", n)
	}
}
