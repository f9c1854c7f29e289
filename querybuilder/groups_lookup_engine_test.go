package querybuilder_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// A trend broken down by a group property looks events up by the 64-bit
// hash of their group key (querybuilder/groups.go), which is exact only
// if no two keys seen on events or groups, nor a key and the empty key of
// events without a group, share a hash; when some do, the statement
// looks the keys' text up instead. A 64-bit collision cannot be found to
// test with, so the tests below swap the hash, in the statement the
// builder wrote, for functions that collide at will: length(), under
// which "ab" (a group in industry x) and "zz" (a key on events only, no
// group) are equal, and position('ccc', key), under which the empty key
// equals "ccc" (a group in industry y).
func TestGroupLookupCollisionReadsTheTextNeverAWrongNumber(t *testing.T) {
	e := testEngine(t)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	// seed writes the groups ab (industry x) and ccc (industry y) and
	// $pageviews of ab (3), ccc (2), no group (1) and, with zz, of zz (4),
	// through the writer as ingestion does.
	seed := func(t *testing.T, zz bool) int64 {
		team := newTeam()
		w := olap.NewWriter(e, slog.New(slog.NewTextHandler(io.Discard, nil)), olap.WriterConfig{})
		defer w.Close()
		var batch []olap.Capture
		add := func(c olap.Capture) {
			c.UUID, c.TeamID, c.DistinctID, c.Timestamp = uuid.Must(uuid.NewV7()), team, "u", now.Add(-time.Duration(len(batch)+1)*time.Minute)
			batch = append(batch, c)
		}
		for key, industry := range map[string]string{"ab": "x", "ccc": "y"} {
			add(olap.Capture{Event: olap.Event{Event: "$groupidentify", Properties: `{}`},
				Group: &olap.GroupUpdate{TypeIndex: 0, Key: key, Set: map[string]json.RawMessage{"industry": json.RawMessage(`"` + industry + `"`)}}})
		}
		keys := map[string]int{"ab": 3, "ccc": 2, "": 1}
		if zz {
			keys["zz"] = 4
		}
		for key, n := range keys {
			for range n {
				add(olap.Capture{Event: olap.Event{Event: "$pageview", Properties: `{"$group_0": "` + key + `"}`}})
			}
		}
		if res := w.Write(context.Background(), batch); res.Err != nil {
			t.Fatal(res.Err)
		}
		return team
	}
	// trend is the pageviews of the last 7 days by industry, per value,
	// with the builder's statement passed through edit first.
	trend := func(t *testing.T, team int64, schema querybuilder.Schema, edit func(string) string) (map[string]float64, error) {
		t.Helper()
		p, err := querybuilder.ParseBody([]byte(`{"events": [{"id": "$pageview"}], "breakdown": "industry", "breakdown_type": "group",
			"breakdown_group_type_index": 0, "date_from": "-7d"}`))
		if err != nil {
			t.Fatal(err)
		}
		q, err := querybuilder.ParseTrends(p, querybuilder.Env{Project: querybuilder.Project{ID: team}, Now: now, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := querybuilder.BuildTrends(q, querybuilder.Facts{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stmt.SQL, "transform(e.mat_group_0_hash, ") {
			t.Fatalf("the statement does not look events up by the stored hash of their key:\n%s", stmt.SQL)
		}
		stmt.SQL = edit(stmt.SQL)
		rows, err := e.Query(context.Background(), stmt)
		if err != nil {
			return nil, err
		}
		got := map[string]float64{}
		for _, r := range rows.Data {
			got[r[2].(string)] += r[4].(float64)
		}
		return got, nil
	}
	same := func(s string) string { return s }
	// The events' hashes are stored (mat_group_0_hash): a swapped hash
	// reads their keys' text through it as the check and the groups do.
	unstored := func(s string) string { return strings.ReplaceAll(s, "e.mat_group_0_hash", "cityHash64(e.mat_group_0)") }
	weak := func(s string) string { return strings.ReplaceAll(unstored(s), "cityHash64(", "length(") }
	null := "$$_posthog_breakdown_null_$$"
	right := map[string]float64{"x": 3, "y": 2, null: 5}
	withZZ, withoutZZ := seed(t, true), seed(t, false)

	t.Run("the statement counts each event under its own group's value", func(t *testing.T) {
		got, err := trend(t, withZZ, querybuilder.DefaultSchema(), same)
		if err != nil || !reflect.DeepEqual(got, right) {
			t.Fatalf("got %v, %v; want %v", got, err, right)
		}
	})
	t.Run("a key on events sharing its hash with a group's key is looked up by its text", func(t *testing.T) {
		got, err := trend(t, withZZ, querybuilder.DefaultSchema(), weak)
		if err != nil || !reflect.DeepEqual(got, right) {
			t.Fatalf("got %v, %v; want %v", got, err, right)
		}
	})
	t.Run("without the keys seen on events the same collision would be a wrong number", func(t *testing.T) {
		// A schema whose seen keys are the groups' own: the check sees
		// ab and ccc only, and zz's events count as ab's.
		blind := querybuilder.DefaultSchema()
		blind.GroupKeys = blind.Groups
		got, err := trend(t, withZZ, blind, weak)
		if want := map[string]float64{"x": 7, "y": 2, null: 1}; err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, %v; want %v", got, err, want)
		}
	})
	emptyLikeCCC := func(s string) string { return strings.ReplaceAll(unstored(s), "cityHash64(", "position('ccc', ") }
	t.Run("a group's key sharing its hash with the empty key is looked up by its text", func(t *testing.T) {
		got, err := trend(t, withoutZZ, querybuilder.DefaultSchema(), emptyLikeCCC)
		if want := map[string]float64{"x": 3, "y": 2, null: 1}; err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, %v; want %v", got, err, want)
		}
	})
	t.Run("without the empty key in the check that collision would be a wrong number", func(t *testing.T) {
		blind := func(s string) string {
			return strings.ReplaceAll(emptyLikeCCC(s), "countIf(h = position('ccc', '')) = 0", "1")
		}
		got, err := trend(t, withoutZZ, querybuilder.DefaultSchema(), blind)
		if want := map[string]float64{"x": 3, "y": 3}; err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, %v; want %v", got, err, want)
		}
	})
	t.Run("keys that do not collide are looked up by the weak hash too", func(t *testing.T) {
		got, err := trend(t, withoutZZ, querybuilder.DefaultSchema(), weak)
		if want := map[string]float64{"x": 3, "y": 2, null: 1}; err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, %v; want %v", got, err, want)
		}
	})
}
