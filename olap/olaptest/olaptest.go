// Package olaptest opens the embedded ClickHouse for a package's tests.
// chDB keeps one data directory per process, so every test of a package
// shares one engine in a temporary directory, migrated, and tests keep
// apart by project id. (The olap package's own tests cannot import this:
// they open theirs in olap/embedded_test.go.)
package olaptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/insightd/insightd/olap"
)

// Open opens and migrates an embedded engine in a fresh temporary
// directory, each query bounded by timeout; done closes it and removes the
// directory. The library comes from INSIGHTD_CHDB_LIB, which make test sets.
func Open(timeout time.Duration) (e *olap.Embedded, done func(), err error) {
	lib := os.Getenv("INSIGHTD_CHDB_LIB")
	if lib == "" {
		return nil, nil, errors.New("INSIGHTD_CHDB_LIB is not set: run `make test` (it fetches chDB and sets it)")
	}
	dir, err := os.MkdirTemp("", "insightd-test-")
	if err != nil {
		return nil, nil, err
	}
	e, err = olap.OpenEmbedded(olap.Config{ChDBLib: lib, DataDir: dir, QueryTimeout: timeout, Connections: 4,
		QueueWait: 3 * time.Second},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		_, err = olap.Migrate(context.Background(), e)
		if err != nil {
			e.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return e, func() { e.Close(); os.RemoveAll(dir) }, nil
}

// Main is a TestMain: it opens the engine, hands it to set, runs the
// tests and exits with their status.
func Main(m *testing.M, timeout time.Duration, set func(*olap.Embedded)) {
	e, done, err := Open(timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	set(e)
	code := m.Run()
	done()
	os.Exit(code)
}
