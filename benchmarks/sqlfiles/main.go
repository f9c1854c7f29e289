// Command sqlfiles times SQL statements straight on the loaded engine, to
// compare variants of a generated statement as ratios measured in the same
// run: each round runs every file once, in the order given, so the files
// share the machine's state; the first file is the baseline of the ratios.
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
// first rows), so that variants can be checked to agree.
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

	wall := make([][]time.Duration, len(stmts))
	cpu := make([][]time.Duration, len(stmts))
	for round := 0; round <= *rounds; round++ {
		for i, st := range stmts {
			c0, t0 := loaded.CPUTime(), time.Now()
			rows, err := engine.Query(context.Background(), st)
			w, c := time.Since(t0), loaded.CPUTime()-c0
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
