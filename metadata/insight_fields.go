package metadata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx/types"
	"github.com/lib/pq"

	"github.com/insightd/insightd/querybuilder"
)

// InsightKinds are the analysis kinds an insight's filters may name in
// "insight" (PostHog's legacy filter kinds, upper case as PostHog stores
// them): those of the query builder's registry, which computes them.
func InsightKinds() []string { return querybuilder.InsightKinds() }

// Limits on insight input, PostHog's column sizes: longer values would be
// rejected by PostHog's database, so clients never send them.
const (
	insightTextMax = 400 // name, derived_name, description
	tagMax         = 255
	// jsonDepthMax bounds nesting in filters and query: PostgreSQL parses
	// jsonb recursively and fails deep documents with a stack-depth error,
	// which must be a 400, not a 500. Real filters nest a handful of levels.
	jsonDepthMax = 64
)

// noNUL is the problem with text holding a NUL character, which
// PostgreSQL's text and jsonb cannot store.
const noNUL = "Must not contain NUL characters (\\u0000)."

// InsightInput is a checked set of writeable insight fields: column name
// to the value to store.
type InsightInput struct {
	Values map[string]any
	// Dashboards are the dashboards the insight is to be on (the
	// deprecated dashboards field); nil when the body had none.
	Dashboards []int64
}

type insightField = field[Insight]

// ParseInsightInput checks the writeable fields present in body (any
// subset). Fields that are not writeable (read-only or unknown) are
// ignored, as for projects and as PostHog does; the first bad value is a
// ValidationError naming it.
func ParseInsightInput(body map[string]json.RawMessage) (InsightInput, error) {
	var dashboards []int64
	if raw, ok := body["dashboards"]; ok {
		var problem string
		if dashboards, problem = parseDashboardIDs(raw); problem != "" {
			return InsightInput{Values: map[string]any{}}, &ValidationError{Attr: "dashboards", Detail: problem}
		}
	}
	values, err := parseFields(insightFields, body)
	return InsightInput{Values: values, Dashboards: dashboards}, err
}

// parseDashboardIDs reads the deprecated dashboards list: dashboard ids
// (whether they are the project's is the store's to check), never nil.
func parseDashboardIDs(raw json.RawMessage) ([]int64, string) {
	var ids []json.Number
	if isNull(raw) || json.Unmarshal(raw, &ids) != nil {
		return nil, "Must be a list of dashboard ids."
	}
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		n, err := id.Int64()
		if err != nil || n < 1 {
			return nil, fmt.Sprintf("%q is not a dashboard id.", id)
		}
		out = append(out, n)
	}
	return out, ""
}

// insightFields are the contract's writeable fields with their rules.
var insightFields = []insightField{
	{name: "name", parse: textParser(true), get: func(i *Insight) any { return nullString(i.Name.String, i.Name.Valid) }},
	{name: "derived_name", parse: textParser(true), get: func(i *Insight) any {
		return nullString(i.DerivedName.String, i.DerivedName.Valid)
	}},
	{name: "description", parse: textParser(false), get: func(i *Insight) any { return i.Description }},
	{name: "filters", parse: parseFilters, get: func(i *Insight) any { return i.Filters }},
	{name: "query", parse: parseQuery, get: func(i *Insight) any { return nullJSON(i.Query) }},
	{name: "order", parse: parseOrder, get: func(i *Insight) any { return nullInt(i.Order.Int64, i.Order.Valid) }},
	{name: "deleted", parse: parseBool, get: func(i *Insight) any { return i.Deleted }},
	{name: "tags", parse: parseTags, get: func(i *Insight) any { return []string(i.Tags) }},
	{name: "favorited", parse: parseBool, get: func(i *Insight) any { return i.Favorited }},
	{name: "saved", parse: parseBool, get: func(i *Insight) any { return i.Saved }},
}

// textParser reads a string, trimmed as Django REST framework trims, of
// at most insightTextMax characters. A nullable field takes null; the
// others read null as "" (the column is never null).
func textParser(nullable bool) func(json.RawMessage) (any, string) {
	return trimmedText(insightTextMax, nullable)
}

// checkText refuses what PostgreSQL text cannot hold (NUL) and what is
// longer than max characters.
func checkText(s string, max int) string {
	if strings.ContainsRune(s, 0) {
		return noNUL
	}
	if n := len([]rune(s)); n > max {
		return fmt.Sprintf("Must be at most %d characters (got %d).", max, n)
	}
	return ""
}

func parseBool(raw json.RawMessage) (any, string) {
	var b bool
	if isNull(raw) || json.Unmarshal(raw, &b) != nil {
		return nil, "Must be a boolean."
	}
	return b, ""
}

