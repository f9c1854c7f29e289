package querybuilder

import (
	"fmt"
	"time"
)

// binder hands out {name:Type} placeholders for values. Names are
// numbered in the order values are bound, so building the same request
// twice gives the same SQL text; an equal value of the same type reuses
// its placeholder, so a condition repeated in every series' subquery
// reads (and binds) the same parameter.
type binder struct {
	params map[string]any
	seen   map[string]string
	n      int
}

func newBinder() *binder {
	return &binder{params: map[string]any{}, seen: map[string]string{}}
}

// bind returns the placeholder for v declared as typ.
func (b *binder) bind(typ string, v any) string {
	key := typ + "\x00" + valueKey(v)
	if name, ok := b.seen[key]; ok {
		return "{" + name + ":" + typ + "}"
	}
	name := fmt.Sprintf("p%d", b.n)
	b.n++
	b.seen[key] = name
	b.params[name] = v
	return "{" + name + ":" + typ + "}"
}

// named binds v under a fixed name (team, tz, date_from...), which the
// shared SQL fragments (the overrides join) and readers of debug output
// expect.
func (b *binder) named(name, typ string, v any) string {
	b.params[name] = v
	return "{" + name + ":" + typ + "}"
}

// valueKey identifies a value for reuse; %#v tells "1" from 1 and keeps
// slice order.
func valueKey(v any) string {
	if t, ok := v.(time.Time); ok {
		return "time:" + t.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%T:%#v", v, v)
}

// Parameter types of instants: UTC, so the engine's own timezone never
// applies (see olap/params.go).
const typeTime = "DateTime64(6, 'UTC')"

func (b *binder) time(t time.Time) string { return b.bind(typeTime, t.UTC()) }

func (b *binder) str(s string) string { return b.bind("String", s) }
