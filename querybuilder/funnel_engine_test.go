package querybuilder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// funnelModes are request shapes covering every path of the funnel
// statement: each order type, visualisation, breakdown attribution and
// exclusions, 20 steps, group aggregation and person filters.
var funnelModes = map[string]string{
	"ordered":              `{"events":[{"id":"a"},{"id":"b"},{"id":"c"}]}`,
	"strict":               `{"events":[{"id":"a"},{"id":"b"}],"funnel_order_type":"strict"}`,
	"unordered":            `{"events":[{"id":"a"},{"id":"b"},{"id":"a"}],"funnel_order_type":"unordered"}`,
	"exclusions":           `{"events":[{"id":"a"},{"id":"b"},{"id":"c"}],"exclusions":[{"id":"x","funnel_from_step":0,"funnel_to_step":2}]}`,
	"unordered exclusion":  `{"events":[{"id":"a"},{"id":"b"}],"funnel_order_type":"unordered","exclusions":[{"id":"x","funnel_from_step":0,"funnel_to_step":1}]}`,
	"breakdown":            `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"$browser"}`,
	"last touch":           `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"k","breakdown_attribution_type":"last_touch"}`,
	"step attribution":     `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"k","breakdown_attribution_type":"step","breakdown_attribution_value":1}`,
	"person breakdown":     `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"plan","breakdown_type":"person"}`,
	"trends":               `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"trends"}`,
	"trends breakdown":     `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"trends","breakdown":"k"}`,
	"time to convert":      `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"time_to_convert","bin_count":5}`,
	"strict trends":        `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"trends","funnel_order_type":"strict","interval":"week"}`,
	"unordered ttc":        `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"time_to_convert","funnel_order_type":"unordered"}`,
	"groups":               `{"events":[{"id":"a"},{"id":"b"}],"aggregation_group_type_index":1}`,
	"groups person filter": `{"events":[{"id":"a"},{"id":"b"}],"aggregation_group_type_index":1,"properties":[{"key":"plan","value":"pro","type":"person"}]}`,
	"person filter":        `{"events":[{"id":"a","properties":[{"key":"plan","value":"pro","type":"person"}]},{"id":"b"}],"properties":[{"key":"email","operator":"is_set","type":"person"}]}`,
	"all events step":      `{"events":[{"id":"a"},{"id":null}]}`,
	"20 steps": `{"events":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"},{"id":"g"},{"id":"h"},{"id":"i"},{"id":"j"},
		{"id":"k"},{"id":"l"},{"id":"m"},{"id":"n"},{"id":"o"},{"id":"p"},{"id":"q"},{"id":"r"},{"id":"s"},{"id":"t"}]}`,
}

