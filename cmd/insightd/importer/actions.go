package importer

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// pending is an action or cohort to copy, with the ids it names.
type pending struct {
	kind Kind
	r    record
	refs []ref
}

// copyActionsAndCohorts copies actions and cohorts together: an action's
// step may name a cohort and a cohort's filter an action (or another
// cohort), so each is copied once what it names is, whatever order the
// source lists them in. A cycle is an error naming its members.
func (im *Importer) copyActionsAndCohorts(ctx context.Context) error {
	var todo []*pending
	for _, kind := range []Kind{KindAction, KindCohort} {
		part := string(kind) + "s"
		if !im.cfg.Only[part] {
			continue
		}
		rs, err := listRecords(ctx, im.src, part+"/?limit=200")
		if err != nil {
			return fmt.Errorf("reading the source's %s: %w", part, err)
		}
		for _, r := range rs {
			p := &pending{kind: kind, r: r}
			for _, f := range []string{"steps", "filters", "groups"} {
				refs, err := refsOf(r[f])
				if err != nil {
					return fmt.Errorf("the source's %s: %s cannot be read: %w", r.describe(kind), f, err)
				}
				p.refs = append(p.refs, refs...)
			}
			todo = append(todo, p)
		}
		count := &im.report.Actions
		if kind == KindCohort {
			count = &im.report.Cohorts
		}
		count.Total = int64(len(rs))
	}
	if im.cfg.DryRun {
		return nil
	}
	inSource := map[ref]bool{}
	for _, p := range todo {
		inSource[ref{p.kind, p.r.id()}] = true
	}
	for len(todo) > 0 {
		var left []*pending
		for _, p := range todo {
			if !im.ready(p, inSource) {
				left = append(left, p)
				continue
			}
			var err error
			if p.kind == KindAction {
				err = im.copyAction(ctx, p.r)
			} else {
				err = im.copyCohort(ctx, p.r)
			}
			if err != nil {
				return err
			}
			if err := im.state.Save(); err != nil {
				return err
			}
		}
		if len(left) == len(todo) {
			var names []string
			for _, p := range left {
				names = append(names, p.r.describe(p.kind))
			}
			return fmt.Errorf("these name each other in a cycle and cannot be copied: %s", strings.Join(names, ", "))
		}
		todo = left
	}
	if im.cfg.Only["cohorts"] {
		// Insights copied next may filter by a cohort: let the target count them.
		return im.waitCohorts(ctx, 2*time.Minute)
	}
	return nil
}

// ready says whether every id p names that the source has is copied
// (one the source lacks is reported when p is mapped).
func (im *Importer) ready(p *pending, inSource map[ref]bool) bool {
	for _, r := range p.refs {
		if _, ok := im.state.Get(r.kind, r.id); !ok && inSource[r] {
			return false
		}
	}
	return true
}

// kept says whether a checkpoint maps src and the target still has it.
func (im *Importer) kept(ctx context.Context, k Kind, rest string, src int64) (bool, error) {
	to, ok := im.state.Get(k, src)
	if !ok {
		return false, nil
	}
	return im.exists(ctx, rest+strconv.FormatInt(to, 10)+"/")
}

// copyAction creates the action with its steps' cohorts mapped. An
// action of the same name in the target (PostHog keeps names unique)
// is taken as the copy.
func (im *Importer) copyAction(ctx context.Context, r record) error {
	what := "the source's " + r.describe(KindAction)
	if ok, err := im.kept(ctx, KindAction, "actions/", r.id()); err != nil || ok {
		if ok {
			im.report.Actions.Kept++
		}
		return err
	}
	steps, err := mapRefs(r["steps"], &im.state.IDMaps, im.groupIndex, what)
	if err != nil {
		return err
	}
	if id, err := im.findByName(ctx, "actions/?limit=200", r.str("name")); err != nil || id != 0 {
		if id != 0 {
			im.state.Set(KindAction, r.id(), id)
			im.report.Actions.Kept++
		}
		return err
	}
	body := r.body("name", "description", "tags", "post_to_slack", "slack_message_format")
	if steps != nil {
		body["steps"] = steps
	}
	id, err := im.create(ctx, "actions/", body, what)
	if err != nil {
		return err
	}
	im.state.Set(KindAction, r.id(), id)
	im.report.Actions.Copied++
	return nil
}

// findByName is the id of the target's record of that name, or 0.
func (im *Importer) findByName(ctx context.Context, rest, name string) (int64, error) {
	if name == "" {
		return 0, nil
	}
	rs, err := listRecords(ctx, im.dst, rest)
	if err != nil {
		return 0, fmt.Errorf("reading the target's %s: %w", strings.SplitN(rest, "/", 2)[0], err)
	}
	for _, r := range rs {
		if r.str("name") == name {
			return r.id(), nil
		}
	}
	return 0, nil
}
