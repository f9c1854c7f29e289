package olap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/insightd/insightd/olap/chdb"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// Streaming: a statement whose rows are handed over one at a time as the
// engine produces them, for results too large to hold (a CSV export of
// every person behind a number). Rows have the types Rows promises.

// Stream implements Engine: chDB's streaming query, which hands its
// output over a block at a time (about 65 000 rows), each chunk a whole
// output of the format: its names and types lines, then whole rows.
func (e *Embedded) Stream(ctx context.Context, stmt chsql.Statement, columns func([]Column) error, each func(row []any) error) error {
	params, err := EncodeParams(stmt.Params)
	if err != nil {
		return err
	}
	return e.run(ctx, func(c *chdb.Conn, tag string) error {
		d := &chunkDecoder{columns: columns, each: each}
		return c.Stream(tag+stmt.SQL, "JSONCompactEachRowWithNamesAndTypes", params, func(chunk []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return d.chunk(chunk)
		})
	})
}

// chunkDecoder decodes the chunks of a JSONCompactEachRowWithNamesAndTypes
// stream, handing the columns over once and then every row.
type chunkDecoder struct {
	columns func([]Column) error
	each    func(row []any) error
	names   []string
	types   []chType
	rows    int
	// text: every column is a String, each row's values are read
	// without the generic decoder (an export's cells).
	text bool
}

func (d *chunkDecoder) chunk(b []byte) error {
	// Every chunk starts with the names and types lines.
	for line := 0; line < 2; line++ {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return errors.New("decode: a chunk without its header")
		}
		if d.types == nil {
			if err := d.header(line, b[:i]); err != nil {
				return err
			}
		}
		b = b[i+1:]
	}
	if d.text {
		return d.textRows(b)
	}
	// The rows: one decoder over the chunk's lines, each a JSON array.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	for dec.More() {
		d.rows++
		var raw []any
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("decode row %d: %w", d.rows, err)
		}
		if len(raw) != len(d.types) {
			return fmt.Errorf("decode row %d: %d values for %d columns", d.rows, len(raw), len(d.types))
		}
		for i, v := range raw {
			x, err := fromJSON(d.types[i], v)
			if err != nil {
				return fmt.Errorf("column %s: %w", d.names[i], err)
			}
			raw[i] = x
		}
		if err := d.each(raw); err != nil {
			return err
		}
	}
	return nil
}

// header reads the names (line 0) and types (line 1) of the first chunk.
func (d *chunkDecoder) header(line int, text []byte) error {
	if line == 0 {
		if err := json.Unmarshal(text, &d.names); err != nil {
			return fmt.Errorf("decode column names: %w", err)
		}
		return nil
	}
	var types []string
	if err := json.Unmarshal(text, &types); err != nil {
		return fmt.Errorf("decode column types: %w", err)
	}
	if len(types) != len(d.names) {
		return fmt.Errorf("decode: %d names, %d types", len(d.names), len(types))
	}
	cols := make([]Column, len(types))
	d.types = make([]chType, len(types))
	d.text = true
	for i, t := range types {
		d.types[i] = parseType(t)
		cols[i] = Column{Name: d.names[i], Type: t}
		d.text = d.text && t == "String"
	}
	return d.columns(cols)
}

// textRows reads rows of JSON strings, one ["...", ...] per line: a
// string without escapes is copied as it is, one with them unquoted by
// the JSON decoder: far faster than the generic decoder on an export's
// rows (benchmarks/results/persons.md).
func (d *chunkDecoder) textRows(b []byte) error {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b)
		}
		line := bytes.TrimSpace(b[:i])
		b = b[min(i+1, len(b)):]
		if len(line) == 0 {
			continue
		}
		d.rows++
		row, err := stringRow(line, len(d.types))
		if err != nil {
			return fmt.Errorf("decode row %d: %w", d.rows, err)
		}
		if err := d.each(row); err != nil {
			return err
		}
	}
	return nil
}

