-- Exactly once across crashes. Ingestion stores a batch's events, then
-- records their uuids in event_uuids; a crash between the two would let a
-- client's resend of those events be stored again. So before it takes its
-- first batch, a starting writer records the uuids of every event stored
-- in the last moments before it (olap/writer_recover.go): the skip index
-- below finds those events without reading the whole created_at column,
-- and ingest_checkpoint remembers how far that went, so a restart with
-- nothing new to recover reads nothing.
ALTER TABLE events_local ON CLUSTER insightd_cluster ADD INDEX IF NOT EXISTS events_created_at created_at TYPE minmax GRANULARITY 1;

CREATE TABLE IF NOT EXISTS ingest_checkpoint ON CLUSTER insightd_cluster
(
    recovered_to DateTime64(6, 'UTC'),
    at DateTime64(6, 'UTC') DEFAULT now64(6, 'UTC')
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/insightd/ingest_checkpoint', '{replica}')
ORDER BY recovered_to
TTL toDateTime(at) + INTERVAL 30 DAY;

-- Parts written before this migration get the index in the background.
ALTER TABLE events_local ON CLUSTER insightd_cluster MATERIALIZE INDEX events_created_at;
