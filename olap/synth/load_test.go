package synth

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// engine is the embedded engine every test in this package shares: chDB
// opens one data directory per process. Tests keep apart by project.
var engine olap.Engine

func TestMain(m *testing.M) {
	olaptest.Main(m, 10*time.Minute, func(e *olap.Embedded) { engine = e })
}

// end is the last day of every test's range.
var end = time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)

// query runs a statement that returns one row and returns that row.
func query(t *testing.T, sql string, params map[string]any) []any {
	t.Helper()
	rows, err := engine.Query(context.Background(), chsql.Statement{SQL: sql, Params: params})
	if err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	if len(rows.Data) != 1 {
		t.Fatalf("%d rows, want 1\n%s", len(rows.Data), sql)
	}
	return rows.Data[0]
}

func mustLoad(t *testing.T, cfg LoadConfig) LoadStats {
	t.Helper()
	st, err := Load(context.Background(), engine, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestLoadWritesExactlyTheRowsAskedFor(t *testing.T) {
	for i, tc := range []struct {
		name                  string
		events, persons, days int
		chunk                 int64
	}{
		{"in one chunk", 5000, 100, 30, 0},
		{"in chunks that do not divide the counts", 5000, 100, 30, 777},
		{"with more persons than events", 300, 1000, 7, 128},
		{"with a single person on a single day", 50, 1, 1, 0},
		{"with a single event", 1, 10, 90, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := int64(100 + i)
			var calls []int64
			st, err := Load(context.Background(), engine, LoadConfig{
				Project: project, Events: int64(tc.events), Persons: int64(tc.persons), Days: tc.days,
				End: end, Seed: 1, Chunk: tc.chunk,
			}, func(done int64) { calls = append(calls, done) })
			if err != nil {
				t.Fatal(err)
			}
			if st.Events != int64(tc.events) || st.Persons != int64(tc.persons) || !st.HotColumns {
				t.Errorf("stats %+v", st)
			}
			if len(calls) == 0 || calls[len(calls)-1] != int64(tc.events) {
				t.Errorf("progress calls %v end short of %d", calls, tc.events)
			}
			p := map[string]any{"team": project}
			got := query(t, `SELECT
				(SELECT count() FROM events WHERE team_id = {team:Int64}),
				(SELECT uniqExact(uuid) FROM events WHERE team_id = {team:Int64}),
				(SELECT count() FROM persons WHERE team_id = {team:Int64}),
				(SELECT uniqExact(id) FROM persons WHERE team_id = {team:Int64}),
				(SELECT count() FROM person_distinct_id WHERE team_id = {team:Int64}),
				(SELECT uniqExact(distinct_id) FROM person_distinct_id WHERE team_id = {team:Int64}),
				(SELECT countIf(person_id = toUUID('00000000-0000-0000-0000-000000000000')) FROM events WHERE team_id = {team:Int64})`, p)
			want := []any{uint64(tc.events), uint64(tc.events), uint64(tc.persons), uint64(tc.persons),
				uint64(tc.persons), uint64(tc.persons), uint64(0)}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("events, distinct uuids, persons, distinct ids, distinct id rows, distinct distinct ids, zero person ids = %v, want %v", got, want)
			}
		})
	}
}

// fingerprint sums a hash of every column of a project's rows that does
// not depend on the project id (uuids do), so projects can be compared.
const fingerprint = `SELECT
	(SELECT sum(cityHash64(event, distinct_id, timestamp, created_at, properties,
	        mat_current_url, mat_pathname, mat_screen_name, mat_session_id, mat_browser, mat_os, mat_device_type,
	        mat_group_0, mat_group_1, mat_group_2, mat_group_3, mat_group_4))
	 FROM events WHERE team_id = {team:Int64}),
	(SELECT sum(cityHash64(properties, created_at, is_deleted, version)) FROM persons WHERE team_id = {team:Int64}),
	(SELECT sum(cityHash64(distinct_id, is_deleted, version)) FROM person_distinct_id WHERE team_id = {team:Int64})`

