package querybuilder_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// The result tests run trends on a small hand-built project in New York,
// whose events straddle the spring DST change (8 March 2026, 02:00 EST ->
// 03:00 EDT) and, for hours, the fall one (1 November 2026). Expected
// numbers are computed in the tests from the event list below with plain
// Go, never by the code under test.

var ny = func() *time.Location {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	return loc
}()

// at is a wall-clock time in New York.
func at(m time.Month, d, h, min int) time.Time { return time.Date(2026, m, d, h, min, 0, 0, ny) }

type fev struct {
	id    string // distinct id
	event string
	at    time.Time
	props map[string]any
	set   map[string]any // $set on the person
	link  string         // $identify: the anonymous id merged into this one
}

// fixtureEvents, in time order. anon-a is alice's anonymous visitor,
// merged into her by the $identify on 9 March (both had persons, so the
// merge goes through person_overrides). Person properties change over
// time: alice free -> pro (10 March), bob pro -> free (9 March).
var fixtureEvents = []fev{
	{id: "bob", event: "$pageview", at: at(2, 14, 12, 0), set: map[string]any{"email": "bob@corp.com", "plan": "pro"}},
	{id: "dave", event: "$pageview", at: at(2, 27, 12, 0), props: map[string]any{"$browser": "Edge"}},
	{id: "carol", event: "$pageview", at: at(3, 1, 12, 0), props: map[string]any{"$browser": "Firefox", "$session_id": "s0"},
		set: map[string]any{"email": "carol@corp.com"}},
	{id: "anon-a", event: "$pageview", at: at(3, 5, 9, 0), props: map[string]any{"$browser": "Chrome", "price": 10, "$session_id": "s1"}},
	{id: "anon-a", event: "$pageview", at: at(3, 5, 9, 5), props: map[string]any{"$browser": "Chrome", "price": 20, "$session_id": "s1"}},
	// 23:30 EST is 04:30 UTC the next day: the project's day, not UTC's.
	{id: "bob", event: "$pageview", at: at(3, 5, 23, 30), props: map[string]any{"$browser": "Safari", "price": 5, "$session_id": "s2", "$group_0": "acme"}},
	{id: "alice", event: "$pageview", at: at(3, 6, 8, 0), props: map[string]any{"$browser": "Firefox", "price": "7.5", "$session_id": "s3", "$group_0": "acme"},
		set: map[string]any{"email": "alice@corp.com", "plan": "free"}},
	{id: "carol", event: "$pageview", at: at(3, 6, 12, 0), props: map[string]any{"price": "abc", "$session_id": "s4"}},
	{id: "anon-a", event: "$pageview", at: at(3, 6, 13, 0), props: map[string]any{"$browser": "Chrome", "$session_id": "s5"}},
	{id: "erin", event: "$pageview", at: at(3, 7, 10, 0), props: map[string]any{"$browser": "Chrome", "price": 100, "$session_id": "s6", "$group_0": "testco"},
		set: map[string]any{"email": "erin@test.com", "plan": "pro"}},
	{id: "dave", event: "$pageview", at: at(3, 7, 19, 0), props: map[string]any{"$browser": "Edge", "price": 1, "$session_id": "s7"}},
	{id: "alice", event: "signup", at: at(3, 7, 20, 0)},
	// The DST day: 00:30 and 01:30 are EST, 03:30 and 23:30 EDT.
	{id: "bob", event: "$pageview", at: at(3, 8, 0, 30), props: map[string]any{"$browser": "Safari", "price": 3, "$session_id": "s8", "$group_0": "acme"}},
	{id: "bob", event: "$pageview", at: at(3, 8, 1, 30), props: map[string]any{"$browser": "Safari", "$session_id": "s8"}},
	{id: "carol", event: "$pageview", at: at(3, 8, 3, 30), props: map[string]any{"$browser": "Firefox", "price": 4, "$session_id": "s9"}},
	{id: "dave", event: "$pageview", at: at(3, 8, 23, 30), props: map[string]any{"$browser": "Edge", "price": 2, "$session_id": "s10"}},
	{id: "alice", event: "$identify", at: at(3, 9, 9, 0), link: "anon-a"},
	{id: "alice", event: "$pageview", at: at(3, 9, 9, 10), props: map[string]any{"$browser": "Chrome", "price": 8, "$session_id": "s11", "$group_0": "acme"}},
	{id: "bob", event: "$pageview", at: at(3, 9, 10, 0), props: map[string]any{"$browser": "Safari", "price": 6, "$session_id": "s12"},
		set: map[string]any{"plan": "free"}},
	{id: "bob", event: "signup", at: at(3, 9, 10, 5)},
	{id: "alice", event: "$pageview", at: at(3, 10, 10, 0), props: map[string]any{"$browser": "Chrome", "price": 12, "$session_id": "s13"},
		set: map[string]any{"plan": "pro"}},
	{id: "erin", event: "$pageview", at: at(3, 10, 11, 0), props: map[string]any{"$browser": "Chrome", "$session_id": "s14"}},
	{id: "carol", event: "$pageview", at: at(3, 10, 23, 59), props: map[string]any{"$browser": "Opera", "price": 9, "$session_id": "s15"}},
	{id: "dave", event: "$pageview", at: at(3, 11, 0, 1), props: map[string]any{"$browser": "Edge", "$session_id": "s16"}},
	{id: "alice", event: "signup", at: at(3, 11, 18, 0)},
	{id: "alice", event: "$pageview", at: at(3, 12, 9, 0), props: map[string]any{"$browser": "Chrome", "price": 15, "$session_id": "s17"}},
	{id: "bob", event: "$pageview", at: at(3, 12, 9, 0), props: map[string]any{"price": 2, "$session_id": "s18"}},
	// 23:30 EDT on 31 March is 1 April in UTC: still March here.
	{id: "alice", event: "$pageview", at: at(3, 31, 23, 30), props: map[string]any{"$browser": "Chrome"}},
	{id: "carol", event: "$pageview", at: at(4, 2, 10, 0)},
	// The fall-back day: 01:30 EDT, then 01:30 EST an hour later.
	{id: "dave", event: "$pageview", at: time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)},
	{id: "dave", event: "$pageview", at: time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC)},
	{id: "carol", event: "$pageview", at: time.Date(2026, 11, 1, 17, 0, 0, 0, time.UTC)},
}

