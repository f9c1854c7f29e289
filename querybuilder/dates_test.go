package querybuilder

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var newYork = mustLoad("America/New_York")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// testNow is a Tuesday, two days after New York moved to summer time
// (8 March 2026, 02:00 EST -> 03:00 EDT): 11:30 EDT.
var testNow = time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)

func utc(y int, m time.Month, d, h, min, s, us int) time.Time {
	return time.Date(y, m, d, h, min, s, us*1000, time.UTC)
}

func TestDateGrammar(t *testing.T) {
	sunday := clock{now: testNow, loc: newYork, weekStart: time.Sunday}
	monday := clock{now: testNow, loc: newYork, weekStart: time.Monday}
	cases := []struct {
		in   string
		c    clock
		end  bool
		want time.Time // the expected instant, written in UTC by hand
	}{
		{"-7d", sunday, false, utc(2026, 3, 3, 16, 30, 0, 0)}, // 11:30 EST: the wall clock survives DST
		{"7d", sunday, false, utc(2026, 3, 3, 16, 30, 0, 0)},  // PostHog reads a bare count as past
		{"-24h", sunday, false, utc(2026, 3, 9, 15, 30, 0, 0)},
		{"-30M", sunday, false, utc(2026, 3, 10, 15, 0, 0, 0)},
		{"-2w", sunday, false, utc(2026, 2, 24, 16, 30, 0, 0)},
		{"-1m", sunday, false, utc(2026, 2, 10, 16, 30, 0, 0)},
		{"-1y", sunday, false, utc(2025, 3, 10, 15, 30, 0, 0)}, // 2025-03-10 was already EDT
		{"dStart", sunday, false, utc(2026, 3, 10, 4, 0, 0, 0)},
		{"-1dEnd", sunday, false, utc(2026, 3, 10, 3, 59, 59, 999999)},
		{"-1dStart", sunday, false, utc(2026, 3, 9, 4, 0, 0, 0)},
		{"hStart", sunday, false, utc(2026, 3, 10, 15, 0, 0, 0)},
		{"MStart", sunday, false, utc(2026, 3, 10, 15, 30, 0, 0)},
		{"mStart", sunday, false, utc(2026, 3, 1, 5, 0, 0, 0)}, // 1 March is EST
		{"-1mStart", sunday, false, utc(2026, 2, 1, 5, 0, 0, 0)},
		{"-1mEnd", sunday, false, utc(2026, 3, 1, 4, 59, 59, 999999)},
		{"qStart", sunday, false, utc(2026, 1, 1, 5, 0, 0, 0)},
		{"-1qStart", sunday, false, utc(2025, 10, 1, 4, 0, 0, 0)},
		{"yStart", sunday, false, utc(2026, 1, 1, 5, 0, 0, 0)},
		{"-1yEnd", sunday, false, utc(2026, 1, 1, 4, 59, 59, 999999)},
		{"wStart", sunday, false, utc(2026, 3, 8, 5, 0, 0, 0)}, // Sunday 00:00 EST
		{"wStart", monday, false, utc(2026, 3, 9, 4, 0, 0, 0)}, // Monday 00:00 EDT
		{"-1wStart", monday, false, utc(2026, 3, 2, 5, 0, 0, 0)},
		{"2026-01-05", sunday, false, utc(2026, 1, 5, 5, 0, 0, 0)},
		{"2026-01-05", sunday, true, utc(2026, 1, 6, 4, 59, 59, 999999)},
		{"2026-01-05T10:00:00", sunday, false, utc(2026, 1, 5, 15, 0, 0, 0)},
		{"2026-01-05T10:00:00", sunday, true, utc(2026, 1, 5, 15, 0, 0, 0)},
		{"2026-01-05 10:00", sunday, false, utc(2026, 1, 5, 15, 0, 0, 0)},
		{"2026-01-05T10:00:00.250", sunday, false, utc(2026, 1, 5, 15, 0, 0, 250000)},
		{"2026-01-05T10:00:00Z", sunday, false, utc(2026, 1, 5, 10, 0, 0, 0)},
		{"2026-01-05T10:00:00+01:00", sunday, false, utc(2026, 1, 5, 9, 0, 0, 0)},
		{" -7d ", sunday, false, utc(2026, 3, 3, 16, 30, 0, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.in+" is "+tc.want.Format(time.RFC3339Nano), func(t *testing.T) {
			got, _, err := tc.c.parse(tc.in, tc.end)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Fatalf("got %s (%s), want %s", got.UTC().Format(time.RFC3339Nano), got, tc.want.Format(time.RFC3339Nano))
			}
		})
	}
}

