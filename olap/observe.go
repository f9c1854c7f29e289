package olap

import (
	"context"
	"time"
)

// StatementObserver records what one engine statement read from storage.
// The server's metrics are one (api/metrics); the engine knows only this.
type StatementObserver interface {
	ObserveStatement(rows, bytes uint64)
}

type observerKey struct{}

// WithStatementObserver carries o to the engine calls made under ctx: the
// engine is shared (tests, benchmarks serve several servers on one), so
// what its statements read is counted by the server whose request ran
// them. A nil o leaves ctx as it is.
func WithStatementObserver(ctx context.Context, o StatementObserver) context.Context {
	if o == nil {
		return ctx
	}
	return context.WithValue(ctx, observerKey{}, o)
}

// statementObserver is the observer WithStatementObserver put in ctx, or
// nil: then nothing is observed, and the server backend does not ask the
// driver for progress.
func statementObserver(ctx context.Context) StatementObserver {
	o, _ := ctx.Value(observerKey{}).(StatementObserver)
	return o
}

// observeStatement hands what a statement read to ctx's observer, if any.
func observeStatement(ctx context.Context, rows, bytes uint64) {
	if o := statementObserver(ctx); o != nil {
		o.ObserveStatement(rows, bytes)
	}
}

// WriterObserver is what the event writer reports (WriterConfig.Metrics).
type WriterObserver interface {
	// ObserveFlush records one flush: the events it stored and its time.
	ObserveFlush(events int, d time.Duration)
	// WatchWriterQueue makes fn the source of the writer's queue depth
	// (events handed to it and not yet stored), read when reported.
	WatchWriterQueue(fn func() int64)
}
