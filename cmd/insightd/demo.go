package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/synth"
)

const demoSynopsis = "demo-data --project ID [--persons N] [--days D] [--seed S] [--end RFC3339]"

// cmdDemoData writes a demo product into a project through the same event
// writer as the capture API. With the embedded engine it needs the data
// directory to itself: stop `insightd serve` first, or create a project
// with is_demo through the API instead. Progress goes to stderr, a bar on
// a terminal and else a log line every 5 seconds (progress.go).
func cmdDemoData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo-data", demoSynopsis, stderr)
	sf, err := addStoreFlags(fs, useBoth)
	if err != nil {
		return err
	}
	cfg := api.DemoSize
	fs.Int64Var(&cfg.Team, "project", 0, "project id (required)")
	fs.IntVar(&cfg.Persons, "persons", 1000, "visitors to simulate")
	fs.IntVar(&cfg.Days, "days", 30, "days the simulated period lasts")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed: the same seed and end give the same events")
	end := fs.String("end", "", "when the period ends, RFC 3339 (default: now)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if cfg.Team <= 0 {
		return fmt.Errorf("%w: --project is required", errUsage)
	}
	if *end != "" {
		if cfg.End, err = time.Parse(time.RFC3339, *end); err != nil {
			return fmt.Errorf("%w: --end: %v", errUsage, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	log, store, engine, err := sf.start(ctx, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	defer engine.Close()
	if _, err := olap.Migrate(ctx, engine); err != nil {
		return err
	}
	w := olap.NewWriter(engine, log, olap.WriterConfig{})
	defer w.Close()
	start := time.Now()
	bar := newProgress(stderr, log, int64(cfg.Persons), "visitors")
	cfg.Progress = func(visitors, events int) { bar.update(int64(visitors), int64(events)) }
	st, err := api.GenerateDemo(ctx, store, w, log, cfg)
	bar.finish()
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(struct {
		synth.DemoStats
		Seconds float64 `json:"seconds"`
	}{st, time.Since(start).Seconds()})
}
