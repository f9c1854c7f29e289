package querybuilder

// Events are stored with the person their distinct id belonged to when
// they arrived. When two persons merge later ($identify, $create_alias,
// $merge_dangerously of two existing persons), the merged-away person gets
// a row in person_overrides instead of rewriting its events, so every
// analysis reads events (aliased e) through EventPersonJoin and counts
// EventPersonID, the person the event belongs to now. The join's right
// side holds only merged persons of one project: small next to events.
// It needs the {team:Int64} parameter.
const EventPersonJoin = `LEFT JOIN (
    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
) AS po ON e.person_id = po.old_person_id`

// EventPersonID is an event's person, given EventPersonJoin.
const EventPersonID = `if(empty(po.override_person_id), e.person_id, po.override_person_id)`

// eventPersonID is an event's person in the project's statements:
// EventPersonID, or the event's own person_id when the project has no
// merged persons (and so no EventPersonJoin).
func eventPersonID(p Project) string {
	if p.NoPersonOverrides {
		return "e.person_id"
	}
	return EventPersonID
}

// PersonOverridesStatement answers one row when the project has merged
// persons (Project.NoPersonOverrides is false), none otherwise. It reads
// the first granule of the project's overrides, in the table's order.
func PersonOverridesStatement(projectID int64) Statement {
	return Statement{
		SQL:    `SELECT 1 FROM person_overrides WHERE team_id = {team:Int64} LIMIT 1`,
		Params: map[string]any{"team": projectID},
	}
}