func TestTheSameConfigurationWritesTheSameRows(t *testing.T) {
	base := LoadConfig{Events: 20000, Persons: 300, Days: 30, End: end, Seed: 7}
	load := func(project int64, seed uint64, chunk int64, events string) []any {
		cfg := base
		cfg.Project, cfg.Seed, cfg.Chunk = project, seed, chunk
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, err := load(context.Background(), engine, cfg, events, nil); err != nil {
			t.Fatal(err)
		}
		return query(t, fingerprint, map[string]any{"team": project})
	}
	a := load(200, 7, 0, eventsWithHotSQL)
	t.Run("whatever the chunk size", func(t *testing.T) {
		if b := load(201, 7, 999, eventsWithHotSQL); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("one chunk %v, chunks of 999 %v", a, b)
		}
	})
	t.Run("whether the engine or the generator fills the materialized columns", func(t *testing.T) {
		if b := load(202, 7, 0, eventsSQL); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("generator %v, engine %v", a, b)
		}
	})
	t.Run("byte for byte, uuids included, so a second run collapses into the first", func(t *testing.T) {
		load(200, 7, 4096, eventsWithHotSQL)
		got := query(t, `SELECT count(),
			uniqExact(uuid, team_id, event, distinct_id, person_id, timestamp, properties, created_at, mat_current_url, mat_session_id),
			(SELECT count() FROM events FINAL WHERE team_id = {team:Int64}),
			(SELECT uniqExact(id, properties, created_at) FROM persons WHERE team_id = {team:Int64}),
			(SELECT uniqExact(distinct_id, person_id) FROM person_distinct_id WHERE team_id = {team:Int64})
			FROM events WHERE team_id = {team:Int64}`, map[string]any{"team": int64(200)})
		if want := []any{uint64(40000), uint64(20000), uint64(20000), uint64(300), uint64(300)}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("rows, distinct rows, rows after FINAL, distinct persons, distinct mappings = %v, want %v", got, want)
		}
	})
	t.Run("and another seed writes other rows", func(t *testing.T) {
		// Distinct ids are user-<n> whatever the seed.
		b := load(203, 8, 0, eventsWithHotSQL)
		if a[0] == b[0] || a[1] == b[1] || a[2] != b[2] {
			t.Errorf("events, persons, distinct ids: seed 7 %v, seed 8 %v", a, b)
		}
	})
	t.Run("and another project other uuids", func(t *testing.T) {
		got := query(t, `SELECT
			(SELECT count() FROM events WHERE team_id = 200 AND uuid IN (SELECT uuid FROM events WHERE team_id = 201)),
			(SELECT count() FROM persons WHERE team_id = 200 AND id IN (SELECT id FROM persons WHERE team_id = 201))`, nil)
		if fmt.Sprint(got) != "[0 0]" {
			t.Fatalf("uuids shared by projects 200 and 201: events, persons %v", got)
		}
	})
}

func TestEventsBelongToTheirPersons(t *testing.T) {
	const project = 300
	mustLoad(t, LoadConfig{Project: project, Events: 30000, Persons: 500, Days: 14, End: end, Seed: 3, Chunk: 7000})
	got := query(t, `SELECT
		countIf(d.distinct_id = ''),
		countIf(d.person_id != e.person_id),
		countIf(p.id = toUUID('00000000-0000-0000-0000-000000000000')),
		countIf(p.created_at > e.timestamp),
		countIf(d.version != 1 OR d.is_deleted != 0)
		FROM events AS e
		LEFT JOIN (SELECT * FROM person_distinct_id WHERE team_id = {team:Int64}) AS d ON d.distinct_id = e.distinct_id
		LEFT JOIN (SELECT * FROM persons WHERE team_id = {team:Int64}) AS p ON p.id = e.person_id
		WHERE e.team_id = {team:Int64}
		SETTINGS join_use_nulls = 0`, map[string]any{"team": int64(project)})
	if fmt.Sprint(got) != "[0 0 0 0 0]" {
		t.Fatalf("events whose distinct id has no mapping, whose mapping names another person, whose person is missing, "+
			"that precede their person's created_at, with a mapping not at version 1: %v", got)
	}
	got = query(t, `SELECT countIf(distinct_id != concat('user-', toString(n))), count()
		FROM (SELECT distinct_id, row_number() OVER (ORDER BY toUInt64(substring(distinct_id, 6))) - 1 AS n
		      FROM person_distinct_id WHERE team_id = {team:Int64})`, map[string]any{"team": int64(project)})
	if fmt.Sprint(got) != "[0 500]" {
		t.Fatalf("distinct ids not user-0..user-499: %v", got)
	}
}

