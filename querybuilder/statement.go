// Package querybuilder turns analytics requests into ClickHouse SQL and
// shapes result rows into API results. It is pure: no I/O, no clock reads
// it was not handed, so every statement can be checked with golden files.
package querybuilder

import (
	"fmt"
	"sort"
	"strings"
)

// Statement is one SQL statement and the values it binds. Values appear in
// the SQL only as {name:Type} placeholders and are bound by the engine;
// Params maps each placeholder name to its Go value (string, integer,
// float, bool, time.Time, slices of those, or nil for NULL).
type Statement struct {
	SQL    string
	Params map[string]any
}

// String renders the statement for logs and golden files: the SQL, then
// the parameters sorted by name.
func (s Statement) String() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(s.SQL))
	b.WriteString("\n")
	names := make([]string, 0, len(s.Params))
	for k := range s.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "-- %s = %#v\n", k, s.Params[k])
	}
	return b.String()
}
