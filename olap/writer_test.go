package olap

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/chsql"
)

var teamSeq atomic.Int64

// newTeam is a project id no other test uses.
func newTeam() int64 { return time.Now().UnixNano()/1000 + teamSeq.Add(1) }

func newTestWriter(t *testing.T) *Writer {
	t.Helper()
	w := NewWriter(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{Linger: 2 * time.Millisecond})
	t.Cleanup(w.Close)
	return w
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func capture(team int64, event, distinctID string, at time.Time, u *PersonUpdate) Capture {
	return Capture{Event: Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: event, DistinctID: distinctID,
		Timestamp: at, Properties: "{}"}, Person: u}
}

func mustWrite(t *testing.T, w *Writer, events ...Capture) WriteResult {
	t.Helper()
	res := w.Write(context.Background(), events)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	return res
}

func queryInt(t *testing.T, sql string, params map[string]any) int64 {
	t.Helper()
	rows, err := engine.Query(context.Background(), chsql.Statement{SQL: sql, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	switch v := rows.Data[0][0].(type) {
	case uint64:
		return int64(v)
	case int64:
		return v
	default:
		t.Fatalf("want a number, got %T", v)
		return 0
	}
}

// uniquePersons counts the persons behind a team's events the way
// analyses do: through person overrides.
func uniquePersons(t *testing.T, team int64) int64 {
	return queryInt(t, "SELECT uniqExact("+chsql.EventPersonID+") FROM events AS e "+
		chsql.EventPersonJoin+" WHERE e.team_id = {team:Int64}", map[string]any{"team": team})
}

func eventCount(t *testing.T, team int64) int64 {
	return queryInt(t, "SELECT count() FROM events WHERE team_id = {team:Int64}", map[string]any{"team": team})
}

// personProperties reads the current properties of a distinct id's person.
func personProperties(t *testing.T, team int64, distinctID string) map[string]any {
	t.Helper()
	rows, err := engine.Query(context.Background(), chsql.Statement{
		SQL: `SELECT argMax(properties, version) FROM persons
WHERE team_id = {team:Int64} AND id = (
    SELECT argMax(person_id, version) FROM person_distinct_id
    WHERE team_id = {team:Int64} AND distinct_id = {d:String})
GROUP BY id`,
		Params: map[string]any{"team": team, "d": distinctID},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Data) != 1 {
		t.Fatalf("want one person for %q, got %d rows", distinctID, len(rows.Data))
	}
	out := map[string]any{}
	if err := json.Unmarshal([]byte(rows.Data[0][0].(string)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func TestEveryDistinctIDGetsAPersonAndEventsCarryIt(t *testing.T) {
	team := newTeam()
	w := newTestWriter(t)
	mustWrite(t, w,
		capture(team, "$pageview", "a", t0, nil),
		capture(team, "$pageview", "b", t0, nil),
		capture(team, "$pageview", "a", t0.Add(time.Minute), nil))
	if got := uniquePersons(t, team); got != 2 {
		t.Fatalf("two distinct ids are two persons, got %d", got)
	}
	got := queryInt(t, `SELECT count() FROM events e JOIN (
    SELECT distinct_id, argMax(person_id, version) AS pid FROM person_distinct_id
    WHERE team_id = {team:Int64} GROUP BY distinct_id) m ON m.distinct_id = e.distinct_id
WHERE e.team_id = {team:Int64} AND e.person_id = m.pid AND e.person_id = `+
		`toUUID({a:String})`, map[string]any{"team": team, "a": PersonIDFor(team, "a").String()})
	if got != 2 {
		t.Fatalf("a's two events should carry a's person id from the mapping, got %d", got)
	}
	if n := queryInt(t, "SELECT count() FROM persons WHERE team_id = {team:Int64}", map[string]any{"team": team}); n != 2 {
		t.Fatalf("want a persons row per new person, got %d", n)
	}
}

// A person's created_at is their earliest event, whatever order events
// come in: within a batch, and in a later batch to the same writer.
func TestPersonsCreatedAtIsTheirEarliestEvent(t *testing.T) {
	team := newTeam()
	w := newTestWriter(t)
	created := func() time.Time {
		t.Helper()
		rows, err := engine.Query(context.Background(), chsql.Statement{
			SQL:    "SELECT argMax(created_at, version) FROM persons WHERE team_id = {team:Int64} AND id = {id:UUID}",
			Params: map[string]any{"team": team, "id": PersonIDFor(team, "u").String()}})
		if err != nil || len(rows.Data) != 1 {
			t.Fatalf("%v %v", err, rows)
		}
		return rows.Data[0][0].(time.Time)
	}
	mustWrite(t, w, capture(team, "$pageview", "u", t0.Add(5*24*time.Hour), nil), capture(team, "$pageview", "u", t0.Add(24*time.Hour), nil))
	if got := created(); !got.Equal(t0.Add(24 * time.Hour)) {
		t.Fatalf("one batch, the later event first: created_at %s", got)
	}
	mustWrite(t, w, capture(team, "$pageview", "u", t0, nil))
	if got := created(); !got.Equal(t0) {
		t.Fatalf("an earlier event in a later batch: created_at %s", got)
	}
	mustWrite(t, w, capture(team, "$pageview", "u", t0.Add(time.Hour), nil))
	if got := created(); !got.Equal(t0) {
		t.Fatalf("a later event moved created_at to %s", got)
	}
	// A restarted server knows nothing of u until it looks u up.
	if res := mustWrite(t, newTestWriter(t), capture(team, "$pageview", "u", t0.Add(-time.Hour), nil)); res.Stored != 1 {
		t.Fatalf("stored %d", res.Stored)
	}
	if got := created(); !got.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("an earlier event to a fresh writer: created_at %s", got)
	}
}

func TestIdentifyMergesEarlierAnonymousEventsIntoOnePerson(t *testing.T) {
	t.Run("the identified id is new: it joins the visitor's person", func(t *testing.T) {
		team := newTeam()
		w := newTestWriter(t)
		mustWrite(t, w, capture(team, "$pageview", "anon-1", t0, nil), capture(team, "$pageview", "anon-1", t0.Add(time.Second), nil))
		mustWrite(t, w, capture(team, "$identify", "user@example.com", t0.Add(time.Minute),
			&PersonUpdate{Link: "anon-1", LinkKind: LinkIdentify, Identify: true}))
		mustWrite(t, w, capture(team, "purchase", "user@example.com", t0.Add(2*time.Minute), nil))
		if got := uniquePersons(t, team); got != 1 {
			t.Fatalf("want 1 person, got %d", got)
		}
	})
	t.Run("both ids already have persons: they merge, earlier events follow", func(t *testing.T) {
		team := newTeam()
		w := newTestWriter(t)
		mustWrite(t, w,
			capture(team, "$pageview", "phone-visitor", t0, &PersonUpdate{Set: map[string]json.RawMessage{"device": raw("phone")}}),
			capture(team, "$pageview", "user-9", t0.Add(time.Second), &PersonUpdate{Set: map[string]json.RawMessage{"plan": raw("pro")}}))
		if got := uniquePersons(t, team); got != 2 {
			t.Fatalf("before identify: want 2 persons, got %d", got)
		}
		mustWrite(t, w, capture(team, "$identify", "user-9", t0.Add(time.Minute),
			&PersonUpdate{Link: "phone-visitor", LinkKind: LinkIdentify, Identify: true}))
		if got := uniquePersons(t, team); got != 1 {
			t.Fatalf("after identify: want 1 person, got %d", got)
		}
		want := map[string]any{"device": "phone", "plan": "pro"}
		for _, d := range []string{"user-9", "phone-visitor"} {
			if got := personProperties(t, team, d); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: want merged properties %v, got %v", d, want, got)
			}
		}
	})
	t.Run("a writer that restarted finds the stored links", func(t *testing.T) {
		team := newTeam()
		w1 := NewWriter(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{})
		mustWrite(t, w1, capture(team, "$pageview", "laptop", t0, nil), capture(team, "$pageview", "user-3", t0, nil))
		w1.Close()
		w2 := newTestWriter(t)
		mustWrite(t, w2, capture(team, "$identify", "user-3", t0.Add(time.Hour),
			&PersonUpdate{Link: "laptop", LinkKind: LinkIdentify, Identify: true}))
		w3 := newTestWriter(t)
		mustWrite(t, w3, capture(team, "$pageview", "laptop", t0.Add(2*time.Hour), nil))
		if got := uniquePersons(t, team); got != 1 {
			t.Fatalf("want 1 person, got %d", got)
		}
	})
	t.Run("merges chain: a person merged twice resolves to the last survivor", func(t *testing.T) {
		team := newTeam()
		w := newTestWriter(t)
		mustWrite(t, w, capture(team, "e", "x", t0, nil), capture(team, "e", "y", t0, nil), capture(team, "e", "z", t0, nil))
		mustWrite(t, w, capture(team, "$merge_dangerously", "y", t0.Add(time.Minute), &PersonUpdate{Link: "x", LinkKind: LinkMerge, Identify: true}))
		mustWrite(t, w, capture(team, "$merge_dangerously", "z", t0.Add(2*time.Minute), &PersonUpdate{Link: "y", LinkKind: LinkMerge, Identify: true}))
		if got := uniquePersons(t, team); got != 1 {
			t.Fatalf("want 1 person, got %d", got)
		}
	})
}

func TestLinksBetweenTwoIdentifiedPersons(t *testing.T) {
	team := newTeam()
	w := newTestWriter(t)
	identify := func(d, anon string, kind LinkKind, at time.Time) Capture {
		return capture(team, "$identify", d, at, &PersonUpdate{Link: anon, LinkKind: kind, Identify: true})
	}
	// Two people, each identified on their own device.
	mustWrite(t, w, capture(team, "e", "anon-a", t0, nil), capture(team, "e", "anon-b", t0, nil))
	mustWrite(t, w, identify("alice", "anon-a", LinkIdentify, t0.Add(time.Minute)), identify("bob", "anon-b", LinkIdentify, t0.Add(time.Minute)))
	if got := uniquePersons(t, team); got != 2 {
		t.Fatalf("want 2 persons, got %d", got)
	}
	mustWrite(t, w, identify("alice", "bob", LinkIdentify, t0.Add(2*time.Minute)))
	if got := uniquePersons(t, team); got != 2 {
		t.Fatalf("an $identify must not merge two identified persons: got %d persons", got)
	}
	mustWrite(t, w, identify("alice", "bob", LinkMerge, t0.Add(3*time.Minute)))
	if got := uniquePersons(t, team); got != 1 {
		t.Fatalf("$merge_dangerously merges them: got %d persons", got)
	}
	for _, d := range []string{"anonymous", "null", "undefined", ""} {
		mustWrite(t, w, capture(team, "e", "carol", t0, nil), identify("carol", d, LinkIdentify, t0.Add(4*time.Minute)))
	}
	if got := uniquePersons(t, team); got != 2 {
		t.Fatalf("placeholder ids never link persons: got %d persons", got)
	}
}

func TestPersonPropertiesApplyInEventTimeOrder(t *testing.T) {
	team := newTeam()
	w := newTestWriter(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	set := func(kv ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = raw(kv[i+1])
		}
		return m
	}
	// Sent newest first, in three requests; replayed in event time the
	// updates are:
	//   t1 $set plan=free, $set_once first_page=/home, $set_once ref=ads
	//   t2 $set_once first_page=/pricing (no-op: already set at t1)
	//   t3 $set plan=pro
	//   t4 $unset ref
	//   t5 $set_once ref=mail (sets again: ref was unset at t4)
	//   t6 $set_once plan=enterprise (no-op: plan is set)
	mustWrite(t, w,
		capture(team, "e", "p", at(6), &PersonUpdate{SetOnce: set("plan", "enterprise")}),
		capture(team, "e", "p", at(5), &PersonUpdate{SetOnce: set("ref", "mail")}),
		capture(team, "e", "p", at(4), &PersonUpdate{Unset: []string{"ref"}}))
	mustWrite(t, w, capture(team, "e", "p", at(3), &PersonUpdate{Set: set("plan", "pro")}))
	mustWrite(t, w,
		capture(team, "e", "p", at(2), &PersonUpdate{SetOnce: set("first_page", "/pricing")}),
		capture(team, "e", "p", at(1), &PersonUpdate{Set: set("plan", "free"), SetOnce: set("first_page", "/home", "ref", "ads")}))
	want := map[string]any{"plan": "pro", "first_page": "/home", "ref": "mail"}
	if got := personProperties(t, team, "p"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("want %v, got %v", want, got)
	}
	// A late $set older than the current value changes nothing.
	mustWrite(t, w, capture(team, "e", "p", at(0), &PersonUpdate{Set: set("plan", "trial")}))
	if got := personProperties(t, team, "p"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a stale $set: want %v, got %v", want, got)
	}
}

func TestTheSameUUIDIsStoredOnce(t *testing.T) {
	team := newTeam()
	w := newTestWriter(t)
	ev := capture(team, "signup", "d", t0, nil)
	ev.ClientUUID = true
	res := mustWrite(t, w, ev, ev)
	if res.Stored != 1 || res.Duplicates != 1 {
		t.Fatalf("same request twice: stored %d, duplicates %d", res.Stored, res.Duplicates)
	}
	// A retry after the first attempt was stored, e.g. after a timeout,
	// with a timestamp a little different (clock-skew correction).
	retry := ev
	retry.Timestamp = ev.Timestamp.Add(40 * time.Millisecond)
	res = mustWrite(t, w, retry)
	if res.Stored != 0 || res.Duplicates != 1 {
		t.Fatalf("retry: stored %d, duplicates %d", res.Stored, res.Duplicates)
	}
	// A retry sent without a timestamp lands "now", on another day: the
	// uuid alone identifies the event.
	late := ev
	late.Timestamp = ev.Timestamp.Add(36 * time.Hour)
	if res = mustWrite(t, w, late); res.Stored != 0 || res.Duplicates != 1 {
		t.Fatalf("retry on another day: stored %d, duplicates %d", res.Stored, res.Duplicates)
	}
	// A fresh writer (a restarted server) finds it in ClickHouse.
	w2 := newTestWriter(t)
	if res = mustWrite(t, w2, retry); res.Stored != 0 {
		t.Fatalf("retry after restart was stored again")
	}
	if got := eventCount(t, team); got != 1 {
		t.Fatalf("want 1 event stored, got %d", got)
	}
}

// A uuid is an event's within its project: the same uuid sent to two
// projects in one batch stores both, and a retry to one project in the
// batch of another's first send drops only the retry. (The batch's
// duplicate set and the retry check were keyed by uuid alone and dropped
// the second project's event with a 200.)
func TestOneUUIDInTwoProjectsIsTwoEvents(t *testing.T) {
	a, b := newTeam(), newTeam()
	w := newTestWriter(t)
	w2 := newTestWriter(t) // no memory of what w stored: the retry check reads ClickHouse
	ev := capture(a, "signup", "d", t0, nil)
	ev.ClientUUID = true
	other := ev
	other.TeamID = b
	if res := mustWrite(t, w, ev, other); res.Stored != 2 || res.Duplicates != 0 {
		t.Fatalf("one batch: stored %d, duplicates %d", res.Stored, res.Duplicates)
	}
	c := newTeam()
	third := ev
	third.TeamID = c
	if res := mustWrite(t, w2, ev, third); res.Stored != 1 || res.Duplicates != 1 {
		t.Fatalf("a retry beside another project's first send: stored %d, duplicates %d", res.Stored, res.Duplicates)
	}
	for _, team := range []int64{a, b, c} {
		if got := eventCount(t, team); got != 1 {
			t.Fatalf("project %d: %d events, want 1", team, got)
		}
	}
}

func TestGroupCommitUnderFiftyConcurrentSenders(t *testing.T) {
	team := newTeam()
	w := newTestWriter(t)
	const senders, requests, perRequest = 50, 10, 40
	before := w.Stats().Flushes.Load()
	var wg sync.WaitGroup
	var stored atomic.Int64
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range requests {
				batch := make([]Capture, perRequest)
				for i := range batch {
					batch[i] = capture(team, "$pageview", fmt.Sprintf("user-%d", (s*7+i)%60), t0.Add(time.Duration(r*perRequest+i)*time.Second), nil)
				}
				res := w.Write(context.Background(), batch)
				if res.Err != nil {
					t.Error(res.Err)
					return
				}
				stored.Add(int64(res.Stored))
			}
		}()
	}
	wg.Wait()
	sent := int64(senders * requests * perRequest)
	if stored.Load() != sent {
		t.Fatalf("writer reported %d stored of %d sent", stored.Load(), sent)
	}
	if got := eventCount(t, team); got != sent {
		t.Fatalf("sent %d events, %d are stored", sent, got)
	}
	if got := uniquePersons(t, team); got != 60 {
		t.Fatalf("want 60 persons, got %d", got)
	}
	flushes := w.Stats().Flushes.Load() - before
	if flushes >= senders*requests {
		t.Fatalf("%d requests took %d inserts: nothing was grouped", senders*requests, flushes)
	}
	t.Logf("%d requests, %d flushes", senders*requests, flushes)
}

func TestAClosedWriterRefusesWrites(t *testing.T) {
	w := NewWriter(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{})
	w.Close()
	if res := w.Write(context.Background(), []Capture{capture(newTeam(), "e", "d", t0, nil)}); res.Err != ErrWriterClosed {
		t.Fatalf("want ErrWriterClosed, got %v", res.Err)
	}
}

func TestHotPropertyColumnsHoldTheStringValueOfTheirKey(t *testing.T) {
	team := newTeam()
	keys := []string{"$current_url", "$pathname", "$screen_name", "$session_id", "$browser", "$os", "$device_type",
		"$group_0", "$group_1", "$group_2", "$group_3", "$group_4"}
	props := []string{
		`{"$current_url":"https://x.test/a?b=\"c\"","$browser":"Firefox","$os":5,"$group_0":{"nested":"x"},"$pathname":"/ünï\u00e7ode","$session_id":null}`,
		`{"$screen_name":"Home","$device_type":"Mobile","$group_4":"org-1","$group_3":["a"],"other":"x"}`,
		`{}`,
	}
	var evs []Event
	for i, p := range props {
		evs = append(evs, Event{UUID: uuid.New(), TeamID: team, Event: "e", DistinctID: fmt.Sprint(i), Timestamp: t0, Properties: p, CreatedAt: t0})
	}
	if err := engine.InsertEvents(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		col := "mat_" + k[1:]
		n := queryInt(t, "SELECT countIf("+col+" != JSONExtractString(properties, {k:String})) + (count() != 3) FROM events WHERE team_id = {team:Int64}",
			map[string]any{"team": team, "k": k})
		if n != 0 {
			t.Fatalf("%s differs from JSONExtractString(properties, %q)", col, k)
		}
	}
	rows, err := engine.Query(context.Background(), chsql.Statement{
		SQL:    "SELECT mat_current_url, mat_browser, mat_os, mat_pathname, mat_group_0 FROM events WHERE team_id = {team:Int64} AND distinct_id = '0'",
		Params: map[string]any{"team": team}})
	if err != nil {
		t.Fatal(err)
	}
	// A value that is not a string reads as its JSON text, as
	// JSONExtractString gives it.
	if want := []any{`https://x.test/a?b="c"`, "Firefox", "5", "/ünïçode", `{"nested":"x"}`}; fmt.Sprint(rows.Data[0]) != fmt.Sprint(want) {
		t.Fatalf("hot property values: want %q, got %q", want, rows.Data[0])
	}
}

func TestWritesRacingCloseAllReturn(t *testing.T) {
	team := newTeam()
	w := NewWriter(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{})
	var wg sync.WaitGroup
	var stored atomic.Int64
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := w.Write(context.Background(), []Capture{capture(team, "e", fmt.Sprint(i), t0, nil)})
			if res.Err != nil && res.Err != ErrWriterClosed {
				t.Error(res.Err)
			}
			stored.Add(int64(res.Stored))
		}()
	}
	time.Sleep(time.Millisecond)
	w.Close()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a Write racing Close never returned")
	}
	if got := eventCount(t, team); got != stored.Load() {
		t.Fatalf("writes answered as stored: %d; events stored: %d", stored.Load(), got)
	}
}

