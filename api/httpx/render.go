package httpx

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
)

// CheckFormat accepts the format query parameter every insight endpoint
// takes (json, the default, or csv) before the handler does any work.
func CheckFormat(c *gin.Context) {
	switch c.Query("format") {
	case "", "json", "csv":
		c.Next()
	default:
		WriteError(c, Invalid("format", "format must be json or csv."))
	}
}

func WantsCSV(c *gin.Context) bool { return c.Query("format") == "csv" }

// Render writes v as JSON, or with format=csv as a table: a list as one
// row per element, anything else as one row.
func Render(c *gin.Context, status int, v any) {
	if !WantsCSV(c) {
		c.JSON(status, v)
		return
	}
	header, rows, err := recordsTable(v)
	if err != nil {
		WriteError(c, err)
		return
	}
	WriteCSV(c, status, header, rows)
}

// RenderPage writes a list envelope, or with format=csv the page's rows.
func RenderPage(c *gin.Context, total, limit, offset int, results any) {
	if WantsCSV(c) {
		Render(c, http.StatusOK, results)
		return
	}
	Paginated(c, total, limit, offset, results)
}

func WriteCSV(c *gin.Context, status int, header []string, rows [][]string) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if len(header) > 0 {
		_ = w.Write(header) // writes to a buffer cannot fail
	}
	_ = w.WriteAll(rows)
	c.Data(status, "text/csv; charset=utf-8", buf.Bytes())
}

// opaqueFields hold documents whose shape varies from record to record
// (filters, queries, results): flattening them would give every record
// its own columns, so each is one cell of JSON text.
var opaqueFields = map[string]bool{"filters": true, "query": true, "result": true, "columns": true, "hedgehog_config": true}

// recordsTable flattens v (a record or a list of them) into a header and
// rows. Nested objects become dotted columns (created_by.email), lists and
// opaque documents JSON text, null an empty cell. Columns come in the
// order the records first name them.
func recordsTable(v any) ([]string, [][]string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, err
	}
	var records []json.RawMessage
	if b := bytes.TrimSpace(buf.Bytes()); len(b) > 0 && b[0] == '[' {
		if err := json.Unmarshal(b, &records); err != nil {
			return nil, nil, err
		}
	} else {
		records = []json.RawMessage{b}
	}
	var header []string
	index := map[string]int{}
	cells := make([]map[string]string, len(records))
	for k, rec := range records {
		cells[k] = map[string]string{}
		err := flatten("", rec, func(col, val string) {
			if _, ok := index[col]; !ok {
				index[col] = len(header)
				header = append(header, col)
			}
			cells[k][col] = val
		})
		if err != nil {
			return nil, nil, err
		}
	}
	rows := make([][]string, len(records))
	for k := range records {
		rows[k] = make([]string, len(header))
		for col, val := range cells[k] {
			rows[k][index[col]] = val
		}
	}
	return header, rows, nil
}

// flatten calls set for every leaf of the JSON value raw under the
// column name prefix, keeping the order of object keys.
func flatten(prefix string, raw json.RawMessage, set func(col, val string)) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' && !opaqueFields[lastSegment(prefix)] {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil { // the opening brace
			return err
		}
		n := 0
		for ; dec.More(); n++ {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			var val json.RawMessage
			if err := dec.Decode(&val); err != nil {
				return err
			}
			col := key.(string)
			if prefix != "" {
				col = prefix + "." + col
			}
			if err := flatten(col, val, set); err != nil {
				return err
			}
		}
		if n > 0 {
			return nil
		}
	}
	if prefix == "" {
		prefix = "value" // a list of scalars: one column
	}
	set(prefix, jsonCell(raw))
	return nil
}

func lastSegment(col string) string {
	for k := len(col) - 1; k >= 0; k-- {
		if col[k] == '.' {
			return col[k+1:]
		}
	}
	return col
}

// jsonCell is one JSON value as a cell: strings as they are, null empty,
// numbers, booleans, lists and objects as their JSON text.
func jsonCell(raw json.RawMessage) string {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return ""
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}
