package querybuilder

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Interval is the width of a time bucket.
type Interval int

// The intervals analytics.md allows.
const (
	IntervalHour Interval = iota + 1
	IntervalDay
	IntervalWeek
	IntervalMonth
)

// ParseInterval reads an interval name (hour, day, week, month).
func ParseInterval(s string) (Interval, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "hour":
		return IntervalHour, true
	case "day":
		return IntervalDay, true
	case "week":
		return IntervalWeek, true
	case "month":
		return IntervalMonth, true
	}
	return 0, false
}

func (i Interval) String() string {
	switch i {
	case IntervalHour:
		return "hour"
	case IntervalDay:
		return "day"
	case IntervalWeek:
		return "week"
	case IntervalMonth:
		return "month"
	}
	return "unknown"
}

// unit is the date grammar's unit letter the interval aligns to.
func (i Interval) unit() byte {
	switch i {
	case IntervalHour:
		return 'h'
	case IntervalWeek:
		return 'w'
	case IntervalMonth:
		return 'm'
	}
	return 'd'
}

// MaxBuckets bounds the points of one series: an hourly trend over years
// would make a response no client can draw and a query that never ends.
const MaxBuckets = 10_000

// ClickHouse's DateTime64 holds 1900-2299; requests stay well inside it
// so that no date arithmetic in the engine can overflow.
var (
	minDate = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDate = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// relativeDate is the relative grammar: an optional minus, a count
// (absent means 0: "mStart" is the start of this month), a unit (h hours,
// d days, w weeks, m months, q quarters, y years, M minutes) and an
// optional Start/End that moves to the start or end of that unit. The
// count is always subtracted, as PostHog does ("7d" means "-7d").
var relativeDate = regexp.MustCompile(`^-?([0-9]{0,6})([hdwmqyM])(Start|End)?$`)

// Absolute forms. Without an offset a date-time is wall-clock time in the
// project's timezone.
var (
	naiveLayouts = []string{
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04",
		"2006-01-02 15:04",
	}
	zonedLayouts = []string{
		time.RFC3339Nano,
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04Z07:00",
		"2006-01-02 15:04Z07:00",
	}
)

const dateGrammar = "use an ISO date (2026-01-31), a date-time (2026-01-31T10:00:00, optionally with an offset), " +
	"or a relative date -N followed by h, d, w, m, q, y or M with an optional Start or End (-7d, -1mStart, dStart)"

// clock evaluates dates for one project at one instant.
type clock struct {
	now       time.Time
	loc       *time.Location
	weekStart time.Weekday
}

// parse evaluates one date expression. end says the value closes a range
// (date_to): a bare date then means the end of that day. dateOnly reports
// a bare date, which some callers treat as the whole day.
func (c clock) parse(s string, end bool) (t time.Time, dateOnly bool, err error) {
	s = strings.TrimSpace(s)
	if m := relativeDate.FindStringSubmatch(s); m != nil {
		n := 0
		if m[1] != "" {
			n, _ = strconv.Atoi(m[1]) // at most six digits
		}
		t = c.shift(c.now.In(c.loc), m[2][0], -n)
		switch m[3] {
		case "Start":
			t = c.startOf(m[2][0], t)
		case "End":
			t = c.endOf(m[2][0], t)
		}
		return t, false, c.inRange(s, t)
	}
	if d, err := time.ParseInLocation("2006-01-02", s, c.loc); err == nil {
		if end {
			d = c.endOf('d', d)
		}
		return d, true, c.inRange(s, d)
	}
	for _, layout := range naiveLayouts {
		if t, err := time.ParseInLocation(layout, s, c.loc); err == nil {
			return t, false, c.inRange(s, t)
		}
	}
	for _, layout := range zonedLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.In(c.loc)
			return t, false, c.inRange(s, t)
		}
	}
	return time.Time{}, false, fmt.Errorf("%q is not a date: %s", s, dateGrammar)
}

// CheckDate reports whether s is a date an analysis accepts as date_from
// (from true: "all" too) or date_to, for values stored now and read
// later (a dashboard's filters), so that a bad one is refused when saved
// rather than failing every tile after. A relative date is judged
// against today in UTC.
func CheckDate(s string, from bool) error {
	if strings.EqualFold(strings.TrimSpace(s), "all") {
		if from {
			return nil
		}
		return fmt.Errorf("date_to cannot be all: %s", dateGrammar)
	}
	_, _, err := clock{now: time.Now(), loc: time.UTC}.parse(s, !from)
	return err
}

func (c clock) inRange(s string, t time.Time) error {
	if t.Before(minDate) || !t.Before(maxDate) {
		return fmt.Errorf("%q is outside the dates an analysis can cover (1970 to 2199)", s)
	}
	return nil
}

