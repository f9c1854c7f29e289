package api

// format=csv on persons/<kind>/ exports every actor of the number in one
// streamed statement: the right people with their properties, every one of
// them, in bounded memory.

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder"
	"github.com/insightd/insightd/querybuilder/reference"
)

// exportCSV reads a people URL with format=csv: the header and the rows.
func (p *funnelProject) exportCSV(t *testing.T, link string) ([]string, [][]string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("format", "csv")
	u.RawQuery = q.Encode()
	r := httptest.NewRequest("GET", u.RequestURI(), nil)
	r.Header.Set("Authorization", "Bearer "+p.key)
	w := httptest.NewRecorder()
	p.env.h.ServeHTTP(w, r)
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("GET %s: %d %s", u, w.Code, w.Body)
	}
	records, err := csv.NewReader(w.Body).ReadAll()
	if err != nil || len(records) == 0 {
		t.Fatalf("GET %s: %v %q", u, err, w.Body)
	}
	return records[0], records[1:]
}

// refPlans is each reference person's plan ($set by their latest event
// setting it), left out where two such events share the latest time.
func refPlans(events []reference.Event) map[string]string {
	personOf, _ := reference.Identities(events)
	type set struct {
		at    time.Time
		plan  string
		clash bool
	}
	latest := map[string]*set{}
	for _, e := range events {
		s, ok := e.Props["$set"].(map[string]any)
		if !ok {
			continue
		}
		root := personOf(e.DistinctID)
		plan, _ := s["plan"].(string)
		switch l := latest[root]; {
		case l == nil || e.At.After(l.at):
			latest[root] = &set{at: e.At, plan: plan}
		case e.At.Equal(l.at) && plan != l.plan:
			l.clash = true
		}
	}
	out := map[string]string{}
	for root, l := range latest {
		if !l.clash {
			out[root] = l.plan
		}
	}
	return out
}

func TestActorsCSVListsExactlyTheStepsPeopleWithTheirProperties(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	for _, seed := range []int64{11, 12} {
		events := analysistest.PeriodEvents(seed)
		p := env.project(t, events)
		f := analysistest.FunnelOf("ordered", "A", "B", "X").Hours(72)
		f.DateFrom, f.DateTo = "2026-02-20", "2026-03-12"
		var steps []analysistest.APIStep
		p.result(t, "funnel", f.Filter(nil), &steps)
		persons := f.Persons(events)
		plans := refPlans(events)
		personOf, _ := reference.Identities(events)
		checkedPlans := 0
		for i, st := range steps {
			for _, drop := range []bool{false, true} {
				if drop && i == 0 {
					continue
				}
				link := st.ConvertedURL.(string)
				if drop {
					link = st.DroppedURL.(string)
				}
				roots := map[string]bool{}
				for _, rp := range persons {
					if (!drop && rp.Level() >= i+1) || (drop && rp.Level() == i) {
						roots[rp.ID] = true
					}
				}
				header, rows := p.exportCSV(t, link)
				want := strings.Join([]string{"id", "uuid", "name", "distinct_ids", "properties", "created_at", "is_identified"}, ",")
				if strings.Join(header, ",") != want {
					t.Fatalf("header %v", header)
				}
				var got []string
				for _, row := range rows {
					var ids []string
					var props map[string]any
					if json.Unmarshal([]byte(row[3]), &ids) != nil || json.Unmarshal([]byte(row[4]), &props) != nil || row[0] != row[1] {
						t.Fatalf("row %v", row)
					}
					sort.Strings(ids)
					got = append(got, strings.Join(ids, ","))
					if _, err := time.Parse(time.RFC3339Nano, row[5]); err != nil || len(ids) == 0 {
						t.Fatalf("row %v: created_at %v", row, err)
					}
					if want, ok := plans[personOf(ids[0])]; ok {
						if props["plan"] != want {
							t.Fatalf("person %v: plan %v, the events set %q last", ids, props["plan"], want)
						}
						checkedPlans++
					}
				}
				sort.Strings(got)
				shown := int(*st.Count)
				if drop {
					shown = int(*steps[i-1].Count) - shown
				}
				samePeople(t, fmt.Sprintf("seed %d step %d dropped %v (csv)", seed, i+1, drop), got, len(rows), shown, personKeys(events, roots))
			}
		}
		if checkedPlans == 0 {
			t.Fatalf("seed %d: no person's properties checked", seed)
		}
	}
}

// countingWriter is a response that keeps nothing: it counts the bytes
// and lines written and samples the live heap every few megabytes.
type countingWriter struct {
	header       http.Header
	code         int
	bytes, lines int
	nextSample   int
	peak         uint64
	start        []byte // the first bytes, for a failure's message
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	if len(w.start) < 512 {
		w.start = append(w.start, b[:min(len(b), 512-len(w.start))]...)
	}
	w.bytes += len(b)
	w.lines += bytes.Count(b, []byte{'\n'})
	if w.bytes >= w.nextSample {
		w.nextSample = w.bytes + 4<<20
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.peak = max(w.peak, m.HeapAlloc)
	}
	return len(b), nil
}

