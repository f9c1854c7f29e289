package querybuilder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// webEvent is one hand-built event of a web analytics test.
type webEvent struct {
	person, distinct, session, event, path, browser, referrer string
	at                                                        time.Time
}

// webSession is the brute-force reference's fold of one session.
type webSession struct {
	person              string
	start, end          time.Time
	views, autocaptures int
	firstPath, lastPath string
	browser, referrer   string
}

func foldWebSessions(events []webEvent, browserFilter string) map[string]*webSession {
	out := map[string]*webSession{}
	sorted := append([]webEvent(nil), events...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].at.Before(sorted[j].at) })
	for _, e := range sorted {
		if e.session == "" || (browserFilter != "" && e.browser != browserFilter) {
			continue
		}
		s := out[e.session]
		if s == nil {
			s = &webSession{person: e.person, start: e.at}
			out[e.session] = s
		}
		s.end = e.at
		switch e.event {
		case "$pageview", "$screen":
			if s.views == 0 {
				s.firstPath, s.browser, s.referrer = e.path, e.browser, e.referrer
			}
			s.lastPath = e.path
			s.views++
		case "$autocapture":
			s.autocaptures++
		}
	}
	return out
}

// refOverview is the overview's numbers of the sessions starting in
// [from, to]: visitors, views, sessions, mean duration, bounce rate.
func refOverview(ss map[string]*webSession, from, to time.Time) []*float64 {
	persons := map[string]bool{}
	var views, n, viewed, bounces int
	var dur float64
	for _, s := range ss {
		if s.start.Before(from) || s.start.After(to) {
			continue
		}
		persons[s.person] = true
		views += s.views
		n++
		d := math.Floor(s.end.Sub(s.start).Seconds())
		dur += d
		if s.views > 0 {
			viewed++
			if s.views == 1 && s.autocaptures == 0 && d < 10 {
				bounces++
			}
		}
	}
	f := func(v float64) *float64 { return &v }
	out := []*float64{f(float64(len(persons))), f(float64(views)), f(float64(n)), f(0), nil}
	if n > 0 {
		out[3] = f(dur / float64(n))
	}
	if viewed > 0 {
		out[4] = f(100 * float64(bounces) / float64(viewed))
	}
	return out
}

func writeWebEvents(t *testing.T, e *olap.Embedded, team int64, events []webEvent) {
	t.Helper()
	w := olap.NewWriter(e, slog.New(slog.NewTextHandler(io.Discard, nil)), olap.WriterConfig{})
	defer w.Close()
	for _, ev := range events {
		props := map[string]any{"$pathname": ev.path, "$browser": ev.browser}
		if ev.session != "" {
			props["$session_id"] = ev.session
		}
		if ev.referrer != "" {
			props["$referring_domain"] = ev.referrer
		}
		b, _ := json.Marshal(props)
		c := olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: ev.event, DistinctID: ev.distinct,
			Timestamp: ev.at, Properties: string(b)}}
		if ev.event == "$identify" {
			c.Person = &olap.PersonUpdate{Link: ev.path, LinkKind: olap.LinkIdentify, Identify: true}
			c.Event.Properties = "{}"
		}
		if res := w.Write(context.Background(), []olap.Capture{c}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
}