// faultyEngine is the real engine with event inserts that fail on demand,
// to see the writer recover from a failed insert.
type faultyEngine struct {
	Engine
	fail atomic.Bool
}

func (f *faultyEngine) InsertEvents(ctx context.Context, events []Event) error {
	if f.fail.Load() {
		return fmt.Errorf("injected failure")
	}
	return f.Engine.InsertEvents(ctx, events)
}

func TestAFailedInsertIsReportedAndTheResendStoresEverything(t *testing.T) {
	team := newTeam()
	fe := &faultyEngine{Engine: engine}
	w := NewWriter(fe, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{})
	t.Cleanup(w.Close)
	ev := capture(team, "signup", "new-user", t0, &PersonUpdate{Set: map[string]json.RawMessage{"plan": raw("free")}})
	ev.ClientUUID = true
	fe.fail.Store(true)
	if res := w.Write(context.Background(), []Capture{ev}); res.Err == nil || res.Stored != 0 {
		t.Fatalf("want the failure reported, got %+v", res)
	}
	fe.fail.Store(false)
	// The client sends the same event again; then a later one.
	mustWrite(t, w, ev)
	mustWrite(t, w, capture(team, "purchase", "new-user", t0.Add(time.Minute), nil))
	if got := eventCount(t, team); got != 2 {
		t.Fatalf("want both events stored once, got %d", got)
	}
	if got := personProperties(t, team, "new-user"); fmt.Sprint(got) != "map[plan:free]" {
		t.Fatalf("the person must exist with its properties after the resend, got %v", got)
	}
	if got := uniquePersons(t, team); got != 1 {
		t.Fatalf("want 1 person, got %d", got)
	}
}

