package querybuilder

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// PathEdge is one step of paths: from the item at position i to the one
// at i+1 ("{i}_{item}"), taken by Value paths, AverageConversionTime
// milliseconds apart on average.
type PathEdge struct {
	Source                string  `json:"source"`
	Target                string  `json:"target"`
	Value                 int64   `json:"value"`
	AverageConversionTime float64 `json:"average_conversion_time"`
}

// PathsResult is a paths analysis' edges, most taken first.
type PathsResult []PathEdge

// Table implements Result: one row per edge.
func (r PathsResult) Table() ([]string, [][]string) {
	rows := make([][]string, len(r))
	for i, e := range r {
		rows[i] = []string{e.Source, e.Target, strconv.FormatInt(e.Value, 10), strconv.FormatFloat(e.AverageConversionTime, 'f', -1, 64)}
	}
	return []string{"source", "target", "value", "average_conversion_time"}, rows
}

// ShapePaths turns the statement's rows (pathsColumns, already ordered
// and limited) into edges. Without a weight filter, an edge whose source
// cannot be reached from a first item through the edges kept is dropped.
func ShapePaths(q *PathsQuery, rows [][]any) (PathsResult, error) {
	out := make(PathsResult, 0, len(rows))
	for _, r := range rows {
		if len(r) != len(pathsColumns) {
			return nil, fmt.Errorf("querybuilder: a paths row has %d columns, want %d", len(r), len(pathsColumns))
		}
		value, err := asInt(r[2])
		if err != nil {
			return nil, err
		}
		avg, err := asFloat(r[3])
		if err != nil {
			return nil, err
		}
		out = append(out, PathEdge{Source: fmt.Sprint(r[0]), Target: fmt.Sprint(r[1]), Value: int64(value), AverageConversionTime: avg})
	}
	if q.MinWeight > 0 || q.MaxWeight > 0 {
		return out, nil
	}
	return reachable(out), nil
}

// reachable keeps the edges whose source is a first item ("1_...") or the
// target of a kept edge. Every edge goes from position i to i+1, so
// deciding positions in increasing order decides each edge once.
func reachable(edges PathsResult) PathsResult {
	order := make([]int, len(edges))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return position(edges[order[a]].Source) < position(edges[order[b]].Source) })
	reached := map[string]bool{}
	keep := make([]bool, len(edges))
	for _, i := range order {
		e := edges[i]
		if position(e.Source) == 1 || reached[e.Source] {
			keep[i] = true
			reached[e.Target] = true
		}
	}
	out := edges[:0:0]
	for i, e := range edges {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out
}

// position is the 1-based position an edge end "{i}_{item}" names.
func position(node string) int {
	n, _ := strconv.Atoi(node[:max(strings.IndexByte(node, '_'), 0)])
	return n
}
