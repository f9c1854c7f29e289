// Package analysistest compares the answers of the analysis kinds with
// the brute-force reference (querybuilder/reference) and with numbers
// worked out by hand, whoever answers them: the analysis service in
// api/analysis's tests, the HTTP API in api's.
package analysistest

import (
	"encoding/json"
	"testing"

	"github.com/insightd/insightd/querybuilder/reference"
)

// Project is a project holding events that answers analyses.
type Project interface {
	// Ask runs an analysis of a legacy route (funnel, trend, retention,
	// path, timing, funnel/correlation) and answers as the API does: the
	// status and the body, {"result": ...} or the error's fields.
	Ask(t testing.TB, method, route string, filter map[string]any) (int, map[string]json.RawMessage)
	// Set changes the project's settings, named as PATCH
	// /api/projects/:id/ names them (timezone, week_start_day,
	// path_cleaning_filters, test_account_filters, correlation_config).
	Set(t testing.TB, settings map[string]any)
	// Capture sends events as /batch/ takes them, each $identify in a
	// request of its own after the events before it.
	Capture(t testing.TB, events []reference.Event)
}

// Result runs a valid analysis and decodes its result into v.
func Result(t testing.TB, p Project, route string, filter map[string]any, v any) {
	t.Helper()
	code, body := p.Ask(t, "POST", route, filter)
	if code != 200 {
		t.Fatalf("%s: %d %s", route, code, text(body))
	}
	if err := json.Unmarshal(body["result"], v); err != nil {
		t.Fatalf("%s result %s: %v", route, body["result"], err)
	}
}

// WantInvalid checks a 400 with the error body naming attr ("" = any).
func WantInvalid(t testing.TB, p Project, route string, filter map[string]any, attr string) {
	t.Helper()
	code, body := p.Ask(t, "POST", route, filter)
	var got string
	json.Unmarshal(body["attr"], &got)
	if code != 400 || body["code"] == nil || body["detail"] == nil || attr != "" && got != attr {
		t.Fatalf("want 400 naming %q, got %d %s", attr, code, text(body))
	}
}

func text(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