func TestASoleWriterRemembersTheUUIDsItStored(t *testing.T) {
	team := newTeam()
	w := NewWriter(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{SoleWriter: true, RecentUUIDs: 3})
	t.Cleanup(w.Close)
	// Events whose uuids the client made just now (version 7, time known).
	made := func() Capture {
		c := capture(team, "e", "d", t0, nil)
		c.UUID, c.ClientUUID = uuid.Must(uuid.NewV7()), true
		c.UUIDTime = UUIDTime(c.UUID)
		return c
	}
	a, b := made(), made()
	// Made before the writer started (by more than the margin): not
	// knowable from memory, so ClickHouse is asked, and says new.
	old := made()
	old.UUIDTime = time.Now().Add(-2 * uuidTimeMargin)
	mustWrite(t, w, a, b, old)
	for _, ev := range []Capture{a, b, old} {
		if res := mustWrite(t, w, ev); res.Stored != 0 || res.Duplicates != 1 {
			t.Fatalf("a resend must be a duplicate: %+v", res)
		}
	}
	if got := eventCount(t, team); got != 3 {
		t.Fatalf("want 3 events, got %d", got)
	}
	// Past its size the writer forgets the oldest and asks ClickHouse for
	// anything made before what it still holds; a resend of a forgotten
	// event is still found there.
	for range 4 {
		mustWrite(t, w, made())
	}
	if res := mustWrite(t, w, a); res.Stored != 0 || res.Duplicates != 1 {
		t.Fatalf("a forgotten event's resend must still be a duplicate: %+v", res)
	}
	if got := eventCount(t, team); got != 7 {
		t.Fatalf("want 7 events, got %d", got)
	}
}

