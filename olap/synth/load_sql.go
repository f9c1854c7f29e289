package synth

import (
	"fmt"
	"strconv"
	"strings"
)

// The generator's SQL. Every statement is constant text, assembled at
// package initialisation from the fragments and constant tables below: the values a
// caller chooses (seed, project, counts, dates, the chunk's rows) are
// bound parameters, and every value in a generated row is a function of
// the seed and the row's number (or the person's number), through
// cityHash64, integer arithmetic and a few float functions of those, so the
// same configuration writes the same bytes whatever the chunk size. The
// fragments are shared between the events and the persons statements, so
// a person's attributes (browser, plan, when first seen) agree between the
// two tables.
//
// Each fragment is one level of nested SELECT *, ... FROM (...): an alias
// used several times within one SELECT is expanded into the query tree at
// each use, and chains of them blow past ClickHouse's tree limit, while a
// column of the level below is a leaf.
//
// Parameters:
//
//	seed     UInt64  the data set's seed
//	team     Int64   the project id
//	events   UInt64  N, events in the whole data set (not the chunk)
//	persons  UInt64  P, persons in the whole data set
//	start_us Int64   the range's first microsecond (a midnight, UTC)
//	range_us UInt64  the range's length in microseconds (whole days)
//	from     UInt64  the chunk's first row (event or person number)
//	count    UInt64  the chunk's rows

// eventOwner is the person p who writes event i (see personRange).
const eventOwner = `
    number AS i,
    toUInt64(intDiv((toUInt128(i) + 1) * {persons:UInt64} - 1,
                    toUInt128({events:UInt64}) * 21 - (toUInt128(i) + 1) * 20)) AS p`

// personRange assigns events to persons. Person p owns the contiguous event
// numbers [S(p), S(p+1)) with S(p) = floor(N * 21p / (20p + P)): the
// cumulative share x(1+a)/(x+a) of x = p/P with a = 1/20, a Pareto-like
// activity curve (person 0 has about 21 times the average, the median
// person about 1/6 of it, the last about 1/20; the busiest 10% of persons
// write 70% of the events). It is exact in UInt128, and so is its inverse
// (eventOwner): the owner of event i is the largest p with S(p) <= i, that
// is floor(((i+1)P - 1) / (21N - 20(i+1))). c is the person's number of
// events.
const personRange = `
    toUInt64(intDiv(toUInt128({events:UInt64}) * 21 * p, toUInt128(p) * 20 + {persons:UInt64})) AS s0,
    toUInt64(intDiv(toUInt128({events:UInt64}) * 21 * (p + 1), toUInt128(p + 1) * 20 + {persons:UInt64})) AS s1,
    toUInt64(s1 - s0) AS c`

