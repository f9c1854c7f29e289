package analysistest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder/reference"
)

// SetCalendar sets p's timezone and week start and returns them as the
// reference's calendar.
func SetCalendar(t testing.TB, p Project, tz string, week int) reference.Calendar {
	t.Helper()
	p.Set(t, map[string]any{"timezone": tz, "week_start_day": week})
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	return reference.Calendar{Loc: loc, WeekStart: time.Weekday(week)}
}

type APIRetentionRow struct {
	Label  string `json:"label"`
	Date   string `json:"date"`
	Values []struct {
		Count int `json:"count"`
	} `json:"values"`
	BreakdownValue *string `json:"breakdown_value"`
}

func CheckRetention(t testing.TB, p Project, events []reference.Event, cal reference.Calendar, r reference.Retention) {
	t.Helper()
	body := map[string]any{"target_entity": map[string]any{"id": r.Target, "type": "events"},
		"returning_entity": map[string]any{"id": r.Returning, "type": "events"},
		"period":           r.Period, "total_intervals": r.Intervals, "date_to": r.DateTo.In(cal.Loc).Format("2006-01-02T15:04:05"),
		"date_from": "-1y"} // ignored
	if r.FirstTime {
		body["retention_type"] = "retention_first_time"
	}
	if r.Breakdown != "" {
		body["breakdown"] = r.Breakdown
		if r.PersonBreakdown {
			body["breakdown_type"] = "person"
		}
		if r.Limit > 0 {
			body["breakdown_limit"] = r.Limit
		} else {
			r.Limit = 25
		}
	}
	for k, v := range r.Extra {
		body[k] = v
	}
	var got []APIRetentionRow
	Result(t, p, "retention", body, &got)
	want := r.Rows(events, cal)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i, w := range want {
		g := got[i]
		var counts []int
		for _, v := range g.Values {
			counts = append(counts, v.Count)
		}
		date, err := time.Parse(time.RFC3339, g.Date)
		value := ""
		if g.BreakdownValue != nil {
			value = *g.BreakdownValue
		}
		if err != nil || !date.Equal(w.Date) || !reflect.DeepEqual(counts, w.Counts) || value != w.Value ||
			g.Label != fmt.Sprintf("%s %d", map[string]string{"hour": "Hour", "day": "Day", "week": "Week", "month": "Month"}[r.Period], i%r.Intervals) {
			t.Fatalf("row %d: got %s %s %q %v, want %s %q %v", i, g.Label, g.Date, value, counts, w.Date.Format(time.RFC3339), w.Value, w.Counts)
		}
	}
}
