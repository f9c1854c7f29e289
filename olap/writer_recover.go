package olap

import (
	"context"
	"fmt"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// Exactly once across crashes. A batch's events are inserted, then their
// uuids recorded in event_uuids (see write): a process killed between the
// two leaves events whose resend the retry check would not recognize. The
// writer closes that window before it prepares a batch:
//
//   - When it starts, it records the uuids of every event stored in the
//     last recoveryWindow before the newest event (created_at in the
//     future, as a synthetic data set may have, is not ingestion's and is
//     left out), created_at being the
//     batch's preparation time, and no batch outlives its deadline of
//     Timeout from then), so whatever instant the previous process died
//     at, the events it stored are known before any resend is checked.
//   - When recording a batch's uuids fails at run time, the next batch
//     first records the uuids of every event since that batch.
//
// Recording a uuid twice is harmless (event_uuids replaces by key). The
// skip index on created_at keeps the scans to the recent parts, and
// ingest_checkpoint remembers the newest event recovered, so a restart
// with nothing new reads nothing.

// recoverySlack covers an insert that commits just after its context's
// deadline and clock steps between batches.
const recoverySlack = 30 * time.Second

// recoveryWindow is how far before the newest event a starting writer
// looks.
func (w *Writer) recoveryWindow() time.Duration { return w.cfg.Timeout + recoverySlack }

// recoverAtStart records the uuids of the events the previous process may
// have stored without recording them.
func (w *Writer) recoverAtStart(ctx context.Context) error {
	rows, err := w.engine.Query(ctx, chsql.Statement{SQL: `SELECT
    (SELECT max(recovered_to) FROM ` + w.schema.IngestCheckpoint + `) AS checkpoint,
    (SELECT max(created_at) FROM ` + w.schema.Events + `
     WHERE created_at > checkpoint AND created_at <= now64(6, 'UTC') + INTERVAL 1 MINUTE) AS newest`})
	if err != nil {
		return fmt.Errorf("find the events to recover: %w", err)
	}
	checkpoint, err1 := asTime(rows.Data[0][0])
	newest, err2 := asTime(rows.Data[0][1])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("find the events to recover: %v %v", err1, err2)
	}
	if !newest.After(checkpoint) {
		return nil // no event since the last recovery
	}
	from := newest.Add(-w.recoveryWindow())
	if err := w.recordSince(ctx, from); err != nil {
		return err
	}
	return w.engine.Exec(ctx, chsql.Statement{
		SQL:    `INSERT INTO ` + w.schema.IngestCheckpoint + ` (recovered_to) VALUES ({t:DateTime64(6, 'UTC')})`,
		Params: map[string]any{"t": newest},
	})
}

// recordSince records the uuids of every event created since from.
func (w *Writer) recordSince(ctx context.Context, from time.Time) error {
	start := time.Now()
	err := w.engine.Exec(ctx, chsql.Statement{
		SQL: `INSERT INTO ` + w.schema.EventUUIDs + ` (team_id, uuid)
SELECT team_id, uuid FROM ` + w.schema.Events + ` WHERE created_at >= {from:DateTime64(6, 'UTC')}`,
		Params: map[string]any{"from": from},
	})
	if err != nil {
		return fmt.Errorf("record the uuids of events since %s: %w", from.Format(time.RFC3339Nano), err)
	}
	w.log.Info("recorded the uuids of recent events for the retry check", "since", from, "took", time.Since(start))
	return nil
}

// recoverBeforePrepare runs the recovery the writer owes, if any: at
// start, or after a batch whose uuids were not recorded (recoverFrom).
// It runs in loop, before a batch is prepared.
func (w *Writer) recoverBeforePrepare() error {
	if w.started && w.recoverFrom.IsZero() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout)
	defer cancel()
	if !w.started {
		if err := w.recoverAtStart(ctx); err != nil {
			return err
		}
		w.started = true
	}
	if !w.recoverFrom.IsZero() {
		if err := w.recordSince(ctx, w.recoverFrom.Add(-recoverySlack)); err != nil {
			return err
		}
		w.recoverFrom = time.Time{}
	}
	return nil
}

// asTime reads a DateTime64 cell (both engines decode them as times).
func asTime(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("not a time: %#v", v)
}
