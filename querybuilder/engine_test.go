package querybuilder_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/insightd/insightd/olap"
)

// The engine-backed tests live in this external test package: olap
// imports querybuilder, so querybuilder's own tests cannot import olap.
// The engine opens on first use, so the pure tests (and fuzzing) run
// without chDB; chDB allows one data directory per process, which every
// test shares, kept apart by project id.
var (
	engineOnce sync.Once
	engine     *olap.Embedded
	engineErr  error
	engineDir  string
	teamSeq    atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if engine != nil {
		engine.Close()
		os.RemoveAll(engineDir)
	}
	os.Exit(code)
}

func testEngine(t *testing.T) *olap.Embedded {
	t.Helper()
	engineOnce.Do(func() {
		lib := os.Getenv("INSIGHTD_CHDB_LIB")
		if lib == "" {
			engineErr = errors.New("INSIGHTD_CHDB_LIB is not set: run `make test` (it fetches chDB and sets it)")
			return
		}
		engineDir, engineErr = os.MkdirTemp("", "insightd-querybuilder-test-")
		if engineErr != nil {
			return
		}
		engine, engineErr = olap.OpenEmbedded(olap.Config{ChDBLib: lib, DataDir: engineDir, QueryTimeout: time.Minute, Connections: 4},
			slog.New(slog.NewTextHandler(io.Discard, nil)))
		if engineErr != nil {
			return
		}
		_, engineErr = olap.Migrate(context.Background(), engine)
	})
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return engine
}

// newTeam is a project id no other test uses.
func newTeam() int64 { return time.Now().UnixNano()/1000 + teamSeq.Add(1) }

var _ = fmt.Sprintf