// gatedEngine holds event inserts until open is closed.
type gatedEngine struct {
	Engine
	open    chan struct{}
	started chan struct{}
}

func (g *gatedEngine) InsertEvents(ctx context.Context, events []Event) error {
	select {
	case g.started <- struct{}{}:
	default:
	}
	<-g.open
	return g.Engine.InsertEvents(ctx, events)
}

func TestRequestsArrivingWhileEveryInsertIsBusyShareTheNextInsert(t *testing.T) {
	team := newTeam()
	g := &gatedEngine{Engine: engine, open: make(chan struct{}), started: make(chan struct{}, 1)}
	w := NewWriter(g, slog.New(slog.NewTextHandler(io.Discard, nil)), WriterConfig{Linger: time.Millisecond, Inserts: 1})
	t.Cleanup(w.Close)
	var wg sync.WaitGroup
	write := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := w.Write(context.Background(), []Capture{capture(team, "e", fmt.Sprintf("u%d", i), t0, nil)}); res.Err != nil {
				t.Error(res.Err)
			}
		}()
	}
	write(0)
	<-g.started // the only insert is now busy with the first request
	for i := 1; i <= 3; i++ {
		write(i)
		time.Sleep(5 * time.Millisecond) // past the linger each time
	}
	close(g.open)
	wg.Wait()
	if got := w.Stats().Flushes.Load(); got != 2 {
		t.Fatalf("want the three later requests in one insert after the first (2 flushes), got %d flushes", got)
	}
	if got := eventCount(t, team); got != 4 {
		t.Fatalf("want 4 events stored, got %d", got)
	}
}
