package querybuilder

import (
	"encoding/json"
	"strings"
	"testing"
)

// hostile is a value that would change the SQL text if it ever reached
// it: quotes, a comment, a backslash, a placeholder and a NUL.
const hostile = `x'); DROP TABLE events; --\` + "`{p0:String}\x00"

// checkHostile builds a request with a tame value and with hostile in
// every string field (build puts it there, JSON-encoded) and checks the
// SQL text is the same: values reach the engine only as parameters.
func checkHostile(t *testing.T, build func(t *testing.T, value string) Statement) {
	t.Helper()
	tame, evil := build(t, "tame"), build(t, hostile)
	for {
		if tame.SQL != evil.SQL {
			t.Fatalf("the SQL text changed with the value:\n%s", evil.SQL)
		}
		if strings.Contains(evil.SQL, "DROP") {
			t.Fatal("a value reached the SQL text")
		}
		if tame.Fallback == nil || evil.Fallback == nil { // and the fallback's
			break
		}
		tame, evil = *tame.Fallback, *evil.Fallback
	}
}

func quoted(t *testing.T, v string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every string a trends request carries: the event, its custom name and
// math property, property keys and values, the breakdown.
func TestHostileValuesNeverReachTheSQLText(t *testing.T) {
	checkHostile(t, func(t *testing.T, v string) Statement {
		s := quoted(t, v)
		p, err := ParseBody([]byte(`{"events": [{"id": ` + s + `, "custom_name": ` + s + `, "math": "sum", "math_property": ` + s + `,
			"properties": [{"key": ` + s + `, "value": ` + s + `}]}], "breakdown": ` + s + `,
			"properties": [{"key": ` + s + `, "value": [` + s + `], "operator": "is_not", "type": "person"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseTrends(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := BuildTrends(q, Facts{})
		if err != nil {
			t.Fatal(err)
		}
		return stmt
	})
}

// Every string a funnel request carries: step names and custom names,
// step and global property keys and values, exclusion events, the
// breakdown key.
func TestFunnelHostileValuesNeverReachTheSQLText(t *testing.T) {
	checkHostile(t, func(t *testing.T, v string) Statement {
		s := quoted(t, v)
		q, err := parseFunnelBody(t, `{"events": [{"id": `+s+`, "custom_name": `+s+`, "properties": [{"key": `+s+`, "value": `+s+`}]},
			{"id": "b", "properties": [{"key": "k", "value": [`+s+`], "operator": "icontains"}]}],
			"exclusions": [{"id": `+s+`, "name": `+s+`, "funnel_from_step": 0, "funnel_to_step": 1}], "breakdown": `+s+`,
			"breakdown_attribution_type": "last_touch",
			"properties": [{"key": `+s+`, "value": `+s+`, "operator": "is_not", "type": "person"}]}`)
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := BuildFunnel(q, Facts{})
		if err != nil {
			t.Fatal(err)
		}
		return stmt
	})
}
