package olap

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/migrations"
	"github.com/insightd/insightd/querybuilder/chsql"
)

func TestWalkKeysAndPropertyTypes(t *testing.T) {
	var got []string
	walkKeys(`{"a": 1, "b\"q":"x\\y", "c":{"d":[1,{"e":"}"}]}, "f" : true,"g":null,"h":"2026-01-02T03:04:05.123Z","utm_x":7,"i":"2026-01-02"}`,
		func(k, v string) { got = append(got, k+"="+propertyType(k, []byte(v))) })
	want := `a=Numeric b"q=String c= f=Boolean g= h=DateTime utm_x=String i=DateTime`
	if s := strings.Join(got, " "); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
	for _, bad := range []string{``, `[]`, `{"a"`, `{"a":"x`, `{"a":{"b":1}`} {
		walkKeys(bad, func(k, v string) {
			if k != "a" {
				t.Errorf("%q gave key %q", bad, k)
			}
		})
	}
}

func taxonomyRows(t *testing.T, table string, team int64) int64 {
	t.Helper()
	return queryInt(t, "SELECT count() FROM "+table+" WHERE team_id = {team:Int64}", map[string]any{"team": team})
}

// TestTaxonomyIsLoadedBackAtStart: a new writer (a restart) knows what
// the tables hold and adds only what is new.
func TestTaxonomyIsLoadedBackAtStart(t *testing.T) {
	team := newTeam()
	ev := func(name, props string) Capture {
		c := capture(team, name, "d1", t0, nil)
		c.Properties = props
		return c
	}
	w := NewWriter(engine, newTestWriter(t).log, WriterConfig{Linger: time.Millisecond})
	mustWrite(t, w, ev("view", `{"a":1,"b":"x"}`), ev("view", `{"b":"y","a":2}`), ev("buy", `{"a":true}`))
	w.Close() // writes the volumes
	props, defs := taxonomyRows(t, "event_properties", team), taxonomyRows(t, "property_definitions", team)
	if props != 3 || defs != 2 || taxonomyRows(t, "event_definitions", team) < 2 {
		t.Fatalf("event_properties %d rows, property_definitions %d", props, defs)
	}
	if n := queryInt(t, "SELECT sum(events) FROM event_volume WHERE team_id = {team:Int64}", map[string]any{"team": team}); n != 3 {
		t.Errorf("volume %d, want 3", n)
	}
	w2 := newTestWriter(t)
	mustWrite(t, w2, ev("view", `{"a":3,"b":"z"}`), ev("buy", `{"a":false,"c":"new"}`))
	if got := taxonomyRows(t, "event_properties", team); got != props+1 {
		t.Errorf("after a restart event_properties has %d rows, want %d (only buy.c new)", got, props+1)
	}
	if got := taxonomyRows(t, "property_definitions", team); got != defs+1 {
		t.Errorf("after a restart property_definitions has %d rows, want %d", got, defs+1)
	}
}

// TestTaxonomyBackFill: migration 0012's inserts find what events,
// persons and groups stored before it, with the writer's types.
func TestTaxonomyBackFill(t *testing.T) {
	team := newTeam()
	ctx := context.Background()
	if err := engine.InsertEvents(ctx, []Event{
		{UUID: uuid.New(), TeamID: team, Event: "old", Properties: `{"n":1.5,"s":"x","d":"2026-01-02 03:04:05","b":false}`, Timestamp: t0, CreatedAt: t0},
		{UUID: uuid.New(), TeamID: team, Event: "old", Properties: `{"n":"later a string","o":{"x":1}}`, Timestamp: t0, CreatedAt: t0.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := engine.Exec(ctx, chsql.Statement{SQL: `INSERT INTO persons (id, team_id, properties, created_at, version)
VALUES (generateUUIDv4(), {team:Int64}, '{"email":"a@x.test","age":3}', now64(6, 'UTC'), 1)`, Params: map[string]any{"team": team}}); err != nil {
		t.Fatal(err)
	}
	ms, err := migrations.ClickHouse()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version != 12 {
			continue
		}
		for _, s := range m.Statements() {
			if strings.HasPrefix(strings.TrimSpace(s), "INSERT") || strings.Contains(s, "\nINSERT") {
				if err := engine.Exec(Maintenance(ctx), chsql.Statement{SQL: s}); err != nil {
					t.Fatalf("%v\n%s", err, s)
				}
			}
		}
	}
	rows, err := engine.Query(ctx, chsql.Statement{SQL: `SELECT kind, name, argMin(property_type, created_at) FROM property_definitions
WHERE team_id = {team:Int64} GROUP BY kind, name ORDER BY kind, name`, Params: map[string]any{"team": team}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows.Data {
		got = append(got, fmt.Sprintf("%v:%v=%v", r[0], r[1], r[2]))
	}
	want := "1:b=Boolean 1:d=DateTime 1:n=Numeric 1:o= 1:s=String 2:age=Numeric 2:email=String"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
	if n := queryInt(t, "SELECT sum(events) FROM event_volume WHERE team_id = {team:Int64} AND name = 'old'", map[string]any{"team": team}); n != 2 {
		t.Errorf("volume %d, want 2", n)
	}
	if n := queryInt(t, "SELECT count() FROM (SELECT DISTINCT name FROM event_properties WHERE team_id = {team:Int64})", map[string]any{"team": team}); n != 5 {
		t.Errorf("%d event properties, want 5", n)
	}
}
