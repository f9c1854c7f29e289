package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/querybuilder"
)

// realServer is a server serving on a real loopback listener, as clients
// meet it: the deadlines and the connection cap live in the connections.
type realServer struct {
	s     *Server
	addr  string
	token string
	team  int64
	// errors counts the server's error-level log records (a 5xx's, a
	// panic's).
	errors *errorCounter
}

type errorCounter struct{ n atomic.Int64 }

func (e *errorCounter) Enabled(context.Context, slog.Level) bool { return true }
func (e *errorCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		e.n.Add(1)
	}
	return nil
}
func (e *errorCounter) WithAttrs([]slog.Attr) slog.Handler { return e }
func (e *errorCounter) WithGroup(string) slog.Handler      { return e }

// serveReal serves a server configured by tune on a fresh database, with
// a probe route /test/read-then-wait that reads the body (and once past
// its end), waits ?for and answers whether the request's context was
// still alive.
func serveReal(t *testing.T, tune func(*Config)) *realServer {
	t.Helper()
	cfg := testConfig()
	tune(&cfg)
	errs := &errorCounter{}
	s := New(cfg, slog.New(errs), metadatatest.NewStore(t), engine)
	s.extraRoutes = func(r *gin.Engine) {
		r.POST("/test/read-then-wait", func(c *gin.Context) {
			n, err := io.Copy(io.Discard, c.Request.Body)
			if err != nil {
				c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
				return
			}
			// Readers that check for trailing data read once more.
			if k, err := c.Request.Body.Read(make([]byte, 1)); k != 0 || err != io.EOF {
				c.JSON(http.StatusBadRequest, gin.H{"error": fmt.Sprintf("a read past the end: %d, %v", k, err)})
				return
			}
			d, _ := time.ParseDuration(c.Query("for"))
			time.Sleep(d)
			c.JSON(http.StatusOK, gin.H{"bytes": n, "canceled": c.Request.Context().Err() != nil})
		})
	}
	b, err := s.store.Bootstrap(context.Background(), "slow@example.com", "Slow", "Slow")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &realServer{s: s, addr: ln.Addr().String(), token: b.ProjectAPIToken, team: b.ProjectID, errors: errs}
}

// rawConn is one client connection spoken to byte by byte.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (l *realServer) dial(t *testing.T) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", l.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (r *rawConn) write(s string) error {
	_, err := io.WriteString(r.c, s)
	return err
}

