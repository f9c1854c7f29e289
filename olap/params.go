package olap

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ClickHouse parses a bound parameter's value as the "escaped" text form of
// the placeholder's type (the TSV form): a tab, newline or backslash in a
// String must be escaped or the value is refused or changed, and \N means
// NULL. Both backends take values in this form (clickhouse-go quotes them
// once more for the wire, and the server undoes that first), so one
// encoder serves both.

var escaper = strings.NewReplacer(
	`\`, `\\`,
	"\t", `\t`,
	"\n", `\n`,
	"\r", `\r`,
	"\x00", `\0`,
)

// Inside an array or tuple literal, strings are quoted.
var quoter = strings.NewReplacer(
	`\`, `\\`,
	`'`, `\'`,
	"\t", `\t`,
	"\n", `\n`,
	"\r", `\r`,
	"\x00", `\0`,
)

// TimeLayout is how time parameters are written; declare them in SQL as
// DateTime64(6, 'UTC') so the engine's own timezone never applies.
const TimeLayout = "2006-01-02 15:04:05.000000"

// EncodeParams encodes every parameter value; an unsupported Go type is an
// error, never a best-effort string.
func EncodeParams(params map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(params))
	for k, v := range params {
		s, err := EncodeParam(v)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}

// EncodeParam encodes one value in ClickHouse's escaped text form.
func EncodeParam(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return `\N`, nil
	case string:
		return escaper.Replace(x), nil
	default:
		return literal(v, false)
	}
}

// literal writes v as it appears at top level (quoted=false) or inside a
// composite literal (quoted=true, strings in single quotes).
func literal(v any, quoted bool) (string, error) {
	switch x := v.(type) {
	case nil:
		if quoted {
			return "NULL", nil
		}
		return `\N`, nil
	case string:
		if quoted {
			return "'" + quoter.Replace(x) + "'", nil
		}
		return escaper.Replace(x), nil
	case uuid.UUID:
		return literal(x.String(), quoted)
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case int:
		return strconv.FormatInt(int64(x), 10), nil
	case int8:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float32:
		return formatFloat(float64(x)), nil
	case float64:
		return formatFloat(x), nil
	case time.Time:
		s := x.UTC().Format(TimeLayout)
		if quoted {
			return "'" + s + "'", nil
		}
		return s, nil
	case []string:
		return list(len(x), func(i int) (string, error) { return literal(x[i], true) })
	case []int64:
		return list(len(x), func(i int) (string, error) { return literal(x[i], true) })
	case []int:
		return list(len(x), func(i int) (string, error) { return literal(x[i], true) })
	case []uint64:
		return list(len(x), func(i int) (string, error) { return literal(x[i], true) })
	case []float64:
		return list(len(x), func(i int) (string, error) { return literal(x[i], true) })
	case []uuid.UUID:
		return list(len(x), func(i int) (string, error) { return literal(x[i], true) })
	case []time.Time:
		return list(len(x), func(i int) (string, error) { return literal(x[i], true) })
	case []any:
		return list(len(x), func(i int) (string, error) { return literal(x[i], true) })
	default:
		return "", fmt.Errorf("unsupported parameter type %T", v)
	}
}

func list(n int, elem func(int) (string, error)) (string, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		s, err := elem(i)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	b.WriteByte(']')
	return b.String(), nil
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
