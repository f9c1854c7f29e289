// Command sqlfiles times SQL statements straight on the loaded engine, to
// compare variants of a generated statement as ratios measured in the same
// run: each round runs every file once, round r starting with file r mod
// n (the first statement after another pays for reading the columns that
// one did not), so the files share the machine's state; the first file is
// the baseline of the ratios, taken round by round. Timed statements run
// with their result discarded (FORMAT Null): returning rows to Go would
// time the transfer. It prints per file the median wall time with its
// range (min-max), the median process CPU time (the engine runs in this
// process) and the ratios to the first file, of wall and CPU time.
//
//	go run ./benchmarks/sqlfiles -write DIR funnel.json ...   # DIR/funnel.sql and DIR/funnel.params.json
//	go run ./benchmarks/sqlfiles -data-dir .data/bench100m -chdb-lib .deps/chdb/libchdb.so -rounds 7 A.sql B.sql
//
// With -write, each argument is a funnel request body: the statement
// BuildFunnel writes for it (project -project, no merged persons unless
// -overrides) is written as DIR/NAME.sql, its parameters as
// DIR/NAME.params.json, to be edited into variants. Otherwise a file holds
// one statement, bound to NAME.params.json beside it if there is one, and
// {team:Int64} to -project. The statements' answers are printed once (the
// first rows, read untimed before the warm-up round), so that variants can
// be checked to agree.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
	write := flag.String("write", "", "write the statements of funnel request bodies to this directory, and stop")
	overrides := flag.Bool("overrides", false, "with -write: the project has merged persons (keep the override join)")
	flag.Parse()
	if *write != "" {
		for _, f := range flag.Args() {
			loaded.Check(writeFunnel(f, *write, querybuilder.Project{ID: *project}, querybuilder.Facts{NoPersonOverrides: !*overrides}))
		}
		return
	}
	if *dataDir == "" || *chdbLib == "" || *rounds < 1 || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "sqlfiles: need -data-dir, -chdb-lib, -rounds >= 1 and SQL files")
		os.Exit(2)
	}
	stmts := make([]querybuilder.Statement, flag.NArg())
	for i, f := range flag.Args() {
		b, err := os.ReadFile(f)
		loaded.Check(err)
		params := map[string]any{"team": *project}
		if pb, err := os.ReadFile(strings.TrimSuffix(f, ".sql") + ".params.json"); err == nil {
			var ps map[string]string
			loaded.Check(json.Unmarshal(pb, &ps))
			for k, v := range ps {
				params[k] = v
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			loaded.Check(err)
		}
		stmts[i] = querybuilder.Statement{SQL: string(b), Params: params}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	engine, err := olap.OpenEmbedded(olap.Config{ChDBLib: *chdbLib, DataDir: filepath.Join(*dataDir, "olap"),
		QueryTimeout: 10 * time.Minute, Connections: 2}, log)
	loaded.Check(err)
	defer engine.Close()

	ctx := context.Background()
	for i, st := range stmts { // untimed: the answers, their rows returned
		rows, err := engine.Query(ctx, st)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sqlfiles: %s: %v\n", flag.Arg(i), err)
			os.Exit(1)
		}
		fmt.Printf("%s answers (%d rows):\n", flag.Arg(i), len(rows.Data))
		for j, r := range rows.Data {
			if j == *show {
				break
			}
			fmt.Println("  ", r)
		}
	}
	fmt.Printf("\n%d files, %d rounds after one warm-up round, FORMAT Null; started %s, load average %s\n",
		len(stmts), *rounds, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
	ways := make([]loaded.Way, len(stmts))
	for round := 0; round <= *rounds; round++ {
		var runs []func()
		for i, st := range stmts {
			discarded := loaded.Discard(st)
			runs = append(runs, func() {
				ways[i].Time(round, func() error {
					_, err := engine.Query(ctx, discarded)
					return err
				})
			})
		}
		loaded.Rotate(round, runs...)
	}
	base := filepath.Base(flag.Arg(0))
	fmt.Printf("\n| file | wall ms median (min-max) | CPU ms | wall / %s median (min-max) | CPU / %s median (min-max) |\n|---|---|---|---|---|\n", base, base)
	for i := range stmts {
		w := &ways[i]
		fmt.Printf("| %s | %s | %s | %s |\n", filepath.Base(flag.Arg(i)), w.Cell(),
			loaded.RatiosOr(loaded.PerRound(w.Wall, ways[0].Wall)), loaded.RatiosOr(loaded.PerRound(w.CPU, ways[0].CPU)))
		if w.Fails > 0 {
			fmt.Fprintf(os.Stderr, "sqlfiles: %s: %d of %d timed runs failed; the last: %s\n", flag.Arg(i), w.Fails, len(w.Wall), w.Err)
		}
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}

// writeFunnel writes the statement of the funnel request body in file to
// dir: NAME.sql and NAME.params.json, every parameter in the text form
// the engine parses (strings as they are).
func writeFunnel(file, dir string, project querybuilder.Project, facts querybuilder.Facts) error {
	body, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	p, err := querybuilder.ParseBody(body)
	if err != nil {
		return err
	}
	q, err := querybuilder.ParseFunnel(p, querybuilder.Env{Project: project, Now: time.Now()})
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	st, err := querybuilder.BuildFunnel(q, facts)
	if err != nil {
		return err
	}
	params := map[string]string{}
	for k, v := range st.Params {
		if s, ok := v.(string); ok {
			params[k] = s
			continue
		}
		if params[k], err = olap.EncodeParam(v); err != nil {
			return fmt.Errorf("%s: parameter %s: %w", file, k, err)
		}
		// Read back as a string, the text would be escaped a second time.
		if strings.ContainsAny(params[k], "\\\t\n\r") {
			return fmt.Errorf("%s: parameter %s: %q cannot be written as text", file, k, params[k])
		}
	}
	ps, err := json.MarshalIndent(params, "", "  ")
	if err != nil {
		return err
	}
	name := filepath.Join(dir, strings.TrimSuffix(filepath.Base(file), ".json"))
	if err := os.WriteFile(name+".sql", []byte(st.SQL+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(name+".params.json", append(ps, '\n'), 0o644)
}
