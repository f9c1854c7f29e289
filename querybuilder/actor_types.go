package querybuilder

// The type of the actors each kind lists (ActorsLister.ActorType): what
// its statements count, decided as they decide it.

// ActorType implements ActorsLister: a series' actor column (sessions
// for unique_session, groups for unique_group or a group aggregation),
// else persons.
func (q *TrendsQuery) ActorType(sel Params) ActorType {
	e := Entity{}
	if n, ok := sel.integer("series", &problems{}); ok && n >= 0 && int(n) < len(q.Series) {
		e = q.Series[n]
	}
	switch {
	case e.Math == "unique_session":
		return ActorType{Kind: ActorSession}
	case e.Math == "unique_group":
		return GroupActors(e.MathGroupTypeIndex)
	case q.AggregationGroupTypeIndex > 0:
		return GroupActors(q.AggregationGroupTypeIndex)
	}
	return PersonActors
}

// ActorType implements ActorsLister.
func (q *StickinessQuery) ActorType(sel Params) ActorType {
	e := Entity{}
	if n, ok := sel.integer("series", &problems{}); ok && n >= 0 && int(n) < len(q.Series) {
		e = q.Series[n]
	}
	return q.actorType(e)
}

// ActorType implements ActorsLister.
func (q *LifecycleQuery) ActorType(Params) ActorType { return aggregated(q.AggregationGroupTypeIndex) }

// ActorType implements ActorsLister (and, promoted, for correlation).
func (q *FunnelQuery) ActorType(Params) ActorType { return aggregated(q.AggregationGroupTypeIndex) }

// ActorType implements ActorsLister.
func (q *RetentionQuery) ActorType(Params) ActorType { return aggregated(q.AggregationGroupTypeIndex) }

// ActorType implements ActorsLister.
func (q *PathsQuery) ActorType(Params) ActorType { return aggregated(q.AggregationGroupTypeIndex) }

// aggregated is the actor type of a group type index as analyses take
// it: above 0 that type's groups, else persons (eventSource.actor).
func aggregated(index int) ActorType {
	if index > 0 {
		return GroupActors(index)
	}
	return PersonActors
}
