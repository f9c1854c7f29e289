package api

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

// The groups list runs as a user's statement of its project, under the
// engine limits: a list longer than max_result_rows answers 400
// result_too_large instead of reading past the server's bound.
func TestGroupsListRunsUnderTheEngineLimits(t *testing.T) {
	f := newFixture(t)
	token, key := f.a.ProjectAPIToken, f.a.PersonalAPIKey
	at := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	if code, out := captureBatch(t, f, token,
		identifyGroup("company", "acme", at, map[string]any{"name": "Acme"}),
		identifyGroup("company", "beta", at.Add(time.Hour), map[string]any{"name": "Beta"}),
		identifyGroup("company", "gamma", at.Add(2*time.Hour), map[string]any{"name": "Gamma"}),
	); code != 200 {
		t.Fatalf("capture: %d %v", code, out)
	}
	path := fmt.Sprintf("/api/projects/%d/groups/?group_type_index=0", f.a.ProjectID)
	var page struct {
		Results []apiGroup `json:"results"`
	}
	if code := getJSON(t, f, path, key, &page); code != 200 || len(page.Results) != 3 {
		t.Fatalf("within the limits: %d, %d groups", code, len(page.Results))
	}
	l := f.s.cfg.Limits
	l.MaxResultRows = 2
	f.s.useLimits(l)
	r := httptest.NewRequest("GET", path, nil)
	r.Host = "insightd.test"
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	var refusal map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &refusal)
	if w.Code != 400 || refusal["code"] != "result_too_large" {
		t.Fatalf("past max_result_rows: %d %s", w.Code, w.Body)
	}
}
