package querybuilder

import (
	"errors"
	"strconv"
	"strings"
)

// ActorType implements ActorsLister.
func (q *PathsQuery) ActorType(Params) ActorType { return aggregated(q.AggregationGroupTypeIndex) }

// Actors implements ActorsLister: the actors behind paths, with PostHog's
// selection (its paths persons): path_start_key and path_end_key, edge
// ends as answered ("{i}_{item}"), the actors of a path taking the edge
// from start to end (either alone: any edge from start, or into end);
// path_dropoff_key, the actors of a path that ended at that item and
// position (after cutting to step_limit); none, every actor with a path.
// The rows are the edges' and paths' own (BuildPaths), carrying each
// path's actor, so an edge's actors are the actors of the paths its
// value counts: as many as its value, fewer when an actor took the edge
// in more than one path.
func (q *PathsQuery) Actors(sel Params, f Facts, page Page) (Statement, error) {
	if q == nil || q.clock.loc == nil {
		return Statement{}, errors.New("querybuilder: paths actors need a request that ParsePaths validated")
	}
	pr := &problems{}
	keys := map[string]string{}
	for _, name := range []string{"path_start_key", "path_end_key", "path_dropoff_key"} {
		key, _ := sel.str(name, pr)
		if key == "" {
			continue
		}
		if !isPathKey(key) {
			pr.add(name, `%s must be an edge end as paths answer it, "{position}_{item}" (position 1 or more); got %q`, name, key)
		}
		keys[name] = key
	}
	drop := keys["path_dropoff_key"]
	if drop != "" && (keys["path_start_key"] != "" || keys["path_end_key"] != "") {
		pr.add("path_dropoff_key", "path_dropoff_key selects the actors whose path ended at an item: it goes without path_start_key and path_end_key")
	}
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	s, perActor, err := q.perActorSource(f, false)
	if err != nil {
		return Statement{}, err
	}
	paths := q.paths(s, perActor, true, false)
	var sub string
	switch start, end := keys["path_start_key"], keys["path_end_key"]; {
	case drop != "":
		sub = "SELECT DISTINCT a AS actor\nFROM (\n" + indent(paths) + "\n)\nWHERE concat(toString(length(p)), '_', p[-1]) = " + s.str(drop)
	case start != "" || end != "":
		var where []string
		if start != "" {
			where = append(where, "source = "+s.str(start))
		}
		if end != "" {
			where = append(where, "target = "+s.str(end))
		}
		sub = "SELECT DISTINCT a AS actor\nFROM (\n" + indent(q.edges(paths, true)) + "\n)\nWHERE " + strings.Join(where, " AND ")
	default:
		sub = "SELECT DISTINCT a AS actor\nFROM (\n" + indent(paths) + "\n)"
	}
	return actorsPage(s, sub, page), nil
}

// isPathKey reports whether key names an edge end: a position from 1,
// "_", and the item (any text, "_" included).
func isPathKey(key string) bool {
	pos, _, ok := strings.Cut(key, "_")
	n, err := strconv.Atoi(pos)
	return ok && err == nil && n >= 1 && pos == strconv.Itoa(n)
}