// person is everything about person p that does not depend on one event.
//
// Timeline: the range is a circle of R microseconds; the person's timeline
// starts at a uniform point (first) and lasts span = R * v^2 (v uniform, so
// most persons are active for days to weeks and some for the whole range),
// at least 10 s per event. Slot k of the timeline holds their event k.
// Slots past the end of the range wrap to its start, which keeps the
// number of active persons flat over the range instead of thinning at
// both ends; kw is the number of slots before the wrap, so the person's
// events in time order are kw..c-1 then 0..kw-1.
//
// Funnel (by rank in time order, see eventsSQL): 30% of persons with at
// least 3 events sign up at rank 1-3 and $identify right after; a third of
// those (10% of persons) purchase 2-5 events after signing up, and buy
// again now and then.
//
// Traits: device, OS and browser (the same on every event of theirs and in
// their person properties), organization ($group_0), distinct id and
// UUID. The UUID depends on the project and the person's number only
// (RFC 9562 version 8, "custom"), so loading a project again with another
// seed maps user-<n> to the same person.
const person = `
    toFloat64({range_us:UInt64}) AS rng,
    cityHash64({seed:UInt64}, p, 1) / 18446744073709551616. AS v0,
    least(rng, greatest(v0 * v0 * rng, c * 10000000.)) AS span,
    toFloat64(cityHash64({seed:UInt64}, p, 2) % {range_us:UInt64}) AS first,
    span / greatest(c, 1) AS slot,
    toUInt64(least(toFloat64(c), ceil((rng - first) / slot))) AS kw,
    c >= 3 AND cityHash64({seed:UInt64}, p, 3) % 100 < 30 AS signs_up,
    toUInt64(least(1 + cityHash64({seed:UInt64}, p, 4) % 3, greatest(c, 3) - 2)) AS s_rank,
    signs_up AND c >= s_rank + 4 AND cityHash64({seed:UInt64}, p, 5) % 3 = 0 AS buys,
    toUInt64(least(s_rank + 2 + cityHash64({seed:UInt64}, p, 6) % 4, greatest(c, 1) - 1)) AS q_rank,
    if(buys, if(cityHash64({seed:UInt64}, p, 12) % 5 = 0, 'enterprise', 'pro'), 'free') AS plan,
    cityHash64({seed:UInt64}, p, 7) AS ah,
    multiIf(ah % 100 < 60, 0, ah % 100 < 92, 1, 2) AS dev,
    if(dev = 0, multiIf(intDiv(ah, 100) % 20 < 10, 0, intDiv(ah, 100) % 20 < 18, 1, 2),
                if(intDiv(ah, 100) % 20 < 11, 3, 4)) AS osc,
    intDiv(ah, 2000) % 20 AS brr,
    multiIf(osc = 0, multiIf(brr < 14, 0, brr < 18, 1, 2),
            osc = 1, multiIf(brr < 11, 0, brr < 18, 3, 2),
            osc = 2, if(brr < 12, 0, 2),
            osc = 3, if(brr < 16, 4, 5),
            if(brr < 17, 0, 6)) AS brc,
    ['Desktop', 'Mobile', 'Tablet'][dev + 1] AS device,
    ['Windows', 'Mac OS X', 'Linux', 'iOS', 'Android'][osc + 1] AS os,
    ['Chrome', 'Microsoft Edge', 'Firefox', 'Safari', 'Mobile Safari', 'Chrome iOS', 'Samsung Internet'][brc + 1] AS browser,
    concat('org-', toString(cityHash64({seed:UInt64}, p, 8) % greatest(1, intDiv({persons:UInt64}, 20)))) AS grp,` +
	personIdentity

// personIdentity is person p's distinct id and UUID.
const personIdentity = `
    concat('user-', toString(p)) AS distinct_id,
    reinterpretAsUUID(reinterpretAsFixedString(bitOr(
        toUInt128(bitOr(bitAnd(cityHash64({team:Int64}, p, 201), 0xFFFFFFFFFFFF0FFF), 0x8000)),
        bitShiftLeft(toUInt128(bitOr(bitAnd(cityHash64({team:Int64}, p, 202), 0x3FFFFFFFFFFFFFFF), 0x8000000000000000)), 64)))) AS person_uuid`

// eventPlace is event i's time t (microseconds into the range, before
// seasonality) and rank r in its person's events in time order; k is its
// slot in the person's timeline, u its place within the slot. The slot the
// range's end cuts is shortened, so no event piles up at the end.
const eventPlace = `
    toUInt64(i - s0) AS k,
    first + k * slot AS x,
    cityHash64({seed:UInt64}, i, 101) / 18446744073709551616. AS u,
    greatest(0., least(rng - 1, if(k >= kw, x - rng + slot * u, x + least(slot, rng - x) * u))) AS t,
    toUInt64(if(k >= kw, k - kw, k + c - kw)) AS r`

// Seasons: weekly and daily map t to ts_us, the absolute time, so that
// events keep their order while the days of the week and the hours of the
// day get the relative activity of weekdayWeights and hourWeights. Each is
// the inverse of a piecewise-linear cumulative activity curve: weekly over
// the whole range (in days since the Monday on or before its start,
// 1970-01-01 being a Thursday), then daily within each day (the range
// starts at a midnight, so days stay whole).
var (
	// weekdayWeights, Monday first: weekdays about 1.75 times weekend days.
	weekdayWeights = []int{100, 105, 105, 100, 90, 60, 55}
	// hourWeights, from 00:00 UTC: a North American and European mix,
	// busiest 15:00, quietest 03:00-04:00, about 3.9 to 1.
	hourWeights = []int{55, 45, 40, 35, 35, 40, 55, 75, 90, 100, 105, 105, 110, 120, 130, 135, 130, 120, 110, 100, 95, 85, 75, 65}
)

