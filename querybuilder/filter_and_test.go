package querybuilder

import (
	"encoding/json"
	"testing"
)

func TestAndPropertiesBuildsTheStatementOfTheConditionsWrittenByHand(t *testing.T) {
	build := func(props json.RawMessage) string {
		t.Helper()
		p, err := ParseBody([]byte(`{"events": [{"id": "$pageview"}], "date_from": "-7d"}`))
		if err != nil {
			t.Fatal(err)
		}
		if props != nil {
			p["properties"] = props
		}
		q, err := ParseTrends(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			t.Fatalf("%s: %v", props, err)
		}
		stmt, err := BuildTrends(q, Facts{})
		if err != nil {
			t.Fatal(err)
		}
		return stmt.String()
	}
	dash := json.RawMessage(`[{"key": "$os", "value": "Mac", "operator": "exact", "type": "event"}]`)
	hand := build(json.RawMessage(`{"type": "AND", "values": [
		{"type": "AND", "values": [
			{"key": "$browser", "value": "Chrome", "operator": "exact"},
			{"key": "$current_url", "value": "x", "operator": "icontains"},
			{"key": "n", "value": 10.50, "operator": "exact"}]},
		[{"key": "$os", "value": "Mac", "operator": "exact", "type": "event"}]]}`))
	for name, own := range map[string]string{
		"the oldest form":              `{"n": 10.50, "$browser": "Chrome", "$current_url__icontains": "x"}`,
		"the oldest form as JSON text": `"{\"n\": 10.50, \"$browser\": \"Chrome\", \"$current_url__icontains\": \"x\"}"`,
		"a group":                      `{"type": "AND", "values": [{"key": "$browser", "value": "Chrome", "operator": "exact"}, {"key": "$current_url", "value": "x", "operator": "icontains"}, {"key": "n", "value": 10.50, "operator": "exact"}]}`,
	} {
		if got := build(AndProperties(json.RawMessage(own), dash)); got != hand {
			t.Errorf("%s:\n%s\nby hand:\n%s", name, got, hand)
		}
	}
	if got := AndProperties(json.RawMessage(`{}`), json.RawMessage(`[]`), nil, json.RawMessage(`{"type": "OR"}`)); got != nil {
		t.Errorf("empty documents joined: %s", got)
	}
	if got := build(AndProperties(json.RawMessage(`[]`), dash)); got != build(dash) {
		t.Errorf("an empty side changed the statement:\n%s", got)
	}
}
