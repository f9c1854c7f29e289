package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/insightd/insightd/cmd/insightd/importer"
)

const importSynopsis = "import --from URL --from-key KEY --from-project ID --to URL --to-key KEY --to-project ID\n" +
	"       [--since DATE] [--until DATE] [--only " + "events,persons,groups,actions,cohorts,insights,dashboards,annotations" + "]\n" +
	"       [--checkpoint FILE] [--dry-run] [--page-size N]"

// cmdImport copies a PostHog project (PostHog Cloud, self-hosted, or
// another insightd) into an insightd project through the two APIs
// (cmd/insightd/importer); it opens no store. Progress goes to stderr (a
// bar on a terminal, else log lines), the summary to stdout as JSON.
func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", importSynopsis, stderr)
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	from := fs.String("from", "", "the source's URL, e.g. https://us.posthog.com (required)")
	fromKey := fs.String("from-key", "", "a personal API key of the source (phx_...), with the read scopes of the parts (required)")
	fromProject := fs.Int64("from-project", 0, "the source's project id (required)")
	to := fs.String("to", "", "the target insightd's URL (required)")
	toKey := fs.String("to-key", "", "a personal API key of the target with the write scopes of the parts (required)")
	toProject := fs.Int64("to-project", 0, "the target's project id (required)")
	since := fs.String("since", "", "copy events from this date or time on (YYYY-MM-DD or RFC 3339)")
	until := fs.String("until", "", "copy events before this date or time")
	only := fs.String("only", "", "copy only these parts, comma-separated: "+strings.Join(importer.Parts, ","))
	checkpoint := fs.String("checkpoint", "", "file the progress is kept in, to resume after an interruption (default insightd-import-<from>-to-<to>.json in the current directory)")
	dryRun := fs.Bool("dry-run", false, "read the source and report what would be copied; write nothing")
	pageSize := fs.Int("page-size", 10_000, "events one query of the source reads (at most 50000, the APIs' row cap)")
	if err := parse(fs, args); err != nil {
		return err
	}
	var missing []string
	for name, v := range map[string]string{"--from": *from, "--from-key": *fromKey, "--to": *to, "--to-key": *toKey} {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if *fromProject < 1 {
		missing = append(missing, "--from-project")
	}
	if *toProject < 1 {
		missing = append(missing, "--to-project")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s required", errUsage, strings.Join(missing, ", "))
	}
	parts, err := importer.ParseOnly(*only)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *pageSize < 1 || *pageSize > 50_000 {
		return fmt.Errorf("%w: --page-size %d: want 1 to 50000", errUsage, *pageSize)
	}
	cfg := importer.Config{Only: parts, DryRun: *dryRun, PageSize: *pageSize}
	for _, t := range []struct {
		flag, v string
		dst     *time.Time
	}{{"--since", *since, &cfg.Since}, {"--until", *until, &cfg.Until}} {
		if t.v == "" {
			continue
		}
		d, err := parseDateFlag(t.v)
		if err != nil {
			return fmt.Errorf("%w: %s %q: want YYYY-MM-DD or an RFC 3339 time", errUsage, t.flag, t.v)
		}
		*t.dst = d
	}
	for _, u := range []string{*from, *to} {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("%w: %q is not an http(s) URL", errUsage, u)
		}
	}
	cfg.Source = importer.NewClient(*from, *fromKey, *fromProject)
	cfg.Target = importer.NewClient(*to, *toKey, *toProject)
	cfg.Checkpoint = *checkpoint
	if cfg.Checkpoint == "" && !*dryRun {
		cfg.Checkpoint = fmt.Sprintf("insightd-import-%d-to-%d.json", *fromProject, *toProject)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", errUsage, *logLevel)
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg.Log = log.Info
	var bar *progress
	cfg.Progress = func(part string, done, total int64) {
		if bar == nil {
			bar = newProgress(stderr, log, total, part)
		}
		bar.update(done, done)
	}
	im, err := importer.New(cfg)
	if err != nil {
		return err
	}
	if cfg.Checkpoint != "" {
		log.Info("importing; progress is kept in the checkpoint, run the same command again to resume", "checkpoint", cfg.Checkpoint)
	}
	report, err := im.Run(ctx)
	if bar != nil {
		bar.finish()
	}
	if report != nil {
		_ = json.NewEncoder(stdout).Encode(report)
	}
	if err != nil && errors.Is(err, context.Canceled) && cfg.Checkpoint != "" {
		return fmt.Errorf("interrupted; run the same command again to resume from %s: %w", cfg.Checkpoint, err)
	}
	return err
}

func parseDateFlag(v string) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		return d, nil
	}
	return time.Parse(time.RFC3339, v)
}
