-- Identity and exactly-once ingestion.
--
-- persons: whether the person has been identified ($identify), which decides
-- whether an $identify may merge it into another person, and each property's
-- last $set / $unset and first $set_once times, so that updates arriving out
-- of order still apply in event-time order.
ALTER TABLE persons ON CLUSTER insightd_cluster
    ADD COLUMN IF NOT EXISTS is_identified UInt8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS property_times String DEFAULT '{}' CODEC(ZSTD(3));

-- When two persons merge, events already stored keep the person_id they were
-- written with; analyses resolve it through this table (the latest version
-- per old_person_id wins). Only merged persons have a row, so it stays
-- small next to events.
CREATE TABLE IF NOT EXISTS person_overrides ON CLUSTER insightd_cluster
(
    team_id Int64,
    old_person_id UUID,
    override_person_id UUID,
    version UInt64
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/person_overrides', '{replica}', version)
ORDER BY (team_id, old_person_id);
