package httpx

import (
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

// A full limiter's Accept waits for room, and returns when the listener
// closes (a server shutting down must not hang in it).
func TestAFullConnLimiterWaitsAndStopsOnClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitConnections(ln, 1)
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	l.Track(first, http.StateActive) // busy: not to be closed for room
	accepted := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			l.Track(c, http.StateActive)
		}
		accepted <- err
	}()
	select {
	case err := <-accepted:
		t.Fatalf("a second connection was accepted past the cap of one (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	first.Close()
	if err := <-accepted; err != nil {
		t.Fatalf("no room made by a closed connection: %v", err)
	}
	if open, _ := l.Stats(); open != 1 {
		t.Fatalf("%d open, want 1", open)
	}
	go func() { _, err := l.Accept(); accepted <- err }()
	time.Sleep(100 * time.Millisecond)
	l.Close()
	select {
	case err := <-accepted:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("a waiting Accept returned %v on close", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a waiting Accept did not return when the listener closed")
	}
}
