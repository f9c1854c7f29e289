package api

import (
	"context"
	"log/slog"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/synth"
)

// DemoSize is the demo product a project created with is_demo gets.
var DemoSize = synth.DemoConfig{Persons: 500, Days: 30, Seed: 1}

// GenerateDemo writes demo data into a project through the event writer,
// with the project's is_generating_demo_data true while it runs (a second
// run at the same time is refused with metadata.ErrDemoRunning), and marks
// the project as having events.
func GenerateDemo(ctx context.Context, store *metadata.Store, w *olap.Writer, log *slog.Logger, cfg synth.DemoConfig) (synth.DemoStats, error) {
	if err := cfg.Validate(); err != nil {
		return synth.DemoStats{}, err
	}
	if err := store.SetGeneratingDemoData(ctx, cfg.Team, true); err != nil {
		return synth.DemoStats{}, err
	}
	return runDemo(ctx, store, w, log, cfg)
}

// runDemo writes the demo into a project already marked as generating
// demo data, and clears the mark.
func runDemo(ctx context.Context, store *metadata.Store, w *olap.Writer, log *slog.Logger, cfg synth.DemoConfig) (synth.DemoStats, error) {
	defer func() {
		// Clear the flag even when ctx ended: the run is over either way.
		if err := store.SetGeneratingDemoData(context.WithoutCancel(ctx), cfg.Team, false); err != nil {
			log.Error("could not clear is_generating_demo_data", "project_id", cfg.Team, "error", err)
		}
	}()
	st, err := synth.Demo(ctx, w, cfg)
	if err != nil {
		return st, err
	}
	if st.Events > 0 {
		if err := store.MarkIngested(ctx, cfg.Team, ""); err != nil {
			return st, err
		}
	}
	log.Info("demo data written", "project_id", cfg.Team, "persons", st.Persons, "events", st.Events)
	return st, nil
}
