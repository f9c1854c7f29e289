package querybuilder

import "bytes"

// The breakdown values PostHog clients know: the series that folds every
// value past the limit, and the series of events without the property.
const (
	BreakdownOther = "$$_posthog_breakdown_other_$$"
	BreakdownNull  = "$$_posthog_breakdown_null_$$"
)

// Breakdown splits each series by a property's value.
type Breakdown struct {
	// Property is the property key; Type says whose (event or person).
	Property string
	Type     string
	// Limit is how many values by volume get their own series; the rest
	// fold into BreakdownOther.
	Limit int
}

// maxBreakdownLimit keeps a request from asking for a series per value of
// a high-cardinality property.
const maxBreakdownLimit = 1000

// Breakdown types PostHog defines that insightd cannot compute yet.
var unsupportedBreakdownTypes = map[string]bool{"cohort": true, "group": true, "hogql": true, "data_warehouse": true}

// parseBreakdown reads breakdown, breakdown_type and breakdown_limit;
// nil means no breakdown.
func parseBreakdown(p Params, defaultLimit int, pr *problems) *Breakdown {
	raw, ok := p["breakdown"]
	if !ok || isNull(raw) {
		return nil
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		pr.add("breakdown", "breakdown must be one property name; lists (cohorts, multiple breakdowns) are not supported yet")
		return nil
	}
	key, _ := p.str("breakdown", pr)
	if key == "" {
		return nil
	}
	b := &Breakdown{Property: key, Type: "event", Limit: defaultLimit}
	if t, present := p.str("breakdown_type", pr); present && t != "" {
		switch {
		case t == "event" || t == "person":
			b.Type = t
		case t == "session":
			b.Type = t
			if _, known := sessionKeys[key]; !known {
				pr.add("breakdown", "breakdown %q is not a session property; use one of %s", key, sessionKeyList())
			}
		case unsupportedBreakdownTypes[t]:
			pr.add("breakdown_type", "breakdown_type %s is not supported yet; use event, person or session", t)
		default:
			pr.add("breakdown_type", "breakdown_type must be one of event, person, cohort, group, session, hogql; got %q", t)
		}
	}
	if n, present := p.integer("breakdown_limit", pr); present {
		if n < 1 || n > maxBreakdownLimit {
			pr.add("breakdown_limit", "breakdown_limit must be between 1 and %d, got %d", maxBreakdownLimit, n)
		} else {
			b.Limit = int(n)
		}
	}
	return b
}

// valueSQL is an event's raw breakdown value: the property as text, with
// a missing or empty value as BreakdownNull.
func (bd *Breakdown) valueSQL(sc *scope) string {
	return nullBreakdown(propertyText(sc, bd.Type, bd.Property), sc.binder)
}

// nullBreakdown is a raw property text x as a breakdown value: an empty
// one is BreakdownNull.
func nullBreakdown(x string, b *binder) string {
	return "if(empty(" + x + "), " + b.named("breakdown_null", "String", BreakdownNull) + ", " + x + ")"
}

// label is a series label under this breakdown.
func breakdownLabel(label, value string) string {
	return label + " - " + value
}
