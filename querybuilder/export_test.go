package querybuilder

// FunnelActorRows is the statement of q's per-actor rows (funnelOn), for
// tests outside the package that check them against the funnel's counts.
func FunnelActorRows(q *FunnelQuery, f Facts) (Statement, error) {
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	s := newEventSource(&q.Common, f)
	return s.statement("SELECT level, count() AS actors, toUInt64(min(t_1) > 0) AS timed\nFROM (\n" + indent(funnelOn(q, s).actorRows()) +
		"\n)\nGROUP BY level ORDER BY level"), nil
}

// SetPathItemHash makes paths hash items with the engine function fn (one
// that collides, to reach the text fallback) until restore is called.
func SetPathItemHash(fn string) (restore func()) {
	old := pathItemHash
	pathItemHash = fn
	return func() { pathItemHash = old }
}
