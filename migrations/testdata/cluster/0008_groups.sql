-- Groups ($groupidentify): one row per version of a group, the highest
-- version winning (analyses read argMax(..., version) per group, as for
-- persons). group_properties are the current values; property_times keep
-- each property's latest $group_set time, so that updates arriving out of
-- order still apply in event-time order (olap/groups.go). created_at is
-- the earliest event time seen for the group.
CREATE TABLE IF NOT EXISTS groups ON CLUSTER insightd_cluster
(
    team_id Int64,
    group_type_index UInt8,
    group_key String,
    group_properties String CODEC(ZSTD(3)),
    property_times String DEFAULT '{}' CODEC(ZSTD(3)),
    created_at DateTime64(6, 'UTC'),
    version UInt64
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/groups', '{replica}', version)
ORDER BY (team_id, group_type_index, group_key);