// parseOrder reads an integer that fits the column (32 bits), or null.
func parseOrder(raw json.RawMessage) (any, string) {
	if isNull(raw) {
		return nil, ""
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return nil, "Must be an integer or null."
	}
	v, err := n.Int64()
	if err != nil {
		return nil, "Must be an integer or null."
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return nil, fmt.Sprintf("Must be from %d to %d.", math.MinInt32, math.MaxInt32)
	}
	return v, ""
}

// parseTags reads a list of tag names: trimmed, non-empty, each once (in
// the order first given).
func parseTags(raw json.RawMessage) (any, string) {
	var items []any
	if isNull(raw) || json.Unmarshal(raw, &items) != nil {
		return nil, "Must be a list of strings."
	}
	tags := []string{}
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Sprintf("Must be a list of strings; item %d is not a string.", i)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Sprintf("Item %d is empty.", i)
		}
		if problem := checkText(s, tagMax); problem != "" {
			return nil, fmt.Sprintf("Item %d: %s", i, problem)
		}
		if !slices.Contains(tags, s) {
			tags = append(tags, s)
		}
	}
	return pq.StringArray(tags), ""
}

// parseFilters reads the legacy filter object. Its content is the query
// builder's to check; here only that it is an object PostgreSQL can
// store, and that "insight", when present, names a known kind.
func parseFilters(raw json.RawMessage) (any, string) {
	if isNull(raw) {
		return nil, "May not be null; send {} for no filters."
	}
	doc, v, problem := jsonObjectDocument(raw)
	if problem != "" {
		return nil, problem
	}
	if kind, ok := v["insight"]; ok {
		s, isString := kind.(string)
		if kinds := InsightKinds(); !isString || !slices.Contains(kinds, strings.ToUpper(s)) {
			return nil, fmt.Sprintf("filters.insight must be one of %s.", strings.Join(kinds, ", "))
		}
	}
	return doc, ""
}

// parseQuery reads a query node: an object, the same object as a JSON
// string (how PostHog's schema describes it), or null.
func parseQuery(raw json.RawMessage) (any, string) {
	if isNull(raw) {
		return nil, ""
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		raw = json.RawMessage(text)
	}
	doc, _, problem := jsonObjectDocument(raw)
	if problem != "" {
		return nil, "Must be a query object or a JSON string of one: " + problem
	}
	return doc, ""
}

// jsonObjectDocument is jsonDocument for a JSON object.
func jsonObjectDocument(raw json.RawMessage) (types.JSONText, map[string]any, string) {
	doc, v, problem := jsonDocument(raw)
	if problem != "" {
		return nil, nil, problem
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, "Must be a JSON object."
	}
	return doc, obj, ""
}

// jsonDocument decodes a JSON document and re-encodes it for
// PostgreSQL: numbers keep their digits, invalid escapes (lone
// surrogates) and bytes that are not UTF-8 become U+FFFD as everywhere
// else in Go's decoder (jsonb refuses both), and NUL characters and deep
// nesting, which jsonb also refuses, are refused here.
func jsonDocument(raw json.RawMessage) (types.JSONText, any, string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, nil, "Must be valid JSON."
	}
	if problem := checkDocument(v, 1); problem != "" {
		return nil, nil, problem
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, "Must be valid JSON."
	}
	return types.JSONText(b), v, ""
}

// checkNumber refuses a number no double can hold (1e400, 1e-400), and
// one written longer or with a larger exponent than a double needs
// (0e-20000): PostHog's clients could not read it back, PostgreSQL's
// numeric refuses the extreme ones (past 1e131071, or more than 16383
// digits after the point), and takes the others digit by digit, a
// 10-byte number becoming 128 kB.
func checkNumber(n json.Number) string {
	f, err := strconv.ParseFloat(string(n), 64)
	mantissa, exp, _ := strings.Cut(strings.ToLower(string(n)), "e")
	e, expErr := 0, error(nil)
	if exp != "" {
		e, expErr = strconv.Atoi(exp)
	}
	if err != nil || expErr != nil || len(n) > maxNumberLength || e > maxNumberExponent || e < -maxNumberExponent ||
		(f == 0 && strings.ContainsAny(mantissa, "123456789")) {
		return fmt.Sprintf("Numbers must be within the range of a double (about 1e-308 to 1e308), written in at most %d characters "+
			"with an exponent of at most %d; got %.40s.", maxNumberLength, maxNumberExponent, n)
	}
	return ""
}

const (
	maxNumberLength   = 400
	maxNumberExponent = 400
)

func checkDocument(v any, depth int) string {
	if depth > jsonDepthMax {
		return fmt.Sprintf("Must not nest deeper than %d levels.", jsonDepthMax)
	}
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			return noNUL
		}
	case json.Number:
		return checkNumber(x)
	case []any:
		for _, e := range x {
			if p := checkDocument(e, depth+1); p != "" {
				return p
			}
		}
	case map[string]any:
		for k, e := range x {
			if p := checkDocument(k, depth); p != "" {
				return p
			}
			if p := checkDocument(e, depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}
