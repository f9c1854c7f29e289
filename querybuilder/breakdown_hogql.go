package querybuilder

import (
	"strings"

	"github.com/insightd/insightd/querybuilder/hogql"
)

// Expression breakdowns (breakdown_type hogql): an expression over the
// event in analytics.md's subset, parsed by package hogql and compiled
// with every literal bound and only the subset's functions. The
// expression reads the event's row and, when it names
// person.properties or person_id, the person join, through the same
// scope as property conditions: a key is bound, a hot key is its
// materialized column. A missing (or empty) property is NULL, as in
// HogQL, so coalesce and ifNull choose a default for it and the value
// of an expression that is NULL is the null breakdown.

// eventFields are the event's own fields an expression may read.
var eventFields = map[string]string{
	"event":       "e.event",
	"timestamp":   "e.timestamp",
	"distinct_id": "e.distinct_id",
	"$session_id": "e.mat_session_id",
	"uuid":        "e.uuid",
}

// breakdownResolver maps an expression's fields to the event source's
// SQL; readsPerson records a read of the event's person, perEvent a read
// of a field that is (nearly) unique per event (timestamp, uuid,
// distinct_id, person_id, $session_id).
//
// With key set, the expression is computed after events are grouped by
// the fields it reads (groupedBreakdown): each property, the event name
// and elements_chain are registered with key as a grouping key, and the
// expression reads the grouped result's column instead.
type breakdownResolver struct {
	sc          *scope
	key         func(raw string, numeric bool) string
	readsPerson bool
	perEvent    bool
	// manyValues records a read of a field that may have many distinct
	// values (all but the event name and fewValueProperties).
	manyValues bool
}

// grouped is a field that groups well read as key's column, or as itself
// when the expression is computed per event.
func (r *breakdownResolver) grouped(raw string) string {
	if r.key == nil {
		return raw
	}
	return r.key(raw, false)
}

func (r *breakdownResolver) Field(ref hogql.FieldRef, _ func(string, any) string) (string, error) {
	ch := ref.Chain
	switch {
	case ref.Table != "":
	case len(ch) == 1 && ch[0] == "event":
		return r.grouped(eventFields["event"]), nil
	case len(ch) == 1 && eventFields[ch[0]] != "":
		r.perEvent, r.manyValues = true, true
		return eventFields[ch[0]], nil
	case len(ch) == 1 && ch[0] == "person_id":
		r.readsPerson, r.perEvent, r.manyValues = true, true, true
		return r.sc.personID(), nil
	case len(ch) == 1 && ch[0] == "elements_chain":
		r.manyValues = true
		return r.grouped(propertyText(r.sc, "event", elementsChainKey)), nil
	case len(ch) == 2 && ch[0] == "properties":
		r.manyValues = r.manyValues || !fewValueProperties[ch[1]]
		return "nullIf(" + r.grouped(propertyText(r.sc, "event", ch[1])) + ", '')", nil
	case len(ch) == 3 && ch[0] == "person" && ch[1] == "properties":
		r.readsPerson, r.manyValues = true, true
		return "nullIf(" + r.grouped(propertyText(r.sc, "person", ch[2])) + ", '')", nil
	}
	return "", &hogql.Error{Pos: -1, Msg: "field " + strings.Join(ch, ".") + " is not allowed; use properties.<key>, " +
		"person.properties.<key>, event, timestamp, distinct_id, person_id, $session_id or elements_chain"}
}

func (r *breakdownResolver) Table(name string, _ func(string, any) string) (string, error) {
	return "", &hogql.Error{Pos: -1, Msg: "table " + name + " is not allowed here"}
}

// compileBreakdownExpr compiles an expression breakdown in scope sc
// (fields read through key when it is set, breakdownResolver): its value
// as text ("" for NULL), and what the resolver saw it read.
func compileBreakdownExpr(sc *scope, e hogql.Expr, key func(string, bool) string) (string, *breakdownResolver, error) {
	r := &breakdownResolver{sc: sc, key: key}
	c := &hogql.Compiler{Resolver: r, Bind: sc.bind, Only: hogql.BreakdownFunctions}
	sql, err := c.Expr(e)
	if err != nil {
		return "", r, err
	}
	return "ifNull(toString(" + sql + "), '')", r, nil
}

// parseBreakdownExpr parses and checks an expression breakdown, compiling
// it once in a scratch scope so that every refusal is a validation error
// now, not at build time; it records whether the expression reads the
// person.
func parseBreakdownExpr(prop *BreakdownProp) error {
	e, err := hogql.ParseExpr(prop.Property)
	if err != nil {
		return err
	}
	scratch := &scope{binder: newBinder(), person: func(x string) string { return x },
		personID: func() string { return "e.person_id" }}
	_, r, err := compileBreakdownExpr(scratch, e, nil)
	if err != nil {
		return err
	}
	// Ill-kinded expressions (text added to a number, a text condition)
	// are the request's fault: a 400 now, not the engine's error later.
	if err := hogql.CheckKinds(e, fieldKind); err != nil {
		return err
	}
	prop.expr, prop.readsPerson, prop.perEvent, prop.fewValues = e, r.readsPerson, r.perEvent, !r.manyValues
	return nil
}

// fieldKind is what a field the resolver accepts holds.
func fieldKind(chain []string) hogql.Kind {
	if len(chain) == 1 {
		switch chain[0] {
		case "timestamp":
			return hogql.KindDate
		case "person_id", "uuid":
			return hogql.KindUUID
		}
	}
	return hogql.KindString
}

// exprSQL is an expression breakdown's value as text in scope sc (its
// fields read through key when set, breakdownResolver).
// parseBreakdownExpr compiled the same expression with the same
// resolver, so it cannot be refused here; were it, the value would be
// the null breakdown rather than text of the input.
func (p BreakdownProp) exprSQL(sc *scope, key func(string, bool) string) string {
	sql, _, err := compileBreakdownExpr(sc, p.expr, key)
	if err != nil {
		return "''"
	}
	return sql
}
