package querybuilder_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// variantsDir holds the 11-day recurring retention of the benchmark
// (benchmarks/retentionload) as the generated statement and as variants
// written with ClickHouse's retention() aggregate, timed against each
// other on the 100-million-event table with benchmarks/sqlfiles.
var variantsDir = filepath.Join("..", "benchmarks", "results", "retention-variants")

// The files hold the statement BuildRetention writes today for body.json
// (refreshed with -update), and every variant gives its cells on a small
// random data set.
func TestRetentionVariantsGiveTheGeneratedCells(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(variantsDir, "body.json"))
	if err != nil {
		t.Fatal(err)
	}
	params, err := querybuilder.ParseBody(body)
	if err != nil {
		t.Fatal(err)
	}
	q, err := querybuilder.ParseRetention(params, querybuilder.Env{Project: querybuilder.Project{ID: 1},
		Now: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	// The loaded project has no merged persons.
	gen, err := querybuilder.BuildRetention(q, querybuilder.Facts{NoPersonOverrides: true})
	if err != nil {
		t.Fatal(err)
	}
	encoded := map[string]string{}
	for k, v := range gen.Params {
		if encoded[k], err = olap.EncodeParam(v); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := json.MarshalIndent(encoded, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"generated.sql": gen.SQL + "\n", "generated.params.json": string(ps) + "\n"}
	for name, want := range files {
		path := filepath.Join(variantsDir, name)
		if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Fatalf("%s is not the statement built today (refresh with -update): %v", path, err)
		}
	}

	// 400 persons, each active on some days from 8 to 23 November (around
	// the window of 11 to 21 November), some with other events.
	eng := testEngine(t)
	team := newTeam()
	r := rand.New(rand.NewSource(11))
	var events []olap.Event
	for i := range 400 {
		person := uuid.New()
		for range 1 + r.Intn(12) {
			name := "$pageview"
			if r.Intn(5) == 0 {
				name = "other"
			}
			at := time.Date(2026, 11, 8, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Intn(16*24*60)) * time.Minute)
			events = append(events, olap.Event{UUID: uuid.New(), TeamID: team, Event: name, DistinctID: fmt.Sprint("d", i),
				PersonID: person, Timestamp: at, Properties: "{}"})
		}
	}
	ctx := context.Background()
	if err := eng.InsertEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	cells := func(st querybuilder.Statement) map[string]any {
		t.Helper()
		rows, err := eng.Query(ctx, st)
		if err != nil {
			t.Fatalf("%v\n%s", err, st.SQL)
		}
		out := map[string]any{}
		for _, row := range rows.Data {
			if len(row) != 4 || row[0] != "" {
				t.Fatalf("row %v: want (breakdown '', cohort, interval, actors)", row)
			}
			out[fmt.Sprintf("%v/%v", row[1], row[2])] = fmt.Sprint(row[3])
		}
		return out
	}
	gen.Params["team"] = team
	want := cells(gen)
	if len(want) != 66 {
		t.Fatalf("%d cells, want all 66 of 11 cohorts non-zero on this data: %v", len(want), want)
	}
	variants, err := filepath.Glob(filepath.Join(variantsDir, "retention_*.sql"))
	if err != nil || len(variants) == 0 {
		t.Fatalf("no variants: %v", err)
	}
	for _, v := range variants {
		t.Run(filepath.Base(v), func(t *testing.T) {
			sql, err := os.ReadFile(v)
			if err != nil {
				t.Fatal(err)
			}
			got := cells(querybuilder.Statement{SQL: strings.TrimSpace(string(sql)), Params: map[string]any{"team": team}})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
		})
	}
}
