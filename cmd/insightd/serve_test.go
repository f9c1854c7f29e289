package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a buffer the server's log writes to while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// loggedAddr is the addr of the first JSON log line with message msg.
func loggedAddr(log, msg string) string {
	for _, line := range strings.Split(log, "\n") {
		var l struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == msg {
			return l.Addr
		}
	}
	return ""
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMetricsAddrServesMetricsThereAndNotOnTheAPI(t *testing.T) {
	lib := os.Getenv("INSIGHTD_CHDB_LIB")
	if lib == "" {
		t.Fatal("INSIGHTD_CHDB_LIB is not set: run `make test`")
	}
	t.Setenv("DATABASE_URL", testDB(t))
	t.Setenv("INSIGHTD_METRICS_ADDR", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--chdb-lib", lib}, io.Discard, &logs)
	}()
	var api, private string
	for deadline := time.Now().Add(2 * time.Minute); api == "" || private == ""; time.Sleep(50 * time.Millisecond) {
		select {
		case code := <-exit:
			t.Fatalf("serve exited %d: %s", code, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no addresses logged: %s", logs.String())
		}
		api, private = loggedAddr(logs.String(), "serving"), loggedAddr(logs.String(), "serving metrics")
	}

	if code, body := get(t, "http://"+api+"/_health"); code != 200 {
		t.Fatalf("GET /_health: %d %s", code, body)
	}
	code, body := get(t, "http://"+private+"/metrics")
	if code != 200 || !strings.Contains(body, `insightd_http_request_duration_seconds_count{method="GET",route="/_health",status="200"} 1`) ||
		!strings.Contains(body, "insightd_postgres_connections_max") || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("GET /metrics on the metrics address: %d\n%s", code, body)
	}
	if code, body := get(t, "http://"+api+"/metrics"); code != 404 {
		t.Fatalf("GET /metrics on the API address: %d %s, want 404", code, body)
	}
	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("serve exited %d after the signal: %s", code, logs.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop")
	}
	// The listener is closed with the server.
	if _, err := http.Get("http://" + private + "/metrics"); err == nil {
		t.Fatal("the metrics address still answers after shutdown")
	}
}
