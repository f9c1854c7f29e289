package olap

import (
	"context"
	"sync/atomic"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/insightd/insightd/olap/metrics"
)

// readProgress adds up the progress packets the server sends while a
// statement runs: the rows and bytes it read from storage so far.
type readProgress struct {
	m           *metrics.Metrics
	rows, bytes atomic.Uint64
}

// watchProgress asks the driver for the statement's progress when ctx
// carries metrics; without them it returns ctx and a nil watcher.
func watchProgress(ctx context.Context) (context.Context, *readProgress) {
	m := metrics.FromContext(ctx)
	if m == nil {
		return ctx, nil
	}
	p := &readProgress{m: m}
	return clickhouse.Context(ctx, clickhouse.WithProgress(func(pr *clickhouse.Progress) {
		p.rows.Add(pr.Rows)
		p.bytes.Add(pr.Bytes)
	})), p
}

// observe records what the statement read; nil-safe.
func (p *readProgress) observe() {
	if p != nil {
		p.m.ObserveStatement(p.rows.Load(), p.bytes.Load())
	}
}