var weekly = `
    toUInt64((intDiv({start_us:Int64}, 86400000000) + 3) % 7) AS dow0,
    intDiv({range_us:UInt64}, 86400000000) AS ndays,
    ` + intArray(cumulative(weekdayWeights)) + ` AS wcum,
    wcum[dow0 + 1] AS phi_s,
    intDiv(dow0 + ndays, 7) * ` + itoa(sum(weekdayWeights)) + ` + wcum[(dow0 + ndays) % 7 + 1] AS phi_e,
    phi_s + t / rng * (phi_e - phi_s) AS phi,
    floor(phi / ` + itoa(sum(weekdayWeights)) + `) AS wk,
    phi - wk * ` + itoa(sum(weekdayWeights)) + ` AS wrem`

var daily = `
    ` + bucket("wrem", weekdayWeights) + ` AS wd,
    wk * 7 + wd + (wrem - ` + intArray(cumulative(weekdayWeights)) + `[wd + 1]) / ` + intArray(weekdayWeights) + `[wd + 1] - dow0 AS tdays,
    floor(tdays) AS dn,
    (tdays - dn) * ` + itoa(sum(hourWeights)) + ` AS hrem,
    ` + bucket("hrem", hourWeights) + ` AS hh,
    {start_us:Int64} + least(toInt64({range_us:UInt64}) - 1, toInt64(dn * 86400000000.
        + (hh + (hrem - ` + intArray(cumulative(hourWeights)) + `[hh + 1]) / ` + intArray(hourWeights) + `[hh + 1]) * 3600000000.)) AS ts_us`

// eventKind: an event's kind follows its rank r: the first is a $pageview
// (the landing), then signup, $identify and purchase at the ranks chosen
// in person, and otherwise 60% $pageview, 20% $autocapture, 8% $screen
// (mobile and tablet; $pageview on desktop), 7% $pageleave, 5% "feature
// used" once signed up ($pageview before). Sessions are runs of 3-12
// consecutive events of a person.
const eventKind = `
    fromUnixTimestamp64Micro(ts_us, 'UTC') AS timestamp,
    cityHash64({seed:UInt64}, i, 102) % 1000 AS roll,
    cityHash64({seed:UInt64}, i, 103) AS vh,
    signs_up AND r > s_rank AS signed_in,
    multiIf(r = 0, '$pageview',
            signs_up AND r = s_rank, 'signup',
            signs_up AND r = s_rank + 1, '$identify',
            buys AND r = q_rank, 'purchase',
            buys AND r > q_rank AND roll < 30, 'purchase',
            roll < 600, '$pageview',
            roll < 800, '$autocapture',
            roll < 880, if(dev = 0, '$pageview', '$screen'),
            roll < 950, '$pageleave',
            signed_in, 'feature used',
            '$pageview') AS event,
    intDiv(r, 3 + cityHash64({seed:UInt64}, p, 9) % 10) AS sn`

