package olap

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// The taxonomy (migrations/clickhouse 0012): the event names, event
// properties, person properties and group properties each project has.
// The writer's preparing stage remembers what is stored (loaded at start)
// and adds rows only for what it has not seen, so a steady stream of
// events costs a comparison of each event's property keys with those of
// the last event of its name, and a map lookup per key when they differ.
// Event volumes and last-seen times are counted in memory and written
// once a TaxonomyFlush (a minute by default).

// Property kinds, as PostHog numbers them (PropertyDefinition.Type).
const (
	PropertyEvent  uint8 = 1
	PropertyPerson uint8 = 2
	PropertyGroup  uint8 = 3
)

type teamEvent struct {
	team  int64
	event string
}

type propKey struct {
	team      int64
	kind, gti uint8
	name      string
}

type dayKey struct {
	teamEvent
	day int64 // Unix day
}

// eventSeen is what the writer knows of one event name of a project.
type eventSeen struct {
	keys map[string]struct{}
	// shape is the property keys of the last event of this name, in
	// order: most events of a name carry the same ones.
	shape []string
	// seen says an event of this name arrived since the last flush;
	// day and n count the events of the latest day seen, days those of
	// other days, all since the last flush.
	seen    bool
	defined bool // its event_definitions row is written (or on its way)
	day     int64
	n       uint64
	days    map[int64]uint64
}

// count adds an event of Unix day d.
func (e *eventSeen) count(d int64) {
	if d != e.day && e.n > 0 {
		if e.days == nil {
			e.days = map[int64]uint64{}
		}
		e.days[e.day] += e.n
		e.n = 0
	}
	e.day = d
	e.n++
}

// taxonomy is the writer's seen-set; only the preparing stage (loop)
// touches it.
type taxonomy struct {
	loaded    bool
	events    map[teamEvent]*eventSeen
	props     map[propKey]struct{}
	lastFlush time.Time
}

// taxRows are the rows one batch adds to the taxonomy tables, and what
// to forget if the batch fails.
type taxRows struct {
	events, volume, props, eventProps [][]any
	newEvents                         []teamEvent
	newEventProps                     []propOf
	newProps                          []propKey
	// flushed are the counts this batch writes, given back if it fails.
	flushed map[dayKey]uint64
}

type propOf struct {
	teamEvent
	name string
}

func newTaxonomy() *taxonomy {
	return &taxonomy{events: map[teamEvent]*eventSeen{}, props: map[propKey]struct{}{}}
}

// load reads what the tables hold (once, before the first batch).
func (w *Writer) loadTaxonomy(ctx context.Context) error {
	t := w.tax
	s := w.schema
	rows, err := w.engine.Query(ctx, chsql.Statement{SQL: `SELECT DISTINCT team_id, name FROM ` + s.EventDefinitions})
	if err != nil {
		return fmt.Errorf("load the event definitions: %w", err)
	}
	for _, r := range rows.Data {
		t.event(teamEvent{cellInt64(r[0]), fmt.Sprint(r[1])}).defined = true
	}
	if rows, err = w.engine.Query(ctx, chsql.Statement{SQL: `SELECT DISTINCT team_id, event, name FROM ` + s.EventProperties}); err != nil {
		return fmt.Errorf("load the event properties: %w", err)
	}
	for _, r := range rows.Data {
		t.event(teamEvent{cellInt64(r[0]), fmt.Sprint(r[1])}).keys[fmt.Sprint(r[2])] = struct{}{}
	}
	if rows, err = w.engine.Query(ctx, chsql.Statement{SQL: `SELECT DISTINCT team_id, kind, group_type_index, name FROM ` + s.PropertyDefinitions}); err != nil {
		return fmt.Errorf("load the property definitions: %w", err)
	}
	for _, r := range rows.Data {
		t.props[propKey{cellInt64(r[0]), uint8(cellInt64(r[1])), uint8(cellInt64(r[2])), fmt.Sprint(r[3])}] = struct{}{}
	}
	t.loaded, t.lastFlush = true, time.Now()
	return nil
}

// cellInt64 reads an integer cell, whichever Go type the engine gave it.
func cellInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case uint64:
		return int64(n)
	case uint8:
		return int64(n)
	case int8:
		return int64(n)
	case int32:
		return int64(n)
	case uint32:
		return int64(n)
	case uint16:
		return int64(n)
	case int16:
		return int64(n)
	}
	return 0
}

func (t *taxonomy) event(k teamEvent) *eventSeen {
	e := t.events[k]
	if e == nil {
		e = &eventSeen{keys: map[string]struct{}{}}
		t.events[k] = e
	}
	return e
}