func TestMonthArithmeticClampsToTheMonthsEnd(t *testing.T) {
	c := clock{now: time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC), loc: time.UTC}
	got, _, err := c.parse("-1m", false)
	if err != nil || !got.Equal(utc(2026, 2, 28, 12, 0, 0, 0)) {
		t.Fatalf("31 March minus a month: %s, %v", got, err)
	}
	got, _, err = clock{now: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), loc: time.UTC}.parse("-1y", false)
	if err != nil || !got.Equal(utc(2023, 2, 28, 0, 0, 0, 0)) {
		t.Fatalf("29 February minus a year: %s, %v", got, err)
	}
}

func TestBadDatesAreRefused(t *testing.T) {
	c := clock{now: testNow, loc: newYork}
	for _, in := range []string{"", "yesterday", "-7x", "-7D", "-1234567d", "2026-13-01", "2026-02-30", "1969-12-31",
		"2200-01-01", "-300y", "--7d", "-7dstart", "7 days", "2026/01/05", "all"} {
		t.Run(in+" is refused", func(t *testing.T) {
			if got, _, err := c.parse(in, false); err == nil {
				t.Fatalf("parsed as %s", got)
			}
		})
	}
}

func rangeOf(t *testing.T, c clock, from, to string, iv Interval, first time.Time) DateRange {
	t.Helper()
	pr := &problems{}
	r, ok := resolveRange(c, from, to, iv, first, pr)
	if !ok {
		t.Fatal(pr.err())
	}
	return r
}

func keys(bs []Bucket, f func(Bucket) string) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = f(b)
	}
	return out
}

func TestRangesAlignToTheirIntervals(t *testing.T) {
	sunday := clock{now: testNow, loc: newYork, weekStart: time.Sunday}
	monday := clock{now: testNow, loc: newYork, weekStart: time.Monday}
	day := func(b Bucket) string { return b.Day }
	cases := []struct {
		name     string
		c        clock
		from, to string
		iv       Interval
		days     []string
	}{
		{"the default -7d by day is 7 full days and today", sunday, "", "", IntervalDay,
			[]string{"2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10"}},
		{"weeks start on Sunday", sunday, "2026-03-04", "2026-03-17", IntervalWeek, []string{"2026-03-01", "2026-03-08", "2026-03-15"}},
		{"weeks start on Monday", monday, "2026-03-04", "2026-03-17", IntervalWeek, []string{"2026-03-02", "2026-03-09", "2026-03-16"}},
		{"months", sunday, "2026-01-15", "2026-03-02", IntervalMonth, []string{"2026-01-01", "2026-02-01", "2026-03-01"}},
		{"hours are not rounded and end at now", sunday, "-3h", "", IntervalHour,
			[]string{"2026-03-10 08:00:00", "2026-03-10 09:00:00", "2026-03-10 10:00:00", "2026-03-10 11:00:00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rangeOf(t, tc.c, tc.from, tc.to, tc.iv, time.Time{})
			got := keys(r.Buckets(), day)
			if strings.Join(got, ",") != strings.Join(tc.days, ",") {
				t.Fatalf("days %v, want %v", got, tc.days)
			}
			if r.count() != len(tc.days) {
				t.Errorf("count %d, want %d", r.count(), len(tc.days))
			}
		})
	}
	t.Run("the default range runs from the first day's midnight to the last microsecond of today", func(t *testing.T) {
		r := rangeOf(t, sunday, "", "", IntervalDay, time.Time{})
		if !r.From.Equal(utc(2026, 3, 3, 5, 0, 0, 0)) || !r.To.Equal(utc(2026, 3, 11, 3, 59, 59, 999999)) {
			t.Fatalf("range %s .. %s", r.From.UTC(), r.To.UTC())
		}
	})
}

func TestHourBucketsAcrossDSTChanges(t *testing.T) {
	c := clock{now: testNow, loc: newYork}
	t.Run("the spring-forward day has 23 hours and no 02:00", func(t *testing.T) {
		bs := rangeOf(t, c, "2026-03-08", "2026-03-08", IntervalHour, time.Time{}).Buckets()
		if len(bs) != 23 {
			t.Fatalf("%d buckets", len(bs))
		}
		if bs[2].Day != "2026-03-08 03:00:00" || bs[2].Key != "2026-03-08 07:00:00" || bs[2].Label != "8-Mar-2026 03:00" {
			t.Fatalf("third bucket %+v", bs[2])
		}
	})
	t.Run("the fall-back day has 25 hours, 01:00 twice with distinct keys", func(t *testing.T) {
		bs := rangeOf(t, c, "2026-11-01", "2026-11-01", IntervalHour, time.Time{}).Buckets()
		if len(bs) != 25 {
			t.Fatalf("%d buckets", len(bs))
		}
		if bs[1].Day != "2026-11-01 01:00:00" || bs[2].Day != "2026-11-01 01:00:00" {
			t.Fatalf("days %s %s", bs[1].Day, bs[2].Day)
		}
		if bs[1].Key != "2026-11-01 05:00:00" || bs[2].Key != "2026-11-01 06:00:00" {
			t.Fatalf("keys %s %s", bs[1].Key, bs[2].Key)
		}
	})
	t.Run("day buckets across the change are calendar days", func(t *testing.T) {
		bs := rangeOf(t, c, "2026-03-07", "2026-03-09", IntervalDay, time.Time{}).Buckets()
		if got := keys(bs, func(b Bucket) string { return b.Key }); strings.Join(got, ",") != "2026-03-07,2026-03-08,2026-03-09" {
			t.Fatalf("keys %v", got)
		}
		if d := bs[1].End.Sub(bs[1].Start); d != 23*time.Hour {
			t.Fatalf("8 March lasts %s", d)
		}
	})
}

