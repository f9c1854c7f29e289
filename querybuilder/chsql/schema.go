package chsql

// Schema names insightd's ClickHouse tables: those analyses read, those
// ingestion writes and those a project's deletion clears. One value is handed in with the
// environment, so that a deployment whose events live elsewhere (a
// cluster's Distributed table, a database prefix) changes them in one
// place rather than in every statement.
type Schema struct {
	// Events holds one row per captured event.
	Events string
	// Persons holds every person's versions (properties, deletion).
	Persons string
	// DistinctIDs maps each distinct id to its person, versioned.
	DistinctIDs string
	// Overrides maps merged-away persons to the person they merged into.
	Overrides string
	// EventUUIDs records the uuids of stored events (ingestion's
	// deduplication).
	EventUUIDs string
	// CohortPeople holds the computed members of cohorts, by version.
	CohortPeople string
	// Groups holds every version of every group ($groupidentify).
	Groups string
	// GroupKeys holds every group key seen per group type, on events or
	// in groups, kept by materialized views (the group lookup's check).
	GroupKeys string
	// Sessions holds each session's partial aggregates per day, kept from
	// events by a materialized view (session properties).
	Sessions string
	// EventDefinitions, EventVolume, PropertyDefinitions and
	// EventProperties are the taxonomy the event writer keeps
	// (olap/taxonomy.go): event names, their events a day, property
	// names with their types, and which event carried which property.
	EventDefinitions, EventVolume, PropertyDefinitions, EventProperties string
	// IngestCheckpoint remembers how far ingestion's crash recovery has
	// read (one row per recovery, no project).
	IngestCheckpoint string
	// Cluster names the ClickHouse cluster whose Distributed tables Events
	// and Sessions are (ClusterSchema); empty on one node.
	Cluster string
}

// DefaultSchema is the single-node layout migrations/clickhouse creates.
func DefaultSchema() Schema {
	return Schema{
		Events:           "events",
		Persons:          "persons",
		DistinctIDs:      "person_distinct_id",
		Overrides:        "person_overrides",
		EventUUIDs:       "event_uuids",
		CohortPeople:     "cohort_people",
		Groups:           "groups",
		GroupKeys:        "group_keys",
		Sessions:         "sessions",
		IngestCheckpoint: "ingest_checkpoint",

		EventDefinitions:    "event_definitions",
		EventVolume:         "event_volume",
		PropertyDefinitions: "property_definitions",
		EventProperties:     "event_properties",
	}
}

// TeamTables are the tables whose rows belong to one project (keyed by
// team_id): what deleting a project must clear. A table added to the
// schema with a team_id belongs here.
func (s Schema) TeamTables() []string {
	s = s.OrDefault()
	return []string{s.Events, s.Persons, s.DistinctIDs, s.Overrides, s.EventUUIDs, s.CohortPeople, s.Groups, s.Sessions, s.GroupKeys,
		s.EventDefinitions, s.EventVolume, s.PropertyDefinitions, s.EventProperties}
}

// OrDefault is s, or the default layout when s was left empty (tests and
// tools that do not care build requests with a zero environment).
func (s Schema) OrDefault() Schema {
	if s.Events == "" {
		return DefaultSchema()
	}
	return s
}

// OverridesJoin resolves the person_id of the rows aliased alias (a
// constant of the caller's, never input) through the overrides of merged
// persons, the person each row belongs to now being EventPersonID (alias
// e). It needs {team:Int64}. The right side holds only merged persons of
// one project: small next to events.
func (s Schema) OverridesJoin(alias string) string {
	return `LEFT JOIN (
    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
    FROM ` + s.Overrides + ` WHERE team_id = {team:Int64} GROUP BY old_person_id
) AS po ON ` + alias + `.person_id = po.old_person_id`
}

// Events are stored with the person their distinct id belonged to when
// they arrived. When two persons merge later ($identify, $create_alias,
// $merge_dangerously of two existing persons), the merged-away person gets
// a row in the overrides table instead of rewriting its events, so
// analyses read events (aliased e) through EventPersonJoin and count
// EventPersonID, the person the event belongs to now. EventPersonJoin is
// the default schema's, for tests and tools that write their own checks.
var EventPersonJoin = DefaultSchema().OverridesJoin("e")

// EventPersonID is an event's person (aliased e), given the overrides
// join (EventPersonJoin, Schema.OverridesJoin).
const EventPersonID = `if(empty(po.override_person_id), e.person_id, po.override_person_id)`

// PersonOverridesStatement answers one row when the project has merged
// persons (Facts.NoPersonOverrides is false), none otherwise. It reads
// the first granule of the project's overrides, in the table's order.
func (s Schema) PersonOverridesStatement(projectID int64) Statement {
	return Statement{
		SQL:    `SELECT 1 FROM ` + s.OrDefault().Overrides + ` WHERE team_id = {team:Int64} LIMIT 1`,
		Params: map[string]any{"team": projectID},
	}
}

// FirstEventStatement finds when a project's first event happened, which
// date_from=all needs. It reads in the table's order (team, day), so it
// touches only the first day's granules. No row means no events.
func (s Schema) FirstEventStatement(projectID int64) Statement {
	return Statement{
		SQL: `SELECT timestamp FROM ` + s.OrDefault().Events + ` WHERE team_id = {team:Int64}
ORDER BY toDate(timestamp), timestamp LIMIT 1`,
		Params: map[string]any{"team": projectID},
	}
}
