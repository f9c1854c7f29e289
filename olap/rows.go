package olap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rows is a query's whole result. Values have the same Go types on both
// backends: Int* as int64, UInt* as uint64, Float*/Decimal as float64,
// Bool as bool, String/FixedString/UUID/Enum/IP as string, Date and
// DateTime* as time.Time in UTC, Nullable NULL as nil, Array and Tuple as
// []any, Map as map[string]any; wider integers as their decimal string.
type Rows struct {
	Columns []Column
	Data    [][]any
}

// Column names a result column and its ClickHouse type.
type Column struct {
	Name string
	Type string
}

// Index returns the position of the named column, or -1.
func (r *Rows) Index(name string) int {
	for i, c := range r.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// decodeJSONCompact reads JSONCompactEachRowWithNamesAndTypes output.
// One decoder reads the whole output (a decoder per line copied every
// line once more) and each row's values are converted in the slice they
// were decoded into, sized for the columns, in a list sized for the
// lines: a result at the analysis budget is a hundred thousand rows.
func decodeJSONCompact(data []byte) (*Rows, error) {
	rows := &Rows{}
	if len(bytes.TrimSpace(data)) == 0 {
		return rows, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var names, types []string
	if err := dec.Decode(&names); err != nil {
		return nil, fmt.Errorf("decode column names: %w", err)
	}
	if err := dec.Decode(&types); err != nil {
		return nil, fmt.Errorf("decode column types: %w", err)
	}
	if len(types) != len(names) {
		return nil, fmt.Errorf("decode: %d names, %d types", len(names), len(types))
	}
	parsed := make([]chType, len(types))
	for i := range names {
		rows.Columns = append(rows.Columns, Column{Name: names[i], Type: types[i]})
		parsed[i] = parseType(types[i])
	}
	// Every row ends its line: the names and types are two of them.
	if n := bytes.Count(data, []byte{'\n'}) - 2; n > 0 {
		rows.Data = make([][]any, 0, n)
	}
	for n := 1; dec.More(); n++ {
		row := make([]any, 0, len(types))
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("decode row %d: %w", n, err)
		}
		if len(row) != len(types) {
			return nil, fmt.Errorf("decode row %d: %d values for %d columns", n, len(row), len(types))
		}
		for i, v := range row {
			x, err := fromJSON(parsed[i], v)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", names[i], err)
			}
			row[i] = x
		}
		rows.Data = append(rows.Data, row)
	}
	return rows, nil
}

// chType is a parsed ClickHouse type name: Array(Nullable(String)) is
// {Array [{Nullable [{String}]}]}.
type chType struct {
	name  string
	args  []chType
	raw   []string // unparsed arguments, e.g. a DateTime64 precision and zone
	names []string // element names of a named Tuple
}

func parseType(s string) chType {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return chType{name: s}
	}
	t := chType{name: s[:open]}
	for _, a := range splitArgs(s[open+1 : len(s)-1]) {
		a = strings.TrimSpace(a)
		t.raw = append(t.raw, a)
		// Tuple elements may be named: Tuple(a UInt8, b String).
		if t.name == "Tuple" {
			if sp := strings.IndexByte(a, ' '); sp > 0 && !strings.ContainsAny(a[:sp], "(") {
				t.names = append(t.names, strings.Trim(a[:sp], "`"))
				a = a[sp+1:]
			}
		}
		t.args = append(t.args, parseType(a))
	}
	return t
}

// splitArgs splits on top-level commas, outside parentheses and quotes.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case inQuote:
			if ch == '\\' {
				i++
			} else if ch == '\'' {
				inQuote = false
			}
		case ch == '\'':
			inQuote = true
		case ch == '(':
			depth++
		case ch == ')':
			depth--
		case ch == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func fromJSON(t chType, v any) (any, error) {
	switch t.name {
	case "Nullable":
		if v == nil {
			return nil, nil
		}
		return fromJSON(t.args[0], v)
	case "LowCardinality", "SimpleAggregateFunction":
		return fromJSON(t.args[len(t.args)-1], v)
	case "Array", "Tuple":
		// chDB writes a named tuple as a JSON object; keep declared order.
		if m, ok := v.(map[string]any); ok && t.name == "Tuple" && len(t.names) == len(t.args) {
			ordered := make([]any, len(t.names))
			for i, n := range t.names {
				ordered[i] = m[n]
			}
			v = ordered
		}
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a JSON array, got %T", t.name, v)
		}
		out := make([]any, len(list))
		for i, x := range list {
			et := t.args[0]
			if t.name == "Tuple" && i < len(t.args) {
				et = t.args[i]
			}
			y, err := fromJSON(et, x)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	case "Map":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("map column: want a JSON object, got %T", v)
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			y, err := fromJSON(t.args[1], x)
			if err != nil {
				return nil, err
			}
			out[k] = y
		}
		return out, nil
	case "Int8", "Int16", "Int32", "Int64":
		return strconv.ParseInt(numText(v), 10, 64)
	case "UInt8", "UInt16", "UInt32", "UInt64":
		return strconv.ParseUint(numText(v), 10, 64)
	case "Int128", "Int256", "UInt128", "UInt256":
		return numText(v), nil
	case "Float32", "Float64", "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256", "BFloat16":
		return parseFloat(numText(v))
	case "Bool":
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("bool column: got %T", v)
		}
		return b, nil
	case "Date", "Date32":
		return time.Parse(time.DateOnly, numText(v))
	case "DateTime", "DateTime64":
		return parseDateTime(t, numText(v))
	case "Nothing":
		return nil, nil
	default:
		// String, FixedString, UUID, Enum8/16, IPv4/6 and anything else
		// textual: keep the text.
		if s, ok := v.(string); ok {
			return s, nil
		}
		if n, ok := v.(json.Number); ok {
			return n.String(), nil
		}
		return v, nil
	}
}

func numText(v any) string {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case string:
		return x
	case bool:
		if x {
			return "1"
		}
		return "0"
	default:
		return fmt.Sprint(x)
	}
}

func parseFloat(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "nan", "-nan":
		return math.NaN(), nil
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

// parseDateTime reads "2006-01-02 15:04:05[.ffffff]" in the column's time
// zone (its last quoted argument; the session zone, UTC, otherwise).
func parseDateTime(t chType, s string) (time.Time, error) {
	loc := time.UTC
	for _, a := range t.raw {
		if strings.HasPrefix(a, "'") && strings.HasSuffix(a, "'") && len(a) > 2 {
			l, err := time.LoadLocation(a[1 : len(a)-1])
			if err != nil {
				return time.Time{}, err
			}
			loc = l
		}
	}
	ts, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", s, loc)
	if err != nil {
		return time.Time{}, err
	}
	return ts.UTC(), nil
}
