// Package cohortcalc computes cohorts' members in the background: after
// a cohort is created or its definition or persons change, when asked
// (cohorts/:id/calculate), and (behavioural cohorts, whose members
// depend on the clock) on a schedule. The members are rows of the
// engine's cohort_people at a version PostgreSQL names, which analyses
// read through the analysis service's entities.
package cohortcalc

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// A calculation writes the next
// version of the members, then makes it the one analyses read, then
// deletes older versions: a calculation never shows half-written, and a
// failed one keeps the last members.

// cohortSchedule is how often behavioural cohorts are recalculated.
const cohortSchedule = 15 * time.Minute

// Calculator runs the calculations. Its calculations of one cohort run
// one at a time.
type Calculator struct {
	log      *slog.Logger
	store    *metadata.Store
	engine   olap.Engine
	analysis *analysis.Service
	// background runs a calculation after its request, tracked so the
	// server's shutdown waits for it.
	background func(fn func(ctx context.Context))
	// locks serialize the calculations of each cohort.
	locks sync.Map
}

// New builds a calculator; background runs work that outlives a request.
func New(log *slog.Logger, store *metadata.Store, engine olap.Engine, a *analysis.Service, background func(fn func(ctx context.Context))) *Calculator {
	return &Calculator{log: log, store: store, engine: engine, analysis: a, background: background}
}

// Schedule calculates the cohort's pending version in the
// background.
func (s *Calculator) Schedule(cohortID, projectID int64) {
	s.background(func(ctx context.Context) {
		if err := s.Calculate(ctx, projectID, cohortID); err != nil && ctx.Err() == nil {
			s.log.Error("cohort calculation", "cohort", cohortID, "err", err)
		}
	})
}

// Calculate computes the cohort's pending version, if any.
func (s *Calculator) Calculate(ctx context.Context, projectID, cohortID int64) error {
	mu, _ := s.locks.LoadOrStore(cohortID, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	co, err := s.store.GetCohort(ctx, projectID, cohortID)
	if err != nil || co.Deleted || co.PendingVersion <= co.Version {
		return err
	}
	p, err := s.store.ProjectByID(ctx, projectID)
	if err != nil {
		return err
	}
	version := co.PendingVersion
	count, err := s.computeMembers(ctx, p, co, version)
	if err != nil {
		if ctx.Err() == nil {
			_ = s.store.CohortCalculationFailed(context.WithoutCancel(ctx), co.ID, version, err.Error(), time.Now())
		}
		return err
	}
	if err := s.store.CohortCalculated(ctx, co.ID, version, count); err != nil {
		return err
	}
	// Cached answers keyed by the old version are not asked for again.
	return s.engine.Exec(ctx, querybuilder.CohortPrune(s.analysis.Env(p), analysis.CohortEnv(co), version))
}

// computeMembers writes the members of version and counts them.
func (s *Calculator) computeMembers(ctx context.Context, p *metadata.Project, co *metadata.Cohort, version int64) (int64, error) {
	qc := analysis.CohortEnv(co)
	if co.IsStatic {
		ids, err := s.store.StaticPeople(ctx, co.ID)
		if err != nil {
			return 0, err
		}
		env := s.analysis.Env(p)
		for start := 0; start < len(ids); start += 10_000 {
			stmt, err := querybuilder.CohortStaticMembers(env, qc, version, ids[start:min(start+10_000, len(ids))])
			if err != nil {
				return 0, err
			}
			if err := s.analysis.BackgroundExec(ctx, p.ID, stmt, s.analysis.BackgroundLimits()); err != nil {
				return 0, err
			}
		}
	} else {
		env, err := s.analysis.Entities(ctx, p, querybuilder.Params{"groups": co.Groups, "filters": co.Filters})
		if err != nil {
			return 0, err
		}
		stmt, err := querybuilder.CohortMembers(env, qc, version)
		if err != nil {
			return 0, err
		}
		if err := s.analysis.BackgroundExec(ctx, p.ID, stmt, s.analysis.BackgroundLimits()); err != nil {
			return 0, err
		}
	}
	rows, err := s.engine.Query(ctx, querybuilder.CohortCount(s.analysis.Env(p), qc, version))
	if err != nil {
		return 0, err
	}
	if len(rows.Data) == 0 {
		return 0, errors.New("no count")
	}
	n, _ := rows.Data[0][0].(uint64)
	return int64(n), nil
}

// Run recalculates behavioural cohorts every cohortSchedule,
// retries first calculations that failed, and picks up calculations
// asked for before a restart, until ctx ends.
func (s *Calculator) Run(ctx context.Context) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		s.Tick(ctx, time.Now())
	}
}

// Tick is one round of the schedule at now: it asks for the
// calculations due (CohortsDue) and runs every pending one.
func (s *Calculator) Tick(ctx context.Context, now time.Time) {
	if _, err := s.store.CohortsDue(ctx, now, now.Add(-cohortSchedule)); err != nil && ctx.Err() == nil {
		s.log.Warn("cohort schedule", "err", err)
	}
	due, err := s.store.CohortsToCalculate(ctx, 100)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cohort schedule", "err", err)
		}
		return
	}
	for _, co := range due {
		if err := s.Calculate(ctx, co.ProjectID, co.ID); err != nil && ctx.Err() == nil {
			s.log.Error("cohort calculation", "cohort", co.ID, "err", err)
		}
	}
}