// person is who a distinct id is now.
func person(id string) string {
	if id == "anon-a" {
		return "alice"
	}
	return id
}

// Current person properties, read off the $set history above by hand.
var (
	currentPlan  = map[string]string{"alice": "pro", "bob": "free", "erin": "pro"}
	currentEmail = map[string]string{"alice": "alice@corp.com", "bob": "bob@corp.com", "carol": "carol@corp.com", "erin": "erin@test.com"}
)

// fixture writes the events through the ingestion writer (so persons,
// $set and the merge are real) into a fresh project, once per test binary.
type fixture struct {
	team int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	eng := testEngine(t)
	f := &fixture{team: newTeam()}
	w := olap.NewWriter(eng, slog.New(slog.NewTextHandler(io.Discard, nil)), olap.WriterConfig{})
	defer w.Close()
	for _, e := range fixtureEvents {
		props, err := json.Marshal(e.props)
		if err != nil {
			t.Fatal(err)
		}
		if e.props == nil {
			props = []byte("{}")
		}
		c := olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: f.team, Event: e.event, DistinctID: e.id,
			Timestamp: e.at.UTC(), Properties: string(props)}}
		if e.set != nil || e.link != "" {
			u := &olap.PersonUpdate{Set: map[string]json.RawMessage{}}
			for k, v := range e.set {
				u.Set[k], _ = json.Marshal(v)
			}
			if e.link != "" {
				u.Link, u.LinkKind, u.Identify = e.link, olap.LinkIdentify, true
			}
			c.Person = u
		}
		// One write per event, in time order, as a client would send them.
		if res := w.Write(context.Background(), []olap.Capture{c}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	return f
}

// project is the fixture's project as the query builder sees it.
func (f *fixture) project(weekStart int) querybuilder.Project {
	return querybuilder.Project{ID: f.team, Timezone: "America/New_York", WeekStartDay: weekStart,
		TestAccountFilters: json.RawMessage(`[{"key": "email", "value": "@test.com", "operator": "not_icontains", "type": "person"}]`)}
}

// testNow is after every fixture event but November's.
var resultNow = at(3, 13, 12, 0)

// run answers a trends request on the engine, as the API does.
func (f *fixture) run(t *testing.T, body string, weekStart int) []querybuilder.TrendSeries {
	t.Helper()
	p, err := querybuilder.ParseBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	q, err := querybuilder.ParseTrends(p, querybuilder.Env{Project: f.project(weekStart), Now: resultNow})
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := querybuilder.BuildTrends(q, querybuilder.Facts{FirstEvent: fixtureEvents[0].at})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := testEngine(t).Query(context.Background(), stmt)
	if err != nil {
		t.Fatalf("%v\n%s", err, stmt)
	}
	res, err := querybuilder.ShapeTrends(q, rows.Data)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Expected values, computed by hand-written Go over fixtureEvents.

func localDay(t time.Time) string { return t.In(ny).Format("2006-01-02") }

// days lists the local dates from..to.
func days(from, to string) []string {
	a, _ := time.Parse("2006-01-02", from)
	b, _ := time.Parse("2006-01-02", to)
	var out []string
	for d := a; !d.After(b); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format("2006-01-02"))
	}
	return out
}

// pageviewsOn are the $pageview events of one local day.
func eventsOn(event, day string) []fev {
	var out []fev
	for _, e := range fixtureEvents {
		if e.event == event && localDay(e.at) == day {
			out = append(out, e)
		}
	}
	return out
}

// perDay applies f to each day's $pageview events.
func perDay(ds []string, f func([]fev) float64) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = f(eventsOn("$pageview", d))
	}
	return out
}

func count(es []fev) float64 { return float64(len(es)) }

func distinct(es []fev, key func(fev) string) float64 {
	seen := map[string]bool{}
	for _, e := range es {
		if k := key(e); k != "" {
			seen[k] = true
		}
	}
	return float64(len(seen))
}

func personKey(e fev) string { return person(e.id) }

func propString(e fev, k string) string {
	switch v := e.props[k].(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	}
	return ""
}

// numbers are the event's numeric prices: numbers and numeric strings,
// nothing else.
func prices(es []fev) []float64 {
	var out []float64
	for _, e := range es {
		switch v := e.props["price"].(type) {
		case int:
			out = append(out, float64(v))
		case string:
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// quantile is the linear interpolation between closest ranks (R-7,
// numpy's default).
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	h := p * float64(len(s)-1)
	lo := math.Floor(h)
	if int(lo)+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[int(lo)] + (h-lo)*(s[int(lo)+1]-s[int(lo)])
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

func reduce(xs []float64, f func([]float64) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return f(xs)
}

// perPersonCounts is each person's number of events.
func perPersonCounts(es []fev) []float64 {
	n := map[string]float64{}
	for _, e := range es {
		n[person(e.id)]++
	}
	var out []float64
	for _, c := range n {
		out = append(out, c)
	}
	return out
}

func sameNumbers(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}
