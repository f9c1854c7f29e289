package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/synth"
)

const loadSynopsis = "load --project ID --events N --persons P --days D [--seed S] [--end YYYY-MM-DD] [--chunk ROWS] [--append] [--optimize] [--report]\n       insightd load --project ID [--optimize] [--report]"

// cmdLoad writes a synthetic data set straight into ClickHouse (no HTTP,
// no PostgreSQL): it opens the engine as serve does, applies the
// ClickHouse migrations and runs olap/synth's generator. Progress goes to
// stderr, a bar on a terminal and else a log line every 5 seconds
// (progress.go), the summary to stdout as one JSON object. Then, or
// instead when --events is not given, --optimize merges the tables' parts
// and --report describes the project's data, timing a few queries.
func cmdLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("load", loadSynopsis, stderr)
	sf, err := addStoreFlags(fs, useClickHouse)
	if err != nil {
		return err
	}
	// One statement writes millions of rows: the per-query timeout that
	// suits serve (a minute) is too short unless the user chose one.
	sf.olap.QueryTimeout = time.Hour
	fs.Lookup("query-timeout").DefValue = "1h0m0s"

	var cfg synth.LoadConfig
	fs.Int64Var(&cfg.Project, "project", 0, "project id (team_id) the data belongs to (required)")
	fs.Int64Var(&cfg.Events, "events", 0, "events to write (required)")
	fs.Int64Var(&cfg.Persons, "persons", 0, "persons the events belong to, one distinct id user-<n> each (required)")
	fs.IntVar(&cfg.Days, "days", 0, "days the events span, ending with --end (required)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed; the same seed, counts and --end write the same rows")
	end := fs.String("end", "", "last day of the range, YYYY-MM-DD in UTC (default today)")
	fs.Int64Var(&cfg.Chunk, "chunk", synth.DefaultChunk, "events one INSERT ... SELECT writes")
	appendTo := fs.Bool("append", false, "write even if the project already has events")
	optimize := fs.Bool("optimize", false, "then merge the tables' parts, one per partition (OPTIMIZE ... FINAL on every project's rows; alone without --events)")
	report := fs.Bool("report", false, "then report the project's data: counts by event, persons, table sizes, a timed 3-step funnel (alone without --events)")
	if err := parse(fs, args); err != nil {
		return err
	}
	reportOnly := (*report || *optimize) && cfg.Events == 0 && cfg.Persons == 0 && cfg.Days == 0
	switch {
	case reportOnly:
		if cfg.Project < 1 {
			return fmt.Errorf("%w: --report and --optimize need a positive --project", errUsage)
		}
	case cfg.Project == 0 || cfg.Events == 0 || cfg.Persons == 0 || cfg.Days == 0:
		return fmt.Errorf("%w: --project, --events, --persons and --days are required", errUsage)
	case cfg.Chunk < 1:
		return fmt.Errorf("%w: --chunk must be positive, got %d", errUsage, cfg.Chunk)
	}
	if *end != "" {
		d, err := time.Parse(time.DateOnly, *end)
		if err != nil {
			return fmt.Errorf("%w: --end %q: want YYYY-MM-DD", errUsage, *end)
		}
		cfg.End = d
	}
	if !reportOnly {
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	log, _, engine, err := sf.start(ctx, stderr)
	if err != nil {
		return err
	}
	defer engine.Close()
	applied, err := olap.Migrate(ctx, engine)
	if err != nil {
		return err
	}
	log.Info("migrated", "clickhouse_applied", applied)
	if reportOnly {
		return afterLoad(ctx, engine, log, cfg.Project, *optimize, *report, stdout, map[string]any{"project": cfg.Project})
	}
	existing, err := synth.ProjectEvents(ctx, engine, cfg.Project)
	if err != nil {
		return err
	}
	if existing > 0 && !*appendTo {
		return fmt.Errorf("project %d already has %d events; pass --append to add more "+
			"(the same seed and --end write the same rows again, which merges collapse)", cfg.Project, existing)
	}

	start, stop := cfg.Range()
	log.Info("loading", "project", cfg.Project, "events", cfg.Events, "persons", cfg.Persons,
		"from", start.Format(time.DateOnly), "until", stop.Format(time.DateOnly), "seed", cfg.Seed, "chunk", cfg.Chunk)
	bar := newProgress(stderr, log, cfg.Events, "events")
	st, err := synth.Load(ctx, engine, cfg, func(done int64) { bar.update(done, done) })
	bar.finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted after %d of %d events: %w", st.Events, cfg.Events, err)
		}
		return fmt.Errorf("after %d of %d events: %w", st.Events, cfg.Events, err)
	}
	secs := st.Duration.Seconds()
	out := map[string]any{
		"project":           cfg.Project,
		"events":            st.Events,
		"persons":           st.Persons,
		"start":             st.Start.Format(time.RFC3339),
		"end":               st.End.Format(time.RFC3339),
		"seed":              cfg.Seed,
		"chunks":            st.Chunks,
		"hot_columns":       st.HotColumns,
		"seconds":           roundMillis(secs),
		"events_per_second": int64(float64(st.Events) / secs),
		"project_events":    existing + st.Events,
	}
	return afterLoad(ctx, engine, log, cfg.Project, *optimize, *report, stdout, out)
}

// afterLoad optimizes and reports as asked, adding to the summary out,
// and prints it.
func afterLoad(ctx context.Context, engine olap.Engine, log *slog.Logger, project int64, optimize, report bool, stdout io.Writer, out map[string]any) error {
	if optimize {
		log.Info("optimizing: merging every part of events, persons and person_distinct_id")
		began := time.Now()
		if err := synth.Optimize(ctx, engine); err != nil {
			return err
		}
		out["optimize_seconds"] = roundMillis(time.Since(began).Seconds())
	}
	if report {
		r, err := synth.ProjectReport(ctx, engine, project)
		if err != nil {
			return err
		}
		out["report"] = r
	}
	return json.NewEncoder(stdout).Encode(out)
}

func roundMillis(secs float64) float64 { return float64(int64(secs*1000)) / 1000 }
