package olap

// Values read from the server backend, turned into the Go values both
// backends answer (normalize), so results do not depend on the backend.

import (
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/chcol"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Go types normalize recognizes by type rather than by kind: several of
// them are slices or arrays of bytes underneath.
var (
	typeIP       = reflect.TypeOf(net.IP{})
	typeAddr     = reflect.TypeOf(netip.Addr{})
	typeUUID     = reflect.TypeOf(uuid.UUID{})
	typeTime     = reflect.TypeOf(time.Time{})
	typeDuration = reflect.TypeOf(time.Duration(0))
	typeDecimal  = reflect.TypeOf(decimal.Decimal{})
	typeBigInt   = reflect.TypeOf(&big.Int{})
	typeVariant  = reflect.TypeOf(chcol.Variant{})
	typeJSON     = reflect.TypeOf(chcol.JSON{})
	typeJSONPtr  = reflect.TypeOf(&chcol.JSON{})
)

// normalize turns a value scanned by clickhouse-go into the Go type the
// embedded backend gives for the same ClickHouse type t (see Rows):
// Nullable pointers become nil or their value, integers int64 or uint64,
// floats and decimals float64, wide integers decimal text, UUIDs and IPs
// text, times UTC, arrays and tuples []any, maps map[string]any.
func normalize(t chType, v reflect.Value) (any, error) {
	t = baseType(t)
	if !v.IsValid() {
		return nil, nil
	}
	switch v.Type() {
	case typeTime:
		ts, _ := v.Interface().(time.Time)
		if t.name == "Date" || t.name == "Date32" {
			// The driver puts a Date at midnight in the server's time zone;
			// the day is what the value means.
			return time.Date(ts.Year(), ts.Month(), ts.Day(), 0, 0, 0, 0, time.UTC), nil
		}
		return ts.UTC(), nil
	case typeUUID:
		u, _ := v.Interface().(uuid.UUID)
		return u.String(), nil
	case typeIP:
		ip, _ := v.Interface().(net.IP)
		if ip == nil {
			return nil, nil
		}
		if ip4 := ip.To4(); ip4 != nil && t.name == "IPv6" {
			// ClickHouse writes an IPv4-mapped IPv6 value as ::ffff:a.b.c.d.
			return "::ffff:" + ip4.String(), nil
		}
		return ip.String(), nil
	case typeAddr:
		a, _ := v.Interface().(netip.Addr)
		return a.String(), nil
	case typeDecimal:
		d, _ := v.Interface().(decimal.Decimal)
		return d.InexactFloat64(), nil
	case typeBigInt:
		b, _ := v.Interface().(*big.Int)
		if b == nil {
			return nil, nil
		}
		return b.String(), nil
	case typeDuration:
		d, _ := v.Interface().(time.Duration)
		return formatTimeOfDay(d, t), nil
	case typeVariant:
		// Variant and Dynamic carry the value's own ClickHouse type.
		x, _ := v.Interface().(chcol.Variant)
		if x.Nil() {
			return nil, nil
		}
		return normalize(parseType(x.Type()), reflect.ValueOf(x.Any()))
	case typeJSON, typeJSONPtr:
		var j *chcol.JSON
		if v.Kind() == reflect.Pointer {
			j, _ = v.Interface().(*chcol.JSON)
		} else if v.CanAddr() {
			j, _ = v.Addr().Interface().(*chcol.JSON)
		} else {
			c := reflect.New(typeJSON)
			c.Elem().Set(v)
			j, _ = c.Interface().(*chcol.JSON)
		}
		if j == nil {
			return nil, nil
		}
		return normalize(chType{}, reflect.ValueOf(j.NestedMap()))
	}

	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		// Nullable(T) scans as *T, Nothing and Dynamic parts as any.
		if v.IsNil() {
			return nil, nil
		}
		return normalize(t, v.Elem())
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint(), nil
	case reflect.Float32:
		// Through its shortest text, as the embedded backend reads it:
		// float64(float32(1.1)) would be 1.100000023841858.
		return strconv.ParseFloat(strconv.FormatFloat(v.Float(), 'g', -1, 32), 64)
	case reflect.Float64:
		return v.Float(), nil
	case reflect.String:
		if strings.HasPrefix(t.name, "Interval") {
			// The driver writes "5 Seconds"; ClickHouse's own text, and so
			// the embedded backend, has the number alone.
			n, _, _ := strings.Cut(v.String(), " ")
			return n, nil
		}
		return v.String(), nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 && t.name != "Array" {
			// A String scanned as bytes; Array(UInt8) is a []uint8 too.
			return string(v.Bytes()), nil
		}
		out := make([]any, v.Len())
		for i := range out {
			x, err := normalize(elemType(t, i), v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case reflect.Map:
		if t.name == "Tuple" {
			return namedTuple(t, v)
		}
		var kt, vt chType
		if t.name == "Map" && len(t.args) == 2 {
			kt, vt = t.args[0], t.args[1]
		}
		out := make(map[string]any, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			k, err := normalize(kt, iter.Key())
			if err != nil {
				return nil, err
			}
			x, err := normalize(vt, iter.Value())
			if err != nil {
				return nil, err
			}
			out[mapKey(k)] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value %s for type %s", v.Type(), typeName(t))
}

// baseType strips the wrappers that do not change a value's shape.
func baseType(t chType) chType {
	for {
		switch t.name {
		case "LowCardinality", "Nullable", "SimpleAggregateFunction":
			if len(t.args) == 0 {
				return chType{}
			}
			t = t.args[len(t.args)-1]
		default:
			return t
		}
	}
}

// elemType is the type of element i of an Array or Tuple.
func elemType(t chType, i int) chType {
	switch {
	case t.name == "Tuple" && i < len(t.args):
		return t.args[i]
	case t.name == "Array" && len(t.args) == 1:
		return t.args[0]
	}
	return chType{}
}

// namedTuple orders a named tuple, which the driver returns as a map, by
// its elements' declared order: tuples are []any on both backends.
func namedTuple(t chType, v reflect.Value) (any, error) {
	names := tupleNames(t)
	if len(names) != v.Len() {
		return nil, fmt.Errorf("tuple %s: %d names for %d values", typeName(t), len(names), v.Len())
	}
	out := make([]any, len(names))
	for i, n := range names {
		x := v.MapIndex(reflect.ValueOf(n))
		if !x.IsValid() {
			return nil, fmt.Errorf("tuple %s: no element %q", typeName(t), n)
		}
		y, err := normalize(elemType(t, i), x)
		if err != nil {
			return nil, err
		}
		out[i] = y
	}
	return out, nil
}

// tupleNames reads the element names of Tuple(a UInt8, `b c` String).
func tupleNames(t chType) []string {
	names := make([]string, 0, len(t.raw))
	for _, a := range t.raw {
		if strings.HasPrefix(a, "`") {
			if end := strings.Index(a[1:], "`"); end >= 0 {
				names = append(names, a[1:end+1])
				continue
			}
		}
		sp := strings.IndexByte(a, ' ')
		if sp <= 0 || strings.ContainsAny(a[:sp], "(") {
			return nil
		}
		names = append(names, a[:sp])
	}
	return names
}

// mapKey writes a normalized map key the way ClickHouse's JSON output
// writes it, since the embedded backend's keys come from there.
func mapKey(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return formatFloat(x)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		return x.Format("2006-01-02 15:04:05.999999999")
	case nil:
		return "null"
	}
	return fmt.Sprint(k)
}

// formatTimeOfDay writes a Time or Time64 value as ClickHouse's text form
// [-]hh:mm:ss[.fff], with the Time64 precision's digits.
func formatTimeOfDay(d time.Duration, t chType) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	h, m, sec := int64(d/time.Hour), int64(d/time.Minute)%60, int64(d/time.Second)%60
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, sec)
	if t.name == "Time64" && len(t.raw) > 0 {
		if p, err := strconv.Atoi(t.raw[0]); err == nil && p > 0 && p <= 9 {
			frac := fmt.Sprintf("%09d", int64(d%time.Second))
			s += "." + frac[:p]
		}
	}
	return s
}

// typeName rebuilds a type's text for error messages.
func typeName(t chType) string {
	if t.name == "" {
		return "(unknown)"
	}
	if len(t.raw) == 0 {
		return t.name
	}
	return t.name + "(" + strings.Join(t.raw, ", ") + ")"
}
