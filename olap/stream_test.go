package olap

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/insightd/insightd/querybuilder/chsql"
)

func TestStreamHandsEveryRowOverInOrderWithoutHoldingTheResult(t *testing.T) {
	const n = 1_000_000
	stmt := chsql.Statement{
		SQL:    "SELECT number AS n, toString(number) AS s, [number, number + 1] AS a FROM numbers({n:UInt64}) ORDER BY n",
		Params: map[string]any{"n": uint64(n)},
	}
	var cols []Column
	next := uint64(0)
	var before, peak runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := engine.Stream(context.Background(), stmt, func(c []Column) error { cols = c; return nil }, func(row []any) error {
		if row[0] != next || row[1] != itoa(next) || len(row[2].([]any)) != 2 || row[2].([]any)[1] != next+1 {
			t.Fatalf("row %d: %v", next, row)
		}
		next++
		if next%100_000 == 0 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.HeapAlloc {
				peak = m
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if next != n || len(cols) != 3 || cols[0].Name != "n" || cols[0].Type != "UInt64" || cols[2].Type != "Array(UInt64)" {
		t.Fatalf("%d rows, columns %v", next, cols)
	}
	// The rows as text are ~30 MB, as Go values several times that: the
	// heap while they pass holds a chunk's, not all of them.
	if grew := int64(peak.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
		t.Fatalf("heap grew %d MiB while streaming", grew>>20)
	}
}

func TestStreamStopsWhenTheReaderFailsAndTheEngineGoesOn(t *testing.T) {
	stop := errors.New("client went away")
	rows := 0
	err := engine.Stream(context.Background(), chsql.Statement{SQL: "SELECT number FROM numbers(10000000)"},
		func([]Column) error { return nil },
		func([]any) error {
			rows++
			if rows == 1000 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) || rows != 1000 {
		t.Fatalf("rows %d, err %v", rows, err)
	}
	for i := 0; i < 10; i++ { // every pooled connection answers afterwards
		got, err := engine.Query(context.Background(), chsql.Statement{SQL: "SELECT 42 AS x"})
		if err != nil || len(got.Data) != 1 || got.Data[0][0] != uint64(42) {
			t.Fatalf("after a stopped stream: %v %v", got, err)
		}
	}
}

// The embedded engine names the columns of an empty result: chDB hands
// over one chunk with the header and no rows, whatever the statement's
// shape (a filter that keeps nothing, an empty join's side, a grouping
// of nothing). The CSV export does not rely on it (api/actors_csv.go).
func TestStreamNamesTheColumnsOfAnEmptyResult(t *testing.T) {
	for _, sql := range []string{
		"SELECT number AS x FROM numbers(0)",
		"SELECT number AS x FROM numbers(10) WHERE number > 100 ORDER BY x",
		"SELECT a.number AS x FROM (SELECT number FROM numbers(10)) AS b RIGHT JOIN (SELECT number FROM numbers(10) WHERE number > 100) AS a ON a.number = b.number ORDER BY x",
		"SELECT x FROM (SELECT number AS x FROM numbers(100000) WHERE number > 1000000 GROUP BY x) ORDER BY x",
	} {
		var cols []Column
		calls := 0
		err := engine.Stream(context.Background(), chsql.Statement{SQL: sql},
			func(c []Column) error { cols = c; calls++; return nil }, func([]any) error { t.Fatal("a row of nothing"); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if calls != 1 || len(cols) != 1 || cols[0] != (Column{Name: "x", Type: "UInt64"}) {
			t.Fatalf("%s: columns handed over %d times: %v", sql, calls, cols)
		}
	}
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func TestStreamReadsRowsOfTextAsTheGenericDecoderDoes(t *testing.T) {
	stmt := chsql.Statement{
		SQL: `SELECT toString(number) AS n, {a:String} AS a, concat('{"k":"', toString(number), '\\"q\\"', '"}') AS j, '' AS e
FROM numbers(200000) ORDER BY number`,
		Params: map[string]any{"a": "tab\there, \"quotes\", [brackets], é, \U0001F600, \\ and \u0001"},
	}
	var text, generic [][]any
	cols := func([]Column) error { return nil }
	if err := engine.Stream(context.Background(), stmt, cols, func(r []any) error { text = append(text, r); return nil }); err != nil {
		t.Fatal(err)
	}
	all, err := engine.Query(context.Background(), stmt)
	if err != nil {
		t.Fatal(err)
	}
	generic = all.Data
	if len(text) != 200000 || len(generic) != len(text) {
		t.Fatalf("%d and %d rows", len(text), len(generic))
	}
	for i := range text {
		for j := range text[i] {
			if text[i][j] != generic[i][j] {
				t.Fatalf("row %d column %d: %q, the generic decoder %q", i, j, text[i][j], generic[i][j])
			}
		}
	}
	if text[7][2] != `{"k":"7\"q\""}` || text[0][1] != stmt.Params["a"] {
		t.Fatalf("%q %q", text[7][2], text[0][1])
	}
}
