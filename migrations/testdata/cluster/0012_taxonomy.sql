-- The taxonomy: which events, event properties, person properties and
-- group properties a project has, for event_definitions/ and
-- property_definitions/ (api/taxonomy.go) and the MCP tools. The event
-- writer (olap/taxonomy.go) keeps a set of what it has seen, loaded from
-- these tables at start, and inserts only what is new, so the tables stay
-- small (a row per name, copies folded by merges; reads GROUP BY) and
-- cost ingestion a map lookup per property, not a materialized view over
-- every event (benchmarks/results/taxonomy.md).
--
-- created_at is when the name was first stored (an event's created_at),
-- last_seen_at the latest time it was (the writer adds a row at most once
-- a minute a name). Types are PostHog's (property_type): Numeric for a
-- JSON number, Boolean for true/false, DateTime for an ISO date or
-- date-time string, String for any other string, '' (none) for null, an
-- object or a list; the first value seen decides.
CREATE TABLE IF NOT EXISTS event_definitions ON CLUSTER insightd_cluster
(
    team_id Int64,
    name String,
    created_at SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
    last_seen_at SimpleAggregateFunction(max, DateTime64(6, 'UTC'))
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/all/insightd/event_definitions', '{replica}')
ORDER BY (team_id, name);

-- Events a day per event name, by the events' own timestamps, for
-- volume_30_day; the writer adds its counts once a minute.
CREATE TABLE IF NOT EXISTS event_volume ON CLUSTER insightd_cluster
(
    team_id Int64,
    name String,
    day DateTime64(6, 'UTC'),
    events SimpleAggregateFunction(sum, UInt64)
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/all/insightd/event_volume', '{replica}')
ORDER BY (team_id, name, day);

-- kind: 1 event, 2 person, 3 group (PostHog's PropertyDefinition.Type);
-- group_type_index is 0 unless kind is 3.
CREATE TABLE IF NOT EXISTS property_definitions ON CLUSTER insightd_cluster
(
    team_id Int64,
    kind UInt8,
    group_type_index UInt8,
    name String,
    property_type LowCardinality(String),
    created_at DateTime64(6, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/property_definitions', '{replica}')
ORDER BY (team_id, kind, group_type_index, name);

-- Which event properties each event name has carried, with the type of
-- the first value seen on that event.
CREATE TABLE IF NOT EXISTS event_properties ON CLUSTER insightd_cluster
(
    team_id Int64,
    event String,
    name String,
    property_type LowCardinality(String),
    created_at DateTime64(6, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/event_properties', '{replica}')
ORDER BY (team_id, event, name);

-- What was stored before this migration. insightd migrates before it
-- takes events; a retried migration inserts the same rows again, which
-- reads fold. The event names and volumes read three narrow columns; the
-- properties parse every event's JSON once (benchmarks/results/taxonomy.md
-- gives its time on 100 million events).
INSERT INTO event_definitions
SELECT team_id, event, min(created_at), max(created_at)
FROM events
GROUP BY team_id, event;

INSERT INTO event_volume
SELECT team_id, event, toDateTime64(toDate(timestamp), 6, 'UTC'), count()
FROM events
GROUP BY team_id, event, toDate(timestamp);

INSERT INTO event_properties
SELECT team_id, event, tupleElement(kv, 1) AS name,
    argMin(multiIf(
        startsWith(tupleElement(kv, 1), 'utm_') AND match(tupleElement(kv, 2), '^("|-|[0-9])'), 'String',
        match(tupleElement(kv, 2), '^-?[0-9]'), 'Numeric',
        tupleElement(kv, 2) IN ('true', 'false'), 'Boolean',
        match(tupleElement(kv, 2), '^"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?"$'), 'DateTime',
        startsWith(tupleElement(kv, 2), '"'), 'String',
        ''), created_at),
    min(created_at)
FROM events
ARRAY JOIN JSONExtractKeysAndValuesRaw(properties) AS kv
GROUP BY team_id, event, name;

INSERT INTO property_definitions
SELECT team_id, 1, 0, name, argMin(property_type, created_at), min(created_at)
FROM event_properties
GROUP BY team_id, name;

INSERT INTO property_definitions
SELECT team_id, 2, 0, tupleElement(kv, 1) AS name,
    argMin(multiIf(
        startsWith(tupleElement(kv, 1), 'utm_') AND match(tupleElement(kv, 2), '^("|-|[0-9])'), 'String',
        match(tupleElement(kv, 2), '^-?[0-9]'), 'Numeric',
        tupleElement(kv, 2) IN ('true', 'false'), 'Boolean',
        match(tupleElement(kv, 2), '^"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?"$'), 'DateTime',
        startsWith(tupleElement(kv, 2), '"'), 'String',
        ''), created_at),
    min(created_at)
FROM persons
ARRAY JOIN JSONExtractKeysAndValuesRaw(properties) AS kv
GROUP BY team_id, name;

INSERT INTO property_definitions
SELECT team_id, 3, group_type_index, tupleElement(kv, 1) AS name,
    argMin(multiIf(
        startsWith(tupleElement(kv, 1), 'utm_') AND match(tupleElement(kv, 2), '^("|-|[0-9])'), 'String',
        match(tupleElement(kv, 2), '^-?[0-9]'), 'Numeric',
        tupleElement(kv, 2) IN ('true', 'false'), 'Boolean',
        match(tupleElement(kv, 2), '^"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?"$'), 'DateTime',
        startsWith(tupleElement(kv, 2), '"'), 'String',
        ''), created_at),
    min(created_at)
FROM groups
ARRAY JOIN JSONExtractKeysAndValuesRaw(group_properties) AS kv
GROUP BY team_id, group_type_index, name;
