package querybuilder_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// funnelModes are request shapes covering every path of the funnel
// statement: each order type, visualisation, breakdown attribution and
// exclusions, 20 steps, group aggregation and person filters.
var funnelModes = map[string]string{
	"ordered":             `{"events":[{"id":"a"},{"id":"b"},{"id":"c"}]}`,
	"strict":              `{"events":[{"id":"a"},{"id":"b"}],"funnel_order_type":"strict"}`,
	"unordered":           `{"events":[{"id":"a"},{"id":"b"},{"id":"a"}],"funnel_order_type":"unordered"}`,
	"exclusions":          `{"events":[{"id":"a"},{"id":"b"},{"id":"c"}],"exclusions":[{"id":"x","funnel_from_step":0,"funnel_to_step":2}]}`,
	"unordered exclusion": `{"events":[{"id":"a"},{"id":"b"}],"funnel_order_type":"unordered","exclusions":[{"id":"x","funnel_from_step":0,"funnel_to_step":1}]}`,
	"breakdown":           `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"$browser"}`,
	"last touch":          `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"k","breakdown_attribution_type":"last_touch"}`,
	"step attribution":    `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"k","breakdown_attribution_type":"step","breakdown_attribution_value":1}`,
	"person breakdown":    `{"events":[{"id":"a"},{"id":"b"}],"breakdown":"plan","breakdown_type":"person"}`,
	"trends":              `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"trends"}`,
	"trends breakdown":    `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"trends","breakdown":"k"}`,
	"time to convert":     `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"time_to_convert","bin_count":5}`,
	"strict trends":       `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"trends","funnel_order_type":"strict","interval":"week"}`,
	"unordered ttc":       `{"events":[{"id":"a"},{"id":"b"}],"funnel_viz_type":"time_to_convert","funnel_order_type":"unordered"}`,
	"groups":              `{"events":[{"id":"a"},{"id":"b"}],"aggregation_group_type_index":1}`,
	"person filter":       `{"events":[{"id":"a","properties":[{"key":"plan","value":"pro","type":"person"}]},{"id":"b"}],"properties":[{"key":"email","operator":"is_set","type":"person"}]}`,
	"all events step":     `{"events":[{"id":"a"},{"id":null}]}`,
	"20 steps": `{"events":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"},{"id":"g"},{"id":"h"},{"id":"i"},{"id":"j"},
		{"id":"k"},{"id":"l"},{"id":"m"},{"id":"n"},{"id":"o"},{"id":"p"},{"id":"q"},{"id":"r"},{"id":"s"},{"id":"t"}]}`,
}

// TestFunnelStatementsRun runs every mode's statement on the engine (an
// empty project, and one without person overrides) and shapes the rows:
// the SQL is valid for each path, whatever the data.
func TestFunnelStatementsRun(t *testing.T) {
	e := testEngine(t)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for name, body := range funnelModes {
		for _, noOverrides := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				p, err := querybuilder.ParseBody([]byte(body))
				if err != nil {
					t.Fatal(err)
				}
				q, err := querybuilder.ParseFunnel(p, querybuilder.Project{ID: newTeam(), Timezone: "Europe/Paris", NoPersonOverrides: noOverrides}, now)
				if err != nil {
					t.Fatal(err)
				}
				stmt, err := querybuilder.BuildFunnel(q)
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