// observe adds what ev (and its person and group updates) bring that is
// not yet known to rows.
func (t *taxonomy) observe(ev *Event, p *PersonUpdate, g *GroupUpdate, rows *taxRows, last **eventSeen, lastKey *teamEvent) {
	k := teamEvent{ev.TeamID, ev.Event}
	var e *eventSeen
	if *last != nil && *lastKey == k {
		e = *last
	} else {
		e = t.event(k)
	}
	if !e.defined {
		e.defined = true
		rows.events = append(rows.events, []any{k.team, k.event, ev.CreatedAt, ev.CreatedAt})
		rows.newEvents = append(rows.newEvents, k)
	}
	*last, *lastKey = e, k
	e.seen = true
	e.count(ev.Timestamp.Unix() / 86400)
	t.eventKeys(ev, e, rows)
	if p != nil {
		for name, v := range p.Set {
			t.prop(propKey{k.team, PropertyPerson, 0, name}, v, ev.CreatedAt, rows)
		}
		for name, v := range p.SetOnce {
			t.prop(propKey{k.team, PropertyPerson, 0, name}, v, ev.CreatedAt, rows)
		}
	}
	if g != nil && g.TypeIndex >= 0 && g.TypeIndex < 256 {
		for name, v := range g.Set {
			t.prop(propKey{k.team, PropertyGroup, uint8(g.TypeIndex), name}, v, ev.CreatedAt, rows)
		}
	}
}

// eventKeys walks the top-level keys of ev's properties against the
// last shape of its name.
func (t *taxonomy) eventKeys(ev *Event, e *eventSeen, rows *taxRows) {
	j := 0
	var keys []string // this event's keys, once it differs from the shape
	differs := false
	walkKeys(ev.Properties, func(key string, value string) {
		if !differs && j < len(e.shape) && e.shape[j] == key {
			j++
			return
		}
		if !differs {
			differs = true
			keys = append(make([]string, 0, j+8), e.shape[:j]...)
		}
		key = strings.Clone(key)
		keys = append(keys, key)
		if _, ok := e.keys[key]; ok {
			return
		}
		e.keys[key] = struct{}{}
		typ := propertyType(key, []byte(value))
		rows.eventProps = append(rows.eventProps, []any{ev.TeamID, ev.Event, key, typ, ev.CreatedAt})
		rows.newEventProps = append(rows.newEventProps, propOf{teamEvent{ev.TeamID, ev.Event}, key})
		t.prop(propKey{ev.TeamID, PropertyEvent, 0, key}, []byte(value), ev.CreatedAt, rows)
	})
	if differs || j != len(e.shape) {
		if !differs {
			keys = e.shape[:j:j]
		}
		e.shape = keys
	}
}

func (t *taxonomy) prop(k propKey, value []byte, at time.Time, rows *taxRows) {
	if _, ok := t.props[k]; ok {
		return
	}
	t.props[k] = struct{}{}
	rows.props = append(rows.props, []any{k.team, k.kind, k.gti, k.name, propertyType(k.name, value), at})
	rows.newProps = append(rows.newProps, k)
}

// forget undoes what a failed batch added, so that the next events of
// those names add them again, and takes back the counts it was to write.
// (The counts of its own events stay: a client's resend of them counts
// them again, one of the ways volumes are approximate, as PostHog's.)
func (t *taxonomy) forget(rows *taxRows) {
	for k, n := range rows.flushed {
		t.event(k.teamEvent).add(k.day, n)
	}
	for _, k := range rows.newEvents {
		if e := t.events[k]; e != nil {
			e.defined = false
		}
	}
	for _, p := range rows.newEventProps {
		if e := t.events[p.teamEvent]; e != nil {
			delete(e.keys, p.name)
			e.shape = nil
		}
	}
	for _, k := range rows.newProps {
		delete(t.props, k)
	}
}

func (e *eventSeen) add(day int64, n uint64) {
	if e.days == nil {
		e.days = map[int64]uint64{}
	}
	e.days[day] += n
}

// flushRows moves the counted volumes and last-seen times into rows.
func (t *taxonomy) flushRows(rows *taxRows, now time.Time) {
	rows.flushed = map[dayKey]uint64{}
	for k, e := range t.events {
		if e.n > 0 {
			e.add(e.day, e.n)
			e.n = 0
		}
		for d, n := range e.days {
			rows.volume = append(rows.volume, []any{k.team, k.event, time.Unix(d*86400, 0).UTC(), n})
			rows.flushed[dayKey{k, d}] = n
		}
		clear(e.days)
		if e.seen {
			rows.events = append(rows.events, []any{k.team, k.event, now, now})
			e.seen = false
		}
	}
	t.lastFlush = now
}

