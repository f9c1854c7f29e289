package olap

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// Table is one of insightd's own tables as ingestion writes it: a fixed
// name and column list, so no caller-supplied text ever names a table or
// column. Rows given to Engine.Insert hold one Go value per column, typed
// as the column is: uuid.UUID for UUID, int64 for Int64, uint64 for
// UInt64, uint8 for UInt8, string for String, time.Time for
// DateTime64(6, 'UTC').
type Table struct {
	name    string
	columns []string
}

// tables are the tables ingestion writes, named by the engine's schema:
// the columns are fixed here, the names come from one Schema value
// (Config.Schema) like every statement's.
type tables struct {
	events, persons, distinctIDs, overrides, eventUUIDs Table
	// The taxonomy's (taxonomy.go).
	eventDefs, eventVolume, propertyDefs, eventProps Table
}

func tablesOf(s chsql.Schema) tables {
	return tables{
		events: Table{s.Events, []string{
			"uuid", "team_id", "event", "distinct_id", "person_id", "timestamp", "properties", "created_at"}},
		persons: Table{s.Persons, []string{
			"id", "team_id", "properties", "property_times", "created_at", "is_identified", "is_deleted", "version"}},
		distinctIDs: Table{s.DistinctIDs, []string{"team_id", "distinct_id", "person_id", "is_deleted", "version"}},
		overrides:   Table{s.Overrides, []string{"team_id", "old_person_id", "override_person_id", "version"}},
		eventUUIDs:  Table{s.EventUUIDs, []string{"team_id", "uuid"}},
		eventDefs:   Table{s.EventDefinitions, []string{"team_id", "name", "created_at", "last_seen_at"}},
		eventVolume: Table{s.EventVolume, []string{"team_id", "name", "day", "events"}},
		propertyDefs: Table{s.PropertyDefinitions, []string{
			"team_id", "kind", "group_type_index", "name", "property_type", "created_at"}},
		eventProps: Table{s.EventProperties, []string{"team_id", "event", "name", "property_type", "created_at"}},
	}
}

// Name is the table's name.
func (t Table) Name() string { return t.name }

func (t Table) insertSQL() string {
	return "INSERT INTO " + t.name + " (" + strings.Join(t.columns, ", ") + ")"
}

// rowBinary builds ClickHouse's RowBinary input: values back to back in
// column order with no escaping, the cheapest format for the engine to
// parse (benchmarks/results/ingestion.md) and for us to write.
type rowBinary struct{ buf []byte }

func (w *rowBinary) uuid(id uuid.UUID) {
	// A UUID is two little-endian UInt64 halves, high half first.
	w.buf = binary.LittleEndian.AppendUint64(w.buf, binary.BigEndian.Uint64(id[:8]))
	w.buf = binary.LittleEndian.AppendUint64(w.buf, binary.BigEndian.Uint64(id[8:]))
}

func (w *rowBinary) int64(v int64)   { w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(v)) }
func (w *rowBinary) uint64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }

func (w *rowBinary) string(s string) {
	w.buf = binary.AppendUvarint(w.buf, uint64(len(s)))
	w.buf = append(w.buf, s...)
}

// time writes a DateTime64(6): microseconds since the epoch.
func (w *rowBinary) time(t time.Time) { w.int64(t.UnixMicro()) }

func (w *rowBinary) value(v any) error {
	switch x := v.(type) {
	case uuid.UUID:
		w.uuid(x)
	case int64:
		w.int64(x)
	case uint64:
		w.uint64(x)
	case uint8:
		w.buf = append(w.buf, x)
	case string:
		w.string(x)
	case time.Time:
		w.time(x)
	default:
		return fmt.Errorf("unsupported column value %T", v)
	}
	return nil
}

func (w *rowBinary) event(ev *Event) {
	w.uuid(ev.UUID)
	w.int64(ev.TeamID)
	w.string(ev.Event)
	w.string(ev.DistinctID)
	w.uuid(ev.PersonID)
	w.time(ev.Timestamp)
	w.string(ev.Properties)
	w.time(ev.CreatedAt)
}

func encodeRows(t Table, rows [][]any) ([]byte, error) {
	w := rowBinary{buf: make([]byte, 0, 64*len(rows))}
	for i, r := range rows {
		if len(r) != len(t.columns) {
			return nil, fmt.Errorf("%s row %d: %d values for %d columns", t.name, i, len(r), len(t.columns))
		}
		for j, v := range r {
			if err := w.value(v); err != nil {
				return nil, fmt.Errorf("%s row %d column %s: %w", t.name, i, t.columns[j], err)
			}
		}
	}
	return w.buf, nil
}

func encodeEvents(events []Event) []byte {
	// Sized exactly (a string's length prefix takes at most 10 bytes), so
	// the buffer of a flush's megabytes is never grown and copied.
	n := 0
	for i := range events {
		ev := &events[i]
		n += 16 + 8 + 16 + 8 + 8 + 3*binary.MaxVarintLen64 + len(ev.Event) + len(ev.DistinctID) + len(ev.Properties) + 16
	}
	w := rowBinary{buf: make([]byte, 0, n)}
	for i := range events {
		w.event(&events[i])
	}
	return w.buf
}