// TestFunnelStatementsRun runs every mode's statement on the engine and
// shapes the rows: on an empty project, and on one with a few persons
// doing every step, exclusion and breakdown value, with and without the
// override join. The SQL is valid on every path, whatever the data; the
// numbers are checked by the API's funnel result tests.
func TestFunnelStatementsRun(t *testing.T) {
	e := testEngine(t)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	full := newTeam()
	w := olap.NewWriter(e, slog.New(slog.NewTextHandler(io.Discard, nil)), olap.WriterConfig{})
	start := now.Add(-72 * time.Hour)
	var batch []olap.Capture
	for i, spec := range []string{"p1 a b x a c d", "p2 a", "p3 b a a b", "p4 x a b c", "p1 e f g"} {
		f := strings.Fields(spec)
		for j, name := range f[1:] {
			props := `{"k": "v` + name + `", "$browser": "B` + f[0] + `", "$group_1": "org` + f[0] + `"}`
			batch = append(batch, olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: full, Event: name, DistinctID: f[0],
				Timestamp: start.Add(time.Duration(i*10+j) * time.Minute), Properties: props}})
		}
	}
	if res := w.Write(context.Background(), batch); res.Err != nil {
		t.Fatal(res.Err)
	}
	w.Close()
	for name, body := range funnelModes {
		for _, c := range []struct {
			team        int64
			noOverrides bool
		}{{newTeam(), false}, {full, false}, {full, true}} {
			t.Run(name, func(t *testing.T) {
				p, err := querybuilder.ParseBody([]byte(body))
				if err != nil {
					t.Fatal(err)
				}
				q, err := querybuilder.ParseFunnel(p, querybuilder.Env{Project: querybuilder.Project{ID: c.team, Timezone: "Europe/Paris"}, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				stmt, err := querybuilder.BuildFunnel(q, querybuilder.Facts{NoPersonOverrides: c.noOverrides})
				if err != nil {
					t.Fatal(err)
				}
				rows, err := e.Query(context.Background(), stmt)
				if err != nil {
					t.Fatalf("%v\n%s", err, stmt.SQL)
				}
				res, err := querybuilder.ShapeFunnel(q, rows.Data)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := json.Marshal(res); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestFunnelActorRowsAgreeWithTheFunnel: the per-actor rows other kinds
// read (correlation, funnel paths, the persons of a step) hold exactly the
// actors the funnel counts at each step, each with the time of their
// first step.
func TestFunnelActorRowsAgreeWithTheFunnel(t *testing.T) {
	e := testEngine(t)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	team := newTeam()
	w := olap.NewWriter(e, slog.New(slog.NewTextHandler(io.Discard, nil)), olap.WriterConfig{})
	start := now.Add(-72 * time.Hour)
	var batch []olap.Capture
	for i, spec := range []string{"p1 a b x a c d", "p2 a", "p3 b a a b", "p4 x a b c", "p1 e f g", "p5 a a", "p6 a c b"} {
		f := strings.Fields(spec)
		for j, name := range f[1:] {
			props := `{"k": "v` + name + `", "$browser": "B` + f[0] + `", "$group_1": "org` + f[0] + `"}`
			batch = append(batch, olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: name, DistinctID: f[0],
				Timestamp: start.Add(time.Duration(i*10+j) * time.Minute), Properties: props}})
		}
	}
	if res := w.Write(context.Background(), batch); res.Err != nil {
		t.Fatal(res.Err)
	}
	w.Close()
	for name, body := range funnelModes {
		if strings.Contains(body, "funnel_viz_type") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			p, err := querybuilder.ParseBody([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			env := querybuilder.Env{Project: querybuilder.Project{ID: team, Timezone: "Europe/Paris"}, Now: now}
			q, err := querybuilder.ParseFunnel(p, env)
			if err != nil {
				t.Fatal(err)
			}
			stmt, err := querybuilder.BuildFunnel(q, querybuilder.Facts{})
			if err != nil {
				t.Fatal(err)
			}
			rows, err := e.Query(context.Background(), stmt)
			if err != nil {
				t.Fatal(err)
			}
			res, err := querybuilder.ShapeFunnel(q, rows.Data)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]int, len(q.Steps))
			lists := [][]querybuilder.FunnelStep{}
			switch r := res.(type) {
			case querybuilder.FunnelSteps:
				lists = append(lists, r)
			case querybuilder.FunnelBreakdown:
				lists = r
			}
			for _, steps := range lists {
				for i, s := range steps {
					want[i] += s.Count
				}
			}
			stmt, err = querybuilder.FunnelActorRows(q, querybuilder.Facts{})
			if err != nil {
				t.Fatal(err)
			}
			rows, err = e.Query(context.Background(), stmt)
			if err != nil {
				t.Fatalf("%v\n%s", err, stmt.SQL)
			}
			got := make([]int, len(q.Steps))
			for _, r := range rows.Data {
				level, actors, timed := r[0].(uint64), r[1].(uint64), r[2] == uint64(1)
				if !timed {
					t.Errorf("an actor at level %d has no step 1 time", level)
				}
				for i := 0; i < int(level); i++ {
					got[i] += int(actors)
				}
			}
			if strings.Join(strings.Fields(fmt.Sprint(got)), ",") != strings.Join(strings.Fields(fmt.Sprint(want)), ",") {
				t.Fatalf("actor rows reach %v, the funnel counts %v", got, want)
			}
		})
	}
}
