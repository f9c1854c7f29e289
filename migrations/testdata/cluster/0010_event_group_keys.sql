-- The group keys that appear on events: every non-empty $group_N
-- (mat_group_N) ever stored, per project and group type, a row per key
-- once merges have folded the copies that each insert adds. A breakdown by
-- a group property (querybuilder/groups.go) looks each event's group up
-- by a 64-bit hash of its key instead of the key's text, which is exact
-- only if no two keys that events or groups carry share a hash: the
-- statement checks that over this table and the groups table, and fails
-- rather than count an event under another group's value.
--
-- A materialized view adds the keys of each insert into events (from the
-- same materialized columns analyses read, so the two cannot disagree on
-- what an event's key is). A key stays after its events are deleted: the
-- check then covers a key no event has, which costs nothing.
CREATE TABLE IF NOT EXISTS event_group_keys ON CLUSTER insightd_cluster
(
    team_id Int64,
    group_type_index UInt8,
    group_key String
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/event_group_keys', '{replica}')
ORDER BY (team_id, group_type_index, group_key);

CREATE MATERIALIZED VIEW IF NOT EXISTS event_group_keys_mv ON CLUSTER insightd_cluster TO event_group_keys AS
SELECT team_id, tupleElement(k, 1) AS group_type_index, tupleElement(k, 2) AS group_key
FROM (
    SELECT team_id, arrayJoin(arrayFilter(x -> x.2 != '', [(toUInt8(0), mat_group_0), (toUInt8(1), mat_group_1),
        (toUInt8(2), mat_group_2), (toUInt8(3), mat_group_3), (toUInt8(4), mat_group_4)])) AS k
    FROM events_local
    WHERE mat_group_0 != '' OR mat_group_1 != '' OR mat_group_2 != '' OR mat_group_3 != '' OR mat_group_4 != ''
)
GROUP BY team_id, group_type_index, group_key;

-- The keys of the events stored before the view existed. Migrations run
-- before the server takes events, so none is missed meanwhile; a retried
-- migration inserts the same keys again, which reads and merges fold.
INSERT INTO event_group_keys
SELECT team_id, tupleElement(k, 1) AS group_type_index, tupleElement(k, 2) AS group_key
FROM (
    SELECT team_id, arrayJoin(arrayFilter(x -> x.2 != '', [(toUInt8(0), mat_group_0), (toUInt8(1), mat_group_1),
        (toUInt8(2), mat_group_2), (toUInt8(3), mat_group_3), (toUInt8(4), mat_group_4)])) AS k
    FROM events
    WHERE mat_group_0 != '' OR mat_group_1 != '' OR mat_group_2 != '' OR mat_group_3 != '' OR mat_group_4 != ''
)
GROUP BY team_id, group_type_index, group_key;
