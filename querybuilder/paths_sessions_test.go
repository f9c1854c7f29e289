package querybuilder

import (
	"strings"
	"testing"
	"time"
)

// A paths statement's funnel reads its own range: the session join folds
// the sessions of that range too, not only the paths' (its events found
// no session and read session properties as missing).
func TestFunnelPathsFoldTheFunnelRangesSessions(t *testing.T) {
	body := `{"date_from": "2026-03-01", "date_to": "2026-03-07", "funnel_paths": "funnel_path_after_step", "funnel_step": 1,
		"funnel_filter": {"events": [{"id": "$pageview", "order": 0}, {"id": "signup", "order": 1}], "date_from": "2026-01-10", "date_to": "2026-01-20",
			"properties": [{"key": "$session_duration", "value": 60, "operator": "gt", "type": "session"}]}}`
	p, err := ParseBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	st, err := buildKind(&pathsKind)(p)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 1, 9, 0, 0, 0, 0, time.UTC) // the funnel's first day, less the margin
	found := false
	for _, v := range st.Params {
		if tm, ok := v.(time.Time); ok && !tm.After(from) {
			found = true
		}
	}
	if !strings.Contains(st.SQL, "FROM sessions") || !found {
		t.Fatalf("no session day bound at or before %s: %v", from, st.Params)
	}
}
