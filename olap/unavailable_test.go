package olap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/insightd/insightd/olap/chdb"
)

// An engine out of reach says so with one type, whatever the backend and
// wherever the call failed, so that callers answer an outage without
// recognising network errors themselves.
func TestAnEngineOutOfReachIsUnavailable(t *testing.T) {
	t.Run("a ClickHouse server that refuses connections", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		cfg := DefaultConfig()
		cfg.ClickHouseURL = "clickhouse://" + addr + "/default?dial_timeout=2s"
		_, err = OpenServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		var ue *UnavailableError
		if !errors.As(err, &ue) {
			t.Fatalf("%T %v; want an *UnavailableError", err, err)
		}
	})
	ctx := context.Background()
	ended, cancel := context.WithCancel(ctx)
	cancel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	cases := []struct {
		name        string
		ctx         context.Context
		err         error
		unavailable bool
		is          error
	}{
		{"a refused dial", ctx, fmt.Errorf("query: %w", refused), true, nil},
		{"a connection the server closed", ctx, fmt.Errorf("read: %w", io.EOF), true, nil},
		{"ClickHouse's NETWORK_ERROR (210) from a shard", ctx, &chdb.Exception{Code: CodeNetworkError, Message: "x"}, true, nil},
		{"ALL_CONNECTION_TRIES_FAILED (279)", ctx, &chdb.Exception{Code: CodeAllConnectionTriesFailed, Message: "x"}, true, nil},
		{"a statement's timeout (159) stays coded", ctx, &chdb.Exception{Code: CodeTimeoutExceeded, Message: "x"}, false, nil},
		{"a syntax error (62) stays coded", ctx, &chdb.Exception{Code: CodeSyntaxError, Message: "network"}, false, nil},
		{"an error without a code or a network cause", ctx, errors.New("connection refused"), false, nil},
		{"a refused dial after the caller left is a cancellation", ended, refused, false, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ctxError(c.ctx, c.err)
			var ue *UnavailableError
			if errors.As(err, &ue) != c.unavailable {
				t.Fatalf("%v: unavailable %v, want %v", err, !c.unavailable, c.unavailable)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("%v: want %v", err, c.is)
			}
			if code, ok := ErrorCode(c.err); ok {
				if got, _ := ErrorCode(err); got != code {
					t.Fatalf("the code %d is lost: %d", code, got)
				}
			}
		})
	}
}
