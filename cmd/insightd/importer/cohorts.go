package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// copyCohort creates a cohort with the actions and cohorts its filters
// name mapped; a static cohort gets its members, by a distinct id of
// each (the persons were copied before). The target counts it itself.
func (im *Importer) copyCohort(ctx context.Context, r record) error {
	what := "the source's " + r.describe(KindCohort)
	if ok, err := im.kept(ctx, KindCohort, "cohorts/", r.id()); err != nil || ok {
		if ok {
			im.report.Cohorts.Kept++
		}
		return err
	}
	body := r.body("name", "description", "is_static")
	// A target may refuse a cohort that names one it is still counting.
	refs, _ := refsOf(r["filters"])
	for _, rf := range refs {
		if to, ok := im.state.Get(rf.kind, rf.id); ok && rf.kind == KindCohort {
			if err := im.waitCohort(ctx, to, time.Now().Add(2*time.Minute)); err != nil {
				return err
			}
		}
	}
	for _, f := range []string{"filters", "groups"} {
		if !r.given(f) || string(r[f]) == "[]" || string(r[f]) == "{}" {
			continue
		}
		v, err := mapRefs(r[f], &im.state.IDMaps, im.groupIndex, what)
		if err != nil {
			return err
		}
		body[f] = v
	}
	if r.given("filters") {
		delete(body, "groups") // the filters are the definition; groups the legacy form of it
	}
	if r.bool("is_static") {
		ids, err := im.staticMembers(ctx, r.id())
		if err != nil {
			return fmt.Errorf("reading the members of %s: %w", what, err)
		}
		delete(body, "filters")
		delete(body, "groups")
		if len(ids) > 0 {
			body["persons"] = ids
		}
	}
	id, err := im.create(ctx, "cohorts/", body, what)
	if err != nil {
		return err
	}
	im.state.Set(KindCohort, r.id(), id)
	im.report.Cohorts.Copied++
	return nil
}

// staticMembers are a distinct id of each person of a static cohort.
func (im *Importer) staticMembers(ctx context.Context, id int64) ([]string, error) {
	var ids []string
	err := im.src.List(ctx, "cohorts/"+strconv.FormatInt(id, 10)+"/persons/?limit=1000", func(raw json.RawMessage) error {
		var p person
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("a member cannot be read (%v): %.200s", err, raw)
		}
		if len(p.DistinctIDs) > 0 {
			ids = append(ids, p.DistinctIDs[0])
		}
		return nil
	})
	return ids, err
}

// waitCohorts waits until the target has counted every cohort copied
// (insights that filter by one need its members), at most limit.
func (im *Importer) waitCohorts(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, to := range im.state.Maps[KindCohort] {
		if err := im.waitCohort(ctx, to, deadline); err != nil {
			return err
		}
	}
	return nil
}

// waitCohort waits until the target's cohort to is counted, or deadline.
func (im *Importer) waitCohort(ctx context.Context, to int64, deadline time.Time) error {
	for {
		var r record
		if err := im.dst.Get(ctx, im.dst.projectPath("cohorts/"+strconv.FormatInt(to, 10)+"/"), &r); err != nil {
			return err
		}
		if !r.bool("is_calculating") || time.Now().After(deadline) {
			return nil
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}
