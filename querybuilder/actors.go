package querybuilder

import (
	"bytes"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// The actors behind a number. Every people URL a result emits is
// /api/projects/:id/persons/<kind's persons route>/ with the request as
// it was parsed (relative dates resolved, so that the URL names the same
// range whenever it is followed) and the selection: which series, bucket,
// step, cohort or status. The persons endpoint parses the request with the
// same kind, and the kind lists the actors of the selection from the
// same per-actor statement its numbers come from, so the counts agree by
// construction.

// Page is a page of a selection's actors; Limit 0 means all of them.
type Page struct {
	Limit, Offset int
}

// ActorsLister is a query whose numbers count actors.
type ActorsLister interface {
	Query
	// Actors builds the statement listing the actors of the selection in
	// sel (series, bucket, step...): rows of (actor as text, total), the
	// total being the selection's size, ordered by actor; a kind may add
	// columns after them (retention: each actor's appearances).
	Actors(sel Params, f Facts, page Page) (Statement, error)
}

// ActorsColumns are the columns of an actors statement.
var ActorsColumns = []string{"actor", "total"}

// peopleIgnored are request parameters a people URL leaves out.
var peopleIgnored = map[string]bool{"client_query_id": true, "debug": true, "refresh": true, "format": true,
	"date_from": true, "date_to": true, "limit": true, "offset": true}

// peopleBase is the people URL of route for this request without a
// selection: every parameter as sent (JSON text), the range resolved.
func (c *Common) peopleBase(route string) string {
	v := url.Values{}
	for k, raw := range c.raw {
		if !peopleIgnored[k] && !isNull(raw) {
			v.Set(k, string(bytes.TrimSpace(raw)))
		}
	}
	if !c.Range.From.IsZero() {
		v.Set("date_from", c.Range.From.In(c.clock.loc).Format(time.RFC3339Nano))
		v.Set("date_to", c.Range.To.In(c.clock.loc).Format(time.RFC3339Nano))
	}
	return "/api/projects/" + strconv.FormatInt(c.Project.ID, 10) + "/persons/" + route + "/?" + v.Encode()
}

// withSelection appends selection parameters, in name order, to a base.
func withSelection(base string, sel map[string]string) string {
	names := make([]string, 0, len(sel))
	for k := range sel {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		base += "&" + url.QueryEscape(k) + "=" + url.QueryEscape(sel[k])
	}
	return base
}

// actorsPage is the statement of one page of the actors a subquery lists
// (its column actor, one row per actor).
// extra names further columns of sub to list after the total.
func actorsPage(s *eventSource, sub string, page Page, extra ...string) Statement {
	cols := "toString(actor) AS actor, count() OVER () AS total"
	for _, c := range extra {
		cols += ", " + c
	}
	sql := "SELECT " + cols + "\nFROM (\n" + indent(sub) + "\n)\nORDER BY actor"
	if page.Limit > 0 {
		sql += "\nLIMIT " + s.bind("UInt64", uint64(page.Limit)) + " OFFSET " + s.bind("UInt64", uint64(page.Offset))
	}
	return s.statement(sql)
}

// selInt reads a whole-number selection parameter that must be present.
func selInt(sel Params, name string, pr *problems) int {
	n, ok := sel.integer(name, pr)
	if !ok && !sel.present(name) {
		pr.add(name, "%s is required to list the actors of a number", name)
	}
	return int(n)
}
