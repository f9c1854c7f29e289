package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// tile is one of a dashboard's tiles.
type tile struct {
	ID      int64           `json:"id"`
	Layouts json.RawMessage `json:"layouts"`
	Color   *string         `json:"color"`
	Deleted bool            `json:"deleted"`
	Insight *struct {
		ID int64 `json:"id"`
	} `json:"insight"`
	Text *struct {
		Body string `json:"body"`
	} `json:"text"`
}

// copyDashboards creates each dashboard (name, description, pinned,
// filters, tags), puts the copied insights of its tiles on it, then gives
// each tile its layouts and color and adds its text tiles.
func (im *Importer) copyDashboards(ctx context.Context) error {
	rs, err := listRecords(ctx, im.src, "dashboards/?limit=100")
	if err != nil {
		return fmt.Errorf("reading the source's dashboards: %w", err)
	}
	im.report.Dashboards.Total = int64(len(rs))
	if im.cfg.DryRun {
		return nil
	}
	for _, r := range rs {
		if ok, err := im.kept(ctx, KindDashboard, "dashboards/", r.id()); err != nil || ok {
			if ok {
				im.report.Dashboards.Kept++
			}
			if err != nil {
				return err
			}
			continue
		}
		if err := im.copyDashboard(ctx, r); err != nil {
			return err
		}
		im.report.Dashboards.Copied++
		if err := im.state.Save(); err != nil {
			return err
		}
	}
	return nil
}

func (im *Importer) copyDashboard(ctx context.Context, r record) error {
	what := "the source's " + r.describe(KindDashboard)
	var full struct {
		Tiles []tile `json:"tiles"`
	}
	if err := im.src.Get(ctx, im.src.projectPath("dashboards/"+strconv.FormatInt(r.id(), 10)+"/"), &full); err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
	}
	body := r.body("name", "description", "pinned", "tags", "restriction_level")
	if r.given("filters") {
		f, err := mapRefs(r["filters"], &im.state.IDMaps, im.groupIndex, what)
		if err != nil {
			return err
		}
		body["filters"] = f
	}
	id, err := im.create(ctx, "dashboards/", body, what)
	if err != nil {
		return err
	}
	im.state.Set(KindDashboard, r.id(), id)

	// Insight tiles: each copied insight is put on the dashboard (keeping
	// the dashboards it is on already), then laid out as in the source.
	byInsight := map[int64]tile{}
	var texts []map[string]any
	for _, t := range full.Tiles {
		if t.Deleted {
			continue
		}
		if t.Text != nil {
			texts = append(texts, map[string]any{"text": map[string]any{"body": t.Text.Body}, "layouts": t.Layouts, "color": t.Color})
			continue
		}
		if t.Insight == nil {
			continue
		}
		to, ok := im.state.Get(KindInsight, t.Insight.ID)
		if !ok {
			return fmt.Errorf("%s has a tile of insight %d, which was not copied (the source does not list it, or --only left it out)", what, t.Insight.ID)
		}
		var ins struct {
			Dashboards []int64 `json:"dashboards"`
		}
		path := im.dst.projectPath("insights/" + strconv.FormatInt(to, 10) + "/")
		if err := im.dst.Get(ctx, path, &ins); err != nil {
			return fmt.Errorf("reading the target's copy of insight %d: %w", t.Insight.ID, err)
		}
		if err := im.dst.Patch(ctx, path, map[string]any{"dashboards": append(ins.Dashboards, id)}, nil); err != nil {
			return fmt.Errorf("putting insight %d on the copy of %s: %w", t.Insight.ID, what, err)
		}
		byInsight[to] = t
	}
	var copied struct {
		Tiles []tile `json:"tiles"`
	}
	dpath := im.dst.projectPath("dashboards/" + strconv.FormatInt(id, 10) + "/")
	if err := im.dst.Get(ctx, dpath, &copied); err != nil {
		return fmt.Errorf("reading the copy of %s: %w", what, err)
	}
	var tiles []map[string]any
	for _, t := range copied.Tiles {
		if t.Insight == nil {
			continue
		}
		if src, ok := byInsight[t.Insight.ID]; ok {
			tiles = append(tiles, map[string]any{"id": t.ID, "layouts": layoutsOrEmpty(src.Layouts), "color": src.Color})
		}
	}
	for _, t := range texts {
		t["layouts"] = layoutsOrEmpty(t["layouts"].(json.RawMessage))
		tiles = append(tiles, t)
	}
	if len(tiles) == 0 {
		return nil
	}
	if err := im.dst.Patch(ctx, dpath, map[string]any{"tiles": tiles}, nil); err != nil {
		return fmt.Errorf("laying out the tiles of the copy of %s: %w", what, err)
	}
	return nil
}

func layoutsOrEmpty(l json.RawMessage) json.RawMessage {
	if len(l) == 0 || string(l) == "null" {
		return json.RawMessage("{}")
	}
	return l
}
