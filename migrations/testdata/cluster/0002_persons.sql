-- Persons and the mapping of every distinct_id to its person. Both are
-- versioned: the row with the highest version wins, so a merge of two
-- persons (by $identify, $create_alias, $merge_dangerously) is a new
-- version of the mapping rows, and analyses read the latest version with
-- argMax(person_id, version) per distinct_id.
CREATE TABLE IF NOT EXISTS persons ON CLUSTER insightd_cluster
(
    id UUID,
    team_id Int64,
    properties String CODEC(ZSTD(3)),
    created_at DateTime64(6, 'UTC'),
    is_deleted UInt8 DEFAULT 0,
    version UInt64
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/persons', '{replica}', version)
ORDER BY (team_id, id);

CREATE TABLE IF NOT EXISTS person_distinct_id ON CLUSTER insightd_cluster
(
    team_id Int64,
    distinct_id String,
    person_id UUID,
    is_deleted UInt8 DEFAULT 0,
    version UInt64
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/person_distinct_id', '{replica}', version)
ORDER BY (team_id, distinct_id);