// shift moves t by n units on the project's calendar: days, weeks,
// months, quarters and years keep the wall-clock time across DST
// changes; hours and minutes are absolute.
func (c clock) shift(t time.Time, unit byte, n int) time.Time {
	switch unit {
	case 'M':
		return t.Add(time.Duration(n) * time.Minute)
	case 'h':
		return t.Add(time.Duration(n) * time.Hour)
	case 'd':
		return addDays(t, n)
	case 'w':
		return addDays(t, 7*n)
	case 'm':
		return addMonths(t, n)
	case 'q':
		return addMonths(t, 3*n)
	case 'y':
		return addMonths(t, 12*n)
	}
	return t
}

func addDays(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+n, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

// addMonths clamps the day to the target month's length (31 March minus
// one month is 28 or 29 February), as PostHog's relativedelta does,
// instead of Go's overflow into the next month.
func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, t.Location())
	if last := daysIn(first); d > last {
		d = last
	}
	return time.Date(first.Year(), first.Month(), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

func daysIn(t time.Time) int {
	return time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, t.Location()).Day()
}

// startOf is the start of the unit holding t. Hours and minutes are cut
// on the instant (subtracting the wall-clock minutes and seconds), so the
// repeated hour of a DST fall-back keeps its own start.
func (c clock) startOf(unit byte, t time.Time) time.Time {
	t = t.In(c.loc)
	y, m, d := t.Date()
	switch unit {
	case 'M':
		return t.Add(-time.Duration(t.Second())*time.Second - time.Duration(t.Nanosecond()))
	case 'h':
		return t.Add(-time.Duration(t.Minute())*time.Minute - time.Duration(t.Second())*time.Second - time.Duration(t.Nanosecond()))
	case 'd':
		return time.Date(y, m, d, 0, 0, 0, 0, c.loc)
	case 'w':
		back := (int(t.Weekday()) - int(c.weekStart) + 7) % 7
		return time.Date(y, m, d-back, 0, 0, 0, 0, c.loc)
	case 'm':
		return time.Date(y, m, 1, 0, 0, 0, 0, c.loc)
	case 'q':
		return time.Date(y, (m-1)/3*3+1, 1, 0, 0, 0, 0, c.loc)
	case 'y':
		return time.Date(y, 1, 1, 0, 0, 0, 0, c.loc)
	}
	return t
}

// next is the start of the unit after the one starting at start.
func (c clock) next(unit byte, start time.Time) time.Time {
	y, m, d := start.Date()
	switch unit {
	case 'M':
		return start.Add(time.Minute)
	case 'h':
		return start.Add(time.Hour)
	case 'd':
		return time.Date(y, m, d+1, 0, 0, 0, 0, c.loc)
	case 'w':
		return time.Date(y, m, d+7, 0, 0, 0, 0, c.loc)
	case 'm':
		return time.Date(y, m+1, 1, 0, 0, 0, 0, c.loc)
	case 'q':
		return time.Date(y, m+3, 1, 0, 0, 0, 0, c.loc)
	case 'y':
		return time.Date(y+1, 1, 1, 0, 0, 0, 0, c.loc)
	}
	return start
}

// endOf is the last microsecond of the unit holding t: ranges are closed
// and timestamps have microsecond precision.
func (c clock) endOf(unit byte, t time.Time) time.Time {
	return c.next(unit, c.startOf(unit, t)).Add(-time.Microsecond)
}

// DateRange is a resolved analysis range: both ends inclusive, in the
// project's timezone, and the interval that buckets it.
type DateRange struct {
	From, To time.Time
	Interval Interval
	clock    clock
	// compareUnit and compareN move the compared period back by
	// compare_to (-1w: 'w' and 1) instead of by the range's own length.
	compareUnit byte
	compareN    int
	// explicit (explicit_date, the query nodes' dateRange.explicitDate)
	// reads events from exactFrom to exactTo, the dates as sent, while the
	// buckets stay aligned to the interval.
	explicit           bool
	exactFrom, exactTo time.Time
}

// bounds is the span of time the range reads events over: From and To,
// or with explicit_date the dates as sent.
func (r DateRange) bounds() (from, to time.Time) {
	if r.explicit {
		return r.exactFrom, r.exactTo
	}
	return r.From, r.To
}

