package querybuilder

import "testing"

// Stickiness counts actors whatever a series' math says (analytics.md:
// math is ignored except unique_group): a math trends would refuse
// without its property, or one trends does not know, is no error, while
// unique_group keeps its group type.
func TestStickinessIgnoresMathButUniqueGroup(t *testing.T) {
	p, err := ParseBody([]byte(`{"insight": "STICKINESS", "events": [{"id": "a", "math": "sum"}, {"id": "b", "math": "nonsense"},
		{"id": "c", "math": "unique_group", "math_group_type_index": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseStickiness(p, Env{Project: Project{ID: 42}, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]string{q.Series[0].Math, q.Series[1].Math, q.Series[2].Math}; got != [3]string{"total", "total", "unique_group"} {
		t.Fatalf("maths %v", got)
	}
	if q.actorType(q.Series[2]) != GroupActors(1) {
		t.Fatalf("unique_group: %+v", q.actorType(q.Series[2]))
	}
}

// breakdowns (the list) is refused where breakdown is: stickiness and
// lifecycle answered without it.
func TestStickinessAndLifecycleRefuseBreakdowns(t *testing.T) {
	body := []byte(`{"events": [{"id": "a"}], "breakdowns": [{"property": "$browser"}]}`)
	p, err := ParseBody(body)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Project: Project{ID: 42}, Now: testNow}
	_, serr := ParseStickiness(p, env)
	_, lerr := ParseLifecycle(p, env)
	for name, err := range map[string]error{"stickiness": serr, "lifecycle": lerr} {
		if ves := ValidationErrors(err); len(ves) != 1 || ves[0].Attr != "breakdowns" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// PostHog's area and stacked bar charts are time series like the line
// graph.
func TestAreaAndStackedDisplaysAreTimeSeries(t *testing.T) {
	for _, d := range []string{"ActionsAreaGraph", "ActionsStackedBar", "ActionsUnstackedBar"} {
		q, err := parseTrends(t, `{"events": [{"id": "a"}], "display": "`+d+`"}`, Project{})
		if err != nil || !displays[q.Display] {
			t.Errorf("%s: %v", d, err)
		}
	}
}