// bulkActors writes n persons straight into the tables (ingestion is not
// under test): person i has distinct id big-i, an email and 80 bytes of
// filler, and one event "big" on 2 March.
func bulkActors(t *testing.T, p *funnelProject, n int) {
	t.Helper()
	ctx := context.Background()
	params := map[string]any{"team": p.id, "n": uint64(n)}
	id := "toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number), 12, '0')))"
	for _, sql := range []string{
		`INSERT INTO persons (id, team_id, properties, property_times, created_at, is_identified, is_deleted, version)
SELECT ` + id + `, {team:Int64}, concat('{"email":"big-', toString(number), '@example.com","filler":"', repeat('x', 80), '"}'), '{}',
    toDateTime64('2026-03-01 00:00:00', 6, 'UTC'), 1, 0, 1 FROM numbers({n:UInt64})`,
		`INSERT INTO person_distinct_id (team_id, distinct_id, person_id, is_deleted, version)
SELECT {team:Int64}, concat('big-', toString(number)), ` + id + `, 0, 1 FROM numbers({n:UInt64})`,
		`INSERT INTO events (uuid, team_id, event, distinct_id, person_id, timestamp, properties, created_at)
SELECT generateUUIDv4(), {team:Int64}, 'big', concat('big-', toString(number)), ` + id + `,
    toDateTime64('2026-03-02 12:00:00', 6, 'UTC') + toIntervalSecond(number % 3600), '{}', toDateTime64('2026-03-02 12:00:00', 6, 'UTC') FROM numbers({n:UInt64})`,
	} {
		if err := engine.Exec(ctx, querybuilder.Statement{SQL: sql, Params: params}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestActorsCSVStreamsManyActorsInBoundedMemory(t *testing.T) {
	const n = 150_000
	env := newFunnelEnv(t)
	p := env.project(t, nil)
	bulkActors(t, p, n)
	var series []struct {
		Data        []float64           `json:"data"`
		PersonsURLs []map[string]string `json:"persons_urls"`
	}
	p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "big", "math": "dau"}},
		"date_from": "2026-03-01", "date_to": "2026-03-03"}, &series)
	if len(series) != 1 || len(series[0].Data) != 3 || series[0].Data[1] != n {
		t.Fatalf("trend: %+v", series)
	}
	u, _ := url.Parse(series[0].PersonsURLs[1]["url"])
	q := u.Query()
	q.Set("format", "csv")
	u.RawQuery = q.Encode()
	r := httptest.NewRequest("GET", u.RequestURI(), nil)
	r.Header.Set("Authorization", "Bearer "+p.key)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	w := &countingWriter{header: http.Header{}}
	began := time.Now()
	env.h.ServeHTTP(w, r)
	took := time.Since(began)
	if w.code != 200 || w.lines != n+1 {
		t.Fatalf("%d, %d lines (want %d): %q", w.code, w.lines, n+1, w.start)
	}
	// The first row names its person by their email, as the list does.
	head, err := csv.NewReader(bytes.NewReader(w.start[:bytes.LastIndexByte(w.start, '\n')])).ReadAll()
	if err != nil || len(head) < 2 || head[1][2] != strings.TrimPrefix(head[1][3], `["`)[:len(head[1][3])-4]+"@example.com" {
		t.Fatalf("the first rows %q: %v", head, err)
	}
	grew := int64(w.peak) - int64(before.HeapAlloc)
	t.Logf("%d rows, %d MiB in %v (%.0f rows/s); live heap grew %d KiB at most", n, w.bytes>>20, took, float64(n)/took.Seconds(), grew>>10)
	// Holding the export would take its size in text and several times
	// that as Go values; streaming holds an engine chunk's rows.
	if grew > int64(w.bytes)/8 {
		t.Fatalf("live heap grew %d MiB for a %d MiB export", grew>>20, w.bytes>>20)
	}
}

// A retention cell's export carries each person's appearances, as its
// pages do.
func TestActorsCSVOfARetentionCellCarriesAppearances(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, analysistest.PeriodEvents(9))
	var rows []struct {
		Values []struct {
			Count     int    `json:"count"`
			PeopleURL string `json:"people_url"`
		} `json:"values"`
	}
	p.result(t, "retention", map[string]any{"target_entity": map[string]any{"id": "A"}, "returning_entity": map[string]any{"id": "B"},
		"total_intervals": 6, "date_to": "2026-03-08"}, &rows)
	checked := 0
	for _, row := range rows[:3] {
		cell := row.Values[0]
		actors, count := p.actorsOfURL(t, cell.PeopleURL)
		want := map[string]string{}
		for _, a := range actors {
			b, _ := json.Marshal(a["appearances"])
			want[a["id"].(string)] = string(b)
		}
		header, records := p.exportCSV(t, cell.PeopleURL)
		if header[len(header)-1] != "appearances" || len(records) != count || count != cell.Count {
			t.Fatalf("header %v, %d rows for %d", header, len(records), count)
		}
		for _, r := range records {
			if want[r[0]] != r[len(r)-1] {
				t.Fatalf("%s: appearances %s in the export, %s in the pages", r[0], r[len(r)-1], want[r[0]])
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no one to check")
	}
}