func TestEventsFallInTheirDaysWithWeeklyAndDailySeasons(t *testing.T) {
	const project = 400
	cfg := LoadConfig{Project: project, Events: 200000, Persons: 20000, Days: 28, End: end, Seed: 4}
	st := mustLoad(t, cfg)
	if want := time.Date(2026, 2, 16, 0, 0, 0, 0, time.UTC); !st.Start.Equal(want) || !st.End.Equal(end.AddDate(0, 0, 1)) {
		t.Fatalf("range %v..%v, want %v..%v", st.Start, st.End, want, end.AddDate(0, 0, 1))
	}
	p := map[string]any{"team": int64(project), "start": st.Start, "end": st.End}
	got := query(t, `SELECT countIf(timestamp < {start:DateTime64(6, 'UTC')} OR timestamp >= {end:DateTime64(6, 'UTC')}),
		uniqExact(toDate(timestamp)),
		countIf(created_at != timestamp)
		FROM events WHERE team_id = {team:Int64}`, p)
	if fmt.Sprint(got) != "[0 28 0]" {
		t.Fatalf("events outside the range, days with events, created_at apart from timestamp: %v", got)
	}
	// Weekdays against weekends, afternoons against nights (UTC).
	got = query(t, `SELECT
		countIf(toDayOfWeek(timestamp) <= 5) / 5 / (countIf(toDayOfWeek(timestamp) > 5) / 2),
		countIf(toHour(timestamp) BETWEEN 13 AND 17) / countIf(toHour(timestamp) BETWEEN 1 AND 5),
		max(n) / min(n)
		FROM events AS e
		JOIN (SELECT toDate(timestamp) AS d, count() AS n FROM events WHERE team_id = {team:Int64} GROUP BY d) AS days
		  ON days.d = toDate(e.timestamp)
		WHERE team_id = {team:Int64}`, p)
	week, day, spread := got[0].(float64), got[1].(float64), got[2].(float64)
	t.Logf("weekday/weekend per day %.2f, 13-18h/01-06h %.2f, busiest/quietest day %.2f", week, day, spread)
	// The weights say 1.74 and 3.26; persons' own rhythms add noise.
	if week < 1.4 || week > 2.2 || day < 2.5 || day > 4 || spread > 4 {
		t.Fatalf("weekday/weekend per day %.2f (want 1.4-2.2), 13-18h/01-06h %.2f (want 2.5-4), busiest/quietest day %.2f (want < 4)",
			week, day, spread)
	}
}

