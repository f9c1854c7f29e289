package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Event is one event as capture takes it: its own uuid and timestamp, so
// the target's dedup makes sending it twice count it once.
type Event struct {
	UUID       string          `json:"uuid"`
	Event      string          `json:"event"`
	DistinctID string          `json:"distinct_id"`
	Timestamp  string          `json:"timestamp"`
	Properties json.RawMessage `json:"properties"`
}

// chTime is the form a timestamp is bound in: ClickHouse reads it into
// DateTime64(6) when compared with the column.
const chTime = "2006-01-02 15:04:05.999999"

// eventColumns are read in this order.
const eventColumns = "uuid, event, timestamp, distinct_id, properties"

// eventRange is the query's condition for --since and --until.
func (im *Importer) eventRange(values map[string]any) string {
	var conds []string
	if !im.cfg.Since.IsZero() {
		values["since"] = im.cfg.Since.UTC().Format(chTime)
		conds = append(conds, "timestamp >= {since}")
	}
	if !im.cfg.Until.IsZero() {
		values["until"] = im.cfg.Until.UTC().Format(chTime)
		conds = append(conds, "timestamp < {until}")
	}
	if len(conds) == 0 {
		return "1 = 1"
	}
	return strings.Join(conds, " AND ")
}

// eventSpan is the first and last timestamps and the count of the
// events to copy.
func (im *Importer) eventSpan(ctx context.Context) (first, last time.Time, n int64, err error) {
	values := map[string]any{}
	rows, err := im.src.HogQL(ctx, "SELECT min(timestamp), max(timestamp), count() FROM events WHERE "+im.eventRange(values), values)
	if err != nil {
		return first, last, 0, fmt.Errorf("counting the source's events: %w", err)
	}
	if len(rows) != 1 || len(rows[0]) != 3 {
		return first, last, 0, fmt.Errorf("counting the source's events: the answer has %d rows, want 1 of 3 columns", len(rows))
	}
	if n, err = jsonInt(rows[0][2]); err != nil || n == 0 {
		return first, last, n, err
	}
	if first, err = jsonTime(rows[0][0]); err != nil {
		return first, last, n, err
	}
	last, err = jsonTime(rows[0][1])
	return first, last, n, err
}

// eventPage is one page read from the source.
type eventPage struct {
	events []Event
	cursor Cursor
	err    error
}

// readEvents reads the source's events in (timestamp, uuid) order after
// the cursor, a window of time at a time so that each query reads only
// the days it answers (the events table is ordered by day), sending
// pages to out until the span is done.
func (im *Importer) readEvents(ctx context.Context, from Cursor, first, last time.Time, total int64, out chan<- eventPage) {
	defer close(out)
	fail := func(err error) {
		select {
		case out <- eventPage{err: err}:
		case <-ctx.Done():
		}
	}
	size := im.cfg.PageSize
	lo := first
	if from.Timestamp != "" {
		t, err := time.Parse(chTime, from.Timestamp)
		if err != nil {
			fail(fmt.Errorf("checkpoint cursor %q: %w", from.Timestamp, err))
			return
		}
		lo = t
	}
	afterID := from.UUID
	end := last.Add(time.Microsecond)
	// The first window holds about a page, if the events are spread evenly.
	window := time.Duration(float64(end.Sub(first)) * float64(size) / float64(max(total, 1)))
	window = max(window, time.Second)
	done := from.Done
	for lo.Before(end) {
		hi := lo.Add(window)
		if hi.After(end) || hi.Before(lo) {
			hi = end
		}
		values := map[string]any{"lo": lo.UTC().Format(chTime), "hi": hi.UTC().Format(chTime), "after": afterID}
		q := "SELECT " + eventColumns + " FROM events WHERE " + im.eventRange(values) +
			" AND timestamp >= {lo} AND timestamp < {hi} AND (timestamp > {lo} OR toString(uuid) > {after})" +
			" ORDER BY timestamp, toString(uuid) LIMIT " + strconv.Itoa(size)
		rows, err := im.src.HogQL(ctx, q, values)
		if err != nil {
			fail(fmt.Errorf("reading the source's events from %s: %w", values["lo"], err))
			return
		}
		evs := make([]Event, 0, len(rows))
		var lastTS time.Time
		for i, r := range rows {
			e, ts, err := eventFromRow(r)
			if err != nil {
				fail(fmt.Errorf("the source's event %d after %s: %w", i, values["lo"], err))
				return
			}
			evs = append(evs, e)
			lastTS = ts
		}
		done += int64(len(evs))
		var cur Cursor
		if len(rows) == size {
			// More may share this window: continue after the last row.
			lo, afterID = lastTS, evs[len(evs)-1].UUID
			cur = Cursor{Timestamp: lo.UTC().Format(chTime), UUID: afterID, Done: done}
		} else {
			lo, afterID = hi, ""
			cur = Cursor{Timestamp: lo.UTC().Format(chTime), Done: done}
			if len(rows) < size/2 {
				window *= 2
			}
		}
		if len(evs) == 0 && lo.Before(end) {
			continue
		}
		select {
		case out <- eventPage{events: evs, cursor: cur}:
		case <-ctx.Done():
			return
		}
	}
}

