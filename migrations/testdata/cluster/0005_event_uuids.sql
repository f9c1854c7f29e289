-- The uuids of stored events, sorted by uuid, so that ingestion can tell a
-- retried event (the same uuid sent again) from a new one by point lookups
-- whose cost does not grow with the events table: a check of a few
-- thousand uuids reads about as many small granules. Ingestion records the
-- uuids clients chose (the ones that can come again); uuids it generated
-- itself are new by construction. Existing events are recorded once here.
CREATE TABLE IF NOT EXISTS event_uuids ON CLUSTER insightd_cluster
(
    team_id Int64,
    uuid UUID
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/event_uuids', '{replica}')
ORDER BY (team_id, uuid)
SETTINGS index_granularity = 128;

INSERT INTO event_uuids (team_id, uuid) SELECT team_id, uuid FROM events;
