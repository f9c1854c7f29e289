// Package querybuilder turns analytics requests into ClickHouse SQL and
// shapes result rows into API results. It is pure: no I/O, no clock reads
// it was not handed, so every statement can be checked with golden files.
package querybuilder

import "github.com/insightd/insightd/querybuilder/chsql"

// Statement is one SQL statement and the values it binds (chsql, which
// the engine imports too, so that running one needs no compiler).
type Statement = chsql.Statement

// FallbackCheck is the message of a statement's own check (throwIf) that
// asks for its Fallback.
const FallbackCheck = chsql.FallbackCheck

// Limits are the engine settings every analysis runs under.
type Limits = chsql.Limits

// DefaultLimits are the limits of a server configured with nothing else.
func DefaultLimits() Limits { return chsql.DefaultLimits() }

// WithLimits returns stmt with a SETTINGS clause applying the limits.
func WithLimits(stmt Statement, l Limits) Statement { return chsql.WithLimits(stmt, l) }
