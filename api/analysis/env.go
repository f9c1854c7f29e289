package analysis

import (
	"context"
	"encoding/json"
	"time"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// Env is what the query builder knows of the project and the
// clock.
func (s *Service) Env(p *metadata.Project) querybuilder.Env {
	project := querybuilder.Project{ID: p.ID, Timezone: p.Timezone, TestAccountFilters: json.RawMessage(p.TestAccountFilters),
		PathCleaningFilters: json.RawMessage(p.PathCleaningFilters), CorrelationConfig: json.RawMessage(p.CorrelationConfig),
		PersonDisplayNameProperties: p.PersonDisplayNameProperties}
	if p.WeekStartDay.Valid {
		project.WeekStartDay = int(p.WeekStartDay.Int64)
	}
	return querybuilder.Env{Project: project, Now: time.Now(), Schema: s.cfg.Schema}
}

// Entities is Env with the saved actions and cohorts params
// names (through the project's test-account filters, actions' steps and
// cohorts' definitions too), loaded from the store.
func (s *Service) Entities(ctx context.Context, p *metadata.Project, params querybuilder.Params) (querybuilder.Env, error) {
	env := s.Env(p)
	actionIDs, cohortIDs := querybuilder.References(params)
	if len(p.TestAccountFilters) > 0 {
		_, more := querybuilder.References(querybuilder.Params{"test_account_filters": json.RawMessage(p.TestAccountFilters)})
		cohortIDs = append(cohortIDs, more...)
	}
	if len(actionIDs) > 0 {
		actions, err := s.store.ActionsByID(ctx, p.ID, actionIDs)
		if err != nil {
			return env, err
		}
		env.Actions = map[int64]querybuilder.Action{}
		for id, a := range actions {
			env.Actions[id] = querybuilder.Action{ID: id, Name: a.Name, Steps: a.Steps, Version: a.Version, Deleted: a.Deleted}
			_, more := querybuilder.References(querybuilder.Params{"steps": a.Steps})
			cohortIDs = append(cohortIDs, more...)
		}
	}
	// Cohorts may name cohorts: load them a level at a time.
	for level := 0; len(cohortIDs) > 0 && level < 5; level++ {
		var missing []int64
		for _, id := range cohortIDs {
			if _, ok := env.Cohorts[id]; !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			break
		}
		cohorts, err := s.store.CohortsByID(ctx, p.ID, missing)
		if err != nil {
			return env, err
		}
		if env.Cohorts == nil {
			env.Cohorts = map[int64]querybuilder.Cohort{}
		}
		cohortIDs = nil
		for id, co := range cohorts {
			env.Cohorts[id] = CohortEnv(co)
			_, more := querybuilder.References(querybuilder.Params{"groups": co.Groups, "filters": co.Filters})
			cohortIDs = append(cohortIDs, more...)
		}
	}
	return env, nil
}

// CohortEnv is a stored cohort as the query builder reads it.
func CohortEnv(co *metadata.Cohort) querybuilder.Cohort {
	return querybuilder.Cohort{ID: co.ID, Name: co.Name, IsStatic: co.IsStatic, Groups: co.Groups, Filters: co.Filters,
		Version: co.Version, Deleted: co.Deleted}
}
