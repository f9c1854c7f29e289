-- The members of each cohort, one set per version (a recalculation writes
-- the next version; analyses read the version PostgreSQL names, so a
-- recalculation never shows half-written). Old versions are deleted after
-- the new one is in place.
CREATE TABLE IF NOT EXISTS cohort_people ON CLUSTER insightd_cluster
(
    team_id Int64,
    cohort_id Int64,
    version UInt64,
    person_id UUID
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/insightd/cohort_people', '{replica}')
ORDER BY (team_id, cohort_id, version, person_id);
