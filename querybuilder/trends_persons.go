package querybuilder

// Person filters as a set of persons. A series whose only use of persons
// is conditions on person properties ANDed to the rest need not join
// every person to its events: the persons passing them form a set, and
// events keep or drop by their person's membership, which costs about
// what a hand-written IN over persons does and less than the join
// (benchmarks/results/trends.md).
//
// The set is each person's latest version, deleted ones excluded, as the
// join sees them. A person without a live row matches a condition the way
// the join's empty values do: when the conditions hold for such a person
// (`is_not_set`, `is_not`, negations...), the events kept are those whose
// person is not among the live persons that fail the conditions.

// splitPersonConjuncts parts f, read as an AND of conjuncts, into the
// conjuncts reading only person properties and the others, each ANDed
// (nil when there is none).
func splitPersonConjuncts(f *PropertyFilter) (persons, rest *PropertyFilter) {
	var ps, rs []*PropertyFilter
	var walk func(*PropertyFilter)
	walk = func(f *PropertyFilter) {
		switch {
		case f == nil:
		case !f.Negation && (f.Group == "AND" || (f.Group != "" && len(f.Values) == 1)):
			// A negated group (a cohort condition with negation, inlined)
			// is one conjunct: NOT (a AND b) is not NOT a AND NOT b.
			for _, v := range f.Values {
				walk(v)
			}
		case f.onlyPersons():
			ps = append(ps, f)
		default:
			rs = append(rs, f)
		}
	}
	walk(f)
	return andFilters(ps...), andFilters(rs...)
}

// onlyPersons reports whether every condition of f reads person
// properties (and f has one at least).
func (f *PropertyFilter) onlyPersons() bool {
	if f.Group == "" {
		return f.Type == "person"
	}
	for _, v := range f.Values {
		if !v.onlyPersons() {
			return false
		}
	}
	return len(f.Values) > 0
}

// matchesMissingPerson is the value of a person-only filter for a person
// without a live row, whose properties read as the person join's empty
// values: ” for text, not set. known is false when Go cannot tell the
// engine's answer for certain (regular expressions).
func (f *PropertyFilter) matchesMissingPerson() (match, known bool) {
	if f.Group != "" {
		if len(f.Values) == 0 {
			return false, false // onlyPersons leaves empty groups out
		}
		match = f.Group == "AND"
		for _, v := range f.Values {
			m, ok := v.matchesMissingPerson()
			if !ok {
				return false, false
			}
			if f.Group == "AND" {
				match = match && m
			} else {
				match = match || m
			}
		}
		return match != f.Negation, true
	}
	hasEmpty := false
	for _, s := range f.strs {
		hasEmpty = hasEmpty || s == ""
	}
	switch f.Operator {
	case "is_set", "gt", "gte", "lt", "lte", "is_date_exact", "is_date_before", "is_date_after":
		match = false // nothing set; no number or date in ''
	case "is_not_set":
		match = true
	case "exact":
		match = hasEmpty
	case "is_not":
		match = !hasEmpty
	case "icontains":
		match = hasEmpty // positionCaseInsensitiveUTF8('', '') is 1
	case "not_icontains":
		match = !hasEmpty
	default: // regex, not_regex
		return false, false
	}
	return match != f.Negation, true
}

// personRowSQL renders a person-only filter over one row of persons: its
// properties column read directly, not through the person join.
func (s *eventSource) personRowSQL(f *PropertyFilter) string {
	return f.sql(&scope{binder: s.binder, person: func(expr string) string { return "(" + expr + ")" }})
}

// personSetCond is the WHERE condition keeping the events whose person
// passes the person-only filter f, without the person join. f must be
// one that canBePersonSet. FINAL keeps each person's row of the highest
// version (the table is a ReplacingMergeTree by version) before WHERE
// filters, as the join's argMax does: on merged parts it costs less than
// grouping by id, on unmerged ones about the same
// (benchmarks/results/trends.md). The conditions must stay in WHERE: a
// PREWHERE would filter before FINAL.
func (s *eventSource) personSetCond(f *PropertyFilter) string {
	missing, _ := f.matchesMissingPerson()
	row, in := "("+s.personRowSQL(f)+")", "IN"
	if missing {
		// Persons without a live row pass: drop the live ones that fail.
		row, in = "NOT "+row, "NOT IN"
	}
	return s.personID() + " " + in + " (\n" +
		"      SELECT id FROM " + s.schema.Persons + " FINAL\n" +
		"      WHERE team_id = {team:Int64} AND is_deleted = 0 AND " + row + "\n  )"
}

// canBePersonSet reports whether personSetCond can write f: whether its
// value for a person without a live row is known.
func canBePersonSet(f *PropertyFilter) bool {
	_, known := f.matchesMissingPerson()
	return known
}