// eventProps is the event's properties: page or screen, kind-specific
// fields, the person's traits, the session's id and referrer. The event's
// UUID is version 7 (its time in the first 48 bits, as PostHog's are) and
// depends on the project too, so two projects never share one.
const eventProps = `
    multiIf(event IN ('signup', '$identify'), '/signup',
            event = 'purchase', '/checkout',
            ['/', '/', '/pricing', '/features', '/docs', '/docs/getting-started', '/blog', '/blog/launch-week', '/about', '/login',
             '/dashboard', '/dashboard', '/dashboard', '/insights', '/insights/new', '/events', '/persons', '/feature-flags', '/settings', '/billing']
            [if(signed_in, 11, 1) + vh % 10]) AS path,
    event = '$screen' AS screen,
    if(screen, '', concat(if(signed_in OR event = 'purchase', 'https://app.example.com', 'https://example.com'), path)) AS url,
    if(screen, ['Home', 'Dashboard', 'Insights', 'Settings', 'Onboarding', 'Profile'][1 + vh % 6], '') AS screen_name,
    if(screen, concat('"$screen_name":"', screen_name, '",'), concat('"$current_url":"', url, '","$pathname":"', path, '",')) AS page_json,
    900 + intDiv(vh, 1000) % 49100 AS cents,
    multiIf(event = 'purchase',
            concat('"amount":', toString(intDiv(cents, 100)), '.', leftPad(toString(cents % 100), 2, '0'),
                   ',"currency":"USD","plan":"', plan, '",'),
            event = '$autocapture',
            concat('"$event_type":"click","$el_text":"',
                   ['Get started', 'Sign up', 'Learn more', 'Pricing', 'Docs', 'Log in', 'Save', 'Share'][1 + intDiv(vh, 10) % 8], '",'),
            event = 'feature used',
            concat('"feature":"', ['dashboards', 'funnels', 'trends', 'retention', 'exports', 'alerts'][1 + intDiv(vh, 10) % 6], '",'),
            '') AS extra_json,
    toString(reinterpretAsUUID(reinterpretAsFixedString(bitOr(
        toUInt128(bitOr(bitAnd(cityHash64({seed:UInt64}, p, sn, 301), 0xFFFFFFFFFFFF0FFF), 0x8000)),
        bitShiftLeft(toUInt128(bitOr(bitAnd(cityHash64({seed:UInt64}, p, sn, 302), 0x3FFFFFFFFFFFFFFF), 0x8000000000000000)), 64))))) AS session_id,
    ['$direct', '$direct', '$direct', '$direct', 'https://www.google.com/', 'https://www.google.com/', 'https://www.google.com/',
     'https://www.bing.com/', 'https://duckduckgo.com/', 'https://news.ycombinator.com/', 'https://twitter.com/', 'https://github.com/']
        [1 + cityHash64({seed:UInt64}, p, sn, 303) % 12] AS referrer,
    concat('{', page_json, extra_json,
           '"$browser":"', browser, '","$os":"', os, '","$device_type":"', device,
           '","$session_id":"', session_id, '","$referrer":"', referrer, '","$group_0":"', grp, '"}') AS properties,
    reinterpretAsUUID(reinterpretAsFixedString(bitOr(
        toUInt128(bitOr(bitShiftLeft(toUInt64(intDiv(ts_us, 1000)), 16), 0x7000 + cityHash64({seed:UInt64}, {team:Int64}, i, 104) % 4096)),
        bitShiftLeft(toUInt128(bitOr(bitAnd(cityHash64({seed:UInt64}, {team:Int64}, i, 105), 0x3FFFFFFFFFFFFFFF), 0x8000000000000000)), 64)))) AS uuid`

// personStart is the time a person's timeline starts (the range's start
// when it wraps), so their created_at is never after their first event.
const personStart = `
    if(kw < c, 0., first) AS t`

const personProps = `
    fromUnixTimestamp64Micro(ts_us, 'UTC') AS created_at,
    concat('{"email":"user-', toString(p), '@',
           ['gmail.com', 'gmail.com', 'gmail.com', 'outlook.com', 'yahoo.com', 'icloud.com', 'proton.me', 'acme.io', 'example.com', 'hey.com']
           [1 + cityHash64({seed:UInt64}, p, 10) % 10],
           '","$browser":"', browser, '","$os":"', os, '","$device_type":"', device,
           '","country":"',
           ['US', 'US', 'US', 'US', 'US', 'US', 'US', 'GB', 'GB', 'DE', 'DE', 'IN', 'IN', 'FR', 'BR', 'CA', 'JP', 'NL', 'AU', 'ES']
           [1 + cityHash64({seed:UInt64}, p, 11) % 20],
           '","plan":"', plan, '","signed_up":', if(signs_up, 'true', 'false'),
           ',"is_test":', if(cityHash64({seed:UInt64}, p, 13) % 100 = 0, 'true', 'false'), '}') AS properties`

// cumulative returns 0, w0, w0+w1, ..., sum(w).
func cumulative(w []int) []int {
	c := make([]int, len(w)+1)
	for i, x := range w {
		c[i+1] = c[i] + x
	}
	return c
}

func sum(w []int) int { return cumulative(w)[len(w)] }

func itoa(n int) string { return strconv.Itoa(n) }

