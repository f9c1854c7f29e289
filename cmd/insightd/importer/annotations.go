package importer

import (
	"context"
	"encoding/json"
	"fmt"
)

// copyAnnotations creates each annotation with the insight or dashboard
// it is scoped to mapped.
func (im *Importer) copyAnnotations(ctx context.Context) error {
	rs, err := listRecords(ctx, im.src, "annotations/?limit=200")
	if err != nil {
		return fmt.Errorf("reading the source's annotations: %w", err)
	}
	im.report.Annotations.Total = int64(len(rs))
	if im.cfg.DryRun {
		return nil
	}
	for _, r := range rs {
		what := "the source's " + r.describe(KindAnnotation)
		if ok, err := im.kept(ctx, KindAnnotation, "annotations/", r.id()); err != nil || ok {
			if ok {
				im.report.Annotations.Kept++
			}
			if err != nil {
				return err
			}
			continue
		}
		body := r.body("content", "date_marker", "scope", "creation_type")
		for _, f := range []struct {
			field string
			kind  Kind
		}{{"dashboard_item", KindInsight}, {"dashboard_id", KindDashboard}} {
			if !r.given(f.field) {
				continue
			}
			var v any
			_ = json.Unmarshal(r[f.field], &v)
			from, ok := idValue(v)
			if !ok {
				continue
			}
			to, ok := im.state.Get(f.kind, from)
			if !ok {
				return fmt.Errorf("%s is about %s %d, which was not copied", what, f.kind, from)
			}
			body[f.field] = to
		}
		id, err := im.create(ctx, "annotations/", body, what)
		if err != nil {
			return err
		}
		im.state.Set(KindAnnotation, r.id(), id)
		im.report.Annotations.Copied++
		if err := im.state.Save(); err != nil {
			return err
		}
	}
	return nil
}
