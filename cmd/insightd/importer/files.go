package importer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
)

// copyFiles sends the events of PostHog batch export files (S3 and the
// like): JSON lines, gzip-compressed or not, or Parquet, told apart by
// their first bytes. Each row is an event with PostHog's export columns
// (uuid, event, distinct_id, timestamp, properties, and set and set_once
// beside the properties); a checkpoint keeps the rows of each file sent.
func (im *Importer) copyFiles(ctx context.Context) error {
	for _, path := range im.cfg.Files {
		if err := im.copyFile(ctx, path); err != nil {
			return err
		}
	}
	return nil
}

func (im *Importer) copyFile(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	done := im.state.fileDone(path)
	var rows func(yield func(row map[string]any, where string) error) error
	switch {
	case n == 4 && string(head) == "PAR1":
		st, err := f.Stat()
		if err != nil {
			return err
		}
		rows = func(yield func(map[string]any, string) error) error { return parquetRows(f, st.Size(), path, yield) }
	case n >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		rows = func(yield func(map[string]any, string) error) error { return jsonRows(zr, path, yield) }
	default:
		rows = func(yield func(map[string]any, string) error) error { return jsonRows(f, path, yield) }
	}
	var batch []Event
	var seen int64
	flush := func() error {
		if len(batch) == 0 || im.cfg.DryRun {
			batch = batch[:0]
			return nil
		}
		if err := im.capture(ctx, batch); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		im.report.Events.Copied += int64(len(batch))
		im.state.setFileDone(path, seen)
		batch = batch[:0]
		if err := im.state.Save(); err != nil {
			return err
		}
		im.progress("events", seen, 0)
		return nil
	}
	err = rows(func(row map[string]any, where string) error {
		seen++
		im.report.Events.Total++
		if seen <= done {
			return nil
		}
		e, err := exportEvent(row)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		batch = append(batch, e)
		if len(batch) >= im.cfg.PageSize {
			return flush()
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	return flush()
}

// jsonRows reads JSON lines; blank lines are skipped.
func jsonRows(r io.Reader, path string, yield func(map[string]any, string) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			var row map[string]any
			where := fmt.Sprintf("%s line %d", path, line)
			if derr := d.Decode(&row); derr != nil || row == nil {
				return fmt.Errorf("%s is not a JSON object: %v", where, derr)
			}
			if yerr := yield(row, where); yerr != nil {
				return yerr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s line %d: %w", path, line, err)
		}
	}
}

// parquetRows reads a Parquet file's rows as maps of its columns.
func parquetRows(f io.ReaderAt, size int64, path string, yield func(map[string]any, string) error) error {
	pf, err := parquet.OpenFile(f, size)
	if err != nil {
		return fmt.Errorf("%s: not a Parquet file PostHog's batch export writes: %w", path, err)
	}
	r := parquet.NewGenericReader[any](pf)
	defer r.Close()
	buf := make([]any, 512)
	row := 0
	for {
		n, err := r.Read(buf)
		for i := 0; i < n; i++ {
			row++
			m, ok := buf[i].(map[string]any)
			if !ok {
				return fmt.Errorf("%s row %d: not a record of columns (%T)", path, row, buf[i])
			}
			if yerr := yield(m, fmt.Sprintf("%s row %d", path, row)); yerr != nil {
				return yerr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s row %d: %w", path, row+1, err)
		}
	}
}

// exportEvent is a batch export row as capture takes it.
func exportEvent(row map[string]any) (Event, error) {
	var e Event
	str := func(key string) string {
		switch v := row[key].(type) {
		case string:
			return v
		case []byte:
			if key == "uuid" && len(v) == 16 {
				id, _ := uuid.FromBytes(v)
				return id.String()
			}
			return string(v)
		case [16]byte:
			return uuid.UUID(v).String()
		case json.Number:
			return v.String()
		case nil:
			return ""
		default:
			return fmt.Sprint(v)
		}
	}
	e.UUID, e.Event, e.DistinctID = str("uuid"), str("event"), str("distinct_id")
	if _, err := uuid.Parse(e.UUID); err != nil {
		return e, fmt.Errorf("uuid %q is not a UUID: every exported event has one, and the target's dedup needs it", e.UUID)
	}
	if e.Event == "" || e.DistinctID == "" {
		return e, fmt.Errorf("event %s has no event name or no distinct_id", e.UUID)
	}
	ts, err := exportTime(row["timestamp"])
	if err != nil {
		return e, fmt.Errorf("event %s: %w", e.UUID, err)
	}
	e.Timestamp = ts.Format(time.RFC3339Nano)
	props, err := objectOf(row["properties"])
	if err != nil {
		return e, fmt.Errorf("event %s: properties: %w", e.UUID, err)
	}
	// PostHog's export keeps $set and $set_once beside the properties.
	for col, key := range map[string]string{"set": "$set", "set_once": "$set_once"} {
		if _, has := props[key]; has || row[col] == nil {
			continue
		}
		v, err := objectOf(row[col])
		if err != nil {
			return e, fmt.Errorf("event %s: %s: %w", e.UUID, col, err)
		}
		if len(v) > 0 {
			props[key] = v
		}
	}
	b, err := json.Marshal(props)
	if err != nil {
		return e, err
	}
	e.Properties = b
	return e, nil
}

// objectOf reads a JSON object given as a string (as exports write
// properties) or as an object already; nil and "" are empty.
func objectOf(v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return x, nil
	case string, []byte:
		s := strings.TrimSpace(fmt.Sprintf("%s", x))
		if s == "" || s == "null" {
			return map[string]any{}, nil
		}
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			return nil, fmt.Errorf("not a JSON object: %.80s", s)
		}
		if m == nil {
			m = map[string]any{}
		}
		return m, nil
	}
	return nil, fmt.Errorf("a %T, not a JSON object", v)
}

// exportTime reads a timestamp column: an ISO 8601 string, a Parquet
// timestamp, or microseconds since the epoch.
func exportTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), nil
	case string:
		return parseTime(x)
	case int64:
		return time.UnixMicro(x).UTC(), nil
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return time.UnixMicro(n).UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %v is not a time", v)
}
