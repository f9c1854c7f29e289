// Command sqlfiles times SQL statements straight on the loaded engine, to
// compare variants of a generated statement as ratios measured in the same
// run: each round runs every file once, in the order given, so the files
// share the machine's state; the first file is the baseline of the ratios.
//
//	go run ./benchmarks/sqlfiles -data-dir .data/bench100m -chdb-lib .deps/chdb/libchdb.so -rounds 7 A.sql B.sql
//
// A file holds one statement; {team:Int64} is bound to -project. The
// statements' answers are printed once (the first rows), so that variants
// can be checked to agree.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

func main() {
	dataDir := flag.String("data-dir", os.Getenv("INSIGHTD_DATA_DIR"), "data directory of the loaded project (its olap/ holds the engine)")
	chdbLib := flag.String("chdb-lib", os.Getenv("INSIGHTD_CHDB_LIB"), "path of libchdb.so")
	project := flag.Int64("project", 1, "the loaded project id, bound to {team:Int64}")
	rounds := flag.Int("rounds", 7, "timed rounds (after one untimed warm-up round)")
	show := flag.Int("show", 3, "answer rows to print per file")
	flag.Parse()
	if *dataDir == "" || *chdbLib == "" || *rounds < 1 || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "sqlfiles: need -data-dir, -chdb-lib, -rounds >= 1 and SQL files")
		os.Exit(2)
	}
	stmts := make([]querybuilder.Statement, flag.NArg())
	for i, f := range flag.Args() {
		b, err := os.ReadFile(f)
		check(err)
		stmts[i] = querybuilder.Statement{SQL: string(b), Params: map[string]any{"team": *project}}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	engine, err := olap.OpenEmbedded(olap.Config{ChDBLib: *chdbLib, DataDir: filepath.Join(*dataDir, "olap"),
		QueryTimeout: 10 * time.Minute, Connections: 2}, log)
	check(err)
	defer engine.Close()

	wall := make([][]time.Duration, len(stmts))
	cpu := make([][]time.Duration, len(stmts))
	for round := 0; round <= *rounds; round++ {
		for i, st := range stmts {
			c0, t0 := cpuTime(), time.Now()
			rows, err := engine.Query(context.Background(), st)
			w, c := time.Since(t0), cpuTime()-c0
			if err != nil {
				fmt.Fprintf(os.Stderr, "sqlfiles: %s: %v\n", flag.Arg(i), err)
				os.Exit(1)
			}
			if round == 0 {
				fmt.Printf("%s answers:\n", flag.Arg(i))
				for j, r := range rows.Data {
					if j == *show {
						break
					}
					fmt.Println("  ", r)
				}
				continue
			}
			wall[i], cpu[i] = append(wall[i], w), append(cpu[i], c)
		}
	}
	fmt.Printf("\n| file | wall, median (ms) | process CPU, median (ms) | wall / %s |\n|---|---|---|---|\n", filepath.Base(flag.Arg(0)))
	for i := range stmts {
		fmt.Printf("| %s | %.1f | %.1f | %.2f |\n", filepath.Base(flag.Arg(i)), loaded.Ms(loaded.Median(wall[i])),
			loaded.Ms(loaded.Median(cpu[i])), float64(loaded.Median(wall[i]))/float64(loaded.Median(wall[0])))
	}
}

// cpuTime is the CPU time the process (the engine included) has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sqlfiles:", err)
		os.Exit(1)
	}
}
