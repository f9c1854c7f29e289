package querybuilder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// Paths count items as hashes and name them after (paths_hashed.go),
// with the text statement as the fallback. On
// random events (pages with and without trailing slashes, screens, custom
// events, hostile texts, ties at one microsecond, paths across midnight)
// the hashed statement must answer by itself, with the text statement's
// rows, in every mode that reaches it; with a hash that collides (an
// item's length) it must refuse, and the engine must answer through the
// fallback with the same rows.
func TestHashedPathsEqualTheTextStatement(t *testing.T) {
	eng := testEngine(t)
	ctx := context.Background()
	team := newTeam()
	project := querybuilder.Project{ID: team, Timezone: "Europe/Berlin",
		PathCleaningFilters: json.RawMessage(`[{"regex": "/item/\\d+", "alias": "/item/:id"}]`)}
	r := rand.New(rand.NewSource(25))
	pages := []string{"/", "/a", "/a/", "/b", "/item/1", "/item/22", "/x'); DROP TABLE events; --", "/ü/\\0", "/cart/1", ""}
	screens := []string{"Home", "Cart", "/a"}
	customs := []string{"signup", "buy", "/b"}
	start := time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)
	var events []olap.Event
	for p := range 60 {
		person := uuid.New()
		at := start.Add(time.Duration(r.Intn(48*60)) * time.Minute)
		for range 1 + r.Intn(14) {
			var name, props string
			switch k := r.Intn(10); {
			case k < 6:
				b, _ := json.Marshal(map[string]string{"$current_url": pages[r.Intn(len(pages))]})
				name, props = "$pageview", string(b)
			case k < 8:
				b, _ := json.Marshal(map[string]string{"$screen_name": screens[r.Intn(len(screens))]})
				name, props = "$screen", string(b)
			default:
				name, props = customs[r.Intn(len(customs))], "{}"
			}
			events = append(events, olap.Event{UUID: uuid.New(), TeamID: team, Event: name, DistinctID: fmt.Sprint("d", p),
				PersonID: person, Timestamp: at, Properties: props})
			if r.Intn(4) > 0 { // else the next event ties with this one
				at = at.Add(time.Duration(r.Intn(40)) * time.Minute)
			}
		}
	}
	if err := eng.InsertEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)
	bodies := map[string]string{
		"every event":   `{"date_from": "2026-03-01", "date_to": "2026-03-04"}`,
		"pageviews":     `{"include_event_types": ["$pageview"], "date_from": "2026-03-01", "date_to": "2026-03-04", "step_limit": 4}`,
		"screens":       `{"include_event_types": ["$screen"], "date_from": "2026-03-01", "date_to": "2026-03-04"}`,
		"custom":        `{"include_event_types": ["custom_event", "$pageview"], "date_from": "2026-03-01", "date_to": "2026-03-04", "step_limit": 20}`,
		"cleaning":      `{"path_replacements": true, "local_path_cleaning_filters": [{"regex": "^/$", "alias": "/a"}], "path_groupings": ["/cart*"], "exclude_events": ["/b"], "date_from": "2026-03-01", "date_to": "2026-03-04"}`,
		"weights":       `{"min_edge_weight": 2, "edge_limit": 5, "date_from": "2026-03-01", "date_to": "2026-03-04"}`,
		"start":         `{"start_point": "/a", "date_from": "2026-03-01", "date_to": "2026-03-04"}`,
		"end":           `{"end_point": "Home", "include_event_types": ["$pageview", "$screen"], "date_from": "2026-03-01", "date_to": "2026-03-04"}`,
		"start and end": `{"start_point": "/a", "end_point": "/b", "step_limit": 2, "date_from": "2026-03-01", "date_to": "2026-03-04"}`,
		"absent point":  `{"start_point": "/nowhere", "date_from": "2026-03-01", "date_to": "2026-03-04"}`,
		"funnel after":  `{"funnel_paths": "funnel_path_after_step", "funnel_step": 1, "funnel_filter": {"events": [{"id": "$pageview"}, {"id": "buy"}], "date_from": "2026-03-01", "date_to": "2026-03-04"}}`,
	}
	query := func(st querybuilder.Statement) ([][]any, error) {
		rows, err := eng.Query(ctx, querybuilder.WithLimits(st, querybuilder.DefaultLimits()))
		if err != nil {
			return nil, err
		}
		return rows.Data, nil
	}
	build := func(name, body string) querybuilder.Statement {
		t.Helper()
		_, st := pathsStatement(t, name, body, querybuilder.Env{Project: project, Now: now})
		if st.Fallback == nil {
			t.Fatalf("%s: no fallback: the statement is not the hashed one", name)
		}
		return st
	}
	for name, body := range bodies {
		st := build(name, body)
		want, err := query(*st.Fallback)
		if err != nil {
			t.Fatalf("%s: text statement: %v", name, err)
		}
		if len(want) < 2 && name != "absent point" {
			t.Fatalf("%s: %d edges: the events do not exercise it", name, len(want))
		}
		alone := st
		alone.Fallback = nil
		got, err := query(alone)
		if err != nil {
			t.Fatalf("%s: hashed statement: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: hashed\n%v\ntext\n%v", name, got, want)
		}
	}
	restore := querybuilder.SetPathItemHash("length")
	defer restore()
	for name, body := range bodies {
		st := build(name, body)
		alone := st
		alone.Fallback = nil
		if _, err := query(alone); err == nil || !strings.Contains(err.Error(), querybuilder.FallbackCheck) {
			t.Fatalf("%s: colliding hashes: want the check to fail, got %v", name, err)
		}
		got, err := query(st)
		if err != nil {
			t.Fatalf("%s: through the fallback: %v", name, err)
		}
		want, err := query(*st.Fallback)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: through the fallback\n%v\nwant\n%v (%v)", name, got, want, err)
		}
	}
}
