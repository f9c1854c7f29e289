package analysis

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// The service's cache and single flight, without HTTP: the keys a
// request is cached under and the computations concurrent requests
// share.

func TestFlightGroupKeepsRunningWhileSomeoneWaits(t *testing.T) {
	var g flightGroup
	release := make(chan struct{})
	var runs atomic.Int64
	fn := func(ctx context.Context) (*cachedResult, error) {
		runs.Add(1)
		select {
		case <-release:
			return &cachedResult{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	leaving, leave := context.WithCancel(context.Background())
	errc := make(chan error, 2)
	go func() { _, err := g.do(leaving, "k", fn); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	go func() { _, err := g.do(context.Background(), "k", fn); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	leave()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("the leaving caller got %v", err)
	}
	close(release)
	if err := <-errc; err != nil || runs.Load() != 1 {
		t.Fatalf("the staying caller got %v after %d runs", err, runs.Load())
	}
	t.Run("the last caller leaving stops the computation", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go g.do(ctx, "k2", func(ctx context.Context) (*cachedResult, error) { //nolint:errcheck // the caller left
			<-ctx.Done()
			close(stopped)
			return nil, ctx.Err()
		})
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Fatal("the computation outlived its last caller")
		}
	})
}

// TestCacheKeysFollowTheClock: two requests with the same filter share a
// key exactly when what they resolve to is the same, to the minute: the
// range and the relative dates in property conditions.
func TestCacheKeysFollowTheClock(t *testing.T) {
	now := time.Date(2026, 3, 10, 9, 30, 10, 0, time.UTC)
	key := func(kind, body string, at time.Time) string {
		t.Helper()
		p, err := querybuilder.ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		project := querybuilder.Project{ID: 1, Timezone: "Europe/Berlin"}
		var c *querybuilder.Common
		if kind == "trends" {
			q, err := querybuilder.ParseTrends(p, querybuilder.Env{Project: project, Now: at})
			if err != nil {
				t.Fatal(err)
			}
			c = &q.Common
		} else {
			q, err := querybuilder.ParseFunnel(p, querybuilder.Env{Project: project, Now: at})
			if err != nil {
				t.Fatal(err)
			}
			c = &q.Common
		}
		k, err := cacheKey(kind, p, newCacheScope(c))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	relativeProperty := `{"events": [{"id": "$pageview"}], "date_from": "2026-03-01", "date_to": "2026-03-05",
		"properties": [{"key": "signed_up", "value": "-7d", "operator": "is_date_after", "type": "person"}]}`
	relativeStartOfDay := strings.Replace(relativeProperty, `"-7d"`, `"-7dStart"`, 1)
	absoluteProperty := strings.Replace(relativeProperty, `"-7d"`, `"2026-02-01"`, 1)
	hourly := `{"events": [{"id": "$pageview"}], "date_from": "-24h", "interval": "hour"}`
	daily := `{"events": [{"id": "$pageview"}], "date_from": "-7d"}`
	funnelExclusion := `{"events": [{"id": "a"}, {"id": "b"}], "date_from": "2026-03-01", "date_to": "2026-03-05",
		"exclusions": [{"id": "c", "funnel_from_step": 0, "funnel_to_step": 1,
			"properties": [{"key": "at", "value": "-1h", "operator": "is_date_before"}]}]}`
	cases := []struct {
		name, kind, body string
		later            time.Duration
		same             bool
	}{
		{"a relative property date, 40 s later (same minute)", "trends", relativeProperty, 40 * time.Second, true},
		{"a relative property date, 2 minutes later", "trends", relativeProperty, 2 * time.Minute, false},
		{"a relative property date, a day later", "trends", relativeProperty, 24 * time.Hour, false},
		{"a relative start-of-day property date, 5 hours later", "trends", relativeStartOfDay, 5 * time.Hour, true},
		{"an absolute property date, a day later", "trends", absoluteProperty, 24 * time.Hour, true},
		{"an hourly relative range, 40 s later", "trends", hourly, 40 * time.Second, true},
		{"an hourly relative range, 20 minutes later (same hour)", "trends", hourly, 20 * time.Minute, false},
		{"a daily relative range, 5 hours later (same day)", "trends", daily, 5 * time.Hour, true},
		{"a daily relative range, a day later", "trends", daily, 24 * time.Hour, false},
		{"a funnel exclusion's relative date, 40 s later", "funnel", funnelExclusion, 40 * time.Second, true},
		{"a funnel exclusion's relative date, 2 minutes later", "funnel", funnelExclusion, 2 * time.Minute, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if same := key(c.kind, c.body, now) == key(c.kind, c.body, now.Add(c.later)); same != c.same {
				t.Fatalf("same key: %v, want %v", same, c.same)
			}
		})
	}
}
