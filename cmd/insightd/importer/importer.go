// Package importer copies a PostHog project (from PostHog Cloud, a
// self-hosted PostHog or another insightd) into an insightd project, as
// a client of the two APIs only: it reads the source through its REST and
// query APIs and writes the target through its REST API and capture
// (/batch/), so it runs against a live target and never opens its stores.
// It is the work of `insightd import`; one file per kind of record.
package importer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Parts are what --only may name, in the order they are copied: groups
// and events first (the events carry the merges that make persons), then
// the persons the events did not make alike, then the metadata, whose
// cohorts count the copied persons.
var Parts = []string{"events", "persons", "groups", "actions", "cohorts", "insights", "dashboards", "annotations"}

// ParseOnly reads --only: a comma-separated subset of Parts (empty: all).
func ParseOnly(s string) (map[string]bool, error) {
	out := map[string]bool{}
	if strings.TrimSpace(s) == "" {
		for _, p := range Parts {
			out[p] = true
		}
		return out, nil
	}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		if !slices.Contains(Parts, p) {
			return nil, fmt.Errorf("--only %q: unknown part %q; want some of %s", s, p, strings.Join(Parts, ","))
		}
		out[p] = true
	}
	return out, nil
}

// Config is one import.
type Config struct {
	Source, Target *Client
	// Files are PostHog batch export files to send instead of reading a
	// source (files.go); Source is then nil.
	Files        []string
	Only         map[string]bool
	Since, Until time.Time
	DryRun       bool
	// PageSize is how many events one query of the source reads (within
	// the source's row cap: PostHog and insightd answer at most 50,000).
	PageSize int
	// Senders is how many capture requests may be in flight at once.
	Senders int
	// Checkpoint is the file the run's progress is kept in ("" for none).
	Checkpoint string
	// Progress is told how far a part is (done of total); nil for quiet.
	Progress func(part string, done, total int64)
	// Log is told what is happening, in a line; nil for quiet.
	Log func(msg string, args ...any)
}

// Count is how many records of a kind there are and were copied.
type Count struct {
	Total  int64 `json:"total"`
	Copied int64 `json:"copied"`
	// Kept were copied by an earlier run (the checkpoint), or already
	// equal in the target.
	Kept int64 `json:"kept,omitempty"`
}

// Report is what a run did (or, with --dry-run, would do).
type Report struct {
	DryRun      bool   `json:"dry_run"`
	Checkpoint  string `json:"checkpoint,omitempty"`
	Events      Count  `json:"events"`
	Persons     Count  `json:"persons"`
	Groups      Count  `json:"groups"`
	Actions     Count  `json:"actions"`
	Cohorts     Count  `json:"cohorts"`
	Insights    Count  `json:"insights"`
	Dashboards  Count  `json:"dashboards"`
	Annotations Count  `json:"annotations"`
	// Corrections are the events sent to make a person or group equal to
	// the source's where the copied events did not ($merge_dangerously,
	// $set, $groupidentify).
	Corrections int64   `json:"corrections"`
	Seconds     float64 `json:"seconds"`
}

// Importer runs one import.
type Importer struct {
	cfg      Config
	src, dst *Client
	state    *State
	report   Report
	token    string // the target project's capture token
	// groupIndex maps the source's group type indices to the target's.
	groupIndex map[int]int
}

// New checks the configuration and loads the checkpoint.
func New(cfg Config) (*Importer, error) {
	if (cfg.Source == nil && len(cfg.Files) == 0) || cfg.Target == nil {
		return nil, fmt.Errorf("a source (or files) and a target are needed")
	}
	if cfg.Only == nil {
		cfg.Only, _ = ParseOnly("")
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 10_000
	}
	if cfg.Senders <= 0 {
		cfg.Senders = 4
	}
	if !cfg.Since.IsZero() && !cfg.Until.IsZero() && !cfg.Since.Before(cfg.Until) {
		return nil, fmt.Errorf("--since %s is not before --until %s", cfg.Since.Format(time.RFC3339), cfg.Until.Format(time.RFC3339))
	}
	var src string
	if cfg.Source != nil {
		src = fmt.Sprintf("%s/project/%d", cfg.Source.Base, cfg.Source.Project)
	} else {
		src = "files"
	}
	dst := fmt.Sprintf("%s/project/%d", cfg.Target.Base, cfg.Target.Project)
	if src == dst {
		return nil, fmt.Errorf("the source and the target are the same project (%s)", src)
	}
	st, err := LoadState(cfg.Checkpoint, src, dst)
	if err != nil {
		return nil, err
	}
	return &Importer{cfg: cfg, src: cfg.Source, dst: cfg.Target, state: st}, nil
}

// Run copies what cfg.Only names, in the order of Parts; nothing is
// written before both APIs and keys are checked.
func (im *Importer) Run(ctx context.Context) (*Report, error) {
	began := time.Now()
	im.report.DryRun, im.report.Checkpoint = im.cfg.DryRun, im.state.Path()
	if err := im.check(ctx); err != nil {
		return nil, err
	}
	if len(im.cfg.Files) > 0 {
		err := im.copyFiles(ctx)
		im.report.Seconds = time.Since(began).Seconds()
		if err != nil {
			return &im.report, err
		}
		return &im.report, im.state.Save()
	}
	steps := []struct {
		part string
		run  func(context.Context) error
	}{
		{"groups", im.copyGroupTypes},
		{"events", im.copyEvents},
		{"persons", im.copyPersons},
		{"groups", im.copyGroups},
		{"actions", im.copyActionsAndCohorts},
		{"insights", im.copyInsights},
		{"dashboards", im.copyDashboards},
		{"annotations", im.copyAnnotations},
	}
	for _, s := range steps {
		if !im.cfg.Only[s.part] && !(s.part == "actions" && im.cfg.Only["cohorts"]) {
			continue
		}
		if err := s.run(ctx); err != nil {
			im.report.Seconds = time.Since(began).Seconds()
			return &im.report, err
		}
	}
	im.report.Seconds = time.Since(began).Seconds()
	return &im.report, im.state.Save()
}

func (im *Importer) progress(part string, done, total int64) {
	if im.cfg.Progress != nil {
		im.cfg.Progress(part, done, total)
	}
}

func (im *Importer) log(msg string, args ...any) {
	if im.cfg.Log != nil {
		im.cfg.Log(msg, args...)
	}
}
