package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// attack is the idle connections and the slow-body senders of one phase.
type attack struct {
	addr    string
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
	stopped atomic.Bool

	held, opened, idleFailed, idleClosed atomic.Int64

	// Slow senders: connections cut off by the server, how (408 or
	// closed without an answer), and how long each lasted.
	slowMu          sync.Mutex
	cutoffs         []time.Duration
	got408, gotNone int
	gotOther        map[int]int
}

// startAttack opens idle keep-alive connections (each sends one request
// and then stays open, reading nothing more) and slow senders (each
// declares a 100 kB body and sends a byte every gap; when the server
// cuts it off it connects again at once).
func startAttack(addr string, idle, slow int, gap time.Duration) *attack {
	a := &attack{addr: addr, stop: make(chan struct{}), conns: map[net.Conn]bool{}, gotOther: map[int]int{}}
	// Open the idle ones 64 at a time, as many clients would.
	sem := make(chan struct{}, 64)
	var opening sync.WaitGroup
	for range idle {
		sem <- struct{}{}
		opening.Add(1)
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.idleConn(func() { <-sem; opening.Done() })
		}()
	}
	opening.Wait()
	for range slow {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.slowSender(gap)
		}()
	}
	return a
}

func (a *attack) track(c net.Conn) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped.Load() {
		c.Close()
		return false
	}
	a.conns[c] = true
	return true
}

func (a *attack) untrack(c net.Conn) {
	a.mu.Lock()
	delete(a.conns, c)
	a.mu.Unlock()
}

// idleConn opens one connection, makes one keep-alive request (opened is
// called once that is done or failed) and holds the connection until the
// server or the end of the phase closes it.
func (a *attack) idleConn(opened func()) {
	c, err := net.DialTimeout("tcp", a.addr, 10*time.Second)
	if err != nil {
		a.idleFailed.Add(1)
		opened()
		return
	}
	if !a.track(c) {
		opened()
		return
	}
	defer a.untrack(c)
	br := bufio.NewReaderSize(c, 512)
	_, err = io.WriteString(c, "GET /_health HTTP/1.1\r\nHost: bench\r\n\r\n")
	if err == nil {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var resp *http.Response
		if resp, err = http.ReadResponse(br, nil); err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	if err != nil {
		a.idleFailed.Add(1)
		opened()
		c.Close()
		return
	}
	a.opened.Add(1)
	a.held.Add(1)
	opened()
	c.SetReadDeadline(time.Time{})
	_, _ = br.ReadByte() // until the server closes it, or the phase ends
	a.held.Add(-1)
	if !a.stopped.Load() {
		a.idleClosed.Add(1)
	}
	c.Close()
}

// slowSender sends one slow body after another until the phase ends.
func (a *attack) slowSender(gap time.Duration) {
	// Spread the senders' bytes over the gap.
	select {
	case <-time.After(time.Duration(rand.Int64N(int64(gap)))):
	case <-a.stop:
		return
	}
	for !a.stopped.Load() {
		c, err := net.DialTimeout("tcp", a.addr, 10*time.Second)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if !a.track(c) {
			return
		}
		start := time.Now()
		answered := make(chan int, 1) // the status, 0 for closed without one
		go func() {
			resp, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil)
			if err != nil {
				answered <- 0
				return
			}
			resp.Body.Close()
			answered <- resp.StatusCode
		}()
		_, err = io.WriteString(c, "POST /batch/ HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
		status := -1
		for err == nil && status < 0 {
			select {
			case s := <-answered:
				status = s
			case <-a.stop:
				status = -2
			case <-time.After(gap):
				_, err = io.WriteString(c, " ")
			}
		}
		if status == -1 { // a write failed: the server closed it
			select {
			case status = <-answered:
			case <-time.After(2 * time.Second):
				status = 0
			}
		}
		lasted := time.Since(start)
		a.untrack(c)
		c.Close()
		if status == -2 || a.stopped.Load() {
			return
		}
		a.slowMu.Lock()
		a.cutoffs = append(a.cutoffs, lasted)
		switch status {
		case http.StatusRequestTimeout:
			a.got408++
		case 0:
			a.gotNone++
		default:
			a.gotOther[status]++
		}
		a.slowMu.Unlock()
	}
}

// end closes every connection of the attack (with a reset, so that no
// TIME_WAIT holds the loopback's ports for the next round) and waits for
// its goroutines.
func (a *attack) end() {
	a.stopped.Store(true)
	close(a.stop)
	a.mu.Lock()
	for c := range a.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

// summary is the attack's figures for the phase's line; held is how many
// idle connections were still open when the normal client finished.
func (a *attack) summary(held int64) string {
	a.slowMu.Lock()
	defer a.slowMu.Unlock()
	other := ""
	if len(a.gotOther) > 0 {
		other = fmt.Sprintf(", other %v", a.gotOther)
	}
	return fmt.Sprintf("idle: %d opened (%d failed), %d closed by the server, %d held when measuring ended; slow: %d cut off (408 %d, closed %d%s) after %s median",
		a.opened.Load(), a.idleFailed.Load(), a.idleClosed.Load(), held, len(a.cutoffs), a.got408, a.gotNone, other, ms(median(a.cutoffs)))
}