// webFixture: sessions crossing the range's start and end and midnight,
// a merged person (anon-1 identified as u1), a session without
// pageviews, bounces and not, two browsers, an event without a session.
func webFixture(day time.Time) []webEvent {
	h := func(d int, hh, mm, ss int) time.Time {
		return day.AddDate(0, 0, d).Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute + time.Duration(ss)*time.Second)
	}
	return []webEvent{
		// previous period (day -7 .. -1)
		{"u1", "u1", "p1", "$pageview", "/", "Chrome", "google.com", h(-3, 10, 0, 0)},
		{"u2", "u2", "p2", "$pageview", "/a", "Firefox", "", h(-2, 9, 0, 0)},
		{"u2", "u2", "p2", "$pageview", "/b", "Firefox", "", h(-2, 9, 1, 0)},
		// crossing the range's start: starts the day before, counts in the previous period
		{"u3", "u3", "edge1", "$pageview", "/late", "Chrome", "", h(-1, 23, 59, 0)},
		{"u3", "u3", "edge1", "$pageview", "/after", "Chrome", "", h(0, 0, 1, 0)},
		// current period
		{"u1", "anon-1", "s1", "$pageview", "/", "Chrome", "news.ycombinator.com", h(0, 8, 0, 0)},
		{"u1", "anon-1", "s1", "$autocapture", "/", "Chrome", "", h(0, 8, 0, 5)},
		{"u1", "u1", "", "$identify", "anon-1", "", "", h(0, 8, 0, 6)},
		{"u1", "u1", "s2", "$pageview", "/pricing", "Chrome", "", h(1, 12, 0, 0)},
		{"u4", "u4", "s3", "$pageview", "/", "Safari", "google.com", h(1, 13, 0, 0)},
		{"u4", "u4", "s3", "$pageview", "/docs", "Safari", "", h(1, 13, 0, 30)},
		{"u4", "u4", "s3", "$screen", "/docs", "Safari", "", h(1, 13, 1, 0)},
		// crossing midnight
		{"u5", "u5", "mid", "$pageview", "/blog", "Firefox", "", h(2, 23, 59, 50)},
		{"u5", "u5", "mid", "$pageview", "/blog/2", "Firefox", "", h(3, 0, 0, 20)},
		// no pageview
		{"u6", "u6", "nopv", "custom", "", "Chrome", "", h(3, 10, 0, 0)},
		{"u6", "u6", "nopv", "custom", "", "Chrome", "", h(3, 10, 0, 40)},
		// one pageview, 3 s, a bounce
		{"u7", "u7", "b1", "$pageview", "/", "Chrome", "", h(4, 10, 0, 0)},
		{"u7", "u7", "b1", "other", "", "Chrome", "", h(4, 10, 0, 3)},
		// no session
		{"u8", "u8", "", "$pageview", "/", "Chrome", "", h(4, 11, 0, 0)},
		// crossing the range's end: starts on the last day, ends after it
		{"u9", "u9", "edge2", "$pageview", "/end", "Chrome", "", h(6, 23, 59, 0)},
		{"u9", "u9", "edge2", "$pageview", "/next", "Chrome", "", h(7, 0, 2, 0)},
		// after the range
		{"u10", "u10", "later", "$pageview", "/", "Chrome", "", h(7, 12, 0, 0)},
	}
}

func TestWebOverviewAgainstTheReference(t *testing.T) {
	e := testEngine(t)
	team := newTeam()
	day := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	events := webFixture(day)
	writeWebEvents(t, e, team, events)
	now := day.AddDate(0, 0, 10)
	for _, c := range []struct{ name, body, browser string }{
		{"plain", `{"date_from": "2026-11-10", "date_to": "2026-11-16", "compare": true}`, ""},
		{"property", `{"date_from": "2026-11-10", "date_to": "2026-11-16", "compare": true, "properties": [{"key": "$browser", "value": "Chrome", "type": "event"}]}`, "Chrome"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := querybuilder.ParseBody([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			q, err := querybuilder.ParseWebOverview(p, querybuilder.Env{Project: querybuilder.Project{ID: team}, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			st, err := q.Build(querybuilder.Facts{})
			if err != nil {
				t.Fatal(err)
			}
			rows, err := e.Query(context.Background(), st)
			if err != nil {
				t.Fatalf("%v\n%s", err, st.SQL)
			}
			res, err := q.Shape(rows.Data)
			if err != nil {
				t.Fatal(err)
			}
			ss := foldWebSessions(events, c.browser)
			end := day.AddDate(0, 0, 7).Add(-time.Second)
			cur := refOverview(ss, day, end)
			prev := refOverview(ss, day.AddDate(0, 0, -7), day.Add(-time.Second))
			for i, it := range res.(*querybuilder.WebOverviewResult).Results {
				if show(it.Value) != show(cur[i]) || show(it.Previous) != show(prev[i]) {
					t.Errorf("%s: got %s / %s, want %s / %s", it.Key, show(it.Value), show(it.Previous), show(cur[i]), show(prev[i]))
				}
			}
		})
	}
}

func show(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%.6f", *v)
}
