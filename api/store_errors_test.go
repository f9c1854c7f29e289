package api

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/lib/pq"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/chdb"
)

// toError names the store at fault from the error's type or code alone:
// the engine types its outages, so no handler wraps engine errors, and a
// network error is PostgreSQL's only when it is the socket's.
func TestStoreOutagesMapToTheirStatusesWithoutWrapping(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"the engine out of reach, however deep", fmt.Errorf("trend: %w", &olap.UnavailableError{Err: refused}), 503, "clickhouse_unavailable"},
		{"the engine's timeout code", fmt.Errorf("q: %w", &chdb.Exception{Code: olap.CodeTimeoutExceeded}), 504, "query_timeout"},
		{"the engine's cancellation code", fmt.Errorf("q: %w", &chdb.Exception{Code: olap.CodeQueryWasCancelled}), 499, "query_canceled"},
		{"an analysis past the rows read", fmt.Errorf("q: %w", &chdb.Exception{Code: olap.CodeTooManyRowsRead}), 400, "query_over_budget"},
		{"an analysis past a join's table", fmt.Errorf("q: %w", &chdb.Exception{Code: olap.CodeSetSizeLimitExceeded}), 400, "query_over_budget"},
		{"a deadline", fmt.Errorf("q: %w", context.DeadlineExceeded), 504, "query_timeout"},
		{"a caller that left", fmt.Errorf("q: %w", context.Canceled), 499, "canceled"},
		{"PostgreSQL refusing connections", fmt.Errorf("get project: %w", refused), 503, "postgres_unavailable"},
		{"PostgreSQL's broken connection", fmt.Errorf("get project: %w", driver.ErrBadConn), 503, "postgres_unavailable"},
		{"PostgreSQL shutting down", &pq.Error{Code: "57P01"}, 503, "postgres_unavailable"},
		{"a network error that is not a socket's", &net.DNSError{Err: "no such host", Name: "x"}, 500, "internal_error"},
		{"an error of no store", errors.New("boom"), 500, "internal_error"},
	}
	for _, c := range cases {
		t.Run(c.name+" is "+fmt.Sprint(c.status), func(t *testing.T) {
			e := httpx.ToError(c.err)
			if e.Kind.Status() != c.status || e.Code != c.code {
				t.Fatalf("%d %s, want %d %s", e.Kind.Status(), e.Code, c.status, c.code)
			}
		})
	}
}
