package httpx

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"syscall"
)

// ConnLimiter is a listener that holds at most max connections open at
// once: a file descriptor, a goroutine and buffers each, and past the
// process's descriptor limit accepting fails and the stores cannot open
// files either. When it is full, the connection idle longest between
// keep-alive requests is closed to make room (a client opens another as
// it would after the idle timeout; no request is in flight on it); when
// none is idle, accepting waits for one to close and new connections
// wait in the kernel's backlog. The server must report its connections'
// states to Track (http.Server.ConnState).
type ConnLimiter struct {
	net.Listener
	max int

	mu     sync.Mutex
	freed  *sync.Cond
	open   int
	idle   *list.List // of *limitedConn, longest idle first
	closed bool
	// Evicted counts idle connections closed to make room.
	evicted int64
}

// LimitConnections wraps ln to hold at most max connections.
func LimitConnections(ln net.Listener, max int) *ConnLimiter {
	l := &ConnLimiter{Listener: ln, max: max, idle: list.New()}
	l.freed = sync.NewCond(&l.mu)
	return l
}

// limitedConn is an accepted connection, counted until it closes.
type limitedConn struct {
	net.Conn
	l    *ConnLimiter
	once sync.Once
	elem *list.Element // in l.idle while idle
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.forget(c)
		c.l.open--
		c.l.mu.Unlock()
		c.l.freed.Signal()
	})
	return err
}

// Accept takes the next connection once there is room for it.
func (l *ConnLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	for l.open >= l.max && !l.closed {
		if e := l.idle.Front(); e != nil {
			v := e.Value.(*limitedConn)
			l.forget(v)
			l.evicted++
			l.mu.Unlock()
			_ = v.Close()
			l.mu.Lock()
			continue
		}
		l.freed.Wait()
	}
	if l.closed {
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	l.open++
	l.mu.Unlock()
	return &limitedConn{Conn: c, l: l}, nil
}

// Close stops accepting; a waiting Accept returns.
func (l *ConnLimiter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.freed.Broadcast()
	return l.Listener.Close()
}

// Track is the server's ConnState hook: it keeps the idle connections in
// the order they fell idle.
func (l *ConnLimiter) Track(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(c)
	if state == http.StateIdle {
		c.elem = l.idle.PushBack(c)
	}
}

// forget takes c off the idle list; l.mu is held.
func (l *ConnLimiter) forget(c *limitedConn) {
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
}

// Stats are the connections open now and the idle ones closed so far to
// make room.
func (l *ConnLimiter) Stats() (open int, evicted int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.evicted
}

// Idle is how many connections are idle between keep-alive requests,
// the ones that would give way to a new connection.
func (l *ConnLimiter) Idle() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.idle.Len()
}

// DefaultMaxConnections is 10 000 connections, or half the process's
// file descriptor limit when that is lower: the other half stays for the
// stores (chDB opens a file per column part it reads) and PostgreSQL.
func DefaultMaxConnections() int {
	const most = 10_000
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return most
	}
	return int(min(uint64(most), max(rl.Cur/2, 64)))
}
