-- Sessions: what the events sharing a $session_id say about the session,
-- pre-aggregated per session and day so that session properties
-- (querybuilder/sessions.go) read a row per session-day instead of every
-- event of the range. A materialized view adds the partial aggregates of
-- each insert into events; merges fold a session-day's rows together and
-- analyses fold its days (GROUP BY session_key over the range's days and
-- one day either side).
--
-- session_key is sipHash128 of the id: fixed 16 bytes keep the fold's and
-- the join's hash tables small (the id's text made a 30-day breakdown on
-- 6 million sessions run out of memory). Entry and exit pages are ordered
-- by (timestamp, uuid) packed into one UInt256, so ties between events of
-- the same microsecond have one answer and the states stay fixed-size.
CREATE TABLE IF NOT EXISTS sessions
(
    team_id Int64,
    day Date,
    session_key FixedString(16),
    min_timestamp SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
    max_timestamp SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
    entry_url AggregateFunction(argMinIf, String, UInt256, UInt8),
    exit_url AggregateFunction(argMaxIf, String, UInt256, UInt8),
    entry_pathname AggregateFunction(argMinIf, String, UInt256, UInt8),
    exit_pathname AggregateFunction(argMaxIf, String, UInt256, UInt8),
    pageview_count SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (team_id, day, session_key);

CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS
SELECT
    team_id,
    toDate(timestamp) AS day,
    sipHash128(mat_session_id) AS session_key,
    min(timestamp) AS min_timestamp,
    max(timestamp) AS max_timestamp,
    argMinIfState(mat_current_url, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid))), mat_current_url != '') AS entry_url,
    argMaxIfState(mat_current_url, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid))), mat_current_url != '') AS exit_url,
    argMinIfState(mat_pathname, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid))), mat_pathname != '') AS entry_pathname,
    argMaxIfState(mat_pathname, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid))), mat_pathname != '') AS exit_pathname,
    toUInt64(countIf(event = '$pageview')) AS pageview_count
FROM events
WHERE mat_session_id != ''
GROUP BY team_id, day, session_key;

-- The events stored before the view existed. Migrations run before the
-- server takes events, so nothing is inserted meanwhile; emptying the
-- table first makes a retried migration count each event once.
TRUNCATE TABLE IF EXISTS sessions;

INSERT INTO sessions
SELECT
    team_id,
    toDate(timestamp) AS day,
    sipHash128(mat_session_id) AS session_key,
    min(timestamp),
    max(timestamp),
    argMinIfState(mat_current_url, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid))), mat_current_url != ''),
    argMaxIfState(mat_current_url, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid))), mat_current_url != ''),
    argMinIfState(mat_pathname, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid))), mat_pathname != ''),
    argMaxIfState(mat_pathname, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid))), mat_pathname != ''),
    toUInt64(countIf(event = '$pageview'))
FROM events
WHERE mat_session_id != ''
GROUP BY team_id, day, session_key;
