package olap

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// A statement whose own check fails with chsql.FallbackCheck is
// answered by its fallback; any other failure, or the check failing
// without a fallback, is the statement's error.
func TestAFailedCheckRunsTheFallback(t *testing.T) {
	ctx := context.Background()
	check := func(msg string) string { return "SELECT throwIf(number = 0, '" + msg + "') AS x FROM numbers(1)" }
	fallback := &chsql.Statement{SQL: "SELECT {v:UInt8} AS x", Params: map[string]any{"v": 7}}
	answer := func(st chsql.Statement) (string, error) {
		rows, err := engine.Query(ctx, st)
		if err != nil {
			return "", err
		}
		return fmt.Sprint(rows.Data), nil
	}

	if got, err := answer(chsql.Statement{SQL: check(chsql.FallbackCheck), Fallback: fallback}); got != "[[7]]" {
		t.Fatalf("a failed check: %q, %v; want the fallback's [[7]]", got, err)
	}
	if got, err := answer(chsql.Statement{SQL: "SELECT 1 AS x", Fallback: fallback}); got != "[[1]]" {
		t.Fatalf("a statement that runs answers itself: %q, %v", got, err)
	}
	if _, err := answer(chsql.Statement{SQL: check("another check"), Fallback: fallback}); err == nil || !strings.Contains(err.Error(), "another check") {
		t.Fatalf("another throwIf must stay the statement's error: %v", err)
	}
	if _, err := answer(chsql.Statement{SQL: check(chsql.FallbackCheck)}); err == nil {
		t.Fatal("a failed check without a fallback must fail")
	}
}
