package api

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// demoLog is a log buffer the demo's background run writes to while the
// test reads it.
type demoLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *demoLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *demoLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// demoFixture is a fixture whose server logs to a buffer.
func demoFixture(t *testing.T) (*fixture, *demoLog) {
	t.Helper()
	var logs demoLog
	s := newServer(t, slog.New(slog.NewJSONHandler(&logs, nil)))
	t.Cleanup(s.writer.Close)
	a, err := s.store.Bootstrap(context.Background(), "demo@example.com", "Demo", "Demo web")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, h: s.Handler(), a: a}, &logs
}

// generating asks the API whether the project's demo generator runs.
func (f *fixture) generating(t *testing.T, id int64) bool {
	t.Helper()
	st, body := call(t, f.h, "GET", f.project(f.a.OrganizationID, id)+"is_generating_demo_data/", f.a.PersonalAPIKey, nil)
	v, ok := body["is_generating_demo_data"].(bool)
	if st != 200 || !ok {
		t.Fatalf("is_generating_demo_data: %d %v", st, body)
	}
	return v
}

// untilNotGenerating waits for the project's generator to end.
func (f *fixture) untilNotGenerating(t *testing.T, id int64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); f.generating(t, id); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("is_generating_demo_data stayed true")
		}
	}
}

func (f *fixture) createDemo(t *testing.T) int64 {
	t.Helper()
	st, p := call(t, f.h, "POST", f.projects(f.a.OrganizationID), f.a.PersonalAPIKey, map[string]any{"name": "Hedgebox", "is_demo": true})
	if st != 201 || p["is_demo"] != true {
		t.Fatalf("create: %d %v", st, p)
	}
	return int64(p["id"].(float64))
}

func TestIsGeneratingDemoDataIsTrueWhileTheGeneratorRuns(t *testing.T) {
	f, logs := demoFixture(t)
	reached, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	var calls atomic.Int64
	f.s.demoProgress = func(visitors, events int) {
		calls.Add(1)
		first.Do(func() { close(reached); <-release })
	}
	id := f.createDemo(t)
	select {
	case <-reached:
	case <-time.After(time.Minute):
		t.Fatal("the generator never reported progress")
	}
	if !f.generating(t, id) {
		t.Fatal("is_generating_demo_data is false while the generator is held mid-run")
	}
	close(release)
	f.untilNotGenerating(t, id)
	st, p := call(t, f.h, "GET", f.project(f.a.OrganizationID, id), f.a.PersonalAPIKey, nil)
	if st != 200 || p["ingested_event"] != true || !strings.Contains(logs.String(), `"msg":"demo data written"`) || calls.Load() < 2 {
		t.Fatalf("after the run: %d ingested_event %v, %d progress calls, log:\n%s", st, p["ingested_event"], calls.Load(), logs.String())
	}
}

func TestIsGeneratingDemoDataIsFalseAfterAFailedRun(t *testing.T) {
	f, logs := demoFixture(t)
	var first sync.Once
	// The writer stops after the first write: the next one fails.
	f.s.demoProgress = func(visitors, events int) { first.Do(f.s.writer.Close) }
	id := f.createDemo(t)
	f.untilNotGenerating(t, id)
	// The run clears the flag as it returns and its caller logs the
	// failure just after: wait for that line.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"msg":"demo data failed"`); {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not fail: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Run("a new run may start", func(t *testing.T) {
		if err := f.s.store.SetGeneratingDemoData(context.Background(), id, true); err != nil {
			t.Fatal(fmt.Errorf("starting again: %w", err))
		}
	})
}
