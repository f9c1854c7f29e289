-- The group keys a project has seen, per group type: every non-empty
-- $group_N (mat_group_N) of its events and every group's key, a row per
-- key once merges have folded the copies each insert adds. A breakdown by
-- a group property (querybuilder/groups.go) looks each event's group up
-- by a 64-bit hash of its key instead of the key's text, which is exact
-- only if no two keys that events or groups carry share a hash: the
-- statement checks that over this table and fails rather than count an
-- event under another group's value.
--
-- Materialized views add the keys of each insert into events (from the
-- same materialized columns analyses read, so the two cannot disagree on
-- what an event's key is) and into groups; the empty key (no group) is
-- never a row. A key stays after its events or group are gone: the check
-- then covers a key nothing carries, which costs nothing.
CREATE TABLE IF NOT EXISTS group_keys
(
    team_id Int64,
    group_type_index UInt8,
    group_key String
)
ENGINE = ReplacingMergeTree
ORDER BY (team_id, group_type_index, group_key);

CREATE MATERIALIZED VIEW IF NOT EXISTS group_keys_events_mv TO group_keys AS
SELECT team_id, tupleElement(k, 1) AS group_type_index, tupleElement(k, 2) AS group_key
FROM (
    SELECT team_id, arrayJoin(arrayFilter(x -> x.2 != '', [(toUInt8(0), mat_group_0), (toUInt8(1), mat_group_1),
        (toUInt8(2), mat_group_2), (toUInt8(3), mat_group_3), (toUInt8(4), mat_group_4)])) AS k
    FROM events
    WHERE mat_group_0 != '' OR mat_group_1 != '' OR mat_group_2 != '' OR mat_group_3 != '' OR mat_group_4 != ''
)
GROUP BY team_id, group_type_index, group_key;

CREATE MATERIALIZED VIEW IF NOT EXISTS group_keys_groups_mv TO group_keys AS
SELECT DISTINCT team_id, group_type_index, group_key
FROM groups
WHERE group_key != '';

-- The keys stored before the views existed. insightd migrates before it
-- takes events and the views exist before this reads, so a key is missed
-- only if an insert was under way while they were made (another server
-- still serving during an upgrade); the lookup's check then misses it,
-- as it misses a key newer than the statement. A retried migration
-- inserts the same keys again, which reads (FINAL) and merges fold.
INSERT INTO group_keys
SELECT team_id, tupleElement(k, 1) AS group_type_index, tupleElement(k, 2) AS group_key
FROM (
    SELECT team_id, arrayJoin(arrayFilter(x -> x.2 != '', [(toUInt8(0), mat_group_0), (toUInt8(1), mat_group_1),
        (toUInt8(2), mat_group_2), (toUInt8(3), mat_group_3), (toUInt8(4), mat_group_4)])) AS k
    FROM events
    WHERE mat_group_0 != '' OR mat_group_1 != '' OR mat_group_2 != '' OR mat_group_3 != '' OR mat_group_4 != ''
)
GROUP BY team_id, group_type_index, group_key;

INSERT INTO group_keys
SELECT DISTINCT team_id, group_type_index, group_key
FROM groups
WHERE group_key != '';
