package importer

import (
	"context"
	"fmt"
)

// copyInsights creates each saved insight with its legacy filters or its
// query node, the actions and cohorts they name mapped; the dashboards
// they sit on come with the dashboards part.
func (im *Importer) copyInsights(ctx context.Context) error {
	rs, err := listRecords(ctx, im.src, "insights/?limit=100")
	if err != nil {
		return fmt.Errorf("reading the source's insights: %w", err)
	}
	im.report.Insights.Total = int64(len(rs))
	if im.cfg.DryRun {
		return nil
	}
	for _, r := range rs {
		what := "the source's " + r.describe(KindInsight)
		if ok, err := im.kept(ctx, KindInsight, "insights/", r.id()); err != nil || ok {
			if ok {
				im.report.Insights.Kept++
			}
			if err != nil {
				return err
			}
			continue
		}
		body := r.body("name", "description", "tags", "favorited", "saved", "derived_name")
		// A query node is the insight when it has one; the legacy
		// filters otherwise (PostHog answers both for a legacy insight).
		field := "filters"
		if r.given("query") {
			field = "query"
		}
		v, err := mapRefs(r[field], &im.state.IDMaps, im.groupIndex, what)
		if err != nil {
			return err
		}
		body[field] = v
		id, err := im.create(ctx, "insights/", body, what)
		if err != nil {
			return err
		}
		im.state.Set(KindInsight, r.id(), id)
		im.report.Insights.Copied++
		if err := im.state.Save(); err != nil {
			return err
		}
	}
	return nil
}
