package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// poisonedLookups answers the writer's distinct id lookups with a row it
// cannot read (a person id that is no uuid) while on is set.
type poisonedLookups struct {
	olap.Engine
	on atomic.Bool
}

func (p *poisonedLookups) Query(ctx context.Context, stmt querybuilder.Statement) (*olap.Rows, error) {
	if p.on.Load() && strings.Contains(stmt.SQL, "distinct_id IN (SELECT d FROM format(JSONEachRow") {
		return &olap.Rows{Data: [][]any{{"someone", "not-a-uuid"}}}, nil
	}
	return p.Engine.Query(ctx, stmt)
}

// Captures whose flush meets a row the writer cannot handle all get a 5xx
// (they may be sent again), and the same server, with the same writer,
// stores the next capture.
func TestCapturesOfAFlushTheWriterCannotHandleGet5xxAndTheServerGoesOn(t *testing.T) {
	store := metadatatest.NewStore(t)
	boot, err := store.Bootstrap(context.Background(), "poison@example.com", "Poison", "Poison")
	if err != nil {
		t.Fatal(err)
	}
	e := &poisonedLookups{Engine: engine}
	cfg := testConfig()
	cfg.Ingest.Linger = 100 * time.Millisecond // the captures share a flush
	s := New(cfg, quietLog(), store, e)
	t.Cleanup(s.writer.Close)
	srv := validatedServer(t, s.Handler())
	defer srv.Close()
	capture := func(distinctID string) int {
		body := fmt.Sprintf(`{"api_key": %q, "event": "poisoned", "distinct_id": %q}`, boot.ProjectAPIToken, distinctID)
		resp, err := http.Post(srv.URL+"/capture/", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	e.on.Store(true)
	var wg sync.WaitGroup
	statuses := make([]int, 5)
	for i := range statuses {
		wg.Go(func() { statuses[i] = capture(fmt.Sprintf("p%d", i)) })
	}
	wg.Wait()
	for i, st := range statuses {
		if st < 500 {
			t.Errorf("capture %d of the poisoned flush: %d, want a 5xx", i, st)
		}
	}
	e.on.Store(false)
	if st := capture("fine"); st != 200 {
		t.Fatalf("the next capture: %d", st)
	}
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL: "SELECT distinct_id FROM events WHERE team_id = {t:Int64}", Params: map[string]any{"t": boot.ProjectID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Data) != 1 || rows.Data[0][0] != "fine" {
		t.Fatalf("stored: %v; want only the capture after the failed flush", rows.Data)
	}
}