// response reads the next response within d.
func (r *rawConn) response(d time.Duration) (*http.Response, string, error) {
	r.c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// get sends a keep-alive GET and reads its answer.
func (r *rawConn) get(path string) int {
	r.t.Helper()
	if err := r.write("GET " + path + " HTTP/1.1\r\nHost: t\r\n\r\n"); err != nil {
		r.t.Fatalf("GET %s: %v", path, err)
	}
	resp, _, err := r.response(5 * time.Second)
	if err != nil {
		r.t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode
}

// closedWithin reports whether the server closes the connection within d.
func (r *rawConn) closedWithin(d time.Duration) bool {
	r.c.SetReadDeadline(time.Now().Add(d))
	_, err := r.br.ReadByte()
	return err == io.EOF || err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// trickle writes body a byte at a time, every gap, until it is written or
// the server stops taking it.
func (r *rawConn) trickle(body string, gap time.Duration) {
	go func() {
		for i := 0; i < len(body); i++ {
			if r.write(body[i:i+1]) != nil {
				return
			}
			time.Sleep(gap)
		}
	}()
}

// A client that sends its body a byte every 400 ms is cut off once the
// base allowance and the minimum rate are spent: 408 with the error body,
// then the connection closes, on every way of sending a body and on a
// route that does not even read it.
func TestASlowBodyIsCutOffWith408AndItsConnectionClosed(t *testing.T) {
	l := serveReal(t, func(c *Config) { c.BodyReadTimeout, c.BodyMinRate = 500*time.Millisecond, 1000 })
	event := `{"api_key": "` + l.token + `", "event": "slow", "distinct_id": "d", "properties": {"pad": "` + strings.Repeat("x", 900) + `"}}`
	for _, tc := range []struct{ name, head, body string }{
		{"a declared length", fmt.Sprintf("POST /capture/ HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(event)), event},
		{"chunked", "POST /capture/ HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
			fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(event), event)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := l.dial(t)
			start := time.Now()
			if err := c.write(tc.head); err != nil {
				t.Fatal(err)
			}
			c.trickle(tc.body, 400*time.Millisecond)
			resp, body, err := c.response(5 * time.Second)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			took := time.Since(start)
			var e map[string]any
			_ = json.Unmarshal([]byte(body), &e)
			if resp.StatusCode != http.StatusRequestTimeout || e["code"] != "body_read_timeout" || e["type"] == nil || e["detail"] == nil {
				t.Fatalf("answered %d %s, want 408 body_read_timeout", resp.StatusCode, body)
			}
			if _, ok := e["attr"]; !ok {
				t.Fatalf("the error body lacks attr: %s", body)
			}
			if took < 500*time.Millisecond || took > 2*time.Second {
				t.Fatalf("cut off after %s, want just past the 500 ms allowance", took)
			}
			if !c.closedWithin(2 * time.Second) {
				t.Fatal("the connection stays open after the 408")
			}
		})
	}
	if n := l.s.writer.Stats().Events.Load(); n != 0 {
		t.Fatalf("%d events of cut-off bodies were stored", n)
	}
	t.Run("a client resetting its connection mid-body is no server error", func(t *testing.T) {
		c := l.dial(t)
		if err := c.write(fmt.Sprintf("POST /capture/ HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n%s", len(event), event[:100])); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the handler is reading the body
		c.c.(*net.TCPConn).SetLinger(0)
		c.c.Close()
		time.Sleep(200 * time.Millisecond)
		if n := l.errors.n.Load(); n != 0 {
			t.Fatalf("the server logged %d error(s): a client's reset read as an outage", n)
		}
	})
	t.Run("a route that does not read the body", func(t *testing.T) {
		c := l.dial(t)
		if err := c.write("POST /_health HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		c.trickle(strings.Repeat("x", 1000), 400*time.Millisecond)
		// The answer comes at once (405: health is GET); the server then
		// drains the body to reuse the connection, under the same bound.
		if resp, _, err := c.response(2 * time.Second); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("answer: %v %v", resp, err)
		}
		if !c.closedWithin(3 * time.Second) {
			t.Fatal("the server holds a connection whose unread body trickles in")
		}
	})
}

// A slow but steady upload, as from a phone on a poor network, gets
// through: 4 kB at 2 kB a second, after a pause shorter than the
// allowance, where the bound is 500 ms plus 1 kB a second; and the
// deadline is lifted once the body is in, so a handler working past it
// is not canceled.
func TestASlowButSteadyUploadSucceeds(t *testing.T) {
	l := serveReal(t, func(c *Config) { c.BodyReadTimeout, c.BodyMinRate = 500*time.Millisecond, 1000 })
	event := `{"api_key": "` + l.token + `", "event": "steady", "distinct_id": "d", "properties": {"pad": "` + strings.Repeat("x", 4000) + `"}}`
	c := l.dial(t)
	if err := c.write(fmt.Sprintf("POST /capture/ HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(event))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	for i := 0; i < len(event); i += 100 {
		if err := c.write(event[i:min(i+100, len(event))]); err != nil {
			t.Fatalf("the server stopped taking the body at byte %d: %v", i, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, body, err := c.response(5 * time.Second)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("answered %v %s %v", resp, body, err)
	}
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL: "SELECT count() FROM events WHERE team_id = {team:Int64} AND event = 'steady'", Params: map[string]any{"team": l.team}})
	if err != nil || rows.Data[0][0].(uint64) != 1 {
		t.Fatalf("the steady upload's event is not stored once: %v %v", rows, err)
	}
	if c.get("/_health") != http.StatusOK {
		t.Fatal("the connection is not reusable after a slow upload")
	}

	t.Run("the bound is lifted once the body is in", func(t *testing.T) {
		c := l.dial(t)
		body := strings.Repeat("y", 200)
		if err := c.write(fmt.Sprintf("POST /test/read-then-wait?for=1500ms HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n%s", len(body), body)); err != nil {
			t.Fatal(err)
		}
		resp, got, err := c.response(5 * time.Second)
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(got, `"canceled":false`) {
			t.Fatalf("answered %v %s %v: a handler past the body's bound was canceled", resp, got, err)
		}
	})
}

// A keep-alive connection idle for the idle timeout is closed; one used
// within it stays open.
func TestIdleKeepAlivesAreClosedAfterTheIdleTimeout(t *testing.T) {
	l := serveReal(t, func(c *Config) { c.IdleTimeout = 400 * time.Millisecond })
	c := l.dial(t)
	if c.get("/_health") != http.StatusOK {
		t.Fatal("first request")
	}
	time.Sleep(150 * time.Millisecond)
	if c.get("/_health") != http.StatusOK {
		t.Fatal("a connection used within the idle timeout was closed")
	}
	idle := time.Now()
	if c.closedWithin(200 * time.Millisecond) {
		t.Fatal("closed well before the idle timeout")
	}
	if !c.closedWithin(2 * time.Second) {
		t.Fatal("an idle keep-alive stays open past the idle timeout")
	}
	if took := time.Since(idle); took < 350*time.Millisecond || took > 1500*time.Millisecond {
		t.Fatalf("closed after %s idle, want about 400 ms", took)
	}
}

// At most MaxConnections are held: a new connection when all are idle
// closes the one idle longest; when all are busy it waits, unserved,
// until one is done.
func TestTheConnectionCapHolds(t *testing.T) {
	t.Run("the connection idle longest gives way", func(t *testing.T) {
		l := serveReal(t, func(c *Config) { c.MaxConnections = 3 })
		var conns []*rawConn
		for i := 0; i < 3; i++ {
			c := l.dial(t)
			if c.get("/_health") != http.StatusOK {
				t.Fatal("request")
			}
			conns = append(conns, c)
			// The server reports the connection idle after the client
			// has its answer: wait, so that idle order is dial order.
			deadline := time.Now().Add(5 * time.Second)
			for l.s.conns.Load().Idle() != i+1 {
				if time.Now().After(deadline) {
					t.Fatalf("%d connections idle, want %d", l.s.conns.Load().Idle(), i+1)
				}
				time.Sleep(time.Millisecond)
			}
		}
		extra := l.dial(t)
		if extra.get("/_health") != http.StatusOK {
			t.Fatal("the fourth connection is not served")
		}
		if !conns[0].closedWithin(time.Second) {
			t.Fatal("the connection idle longest is still open")
		}
		for i, c := range conns[1:] {
			if c.get("/_health") != http.StatusOK {
				t.Fatalf("connection %d was closed too", i+2)
			}
		}
		if open, evicted := l.s.conns.Load().Stats(); open > 3 || evicted != 1 {
			t.Fatalf("%d connections open, %d evicted; want at most 3 and 1", open, evicted)
		}
	})
	t.Run("busy connections are never closed and a new one waits", func(t *testing.T) {
		l := serveReal(t, func(c *Config) { c.MaxConnections = 3 })
		var busy []*rawConn
		for i := 0; i < 3; i++ {
			c := l.dial(t)
			// A body of 2 bytes of which 1 is sent: the handler waits.
			if err := c.write("POST /test/read-then-wait HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nx"); err != nil {
				t.Fatal(err)
			}
			busy = append(busy, c)
		}
		time.Sleep(200 * time.Millisecond)
		waiting := l.dial(t)
		if err := waiting.write("GET /_health HTTP/1.1\r\nHost: t\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := waiting.response(500 * time.Millisecond); err == nil || !isTimeout(err) {
			t.Fatalf("a fourth connection was served while three are busy (%v)", err)
		}
		if open, _ := l.s.conns.Load().Stats(); open != 3 {
			t.Fatalf("%d connections open, want 3", open)
		}
		if err := busy[0].write("x"); err != nil {
			t.Fatal(err)
		}
		if resp, _, err := busy[0].response(2 * time.Second); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("the busy request: %v %v", resp, err)
		}
		busy[0].c.Close()
		resp, _, err := waiting.response(3 * time.Second)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("the waiting connection is not served once one closes: %v %v", resp, err)
		}
		for i, c := range busy[1:] {
			if c.closedWithin(50 * time.Millisecond) {
				t.Fatalf("busy connection %d was closed", i+2)
			}
		}
	})
}
