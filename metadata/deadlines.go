package metadata

import (
	"context"
	"database/sql"
	"net"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// A PostgreSQL that stops answering (frozen, or a network that drops
// packets) must not freeze the API with it. The kernel of a frozen
// server still accepts connections and acknowledges data, so TCP
// keepalives and user timeouts see nothing wrong, and lib/pq's
// cancellation of a query whose context ended itself waits on the
// server. What does bound every exchange is a deadline on the socket:
// each read and write of a connection must finish within the round-trip
// timeout, or the connection fails (and is dropped from the pool), and
// the request gets the error: 503, unavailable. Statements also carry a
// server-side statement_timeout just below it, so a slow statement is
// stopped by PostgreSQL itself rather than by cutting the connection.

// defaultRoundTrip bounds one exchange with PostgreSQL; every metadata
// statement is small.
const defaultRoundTrip = 10 * time.Second

// openDB opens the pool with deadlines on every connection.
func openDB(dsn string, roundTrip time.Duration) (*sqlx.DB, error) {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = roundTrip
	}
	if cfg.Runtime == nil {
		cfg.Runtime = map[string]string{}
	}
	if _, set := cfg.Runtime["statement_timeout"]; !set {
		cfg.Runtime["statement_timeout"] = strconv.FormatInt(max(roundTrip-time.Second, roundTrip/2).Milliseconds(), 10)
	}
	connector, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, err
	}
	connector.Dialer(deadlineDialer{roundTrip: roundTrip})
	return sqlx.NewDb(sql.OpenDB(connector), "postgres"), nil
}

// deadlineDialer dials connections whose every read and write must finish
// within roundTrip.
type deadlineDialer struct {
	d         net.Dialer
	roundTrip time.Duration
}

func (d deadlineDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

func (d deadlineDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

func (d deadlineDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: c, roundTrip: d.roundTrip}, nil
}

// deadlineConn sets a deadline before each read and write. lib/pq reads
// only when it awaits an answer, so an idle pooled connection never times
// out: only one whose server stopped answering.
type deadlineConn struct {
	net.Conn
	roundTrip time.Duration
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.roundTrip)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.roundTrip)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