func intArray(a []int) string {
	s := make([]string, len(a))
	for i, x := range a {
		s[i] = itoa(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// bucket is the SQL for the index of the piece of the cumulative curve of
// w that the value of column x falls in.
func bucket(x string, w []int) string {
	c := cumulative(w)
	var b strings.Builder
	b.WriteString("multiIf(")
	for i := 1; i < len(w); i++ {
		fmt.Fprintf(&b, "%s < %d, %d, ", x, c[i], i-1)
	}
	fmt.Fprintf(&b, "%d)", len(w)-1)
	return b.String()
}

// The three statements. Columns are listed, so columns that later
// migrations add with defaults keep their defaults.
var (
	// eventsSQL writes the events numbered [from, from+count).
	eventsSQL = `INSERT INTO events (uuid, team_id, event, distinct_id, person_id, timestamp, properties, created_at)
SELECT uuid, {team:Int64}, event, distinct_id, person_uuid, timestamp, properties, timestamp
FROM ` + eventRows + "\n" + insertSettings

	// eventsWithHotSQL is eventsSQL that also writes the materialized
	// columns of hot properties, with the values the properties hold,
	// which saves the engine parsing every row's JSON
	// (benchmarks/results/ingestion.md). Load uses it when the table
	// has all of hotColumns as materialized columns. That the values
	// equal what the table's own expressions compute from the JSON is
	// a test's job (it loads the same rows both ways), so a migration
	// that changes those expressions meets it.
	eventsWithHotSQL = `INSERT INTO events (uuid, team_id, event, distinct_id, person_id, timestamp, properties, created_at,
    mat_current_url, mat_pathname, mat_screen_name, mat_session_id, mat_browser, mat_os, mat_device_type,
    mat_group_0, mat_group_1, mat_group_2, mat_group_3, mat_group_4)
SELECT uuid, {team:Int64}, event, distinct_id, person_uuid, timestamp, properties, timestamp,
    url, if(screen, '', path), screen_name, session_id, browser, os, device,
    grp, '', '', '', ''
FROM ` + eventRows + "\n" + insertSettings + ", insert_allow_materialized_columns = 1"

	eventRows = nest(eventOwner, personRange, person, eventPlace, weekly, daily, eventKind, eventProps)

	// personsSQL writes the persons numbered [from, from+count).
	personsSQL = `INSERT INTO persons (id, team_id, properties, created_at, is_deleted, version)
SELECT person_uuid, {team:Int64}, properties, created_at, 0, 1
FROM ` + nest(`
    number AS p`, personRange, person, personStart, weekly, daily, personProps) + "\n" + insertSettings

	// distinctIDsSQL maps user-<n> to person n, one version-1 row each.
	distinctIDsSQL = `INSERT INTO person_distinct_id (team_id, distinct_id, person_id, is_deleted, version)
SELECT {team:Int64}, distinct_id, person_uuid, 0, 1
FROM ` + nest(`
    number AS p,`+personIdentity) + "\n" + insertSettings
)

// insertSettings: the generated rows never repeat a sorting key, so the
// per-insert deduplication pass of ReplacingMergeTree (optimize_on_insert)
// is skipped; two insert threads sort and compress in parallel (one is
// the default for INSERT ... SELECT), which on two cores halves the time.
const insertSettings = "SETTINGS max_insert_threads = 2, optimize_on_insert = 0"

// hotColumns are the materialized columns eventsWithHotSQL writes.
var hotColumns = []string{
	"mat_current_url", "mat_pathname", "mat_screen_name", "mat_session_id", "mat_browser", "mat_os", "mat_device_type",
	"mat_group_0", "mat_group_1", "mat_group_2", "mat_group_3", "mat_group_4",
}

// materializedSQL lists the events table's materialized columns.
const materializedSQL = `SELECT name FROM system.columns
WHERE database = currentDatabase() AND table = 'events' AND default_kind = 'MATERIALIZED'`

// nest stacks SELECT levels: the first selects from the chunk's numbers,
// each next one selects *, and its own columns, from the one before.
func nest(first string, levels ...string) string {
	q := "(\n    SELECT" + first + "\n    FROM numbers({from:UInt64}, {count:UInt64})\n)"
	for _, l := range levels {
		q = "(\n    SELECT *," + l + "\n    FROM " + strings.ReplaceAll(q, "\n", "\n    ") + "\n)"
	}
	return q
}