// resolveRange evaluates date_from and date_to (empty means the defaults
// -7d and now) and aligns them to the interval: coarser than an hour,
// From is rounded down to the start of its interval and To up to its end.
func resolveRange(c clock, dateFrom, dateTo string, interval Interval, firstEvent time.Time, pr *problems) (DateRange, bool) {
	r := DateRange{Interval: interval, clock: c}
	ok := true
	to := c.now.In(c.loc)
	if dateTo != "" {
		if strings.EqualFold(strings.TrimSpace(dateTo), "all") {
			pr.add("date_to", "date_to cannot be all: %s", dateGrammar)
			ok = false
		} else if t, _, err := c.parse(dateTo, true); err != nil {
			pr.add("date_to", "date_to: %v", err)
			ok = false
		} else {
			to = t
		}
	}
	from := c.shift(c.now.In(c.loc), 'd', -7)
	switch {
	case strings.EqualFold(strings.TrimSpace(dateFrom), "all"):
		// Since the first event; a project without events gets the
		// interval that holds date_to, so the answer is one empty bucket.
		from = to
		if !firstEvent.IsZero() && firstEvent.Before(to) {
			from = firstEvent.In(c.loc)
		}
	case dateFrom != "":
		t, _, err := c.parse(dateFrom, false)
		if err != nil {
			pr.add("date_from", "date_from: %v", err)
			ok = false
		} else {
			from = t
		}
	}
	if !ok {
		return r, false
	}
	if from.After(to) {
		pr.add("date_from", "date_from (%s) is after date_to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
		return r, false
	}
	r.exactFrom, r.exactTo = from, to
	if interval != IntervalHour {
		from = c.startOf(interval.unit(), from)
		to = c.endOf(interval.unit(), to)
	}
	r.From, r.To = from, to
	if n := r.count(); n > MaxBuckets {
		pr.add("interval", "the range %s to %s has more than %d %s buckets: choose a coarser interval or a shorter range",
			from.Format(time.RFC3339), to.Format(time.RFC3339), MaxBuckets, interval)
		return r, false
	}
	return r, true
}

// count is the number of buckets, computed without building them.
func (r DateRange) count() int {
	from, to := r.From.In(r.clock.loc), r.To.In(r.clock.loc)
	switch r.Interval {
	case IntervalHour:
		return int(r.To.Sub(r.clock.startOf('h', from))/time.Hour) + 1
	case IntervalDay:
		return civilDays(from, to) + 1
	case IntervalWeek:
		return civilDays(r.clock.startOf('w', from), to)/7 + 1
	case IntervalMonth:
		return (to.Year()-from.Year())*12 + int(to.Month()) - int(from.Month()) + 1
	}
	return 0
}

// civilDays is the number of calendar days from a's date to b's date.
func civilDays(a, b time.Time) int {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	da := time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC)
	db := time.Date(by, bm, bd, 0, 0, 0, 0, time.UTC)
	return int(db.Sub(da).Hours() / 24)
}

// Bucket is one point of a series.
type Bucket struct {
	// Start is the bucket's first instant; End the first instant after it.
	Start, End time.Time
	// Key is the bucket as the generated SQL names it: the local date of
	// its start for day, week and month buckets; the UTC start for hours,
	// so the two hours of a DST fall-back stay apart.
	Key string
	// Day and Label are what a series shows: days (YYYY-MM-DD, or
	// YYYY-MM-DD HH:MM:SS for hours) and labels (2-Jan-2026, with the hour).
	Day, Label string
}

// Buckets lists the range's buckets in order.
func (r DateRange) Buckets() []Bucket {
	unit := r.Interval.unit()
	var out []Bucket
	for s := r.clock.startOf(unit, r.From); !s.After(r.To) && len(out) <= MaxBuckets; {
		e := r.clock.next(unit, s)
		b := Bucket{Start: s, End: e}
		if r.Interval == IntervalHour {
			b.Key = s.UTC().Format("2006-01-02 15:04:05")
			b.Day = s.Format("2006-01-02 15:04:05")
			b.Label = s.Format("2-Jan-2006 15:04")
		} else {
			b.Key = s.Format("2006-01-02")
			b.Day = b.Key
			b.Label = s.Format("2-Jan-2006")
		}
		out = append(out, b)
		s = e
	}
	return out
}

// previous is the period compare shows beside r: the same number of
// buckets, by default the n intervals just before r on the project's
// calendar, with compare_to the ones starting that much earlier.
func (r DateRange) previous() DateRange {
	n := r.count()
	p := r
	p.explicit = false
	if r.compareUnit != 0 {
		// compare_to: the same number of buckets from the shifted start.
		from := r.clock.shift(r.From, r.compareUnit, -r.compareN)
		if r.Interval == IntervalHour {
			p.From, p.To = from, from.Add(r.To.Sub(r.From))
			return p
		}
		p.From = r.clock.startOf(r.Interval.unit(), from)
		end := p.From
		for i := 0; i < n; i++ {
			end = r.clock.next(r.Interval.unit(), end)
		}
		p.To = end.Add(-time.Microsecond)
		return p
	}
	if r.Interval == IntervalHour {
		p.From = r.From.Add(-time.Duration(n) * time.Hour)
		p.To = r.To.Add(-time.Duration(n) * time.Hour)
		return p
	}
	unit, k := byte('d'), n
	switch r.Interval {
	case IntervalWeek:
		k = 7 * n
	case IntervalMonth:
		unit = 'm'
	}
	p.From = r.clock.shift(r.From, unit, -k)
	p.To = r.clock.shift(r.To.Add(time.Microsecond), unit, -k).Add(-time.Microsecond)
	return p
}
