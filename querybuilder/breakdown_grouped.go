package querybuilder

import (
	"strconv"
	"strings"
)

// A total or sum broken down by properties adds up: events can be counted
// per raw value of what the breakdown reads first, and the breakdown
// value computed once per grouped row afterwards (a distinct count too,
// as sets of actors that merge: foldedBreakdown). Computing the value per
// event costs more than the grouping itself: a function of a
// LowCardinality column gives up its dictionary as soon as it is wrapped
// for HogQL's NULLs, two properties become a JSON list per event, a
// group's property a join per event (benchmarks/results/breakdowns.md).
//
// groupedBreakdown is that plan: the keys events group by, and the value
// computed from the keys' columns in the grouped result.
type groupedBreakdown struct {
	keys  []breakdownKey
	value string
	// with are the WITH clause's lookups of group values (groupLookup)
	// the keys and the value read, as "lookup AS name".
	with []string
}

// breakdownKey is one raw column a breakdown value is computed from: its
// SQL per event and whether it is a number (a group's value number);
// text keys of a breakdown with several keys group by their hash
// (hashed).
type breakdownKey struct {
	raw     string
	numeric bool
}

// groupable reports whether the breakdown's value can be computed after
// grouping: not cohorts (an event counts in several), not bins (their
// edges are quantiles of the events), not an expression reading a field
// that is nearly unique per event (grouping by it would not shrink the
// events).
func (bd *Breakdown) groupable() bool {
	if bd == nil || bd.Cohorts != nil || bd.bins() > 0 {
		return false
	}
	for _, p := range bd.Props {
		if p.perEvent {
			return false
		}
	}
	return true
}

// grouped plans a groupable breakdown in scope sc.
func (bd *Breakdown) grouped(sc *scope) *groupedBreakdown {
	g := &groupedBreakdown{}
	values := make([]string, len(bd.Props))
	for i, p := range bd.Props {
		var x string
		switch {
		case p.expr != nil:
			x = p.exprSQL(sc, g.key)
		case p.Type == condGroup && p.GroupTypeIndex != nil:
			// The groups join per event costs more than a lookup in a
			// table of the groups built once (groupLookup).
			lookup := g.lookup(groupLookup(sc, *p.GroupTypeIndex, p.Property))
			x = "arrayElement(tupleElement(" + lookup + ", 3), " + g.key(groupValueKey(lookup, *p.GroupTypeIndex), true) + ")"
		default:
			x = g.key(p.text(sc), false)
		}
		values[i] = p.value(x, sc.binder)
	}
	g.value = joinValues(values)
	return g
}

// key registers a raw column (once) and returns its column in the grouped
// result.
func (g *groupedBreakdown) key(raw string, numeric bool) string {
	for i, k := range g.keys {
		if k.raw == raw {
			return keyColumn("breakdown_raw", i)
		}
	}
	g.keys = append(g.keys, breakdownKey{raw: raw, numeric: numeric})
	return keyColumn("breakdown_raw", len(g.keys)-1)
}

// lookup names a lookup of group values in the WITH clause (once) and
// returns its name.
func (g *groupedBreakdown) lookup(sql string) string {
	for i, w := range g.with {
		if strings.HasPrefix(w, sql+" AS ") {
			return keyColumn("breakdown_lookup", i)
		}
	}
	g.with = append(g.with, sql+" AS "+keyColumn("breakdown_lookup", len(g.with)))
	return keyColumn("breakdown_lookup", len(g.with)-1)
}

// withClause is the WITH clause of the statement's series ("" for none):
// a lookup is a constant the engine computes once, read by name in the
// subqueries below it.
func (g *groupedBreakdown) withClause() string {
	if len(g.with) == 0 {
		return ""
	}
	return "WITH " + strings.Join(g.with, ",\n") + "\n"
}

// keyColumn names key i's columns: breakdown_raw, breakdown_raw_1...
func keyColumn(prefix string, i int) string {
	if i == 0 {
		return prefix
	}
	return prefix + "_" + strconv.Itoa(i)
}

// hashed reports whether key i groups by its hash; one key, or a number,
// groups as it is. Grouping events by several LowCardinality columns
// serializes their texts, while a hash of one is computed on its
// dictionary and grouping fixed-width numbers costs about what grouping
// one column does (benchmarks/results/breakdowns.md).
func (g *groupedBreakdown) hashed(i int) bool {
	return len(g.keys) > 1 && !g.keys[i].numeric
}

// eventColumns are the keys' columns of the read of events.
func (g *groupedBreakdown) eventColumns() []string {
	var cols []string
	for i, k := range g.keys {
		if g.hashed(i) {
			key := keyColumn("breakdown_key", i)
			cols = append(cols, k.raw+" AS "+key, "cityHash64("+key+") AS "+keyColumn("breakdown_hash", i),
				"sipHash64("+key+") AS "+keyColumn("breakdown_check", i))
		} else {
			cols = append(cols, k.raw+" AS "+keyColumn("breakdown_raw", i))
		}
	}
	return cols
}

// groupKeys are the columns events group by; aggregates read a hashed
// key's text (any of the group's: they are one text unless hashes
// collide) and the range of a second hash of it (collisionCheck).
func (g *groupedBreakdown) groupKeys() (keys, aggregates []string) {
	for i := range g.keys {
		if !g.hashed(i) {
			keys = append(keys, keyColumn("breakdown_raw", i))
			continue
		}
		keys = append(keys, keyColumn("breakdown_hash", i))
		check := keyColumn("breakdown_check", i)
		aggregates = append(aggregates, "any("+keyColumn("breakdown_key", i)+") AS "+keyColumn("breakdown_raw", i),
			"min("+check+") AS "+keyColumn("breakdown_check_min", i), "max("+check+") AS "+keyColumn("breakdown_check_max", i))
	}
	return keys, aggregates
}

// collisionCheck is a WHERE clause over the grouped rows that fails the
// statement when two texts of a hashed key shared a group: their second,
// independent hash (sipHash64) differs within it. Texts the check
// misses would need both 64-bit hashes equal, the odds of the 128-bit
// session keys (sessions.go). Comparing the texts themselves (min and
// max per group) costs far more (benchmarks/results/breakdowns.md).
// "" when no key is hashed.
func (g *groupedBreakdown) collisionCheck() string {
	var differ []string
	for i := range g.keys {
		if g.hashed(i) {
			differ = append(differ, keyColumn("breakdown_check_min", i)+" != "+keyColumn("breakdown_check_max", i))
		}
	}
	if differ == nil {
		return ""
	}
	return "\nWHERE throwIf(" + strings.Join(differ, " OR ") + ", 'two breakdown values share a 64-bit hash') = 0"
}