func TestPropertiesAreJSONWithTheirMaterializedColumns(t *testing.T) {
	const project = 500
	mustLoad(t, LoadConfig{Project: project, Events: 50000, Persons: 400, Days: 30, End: end, Seed: 5})
	p := map[string]any{"team": int64(project)}
	got := query(t, `SELECT
		countIf(NOT isValidJSON(properties)),
		countIf(mat_current_url != JSONExtractString(properties, '$current_url') OR mat_pathname != JSONExtractString(properties, '$pathname')
		     OR mat_screen_name != JSONExtractString(properties, '$screen_name') OR mat_session_id != JSONExtractString(properties, '$session_id')
		     OR mat_browser != JSONExtractString(properties, '$browser') OR mat_os != JSONExtractString(properties, '$os')
		     OR mat_device_type != JSONExtractString(properties, '$device_type') OR mat_group_0 != JSONExtractString(properties, '$group_0')
		     OR mat_group_1 != '' OR mat_group_2 != '' OR mat_group_3 != '' OR mat_group_4 != ''
		     OR mat_group_0_hash != cityHash64(mat_group_0) OR mat_group_1_hash != cityHash64('') OR mat_group_4_hash != cityHash64('')),
		countIf(mat_browser = '' OR mat_os = '' OR mat_device_type = '' OR mat_group_0 = '' OR toUUIDOrZero(mat_session_id) = toUUID('00000000-0000-0000-0000-000000000000') OR NOT JSONHas(properties, '$referrer')),
		countIf(event != '$screen' AND (NOT startsWith(mat_current_url, 'https://') OR NOT endsWith(mat_current_url, mat_pathname))),
		countIf(event = '$screen' AND (mat_screen_name = '' OR mat_current_url != '')),
		countIf(event = 'purchase' AND NOT (JSONExtractFloat(properties, 'amount') BETWEEN 9 AND 500)),
		countIf(event = 'purchase'),
		countIf(toUInt8(substring(toString(uuid), 15, 1)) != 7),
		countIf(abs(dateDiff('millisecond', timestamp, fromUnixTimestamp64Milli(toInt64(reinterpretAsUInt64(reverse(unhex(substring(replaceAll(toString(uuid), '-', ''), 1, 12)))))))) > 1)
		FROM events WHERE team_id = {team:Int64}`, p)
	if fmt.Sprint(got[:6]) != "[0 0 0 0 0 0]" || got[6].(uint64) == 0 || fmt.Sprint(got[7:]) != "[0 0]" {
		t.Fatalf("invalid JSON, materialized columns that disagree with the JSON, events without browser, os, device, group, "+
			"session or referrer, pages without a URL, screens without a name, purchases without an amount, purchases, "+
			"uuids not version 7, uuids whose time is not the event's: %v", got)
	}
	got = query(t, `SELECT
		countIf(NOT isValidJSON(properties)),
		countIf(NOT (JSONHas(properties, 'email') AND JSONHas(properties, '$browser') AND JSONHas(properties, '$os')
		     AND JSONHas(properties, 'country') AND JSONHas(properties, 'plan') AND JSONHas(properties, 'is_test'))),
		countIf(JSONExtractBool(properties, 'is_test')) / count(),
		countIf(JSONExtractString(properties, 'plan') != 'free') / count()
		FROM persons WHERE team_id = {team:Int64}`, p)
	if fmt.Sprint(got[:2]) != "[0 0]" || got[2].(float64) > 0.05 || got[3].(float64) < 0.05 || got[3].(float64) > 0.16 {
		t.Fatalf("persons with invalid JSON, missing properties, share of test persons, share of paying persons: %v", got)
	}
}

func TestFunnelsConvertAtPlausibleRates(t *testing.T) {
	const project = 600
	mustLoad(t, LoadConfig{Project: project, Events: 200000, Persons: 3000, Days: 90, End: end, Seed: 6})
	got := query(t, `SELECT countIf(level >= 1), countIf(level >= 2) / countIf(level >= 1), countIf(level >= 3) / countIf(level >= 1),
		(SELECT countIf(JSONExtractString(properties, 'plan') != 'free') FROM persons WHERE team_id = {team:Int64}),
		(SELECT uniqExactIf(person_id, event = 'purchase') FROM events WHERE team_id = {team:Int64})
		FROM (
			SELECT person_id, windowFunnel(14 * 86400)(toDateTime(timestamp), event = '$pageview', event = 'signup', event = 'purchase') AS level
			FROM events WHERE team_id = {team:Int64} GROUP BY person_id)`, map[string]any{"team": int64(project)})
	viewers, signup, purchase := got[0].(uint64), got[1].(float64), got[2].(float64)
	t.Logf("persons with a pageview %d, signing up %.3f, purchasing %.3f", viewers, signup, purchase)
	if viewers < 2900 || signup < 0.22 || signup > 0.34 || purchase < 0.06 || purchase > 0.12 || got[3] != got[4] {
		t.Fatalf("persons with a pageview %d, of them signing up within 14 days %.3f (want 0.22-0.34), purchasing %.3f (want 0.06-0.12); "+
			"persons on a paid plan %v, persons who purchased %v", viewers, signup, purchase, got[3], got[4])
	}
	// Activity is skewed: the busiest tenth of persons write most events.
	got = query(t, `SELECT sum(n) / (SELECT count() FROM events WHERE team_id = {team:Int64}), max(n)
		FROM (SELECT count() AS n FROM events WHERE team_id = {team:Int64} GROUP BY person_id ORDER BY n DESC LIMIT 300)`,
		map[string]any{"team": int64(project)})
	t.Logf("the busiest tenth of persons write %.2f of the events, the busiest %v", got[0], got[1])
	if share := got[0].(float64); share < 0.5 || share > 0.85 {
		t.Fatalf("the busiest 10%% of persons write %.2f of the events (want 0.5-0.85), the busiest %v", share, got[1])
	}
}