// eventFromRow reads one row of eventColumns.
func eventFromRow(r []json.RawMessage) (Event, time.Time, error) {
	if len(r) != 5 {
		return Event{}, time.Time{}, fmt.Errorf("has %d columns, want 5", len(r))
	}
	var e Event
	if err := json.Unmarshal(r[0], &e.UUID); err != nil {
		return e, time.Time{}, fmt.Errorf("uuid %s: %w", r[0], err)
	}
	if err := json.Unmarshal(r[1], &e.Event); err != nil {
		return e, time.Time{}, fmt.Errorf("event %s (uuid %s): %w", r[1], e.UUID, err)
	}
	ts, err := jsonTime(r[2])
	if err != nil {
		return e, ts, fmt.Errorf("uuid %s: %w", e.UUID, err)
	}
	e.Timestamp = ts.UTC().Format(time.RFC3339Nano)
	if err := json.Unmarshal(r[3], &e.DistinctID); err != nil {
		var n json.Number
		if json.Unmarshal(r[3], &n) != nil {
			return e, ts, fmt.Errorf("distinct_id %s (uuid %s): %w", r[3], e.UUID, err)
		}
		e.DistinctID = n.String()
	}
	e.Properties, err = propertiesValue(r[4])
	if err != nil {
		return e, ts, fmt.Errorf("properties of uuid %s: %w", e.UUID, err)
	}
	return e, ts, nil
}

// propertiesValue reads properties given as a JSON string (as HogQL
// answers the column) or an object.
func propertiesValue(raw json.RawMessage) (json.RawMessage, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return json.RawMessage("{}"), nil
		}
		raw = json.RawMessage(s)
	}
	if string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, fmt.Errorf("not a JSON object: %.100s", raw)
	}
	return raw, nil
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"}

// jsonTime reads a timestamp in any of the forms the APIs answer.
func jsonTime(raw json.RawMessage) (time.Time, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, fmt.Errorf("timestamp %s is not a string", raw)
	}
	return parseTime(s)
}

func parseTime(s string) (time.Time, error) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q is not an ISO 8601 time", s)
}

func jsonInt(raw json.RawMessage) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, fmt.Errorf("%s is not a number", raw)
		}
		n = json.Number(s)
	}
	return n.Int64()
}

// copyEvents reads the source's events after the checkpoint's cursor and
// sends them to the target's capture, a page at a time, reading the next
// page while the last is sent; the cursor is saved after each page the
// target acknowledged.
func (im *Importer) copyEvents(ctx context.Context) error {
	first, last, total, err := im.eventSpan(ctx)
	if err != nil {
		return err
	}
	im.report.Events.Total = total
	if im.cfg.DryRun || total == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan eventPage, 2)
	go im.readEvents(ctx, im.state.Events, first, last, total, pages)
	im.progress("events", im.state.Events.Done, total)
	// Pages are sent by up to Senders requests at once (the target's
	// capture commits requests in groups), and acknowledged in order: the
	// cursor saved is always one below which every event was taken.
	type inflight struct {
		p    eventPage
		done chan error
	}
	queue := make(chan *inflight, max(im.cfg.Senders, 1)-1)
	go func() {
		defer close(queue)
		for p := range pages {
			f := &inflight{p: p, done: make(chan error, 1)}
			if p.err == nil {
				go func() { f.done <- im.capture(ctx, f.p.events) }()
			} else {
				f.done <- p.err
			}
			select {
			case queue <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	for f := range queue {
		if err := <-f.done; err != nil {
			return err
		}
		im.state.Events = f.p.cursor
		im.report.Events.Copied += int64(len(f.p.events))
		if err := im.state.Save(); err != nil {
			return err
		}
		im.progress("events", f.p.cursor.Done, total)
	}
	return ctx.Err()
}

// capture sends events to the target's /batch/ in bodies of at most
// maxBatch events and about maxBatchBytes.
func (im *Importer) capture(ctx context.Context, events []Event) error {
	const maxBatch, maxBatchBytes = 2500, 8 << 20
	for len(events) > 0 {
		n, size := 0, 0
		for n < len(events) && n < maxBatch && (n == 0 || size < maxBatchBytes) {
			size += len(events[n].Properties) + len(events[n].Event) + len(events[n].DistinctID) + 120
			n++
		}
		body := map[string]any{"api_key": im.token, "batch": events[:n]}
		if err := im.dst.Post(ctx, "/batch/", body, nil, true); err != nil {
			return fmt.Errorf("the target refused events %s (%s at %s) to %s: %w",
				events[0].UUID, events[0].Event, events[0].Timestamp, events[n-1].UUID, err)
		}
		events = events[n:]
	}
	return nil
}
