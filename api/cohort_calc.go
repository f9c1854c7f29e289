package api

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder"
)

// Cohort members are computed in the background: after a cohort is
// created or its definition or persons change, when asked
// (cohorts/:id/calculate), and (behavioural cohorts, whose members depend
// on the clock) every cohortSchedule. A calculation writes the next
// version of the members, then makes it the one analyses read, then
// deletes older versions: a calculation never shows half-written, and a
// failed one keeps the last members.

// cohortSchedule is how often behavioural cohorts are recalculated.
const cohortSchedule = 15 * time.Minute

// cohortLocks serialize the calculations of each cohort.
var cohortLocks sync.Map

// scheduleCohort calculates the cohort's pending version in the
// background.
func (s *Server) scheduleCohort(cohortID, projectID int64) {
	s.background(func(ctx context.Context) {
		if err := s.calculateCohort(ctx, projectID, cohortID); err != nil && ctx.Err() == nil {
			s.log.Error("cohort calculation", "cohort", cohortID, "err", err)
		}
	})
}

// calculateCohort computes the cohort's pending version, if any.
func (s *Server) calculateCohort(ctx context.Context, projectID, cohortID int64) error {
	mu, _ := cohortLocks.LoadOrStore(cohortID, &sync.Mutex{})
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
	return s.engine.Exec(ctx, querybuilder.CohortPrune(s.analysisEnv(p), cohortEnv(co), version))
}

// computeMembers writes the members of version and counts them.
func (s *Server) computeMembers(ctx context.Context, p *metadata.Project, co *metadata.Cohort, version int64) (int64, error) {
	qc := cohortEnv(co)
	if co.IsStatic {
		ids, err := s.store.StaticPeople(ctx, co.ID)
		if err != nil {
			return 0, err
		}
		env := s.analysisEnv(p)
		for start := 0; start < len(ids); start += 10_000 {
			stmt, err := querybuilder.CohortStaticMembers(env, qc, version, ids[start:min(start+10_000, len(ids))])
			if err != nil {
				return 0, err
			}
			if err := s.backgroundExec(ctx, p.ID, stmt, s.backgroundLimits()); err != nil {
				return 0, err
			}
		}
	} else {
		env, err := s.entitiesEnv(ctx, p, querybuilder.Params{"groups": co.Groups, "filters": co.Filters})
		if err != nil {
			return 0, err
		}
		stmt, err := querybuilder.CohortMembers(env, qc, version)
		if err != nil {
			return 0, err
		}
		if err := s.backgroundExec(ctx, p.ID, stmt, s.backgroundLimits()); err != nil {
			return 0, err
		}
	}
	rows, err := s.engine.Query(ctx, querybuilder.CohortCount(s.analysisEnv(p), qc, version))
	if err != nil {
		return 0, err
	}
	if len(rows.Data) == 0 {
		return 0, errors.New("no count")
	}
	n, _ := rows.Data[0][0].(uint64)
	return int64(n), nil
}

// runCohortSchedule recalculates behavioural cohorts every cohortSchedule,
// retries first calculations that failed, and picks up calculations
// asked for before a restart, until ctx ends.
func (s *Server) runCohortSchedule(ctx context.Context) {
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
		s.cohortScheduleTick(ctx, time.Now())
	}
}

// cohortScheduleTick is one round of the schedule at now: it asks for the
// calculations due (CohortsDue) and runs every pending one.
func (s *Server) cohortScheduleTick(ctx context.Context, now time.Time) {
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
		if err := s.calculateCohort(ctx, co.ProjectID, co.ID); err != nil && ctx.Err() == nil {
			s.log.Error("cohort calculation", "cohort", co.ID, "err", err)
		}
	}
}

// Bounds on listed persons.
const (
	maxStaticPersons = 1_000_000
	maxDistinctIDLen = 200
)

// distinctIDsFromCSV reads a static cohort's csv: distinct ids in the
// column headed distinct_id (or the first column when no header names
// it). A bad row is a 400 naming its line; nothing is stored then.
func distinctIDsFromCSV(r io.Reader) ([]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	col, first := 0, true
	var out []string
	seen := map[string]bool{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// Lines of the file, as an editor numbers them (the reader
			// skips blank lines).
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.StartLine
			}
			return nil, httpx.Invalid("csv", fmt.Sprintf("Line %d of the csv cannot be read: %v", line, err))
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			header := false
			for i, h := range rec {
				if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), "distinct_id") {
					col, header = i, true
				}
			}
			if header {
				continue
			}
		}
		if col >= len(rec) {
			return nil, httpx.Invalid("csv", fmt.Sprintf("Line %d of the csv has no column %d.", line, col+1))
		}
		id := strings.TrimSpace(strings.TrimPrefix(rec[col], "\ufeff"))
		if problem := checkDistinctID(id); problem != "" {
			return nil, httpx.Invalid("csv", fmt.Sprintf("Line %d of the csv: %s", line, problem))
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
		if len(out) > maxStaticPersons {
			return nil, httpx.Invalid("csv", fmt.Sprintf("At most %d persons in a cohort.", maxStaticPersons))
		}
	}
	if len(out) == 0 {
		return nil, httpx.Invalid("csv", "The csv lists no distinct ids.")
	}
	return out, nil
}

// distinctIDList reads persons: a list of distinct ids.
func distinctIDList(raw json.RawMessage) ([]string, error) {
	var items []any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a numeric distinct id is its JSON text, as capture keeps it
	if err := dec.Decode(&items); err != nil {
		return nil, httpx.Invalid("persons", "persons must be a list of distinct ids.")
	}
	if len(items) > maxStaticPersons {
		return nil, httpx.Invalid("persons", fmt.Sprintf("At most %d persons in a cohort.", maxStaticPersons))
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		id := ""
		switch x := it.(type) {
		case string:
			id = x
		case json.Number:
			id = string(x)
		case map[string]any: // {"distinct_id": ...} or a person's distinct_ids
			if d, ok := x["distinct_id"].(string); ok {
				id = d
			}
		}
		if problem := checkDistinctID(id); problem != "" {
			return nil, httpx.Invalid("persons", fmt.Sprintf("persons[%d]: %s", i, problem))
		}
		out = append(out, id)
	}
	return out, nil
}

func checkDistinctID(id string) string {
	switch {
	case id == "":
		return "a distinct id is empty."
	case !utf8.ValidString(id) || strings.ContainsRune(id, 0):
		return "a distinct id holds invalid UTF-8 or a NUL character."
	case len(id) > maxDistinctIDLen:
		return fmt.Sprintf("a distinct id is at most %d characters.", maxDistinctIDLen)
	}
	return ""
}
