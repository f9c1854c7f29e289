package querybuilder

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RetentionResult is a retention analysis: one row per cohort, the rows
// of each breakdown value in turn.
type RetentionResult []RetentionRow

// RetentionRow is cohort k: its period's start and, per interval j after
// it, the cohort's actors who returned then (j = 0: the cohort's size).
type RetentionRow struct {
	Label          string           `json:"label"`
	Date           string           `json:"date"`
	Values         []RetentionValue `json:"values"`
	PeopleURL      string           `json:"people_url"`
	BreakdownValue *string          `json:"breakdown_value,omitempty"`
}

// RetentionValue is one cell.
type RetentionValue struct {
	Count     int    `json:"count"`
	People    []any  `json:"people"`
	PeopleURL string `json:"people_url"`
}

// periodName is a period's name in labels: Hour, Day, Week, Month.
func periodName(iv Interval) string {
	s := iv.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// Table implements Result: one row per cohort, a column per interval.
func (r RetentionResult) Table() ([]string, [][]string) {
	broken := len(r) > 0 && r[0].BreakdownValue != nil
	width := 0
	for _, row := range r {
		width = max(width, len(row.Values))
	}
	header := []string{"cohort", "date"}
	if broken {
		header = append(header, "breakdown_value")
	}
	unit := "Period"
	if len(r) > 0 {
		unit, _, _ = strings.Cut(r[0].Label, " ")
	}
	for j := 0; j < width; j++ {
		header = append(header, unit+" "+strconv.Itoa(j))
	}
	rows := make([][]string, len(r))
	for k, row := range r {
		cells := []string{row.Label, row.Date}
		if broken {
			cells = append(cells, *row.BreakdownValue)
		}
		for _, v := range row.Values {
			cells = append(cells, strconv.Itoa(v.Count))
		}
		// Later cohorts have fewer intervals: empty cells keep the table
		// rectangular.
		for len(cells) < len(header) {
			cells = append(cells, "")
		}
		rows[k] = cells
	}
	return header, rows
}

type retentionCell struct {
	value  string
	cohort int
	j      int
}

// ShapeRetention turns BuildRetention's rows into rows per cohort: every
// cohort and interval, zero-filled; with a breakdown, each value's rows
// in turn, values by cohort memberships (ties by value), "other" last.
func ShapeRetention(q *RetentionQuery, rows [][]any) (RetentionResult, error) {
	if q == nil || len(q.starts) != q.Intervals+1 {
		return nil, fmt.Errorf("querybuilder: ShapeRetention needs a request that ParseRetention validated")
	}
	counts := map[retentionCell]int{}
	volume := map[string]int{}
	for n, r := range rows {
		if len(r) != len(retentionColumns) {
			return nil, fmt.Errorf("retention row %d: %d columns, want %d", n, len(r), len(retentionColumns))
		}
		value, ok := r[0].(string)
		k, err1 := asInt(r[1])
		j, err2 := asInt(r[2])
		c, err3 := asInt(r[3])
		if !ok || err1 != nil || err2 != nil || err3 != nil || k < 0 || j < 0 || k+j >= q.Intervals {
			return nil, fmt.Errorf("retention row %d: unexpected values %v", n, r)
		}
		counts[retentionCell{value, k, j}] += c
		if j == 0 {
			volume[value] += c
		}
	}
	values := []string{""}
	if q.Breakdown != nil {
		values = values[:0]
		for v := range volume {
			values = append(values, v)
		}
		sort.Slice(values, func(a, b int) bool {
			x, y := values[a], values[b]
			if (x == BreakdownOther) != (y == BreakdownOther) {
				return y == BreakdownOther
			}
			if volume[x] != volume[y] {
				return volume[x] > volume[y]
			}
			return x < y
		})
	}
	out := RetentionResult{}
	name := periodName(q.Period)
	peopleURL := q.peopleURLs()
	for _, v := range values {
		for k := 0; k < q.Intervals; k++ {
			row := RetentionRow{Label: name + " " + strconv.Itoa(k), Date: q.starts[k].In(q.clock.loc).Format(time.RFC3339),
				PeopleURL: peopleURL(v, k, -1), Values: []RetentionValue{}}
			if q.Breakdown != nil {
				value := v
				row.BreakdownValue = &value
			}
			for j := 0; k+j < q.Intervals; j++ {
				row.Values = append(row.Values, RetentionValue{Count: counts[retentionCell{v, k, j}], People: []any{},
					PeopleURL: peopleURL(v, k, j)})
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// peopleURLs makes the people URLs of a result: the request, encoded
// once, and each cohort (j < 0) or cell.
func (q *RetentionQuery) peopleURLs() func(value string, k, j int) string {
	base := q.peopleBase("retention")
	return func(value string, k, j int) string {
		sel := map[string]string{"selected_interval": strconv.Itoa(k)}
		if q.Breakdown != nil {
			sel["breakdown_value"] = value
		}
		if j >= 0 {
			sel["returning_interval"] = strconv.Itoa(j)
		}
		return withSelection(base, sel)
	}
}
