package chsql

import "time"

// Facts are what a statement depends on that only the events engine
// knows. The caller reads them after a cache miss (olap.ReadFacts), and
// only those the query Needs.
type Facts struct {
	// FirstEvent is the time of the project's first event, which
	// date_from=all starts at; zero when the project has none.
	FirstEvent time.Time
	// NoPersonOverrides says the project has no merged persons (no
	// override row), so statements take each event's person_id as it is
	// and skip the override join, most of what counting persons costs.
	// The zero value keeps the join, which is right either way.
	NoPersonOverrides bool
}

// Needs says which Facts a query's statement depends on.
type Needs struct {
	FirstEvent      bool
	PersonOverrides bool
}
