package analysis_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
	"github.com/insightd/insightd/querybuilder"
)

// The service without HTTP, on the real stores: a kind registered from
// this file alone is parsed, built, run, shaped, cached and listed, and
// concurrent requests share one computation.

var engine olap.Engine

func TestMain(m *testing.M) {
	olaptest.Main(m, time.Minute, func(e *olap.Embedded) { engine = e })
}

// tallyQuery is a throwaway kind: the trend of its events, shaped as one
// total. It reuses the trends parser and statement; what makes it a kind
// of its own is its registry entry and its result.
type tallyQuery struct{ *querybuilder.TrendsQuery }

type tallyResult struct {
	Total float64 `json:"total"`
}

func (r tallyResult) Table() ([]string, [][]string) {
	return []string{"total"}, [][]string{{strconv.FormatFloat(r.Total, 'f', -1, 64)}}
}

func (q tallyQuery) Shape(rows [][]any) (querybuilder.Result, error) {
	res, err := q.TrendsQuery.Shape(rows)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var series []struct {
		Count float64 `json:"count"`
	}
	if err := json.Unmarshal(b, &series); err != nil {
		return nil, err
	}
	var r tallyResult
	for _, s := range series {
		r.Total += s.Count
	}
	return r, nil
}

func (q tallyQuery) Decode(raw json.RawMessage) (querybuilder.Result, error) {
	var r tallyResult
	return r, json.Unmarshal(raw, &r)
}

func parseTally(p querybuilder.Params, env querybuilder.Env) (querybuilder.Query, error) {
	q, err := querybuilder.ParseTrends(p, env)
	if err != nil {
		return nil, err
	}
	return tallyQuery{q}, nil
}

// countingEngine counts the statements reading events.
type countingEngine struct {
	olap.Engine
	n     atomic.Int64
	delay time.Duration
}

func (e *countingEngine) Query(ctx context.Context, stmt querybuilder.Statement) (*olap.Rows, error) {
	if strings.Contains(stmt.SQL, "FROM events AS e") {
		e.n.Add(1)
		time.Sleep(e.delay)
	}
	return e.Engine.Query(ctx, stmt)
}

func TestAKindRegisteredFromATestFileIsServedWholeByTheService(t *testing.T) {
	unregister, err := querybuilder.Register(&querybuilder.Kind{Name: "tally", Route: "tally", Insight: "TALLY", Parse: parseTally})
	if err != nil {
		t.Fatal(err)
	}
	defer unregister()
	if !slices.Contains(querybuilder.InsightKinds(), "TALLY") || !slices.Contains(querybuilder.Routes(), "tally") {
		t.Fatalf("not listed: kinds %v, routes %v", querybuilder.InsightKinds(), querybuilder.Routes())
	}
	ctx := context.Background()
	store := metadatatest.NewStore(t)
	b, err := store.Bootstrap(ctx, "tally@example.com", "Tally", "Tally")
	if err != nil {
		t.Fatal(err)
	}
	p, err := store.ProjectByID(ctx, b.ProjectID)
	if err != nil {
		t.Fatal(err)
	}
	writer := olap.NewWriter(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), olap.DefaultWriterConfig())
	defer writer.Close()
	at := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	var events []olap.Capture
	for i := range 3 {
		events = append(events, olap.Capture{Event: olap.Event{UUID: uuid.New(), TeamID: p.ID, Event: "$pageview",
			DistinctID: "u" + strconv.Itoa(i), Timestamp: at, Properties: "{}", CreatedAt: at}})
	}
	if res := writer.Write(ctx, events); res.Err != nil {
		t.Fatal(res.Err)
	}
	ce := &countingEngine{Engine: engine, delay: 100 * time.Millisecond}
	svc := analysis.New(analysis.Config{Schema: engine.Schema(), Limits: querybuilder.DefaultLimits()},
		slog.New(slog.NewTextHandler(io.Discard, nil)), store, ce)
	filter := querybuilder.Params{"events": json.RawMessage(`[{"id": "$pageview"}]`),
		"date_from": json.RawMessage(`"2026-03-01"`), "date_to": json.RawMessage(`"2026-03-05"`)}
	run := func(req analysis.Request) *analysis.Result {
		t.Helper()
		r, err := svc.Run(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("its route parses, builds, runs and shapes it", func(t *testing.T) {
		r := run(analysis.Request{Project: p, Route: "tally", Filter: filter})
		if string(r.Raw) != `{"total":3}` || r.Cached || ce.n.Load() != 1 {
			t.Fatalf("%s cached %v after %d statements", r.Raw, r.Cached, ce.n.Load())
		}
		header, rows, err := r.Table()
		if err != nil || header[0] != "total" || rows[0][0] != "3" {
			t.Fatalf("table %v %v %v", header, rows, err)
		}
	})
	t.Run("the same request again is cached, and so is a saved insight naming the kind", func(t *testing.T) {
		if r := run(analysis.Request{Project: p, Route: "tally", Filter: filter}); !r.Cached || string(r.Raw) != `{"total":3}` {
			t.Fatalf("%s cached %v", r.Raw, r.Cached)
		}
		saved := maps(filter, "insight", `"TALLY"`)
		raw, _ := json.Marshal(saved)
		i := &metadata.Insight{Filters: raw}
		if r := run(analysis.Request{Project: p, Insight: i}); !r.Cached || string(r.Raw) != `{"total":3}` {
			t.Fatalf("saved: %s cached %v", r.Raw, r.Cached)
		}
		if ce.n.Load() != 1 {
			t.Fatalf("%d statements", ce.n.Load())
		}
	})
	t.Run("concurrent forced refreshes each compute, concurrent plain ones share one computation", func(t *testing.T) {
		before := ce.n.Load()
		other := maps(filter, "date_to", `"2026-03-04"`)
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r, err := svc.Run(ctx, analysis.Request{Project: p, Route: "tally", Filter: other}); err != nil || string(r.Raw) != `{"total":3}` {
					t.Errorf("%v %v", r, err)
				}
			}()
		}
		wg.Wait()
		if got := ce.n.Load() - before; got != 1 {
			t.Fatalf("6 concurrent identical requests ran %d statements, want 1", got)
		}
		if r := run(analysis.Request{Project: p, Route: "tally", Filter: other, Refresh: analysis.RefreshAlways}); r.Cached {
			t.Fatal("force_blocking answered from the cache")
		}
	})
	t.Run("force_cache with nothing cached answers no result, the timezone still", func(t *testing.T) {
		r := run(analysis.Request{Project: p, Route: "tally", Filter: maps(filter, "date_to", `"2026-03-03"`), Refresh: analysis.RefreshNever})
		if r.Raw != nil || r.Timezone != "UTC" {
			t.Fatalf("%s %q", r.Raw, r.Timezone)
		}
	})
	t.Run("a route no kind serves is not computed", func(t *testing.T) {
		if _, err := svc.Run(ctx, analysis.Request{Project: p, Route: "nothing", Filter: filter}); err != analysis.ErrNotComputed {
			t.Fatalf("%v", err)
		}
	})
}

// maps is params with key set to the JSON value v.
func maps(params querybuilder.Params, key, v string) querybuilder.Params {
	out := querybuilder.Params{}
	for k, raw := range params {
		out[k] = raw
	}
	out[key] = json.RawMessage(v)
	return out
}
