package querybuilder

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The fuzz targets check what the API relies on: any input either parses
// into a request that builds and shapes, or fails with validation errors
// only (a 400), never a panic or an untyped error (a 500). Seeds are here
// and under testdata/fuzz; run with go test -fuzz=FuzzParseTrends.

var fuzzProject = Project{ID: 7, Timezone: "America/New_York", WeekStartDay: 1,
	TestAccountFilters: json.RawMessage(`[{"key": "email", "operator": "not_icontains", "value": "@test.com", "type": "person"}]`)}

// fuzzFacts are the engine's facts the fuzzed requests build with.
var fuzzFacts = Facts{FirstEvent: time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)}

// checkValidation fails unless err holds validation errors only, each
// naming its parameter.
func checkValidation(t *testing.T, err error) {
	t.Helper()
	ves := ValidationErrors(err)
	if len(ves) == 0 {
		t.Fatalf("an error that is not a validation error: %v", err)
	}
	for _, ve := range ves {
		if ve.Attr == "" || ve.Detail == "" {
			t.Fatalf("a validation error without attr or detail: %#v", ve)
		}
	}
}

func checkTrends(t *testing.T, p Params) {
	q, err := ParseTrends(p, Env{Project: fuzzProject, Now: testNow})
	if err != nil {
		checkValidation(t, err)
		return
	}
	stmt, err := BuildTrends(q, fuzzFacts)
	if err != nil {
		// Only date_from=all resolves its range with the facts.
		if !q.FromAll() {
			t.Fatalf("a valid request does not build: %v", err)
		}
		checkValidation(t, err)
		return
	}
	if strings.Contains(stmt.SQL, "{tz:String}") && stmt.Params["tz"] == nil {
		t.Fatal("tz is used but not bound")
	}
	if _, err := ShapeTrends(q, nil); err != nil {
		t.Fatalf("a valid request does not shape: %v", err)
	}
}

func FuzzParseTrends(f *testing.F) {
	for _, s := range []string{
		`{"events": [{"id": "$pageview"}]}`,
		`{"filters": {"events": [{"id": "$pageview", "math": "dau"}], "date_from": "-14d", "interval": "week"}}`,
		`{"events": [{"id": "a", "math": "p90", "math_property": "price"}, {"id": null, "math": "weekly_active"}], "formula": "A/B", "compare": true}`,
		`{"events": [{"id": "a", "properties": [{"key": "x", "value": "^a", "operator": "regex"}]}], "breakdown": "$browser", "breakdown_limit": 3}`,
		`{"events": [{"id": "a"}], "properties": {"type": "OR", "values": [{"key": "plan", "value": ["a", "b"], "type": "person"}]}, "filter_test_accounts": true}`,
		`{"events": [{"id": "a", "math": "avg_count_per_actor"}], "display": "BoldNumber", "date_from": "all", "interval": "month"}`,
		`{"events": [{"id": "a"}], "date_from": "-1mStart", "date_to": "-1mEnd", "interval": "hour"}`,
		`{"events": "[{\"id\": \"a\"}]", "properties": "{\"$os\": \"Mac\"}"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p, err := ParseBody([]byte(body))
		if err != nil {
			if len(ValidationErrors(err)) == 0 {
				t.Fatalf("a body error that is not a validation error: %v", err)
			}
			return
		}
		checkTrends(t, p)
	})
}

func FuzzParseTrendsQueryString(f *testing.F) {
	for _, s := range []string{
		`events=[{"id":"$pageview"}]&date_from=-7d`,
		`events=[{"id":"$pageview","math":"dau"}]&breakdown=$browser&breakdown_limit=5&compare=true`,
		`events=[{"id":"a"},{"id":"b"}]&formula=A%2BB&interval=hour&date_from=-24h&display=ActionsLineGraphCumulative`,
		`events=[{"id":"a"}]&properties=[{"key":"n","value":"5","operator":"gt"}]&date_from=2026-01-01&date_to=2026-01-31`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		v, err := url.ParseQuery(query)
		if err != nil {
			return // the HTTP layer refuses a query string it cannot read
		}
		checkTrends(t, ParseQuery(v))
	})
}

func FuzzDateGrammar(f *testing.F) {
	for _, s := range []string{"-7d", "dStart", "-1mStart", "mStart", "-1yEnd", "-24h", "-30M", "-2w", "-3q", "all",
		"2026-01-05", "2026-01-05T10:00:00", "2026-01-05T10:00:00Z", "2026-01-05 10:00:00+05:30", "-999999y", ""} {
		f.Add(s, "-7d", uint8(1), int64(0))
	}
	zones := []string{"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"}
	intervals := []Interval{IntervalHour, IntervalDay, IntervalWeek, IntervalMonth}
	f.Fuzz(func(t *testing.T, from, to string, choice uint8, shift int64) {
		loc := mustLoad(zones[int(choice)%len(zones)])
		now := testNow.Add(time.Duration(shift%(50*365*24)) * time.Hour)
		c := clock{now: now, loc: loc, weekStart: time.Weekday(choice % 2)}
		if tm, _, err := c.parse(from, false); err == nil && (tm.Before(minDate) || !tm.Before(maxDate)) {
			t.Fatalf("%q parsed out of range: %s", from, tm)
		}
		pr := &problems{}
		r, ok := resolveRange(c, from, to, intervals[int(choice/8)%len(intervals)], time.Time{}, pr)
		if !ok {
			if len(ValidationErrors(pr.err())) == 0 {
				t.Fatal("refused without a validation error")
			}
			return
		}
		bs := r.Buckets()
		if len(bs) == 0 || len(bs) > MaxBuckets || len(bs) != r.count() {
			t.Fatalf("%q..%q: %d buckets, count %d", from, to, len(bs), r.count())
		}
		for i := 1; i < len(bs); i++ {
			if !bs[i].Start.After(bs[i-1].Start) || bs[i].Key == bs[i-1].Key {
				t.Fatalf("buckets out of order: %+v %+v", bs[i-1], bs[i])
			}
		}
		if r.From.Before(bs[0].Start) || r.To.Before(bs[len(bs)-1].Start) || !r.To.Before(bs[len(bs)-1].End) {
			t.Fatalf("range %s..%s outside its buckets", r.From, r.To)
		}
		p := r.previous()
		if got := len(p.Buckets()); got != len(bs) {
			t.Fatalf("previous period has %d buckets, current %d", got, len(bs))
		}
	})
}
