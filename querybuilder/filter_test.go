package querybuilder

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func parseDoc(t *testing.T, doc string) (*PropertyFilter, error) {
	t.Helper()
	pr := &problems{}
	pp := &propertyParser{clock: clock{now: testNow, loc: newYork}, pr: pr}
	f := pp.parse(json.RawMessage(doc), "properties", "properties")
	return f, pr.err()
}

// compile renders a document's SQL with its parameters substituted, so a
// test reads as the condition it checks.
func compile(f *PropertyFilter) string {
	b := newBinder()
	s := f.sql(&scope{binder: b, person: func(expr string) string { return "person[" + expr + "]" }})
	for name, v := range b.params {
		s = strings.ReplaceAll(s, "{"+name+":", fmt.Sprintf("{%v:", v))
	}
	return s
}

func TestPropertyDocumentForms(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"a list is ANDed", `[{"key": "$browser", "value": "Chrome"}, {"key": "plan", "value": "pro", "type": "person"}]`,
			"(e.mat_browser = {Chrome:String} AND person[JSONExtractString(properties, {plan:String})] = {pro:String})"},
		{"a group nests", `{"type": "OR", "values": [{"type": "AND", "values": [{"key": "a", "value": 1}, {"key": "b", "value": true}]}, {"key": "c", "operator": "is_set"}]}`,
			"((JSONExtractString(e.properties, {a:String}) = {1:String} AND JSONExtractString(e.properties, {b:String}) = {true:String}) OR JSONType(e.properties, {c:String}) != 'Null')"},
		{"the oldest form is an object of exact matches", `{"$os": "Mac", "$current_url__icontains": "docs"}`,
			"(positionCaseInsensitiveUTF8(e.mat_current_url, {docs:String}) > 0 AND e.mat_os = {Mac:String})"},
		{"a JSON document inside a string is unwrapped", `"[{\"key\": \"a\", \"value\": \"x\"}]"`,
			"JSONExtractString(e.properties, {a:String}) = {x:String}"},
		{"negation wraps the condition", `[{"key": "a", "value": "x", "operator": "exact", "negation": true}]`,
			"NOT (JSONExtractString(e.properties, {a:String}) = {x:String})"},
		{"empty groups drop out", `{"type": "AND", "values": [{"type": "OR", "values": []}, {"key": "a", "value": "x"}]}`,
			"JSONExtractString(e.properties, {a:String}) = {x:String}"},
		{"an object whose only property is named key is the oldest form: key equals val", `{"key": "val"}`,
			"JSONExtractString(e.properties, {key:String}) = {val:String}"},
		{"properties named key and other names are exact matches too", `{"key": "val", "plan": "pro", "key__icontains": "v"}`,
			"(JSONExtractString(e.properties, {key:String}) = {val:String} AND positionCaseInsensitiveUTF8(JSONExtractString(e.properties, {key:String}), {v:String}) > 0 AND JSONExtractString(e.properties, {plan:String}) = {pro:String})"},
		{"a property named values that is not a list is an exact match", `{"values": "x"}`,
			"JSONExtractString(e.properties, {values:String}) = {x:String}"},
		{"key with value is a condition", `{"key": "a", "value": "x"}`,
			"JSONExtractString(e.properties, {a:String}) = {x:String}"},
		{"key with operator alone is a condition", `{"key": "a", "operator": "is_set"}`,
			"JSONType(e.properties, {a:String}) != 'Null'"},
		{"key with type alone is a condition (is_set needs no value)", `{"key": "a", "type": "event", "operator": "is_not_set"}`,
			"NOT (JSONType(e.properties, {a:String}) != 'Null')"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseDoc(t, tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if got := compile(f); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("inside a list an object without value, operator or type is still a condition, and refused without them", func(t *testing.T) {
		if _, err := parseDoc(t, `[{"key": "val"}]`); err == nil || !strings.Contains(err.Error(), "exact needs") {
			t.Fatalf("%v", err)
		}
		if _, err := parseDoc(t, `[{"value": "x"}]`); err == nil || !strings.Contains(err.Error(), "key must be") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("key with type but no value is a condition that needs a value", func(t *testing.T) {
		if _, err := parseDoc(t, `{"key": "a", "type": "person"}`); err == nil {
			t.Fatal("accepted")
		}
	})
	for _, doc := range []string{`null`, `[]`, `{}`, `""`, `{"type": "AND", "values": []}`, `{"type": "AND"}`} {
		t.Run(doc+" is no condition", func(t *testing.T) {
			f, err := parseDoc(t, doc)
			if err != nil || f != nil {
				t.Fatalf("%+v %v", f, err)
			}
		})
	}
}

func TestEveryOperatorCompiles(t *testing.T) {
	cases := []struct{ cond, want string }{
		{`{"key": "a", "value": "x"}`, "JSONExtractString(e.properties, {a:String}) = {x:String}"},
		{`{"key": "a", "value": ["x", "y"], "operator": "exact"}`, "JSONExtractString(e.properties, {a:String}) IN {[x y]:Array(String)}"},
		{`{"key": "a", "value": "x", "operator": "is_not"}`, "JSONExtractString(e.properties, {a:String}) != {x:String}"},
		{`{"key": "a", "value": [1, 2.5], "operator": "is_not"}`, "JSONExtractString(e.properties, {a:String}) NOT IN {[1 2.5]:Array(String)}"},
		{`{"key": "a", "value": "X", "operator": "icontains"}`, "positionCaseInsensitiveUTF8(JSONExtractString(e.properties, {a:String}), {X:String}) > 0"},
		{`{"key": "a", "value": "X", "operator": "not_icontains"}`, "positionCaseInsensitiveUTF8(JSONExtractString(e.properties, {a:String}), {X:String}) = 0"},
		{`{"key": "a", "value": "^x.*$", "operator": "regex"}`, "match(JSONExtractString(e.properties, {a:String}), {^x.*$:String})"},
		{`{"key": "a", "value": "^x", "operator": "not_regex"}`, "NOT match(JSONExtractString(e.properties, {a:String}), {^x:String})"},
		{`{"key": "a", "value": 5, "operator": "gt"}`, "ifNull(toFloat64OrNull(JSONExtractString(e.properties, {a:String})) > {5:Float64}, 0)"},
		{`{"key": "a", "value": "5.5", "operator": "gte"}`, "ifNull(toFloat64OrNull(JSONExtractString(e.properties, {a:String})) >= {5.5:Float64}, 0)"},
		{`{"key": "a", "value": -1, "operator": "lt"}`, "ifNull(toFloat64OrNull(JSONExtractString(e.properties, {a:String})) < {-1:Float64}, 0)"},
		{`{"key": "a", "value": 0, "operator": "lte"}`, "ifNull(toFloat64OrNull(JSONExtractString(e.properties, {a:String})) <= {0:Float64}, 0)"},
		{`{"key": "a", "operator": "is_set"}`, "JSONType(e.properties, {a:String}) != 'Null'"},
		{`{"key": "a", "operator": "is_not_set", "type": "person"}`, "NOT (person[JSONType(properties, {a:String}) != 'Null'] = 1)"},
		{`{"key": "a", "value": "2026-01-05", "operator": "is_date_before"}`,
			"ifNull(parseDateTime64BestEffortOrNull(JSONExtractString(e.properties, {a:String}), 6, {tz:String}) < {2026-01-05 05:00:00 +0000 UTC:DateTime64(6, 'UTC')}, 0)"},
		{`{"key": "a", "value": "-7d", "operator": "is_date_after"}`,
			"ifNull(parseDateTime64BestEffortOrNull(JSONExtractString(e.properties, {a:String}), 6, {tz:String}) > {2026-03-03 16:30:00 +0000 UTC:DateTime64(6, 'UTC')}, 0)"},
		{`{"key": "a", "value": "2026-01-05", "operator": "is_date_exact"}`,
			"ifNull(parseDateTime64BestEffortOrNull(JSONExtractString(e.properties, {a:String}), 6, {tz:String}) >= {2026-01-05 05:00:00 +0000 UTC:DateTime64(6, 'UTC')} AND parseDateTime64BestEffortOrNull(JSONExtractString(e.properties, {a:String}), 6, {tz:String}) < {2026-01-06 05:00:00 +0000 UTC:DateTime64(6, 'UTC')}, 0)"},
	}
	for _, tc := range cases {
		t.Run(tc.cond, func(t *testing.T) {
			f, err := parseDoc(t, "["+tc.cond+"]")
			if err != nil {
				t.Fatal(err)
			}
			if got := compile(f); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestBadConditionsNameTheirPlace(t *testing.T) {
	deep := strings.Repeat(`{"type": "AND", "values": [`, 12) + `{"key": "a", "value": 1}` + strings.Repeat(`]}`, 12)
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"key": "a", "value": 1},`, maxPropertyConditions+1), ",") + "]"
	cases := []struct{ name, doc, detail string }{
		{"an unknown operator", `[{"key": "a", "value": 1, "operator": "like"}]`, `properties[0].operator: unknown operator like`},
		{"an unknown type", `[{"key": "a", "value": 1, "type": "planet"}]`, `properties[0].type must be event, person, group, session or cohort`},
		{"a type not supported yet", `[{"key": "a", "value": 1, "type": "element"}]`, `element properties are not supported yet`},
		{"an unknown cohort", `[{"key": "id", "value": 1, "type": "cohort"}]`, `cohort 1 does not exist`},
		{"a missing key", `[{"value": 1}]`, `properties[0].key must be a non-empty property name`},
		{"a regex RE2 cannot compile", `[{"key": "a", "value": "(?<=x)y", "operator": "regex"}]`, `is not a valid regular expression`},
		{"an unbalanced regex", `{"type": "OR", "values": [{"key": "a", "value": "(x", "operator": "not_regex"}]}`, `properties.values[0].value: "(x" is not a valid regular expression`},
		{"a number that is not one", `[{"key": "a", "value": "lots", "operator": "gt"}]`, `gt needs a number`},
		{"a date that is not one", `[{"key": "a", "value": "someday", "operator": "is_date_after"}]`, `"someday" is not a date`},
		{"an exact match on nothing", `[{"key": "a", "value": null}]`, `exact needs a value`},
		{"an empty list", `[{"key": "a", "value": []}]`, `exact needs at least one value`},
		{"an object value", `[{"key": "a", "value": {"b": 1}, "operator": "icontains"}]`, `icontains needs one string value`},
		{"a bad group type", `{"type": "XOR", "values": []}`, `properties.type must be AND or OR`},
		{"a non-boolean negation", `[{"key": "a", "value": 1, "negation": "yes"}]`, `negation must be true or false`},
		{"a scalar document", `42`, `must be a property condition`},
		{"groups nested too deep", deep, `nest deeper than 8 levels`},
		{"too many conditions", many, `more than 200 property conditions`},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is a validation error", func(t *testing.T) {
			_, err := parseDoc(t, tc.doc)
			ves := ValidationErrors(err)
			if len(ves) == 0 {
				t.Fatalf("accepted (err %v)", err)
			}
			if ves[0].Attr != "properties" || !strings.Contains(ves[0].Detail, tc.detail) {
				t.Fatalf("got %v, want attr properties and %q", err, tc.detail)
			}
		})
	}
}

func TestPropertyDocumentsEchoInGroupShape(t *testing.T) {
	f, err := parseDoc(t, `[{"key": "a", "value": 1}, {"type": "OR", "values": [{"key": "b", "operator": "is_set", "type": "person"}]}]`)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(f.JSON())
	want := `{"type":"AND","values":[{"key":"a","operator":"exact","type":"event","value":1},{"type":"OR","values":[{"key":"b","operator":"is_set","type":"person","value":null}]}]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !f.usesPersons() {
		t.Error("a nested person condition is not seen")
	}
}
