package api

// An export whose selection has no actors is a header and no rows, whether
// or not the engine names the columns of an empty result.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
	"github.com/insightd/insightd/querybuilder/reference"
)

// headerlessEmpty is the real engine streaming as a chunked reader does
// when an empty result carries no header: the columns are handed over
// with the first row, so an empty result hands over nothing at all.
type headerlessEmpty struct{ olap.Engine }

func (e headerlessEmpty) Stream(ctx context.Context, stmt querybuilder.Statement, columns func([]olap.Column) error, each func(row []any) error) error {
	var cols []olap.Column
	sent := false
	return e.Engine.Stream(ctx, stmt, func(c []olap.Column) error { cols = c; return nil }, func(row []any) error {
		if !sent {
			sent = true
			if err := columns(cols); err != nil {
				return err
			}
		}
		return each(row)
	})
}

func TestActorsCSVOfAStepNobodyReachedIsTheHeaderAlone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		engine func(olap.Engine) olap.Engine
	}{
		{"on the embedded engine", func(e olap.Engine) olap.Engine { return e }},
		{"on an engine that names no columns for an empty result", func(e olap.Engine) olap.Engine { return headerlessEmpty{e} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newFunnelEnv(t)
			env.s.useEngine(tc.engine(env.s.engine))
			p := env.project(t, []reference.Event{
				analysistest.Fev("u1", "A", time.Hour), analysistest.Fev("u1", "B", 2*time.Hour),
				analysistest.Fev("u2", "A", 3*time.Hour),
			})
			var steps []analysistest.APIStep
			p.result(t, "funnel", analysistest.FunnelOf("ordered", "A", "B", "never").Filter(nil), &steps)
			if len(steps) != 3 || steps[2].Count == nil || *steps[2].Count != 0 || *steps[1].Count != 1 {
				t.Fatalf("steps %+v", steps)
			}
			header, rows := p.exportCSV(t, steps[2].ConvertedURL.(string))
			if strings.Join(header, ",") != strings.Join(querybuilder.ExportColumns(querybuilder.PersonActors), ",") || len(rows) != 0 {
				t.Fatalf("header %v, rows %v", header, rows)
			}
			// The same export with actors in it still streams them.
			header, rows = p.exportCSV(t, steps[1].ConvertedURL.(string))
			if len(header) != 7 || len(rows) != 1 || !strings.Contains(rows[0][3], "u1") {
				t.Fatalf("header %v, rows %v", header, rows)
			}
		})
	}
}
