package ingest

import (
	"testing"
	"time"

	"github.com/insightd/insightd/api/httpx"
)

// An empty body (curl -X POST, an SDK flushing nothing) is the client's
// mistake: counting its events for the metrics indexed the empty body
// and answered 500 on every server with metrics on.
func TestAnEmptyCaptureBodyIsA400WithOrWithoutMetrics(t *testing.T) {
	for _, body := range [][]byte{nil, {}, []byte(" \n")} {
		if n := payloadEvents(body); n != 1 {
			t.Fatalf("%q counts %d events", body, n)
		}
		_, err := parsePayload(body, time.Now(), nil)
		if e := httpx.ToError(err); e.Kind.Status() != 400 {
			t.Fatalf("%q: %v", body, err)
		}
	}
}
