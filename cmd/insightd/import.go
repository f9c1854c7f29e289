package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/insightd/insightd/cmd/insightd/importer"
)

const importSynopsis = "import --from URL --from-key KEY --from-project ID --to URL --to-key KEY --to-project ID\n" +
	"       insightd import --file PATH [--file PATH...] --to URL --to-key KEY --to-project ID\n" +
	"       [--since DATE] [--until DATE] [--only " + "events,persons,groups,actions,cohorts,insights,dashboards,annotations" + "]\n" +
	"       [--checkpoint FILE] [--dry-run] [--page-size N] [--senders N]"

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
	senders := fs.Int("senders", 4, "capture requests to the target in flight at once")
	pageSize := fs.Int("page-size", 10_000, "events one query of the source reads (at most 50000, the APIs' row cap)")
	var files fileList
	fs.Var(&files, "file", "a PostHog batch export file to send instead of reading --from: JSON lines (gzip or not) or Parquet; repeat for more")
	if err := parse(fs, args); err != nil {
		return err
	}
	var missing []string
	need := map[string]string{"--to": *to, "--to-key": *toKey}
	if len(files) == 0 {
		need["--from"], need["--from-key"] = *from, *fromKey
		if *fromProject < 1 {
			missing = append(missing, "--from-project")
		}
	}
	for name, v := range need {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if *toProject < 1 {
		missing = append(missing, "--to-project")
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%w: %s required", errUsage, strings.Join(missing, ", "))
	}
	parts, err := importer.ParseOnly(*only)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(files) > 0 {
		if *from != "" || *only != "" {
			return fmt.Errorf("%w: --file sends the files' events; it takes no --from or --only", errUsage)
		}
		parts = map[string]bool{"events": true}
	}
	if *pageSize < 1 || *pageSize > 50_000 {
		return fmt.Errorf("%w: --page-size %d: want 1 to 50000", errUsage, *pageSize)
	}
	if *senders < 1 || *senders > 64 {
		return fmt.Errorf("%w: --senders %d: want 1 to 64", errUsage, *senders)
	}
	cfg := importer.Config{Only: parts, DryRun: *dryRun, PageSize: *pageSize, Senders: *senders}
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
	urls := []string{*to}
	if len(files) == 0 {
		urls = append(urls, *from)
	}
	for _, u := range urls {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("%w: %q is not an http(s) URL", errUsage, u)
		}
	}
	if len(files) == 0 {
		cfg.Source = importer.NewClient(*from, *fromKey, *fromProject)
	}
	cfg.Files = files
	cfg.Target = importer.NewClient(*to, *toKey, *toProject)
	cfg.Checkpoint = *checkpoint
	if cfg.Checkpoint == "" && !*dryRun {
		from := strconv.FormatInt(*fromProject, 10)
		if len(files) > 0 {
			from = "files"
		}
		cfg.Checkpoint = fmt.Sprintf("insightd-import-%s-to-%d.json", from, *toProject)
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

// fileList is a repeatable --file.
type fileList []string

func (f *fileList) String() string { return strings.Join(*f, ",") }

func (f *fileList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("an empty path")
	}
	*f = append(*f, v)
	return nil
}

func parseDateFlag(v string) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		return d, nil
	}
	return time.Parse(time.RFC3339, v)
}
