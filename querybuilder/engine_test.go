package querybuilder_test

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
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
	engineDone func()
	teamSeq    atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if engineDone != nil {
		engineDone()
	}
	os.Exit(code)
}

func testEngine(t *testing.T) *olap.Embedded {
	t.Helper()
	engineOnce.Do(func() {
		engine, engineDone, engineErr = olaptest.Open(time.Minute)
	})
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return engine
}

// newTeam is a project id no other test uses.
func newTeam() int64 { return time.Now().UnixNano()/1000 + teamSeq.Add(1) }