func TestStatementsAreConstantTextWithEveryValueBound(t *testing.T) {
	a := LoadConfig{Project: 1, Events: 10, Persons: 2, Days: 1, End: end, Seed: 0}
	b := LoadConfig{Project: 987654321, Events: 123456789, Persons: 4567, Days: 365, End: time.Date(2031, 7, 4, 0, 0, 0, 0, time.UTC), Seed: 18446744073709551557}
	placeholder := regexp.MustCompile(`\{(\w+):([^}]+)\}`)
	types := map[string]string{}
	for name, sql := range map[string]string{"events": eventsSQL, "events with hot columns": eventsWithHotSQL, "persons": personsSQL, "distinct ids": distinctIDsSQL} {
		t.Run(name+" has the same text for any configuration", func(t *testing.T) {
			sa, sb := a.statement(sql, 0, 10), b.statement(sql, 5000, 777)
			if sa.SQL != sql || sb.SQL != sql {
				t.Fatal("the statement's text depends on the configuration")
			}
			for _, v := range []string{"987654321", "123456789", "4567", "18446744073709551557", "2031"} {
				if strings.Contains(sb.SQL, v) {
					t.Errorf("the text contains the value %s", v)
				}
			}
			ms := placeholder.FindAllStringSubmatch(sql, -1)
			if len(ms) == 0 {
				t.Fatal("no placeholders")
			}
			for _, m := range ms {
				if _, ok := sb.Params[m[1]]; !ok {
					t.Errorf("placeholder %s is not bound", m[0])
				}
				if prev, ok := types[m[1]]; ok && prev != m[2] {
					t.Errorf("%s is declared both %s and %s", m[1], prev, m[2])
				}
				types[m[1]] = m[2]
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  LoadConfig
		want []string
	}{
		{"an empty configuration", LoadConfig{}, []string{"project", "events", "persons", "days"}},
		{"counts past the limits", LoadConfig{Project: 1, Events: MaxEvents + 1, Persons: MaxPersons + 1, Days: MaxDays + 1, Chunk: MaxChunk + 1},
			[]string{"events", "persons", "days", "chunk"}},
		{"a range before 1971", LoadConfig{Project: 1, Events: 1, Persons: 1, Days: 10, End: time.Date(1970, 12, 31, 0, 0, 0, 0, time.UTC)},
			[]string{"1971"}},
		{"a negative chunk", LoadConfig{Project: 1, Events: 1, Persons: 1, Days: 1, Chunk: -1}, []string{"chunk"}},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not mention %s", err, w)
				}
			}
		})
	}
	t.Run("a zero end and chunk take their defaults", func(t *testing.T) {
		c := LoadConfig{Project: 1, Events: 1, Persons: 1, Days: 1}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if c.Chunk != DefaultChunk || time.Since(c.End) > time.Minute {
			t.Fatalf("chunk %d, end %v", c.Chunk, c.End)
		}
	})
}
