-- Events: one row per captured event. Deduplicated by the sorting key,
-- which ends in the event's uuid: the same event sent twice collapses to one
-- row at merge time, and analyses that must be exact before merges use
-- FINAL or group by uuid (see the ingestion work).
CREATE TABLE IF NOT EXISTS events_local ON CLUSTER insightd_cluster
(
    uuid UUID,
    team_id Int64,
    event LowCardinality(String),
    distinct_id String,
    person_id UUID,
    timestamp DateTime64(6, 'UTC'),
    properties String CODEC(ZSTD(3)),
    created_at DateTime64(6, 'UTC') DEFAULT now64(6, 'UTC'),

    -- Hot properties as materialized columns, so analyses read them without
    -- parsing the JSON text.
    mat_current_url String MATERIALIZED JSONExtractString(properties, '$current_url'),
    mat_pathname String MATERIALIZED JSONExtractString(properties, '$pathname'),
    mat_screen_name String MATERIALIZED JSONExtractString(properties, '$screen_name'),
    mat_session_id String MATERIALIZED JSONExtractString(properties, '$session_id'),
    mat_browser LowCardinality(String) MATERIALIZED JSONExtractString(properties, '$browser'),
    mat_os LowCardinality(String) MATERIALIZED JSONExtractString(properties, '$os'),
    mat_device_type LowCardinality(String) MATERIALIZED JSONExtractString(properties, '$device_type'),
    mat_group_0 String MATERIALIZED JSONExtractString(properties, '$group_0'),
    mat_group_1 String MATERIALIZED JSONExtractString(properties, '$group_1'),
    mat_group_2 String MATERIALIZED JSONExtractString(properties, '$group_2'),
    mat_group_3 String MATERIALIZED JSONExtractString(properties, '$group_3'),
    mat_group_4 String MATERIALIZED JSONExtractString(properties, '$group_4')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/insightd/events', '{replica}')
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid));

CREATE TABLE IF NOT EXISTS events ON CLUSTER insightd_cluster AS events_local
ENGINE = Distributed('insightd_cluster', currentDatabase(), 'events_local', cityHash64(person_id));