func TestRangeProblems(t *testing.T) {
	c := clock{now: testNow, loc: newYork}
	cases := []struct {
		name, from, to string
		iv             Interval
		attr           string
	}{
		{"date_from after date_to", "2026-03-05", "2026-03-01", IntervalDay, "date_from"},
		{"a bad date_from", "last tuesday", "", IntervalDay, "date_from"},
		{"a bad date_to", "", "soon", IntervalDay, "date_to"},
		{"date_to all", "", "all", IntervalDay, "date_to"},
		{"too many hourly buckets", "-2y", "", IntervalHour, "interval"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" names "+tc.attr, func(t *testing.T) {
			pr := &problems{}
			if _, ok := resolveRange(c, tc.from, tc.to, tc.iv, time.Time{}, pr); ok {
				t.Fatal("accepted")
			}
			ves := ValidationErrors(pr.err())
			if len(ves) != 1 || ves[0].Attr != tc.attr {
				t.Fatalf("errors %v", pr.err())
			}
		})
	}
}

func TestAllStartsAtTheFirstEvent(t *testing.T) {
	c := clock{now: testNow, loc: newYork}
	r := rangeOf(t, c, "all", "", IntervalDay, utc(2026, 2, 27, 3, 0, 0, 0)) // 26 Feb 22:00 EST
	if bs := r.Buckets(); bs[0].Key != "2026-02-26" || len(bs) != 13 {
		t.Fatalf("first %s, %d buckets", bs[0].Key, len(bs))
	}
	r = rangeOf(t, c, "all", "", IntervalDay, time.Time{})
	if bs := r.Buckets(); len(bs) != 1 || bs[0].Key != "2026-03-10" {
		t.Fatalf("a project without events: %v", bs)
	}
}

func TestPreviousPeriodHasTheSameBuckets(t *testing.T) {
	c := clock{now: testNow, loc: newYork, weekStart: time.Monday}
	day := func(b Bucket) string { return b.Key }
	cases := []struct {
		from, to string
		iv       Interval
		want     []string
	}{
		{"-2d", "", IntervalDay, []string{"2026-03-05", "2026-03-06", "2026-03-07"}},
		{"2026-03-04", "2026-03-17", IntervalWeek, []string{"2026-02-09", "2026-02-16", "2026-02-23"}},
		{"2026-01-15", "2026-03-02", IntervalMonth, []string{"2025-10-01", "2025-11-01", "2025-12-01"}},
		{"-2h", "", IntervalHour, []string{"2026-03-10 10:00:00", "2026-03-10 11:00:00", "2026-03-10 12:00:00"}},
	}
	for _, tc := range cases {
		t.Run(tc.iv.String()+" "+tc.from, func(t *testing.T) {
			p := rangeOf(t, c, tc.from, tc.to, tc.iv, time.Time{}).previous()
			if got := keys(p.Buckets(), day); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("previous %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCompareToStartsThePreviousPeriodThatMuchEarlier(t *testing.T) {
	c := clock{now: testNow, loc: newYork, weekStart: time.Monday}
	day := func(b Bucket) string { return b.Key }
	cases := []struct {
		from, to string
		iv       Interval
		unit     byte
		n        int
		want     []string
	}{
		{"2026-03-09", "2026-03-12", IntervalDay, 'w', 1, []string{"2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05"}},
		{"2026-03-01", "2026-03-31", IntervalMonth, 'y', 1, []string{"2025-03-01"}},
		{"2026-03-04", "2026-03-17", IntervalWeek, 'm', 1, []string{"2026-02-02", "2026-02-09", "2026-02-16"}},
		{"-2h", "", IntervalHour, 'd', 1, []string{"2026-03-09 13:00:00", "2026-03-09 14:00:00", "2026-03-09 15:00:00"}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s -%d%c", tc.iv, tc.from, tc.n, tc.unit), func(t *testing.T) {
			r := rangeOf(t, c, tc.from, tc.to, tc.iv, time.Time{})
			r.compareUnit, r.compareN = tc.unit, tc.n
			if got := keys(r.previous().Buckets(), day); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("previous %v, want %v", got, tc.want)
			}
		})
	}
}