// stringRow reads a JSON array of n strings.
func stringRow(line []byte, n int) ([]any, error) {
	if len(line) < 2 || line[0] != '[' || line[len(line)-1] != ']' {
		return nil, errors.New("not a JSON array")
	}
	row := make([]any, 0, n)
	rest := line[1 : len(line)-1]
	for rest = bytes.TrimLeft(rest, " "); len(rest) > 0; rest = bytes.TrimLeft(rest, " ") {
		if rest[0] != '"' {
			return nil, errors.New("not a string")
		}
		end, escaped := 1, false
		for ; end < len(rest) && rest[end] != '"'; end++ {
			if rest[end] == '\\' {
				escaped = true
				end++
			}
		}
		if end >= len(rest) {
			return nil, errors.New("an unterminated string")
		}
		token := rest[:end+1]
		if escaped {
			var v string
			if err := json.Unmarshal(token, &v); err != nil {
				return nil, err
			}
			row = append(row, v)
		} else {
			row = append(row, string(token[1:end]))
		}
		rest = bytes.TrimLeft(rest[end+1:], " ")
		if len(rest) > 0 {
			if rest[0] != ',' {
				return nil, errors.New("a value without its comma")
			}
			rest = rest[1:]
		}
	}
	if len(row) != n {
		return nil, fmt.Errorf("%d values for %d columns", len(row), n)
	}
	return row, nil
}

// Stream implements Engine: the driver's rows, read one at a time.
func (s *Server) Stream(ctx context.Context, stmt chsql.Statement, columns func([]Column) error, each func(row []any) error) error {
	params, err := EncodeParams(stmt.Params)
	if err != nil {
		return err
	}
	return s.run(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		qctx, read := watchProgress(queryContext(ctx, params))
		rows, err := s.conn.Query(qctx, stmt.SQL)
		if err != nil {
			return ctxError(ctx, err)
		}
		if err := eachRow(rows, columns, each); err != nil {
			// Classify first, then stop the server's stream (as Query does).
			err = ctxError(ctx, err)
			cancel()
			_ = rows.Close()
			return err
		}
		if err := rows.Close(); err != nil {
			return ctxError(ctx, err)
		}
		read.observe()
		return nil
	})
}

// eachRow hands the columns of a driver's result to columns, then each
// of its rows to each, normalized as readRows does.
func eachRow(rows driver.Rows, columns func([]Column) error, each func(row []any) error) error {
	cts := rows.ColumnTypes()
	types := make([]chType, len(cts))
	scan := make([]reflect.Type, len(cts))
	cols := make([]Column, len(cts))
	for i, ct := range cts {
		cols[i] = Column{Name: ct.Name(), Type: ct.DatabaseTypeName()}
		types[i] = parseType(ct.DatabaseTypeName())
		scan[i] = ct.ScanType()
		if scan[i] == nil {
			return fmt.Errorf("column %s: type %s cannot be read", ct.Name(), ct.DatabaseTypeName())
		}
	}
	if err := columns(cols); err != nil {
		return err
	}
	for rows.Next() {
		dest := make([]any, len(scan))
		for i, t := range scan {
			dest[i] = reflect.New(t).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		row := make([]any, len(dest))
		for i, d := range dest {
			v, err := normalize(types[i], reflect.ValueOf(d).Elem())
			if err != nil {
				return fmt.Errorf("column %s: %w", cts[i].Name(), err)
			}
			row[i] = v
		}
		if err := each(row); err != nil {
			return err
		}
	}
	return rows.Err()
}

// StreamCSV runs a statement whose columns are all text and writes its
// rows to w as CSV with a header, as the engine formats them (every cell
// quoted, quotes doubled: RFC 4180): an export copies the engine's bytes
// instead of decoding rows and encoding them again. chDB repeats the
// header in every chunk; it is written once. It answers whether anything
// was written (an empty result may come without its header).
func (e *Embedded) StreamCSV(ctx context.Context, stmt chsql.Statement, w io.Writer) (bool, error) {
	params, err := EncodeParams(stmt.Params)
	if err != nil {
		return false, err
	}
	wrote := false
	err = e.run(ctx, func(c *chdb.Conn, tag string) error {
		return c.Stream(tag+stmt.SQL, "CSVWithNames", params, func(chunk []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if wrote {
				// Later chunks: their header line is the first one's.
				i := bytes.IndexByte(chunk, '\n')
				if i < 0 {
					return nil
				}
				chunk = chunk[i+1:]
			}
			if len(chunk) == 0 {
				return nil
			}
			wrote = true
			_, err := w.Write(chunk)
			return err
		})
	})
	return wrote, err
}