// walkKeys calls fn with each top-level key of the JSON object text
// props and its value's text. props is valid JSON (capture checked it);
// anything else ends the walk.
func walkKeys(props string, fn func(key, value string)) {
	i := skipSpace(props, 0)
	if i >= len(props) || props[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(props, i)
		if i >= len(props) || props[i] != '"' {
			return
		}
		end, esc := stringEnd(props, i)
		if end < 0 {
			return
		}
		key := props[i+1 : end-1]
		if esc {
			var s string
			if json.Unmarshal([]byte(props[i:end]), &s) != nil {
				return
			}
			key = s
		}
		i = skipSpace(props, end)
		if i >= len(props) || props[i] != ':' {
			return
		}
		i = skipSpace(props, i+1)
		vend := valueEnd(props, i)
		if vend < 0 {
			return
		}
		fn(key, props[i:vend])
		i = skipSpace(props, vend)
		if i >= len(props) || props[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string starting at s[i] (a quote),
// and whether it holds an escape; -1 if it does not end.
func stringEnd(s string, i int) (int, bool) {
	esc := false
	for j := i + 1; j < len(s); {
		k := strings.IndexAny(s[j:], `"\`)
		if k < 0 {
			return -1, false
		}
		j += k
		if s[j] == '"' {
			return j + 1, esc
		}
		esc = true
		j += 2
	}
	return -1, false
}

// valueEnd is the index after the JSON value starting at s[i].
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	switch s[i] {
	case '"':
		end, _ := stringEnd(s, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			case '"':
				end, _ := stringEnd(s, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			}
		}
		return -1
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' && s[j] != '\r' {
		j++
	}
	return j
}

var isoDate = regexp.MustCompile(`^"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?"$`)

// propertyType is PostHog's type of a property from its first value (the
// JSON text): utm_ properties are String; a number Numeric; true/false
// Boolean; an ISO date or date-time string DateTime; any other string
// String; null, objects and lists none (”). The back-fill in migrations/
// clickhouse 0012 applies the same rules.
func propertyType(name string, value []byte) string {
	if len(value) == 0 {
		return ""
	}
	switch c := value[0]; {
	case strings.HasPrefix(name, "utm_") && (c == '"' || c == '-' || c >= '0' && c <= '9'):
		return "String"
	case c == '-' || c >= '0' && c <= '9':
		return "Numeric"
	case c == 't' || c == 'f':
		return "Boolean"
	case c == '"':
		if isoDate.Match(value) {
			return "DateTime"
		}
		return "String"
	}
	return ""
}

// observeTaxonomy is the preparing stage's part: the rows events add.
func (w *Writer) observeTaxonomy(ctx context.Context, events []Event, persons []*PersonUpdate, groups []*GroupUpdate, now time.Time) (*taxRows, error) {
	t := w.tax
	if !t.loaded {
		if err := w.loadTaxonomy(ctx); err != nil {
			return nil, err
		}
	}
	rows := &taxRows{}
	var last *eventSeen
	var lastKey teamEvent
	for i := range events {
		t.observe(&events[i], persons[i], groups[i], rows, &last, &lastKey)
	}
	if now.Sub(t.lastFlush) >= w.cfg.TaxonomyFlush {
		t.flushRows(rows, now)
	}
	return rows, nil
}

// taxonomyWrites are the inserts of a batch's taxonomy rows.
func (w *Writer) taxonomyWrites(r *taxRows) []struct {
	t    Table
	rows [][]any
} {
	return []struct {
		t    Table
		rows [][]any
	}{{w.tables.eventDefs, r.events}, {w.tables.eventVolume, r.volume}, {w.tables.propertyDefs, r.props}, {w.tables.eventProps, r.eventProps}}
}

// flushTaxonomy writes the counts not yet written (at Close).
func (w *Writer) flushTaxonomy() {
	if !w.tax.loaded {
		return
	}
	rows := &taxRows{}
	w.tax.flushRows(rows, time.Now().UTC())
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout)
	defer cancel()
	for _, x := range w.taxonomyWrites(rows) {
		if err := w.engine.Insert(ctx, x.t, x.rows); err != nil {
			w.log.Warn("could not write the taxonomy's counts at shutdown", "table", x.t.name, "error", err)
		}
	}
}
