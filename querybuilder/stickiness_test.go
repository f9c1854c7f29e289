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
