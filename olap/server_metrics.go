package olap

import (
	"context"
	"sync/atomic"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// readProgress adds up the progress packets the server sends while a
// statement runs: the rows and bytes it read from storage so far.
type readProgress struct {
	o           StatementObserver
	rows, bytes atomic.Uint64
}

// watchProgress asks the driver for the statement's progress when ctx
// carries a StatementObserver; without one it returns ctx and a nil
// watcher.
func watchProgress(ctx context.Context) (context.Context, *readProgress) {
	o := statementObserver(ctx)
	if o == nil {
		return ctx, nil
	}
	p := &readProgress{o: o}
	return clickhouse.Context(ctx, clickhouse.WithProgress(func(pr *clickhouse.Progress) {
		p.rows.Add(pr.Rows)
		p.bytes.Add(pr.Bytes)
	})), p
}

// observe records what the statement read; nil-safe.
func (p *readProgress) observe() {
	if p != nil {
		p.o.ObserveStatement(p.rows.Load(), p.bytes.Load())
	}
}
