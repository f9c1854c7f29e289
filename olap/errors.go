package olap

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// UnavailableError says the events engine could not be reached or could
// not serve: a connection refused, reset or lost, no connection to be had,
// or ClickHouse reporting that it cannot reach its own replicas. Callers
// answer it as an outage (HTTP 503), not as a failed statement; the
// engine returns it for every statement (see ctxError), so no caller has
// to recognise network errors itself.
type UnavailableError struct {
	Err error // the cause
}

func (e *UnavailableError) Error() string {
	return "olap: the events engine is unavailable: " + e.Err.Error()
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// unavailableCodes are the ClickHouse error codes of an engine that cannot
// serve rather than of a statement it refused.
var unavailableCodes = map[int32]bool{
	CodeNoFreeConnection:         true,
	CodeSocketTimeout:            true,
	CodeNetworkError:             true,
	CodeAllConnectionTriesFailed: true,
}

// ClickHouse error codes of an engine that cannot serve.
const (
	CodeNoFreeConnection         int32 = 203
	CodeSocketTimeout            int32 = 209
	CodeNetworkError             int32 = 210
	CodeAllConnectionTriesFailed int32 = 279
)

// unreachable reports an error of the engine being out of reach. An
// exception is told by its code; without one, by the error's type: the
// network errors of the driver's connections, never message text.
func unreachable(err error) bool {
	if code, ok := ErrorCode(err); ok {
		return unavailableCodes[code]
	}
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, clickhouse.ErrAcquireConnTimeout) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
