package benchmarks

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/chdb"
	"github.com/insightd/insightd/querybuilder"
)

// The olap engine and a bare chDB connection on the same data directory,
// opened on first use so that `go test ./...` without -bench loads nothing.
var (
	openOnce sync.Once
	engine   *olap.Embedded
	direct   *chdb.Conn
	openErr  error
)

func open(b *testing.B) {
	b.Helper()
	openOnce.Do(func() {
		lib := os.Getenv("INSIGHTD_CHDB_LIB")
		if lib == "" {
			openErr = errLib
			return
		}
		dir, err := os.MkdirTemp("", "insightd-bench-")
		if err != nil {
			openErr = err
			return
		}
		engine, openErr = olap.OpenEmbedded(olap.Config{ChDBLib: lib, DataDir: dir, QueryTimeout: time.Minute, Connections: 8},
			slog.New(slog.NewTextHandler(io.Discard, nil)))
		if openErr != nil {
			return
		}
		l, err := chdb.Load(lib)
		if err != nil {
			openErr = err
			return
		}
		direct, openErr = l.Connect(dir, "--session_timezone=UTC")
	})
	if openErr != nil {
		b.Fatal(openErr)
	}
}

type libError string

func (e libError) Error() string { return string(e) }

const errLib = libError("INSIGHTD_CHDB_LIB is not set: run `make bench` or set it to libchdb.so")

// The trivial query: one bound parameter, one row back.
const trivialSQL = "SELECT {n:UInt64} + 1 AS n"

// BenchmarkTrivialQuery compares a trivial query through olap.Engine
// (pool, query id tag, cancellation watch, parameter encoding, JSON rows
// decoded into Go values) with the same SQL straight through chDB's C API
// (parameters pre-encoded, output bytes not decoded).
func BenchmarkTrivialQuery(b *testing.B) {
	open(b)
	ctx := context.Background()
	b.Run("olap", func(b *testing.B) {
		for b.Loop() {
			rows, err := engine.Query(ctx, querybuilder.Statement{SQL: trivialSQL, Params: map[string]any{"n": 41}})
			if err != nil || rows.Data[0][0] != uint64(42) {
				b.Fatal(err, rows)
			}
		}
	})
	b.Run("chdb-direct", func(b *testing.B) {
		params := map[string]string{"n": "41"}
		for b.Loop() {
			res, err := direct.Query(trivialSQL, "JSONCompactEachRowWithNamesAndTypes", params)
			if err != nil || len(res.Data) == 0 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTrivialQueryParallel runs the olap query from many goroutines
// (GOMAXPROCS x -cpu), where the connection pool lets statements overlap;
// the direct connection runs one statement at a time by chDB's design.
func BenchmarkTrivialQueryParallel(b *testing.B) {
	open(b)
	ctx := context.Background()
	b.Run("olap", func(b *testing.B) {
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := engine.Query(ctx, querybuilder.Statement{SQL: trivialSQL, Params: map[string]any{"n": 41}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
