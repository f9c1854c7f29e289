package metadata

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lib/pq"
)

// Reads survive an outage of PostgreSQL (stopped, frozen, out of
// reach): the store remembers each read it answered from the pool
// (keys, tokens, projects, insights, dashboards, cached results) for
// Config.OutageMemory, and while PostgreSQL does not answer it answers
// a read it remembers from memory. Once a read fails for want of
// PostgreSQL, the store holds PostgreSQL down and answers remembered
// reads without asking it, so a frozen server does not make each read
// wait its round-trip deadline; a probe pings it every probeEvery until
// it answers. Reads it does not remember, and every write, still go to
// PostgreSQL and fail (503). While PostgreSQL answers, every read is
// its: a deleted key stops working within Config.AuthCacheTTL.

// probeEvery is how often a store holding PostgreSQL down pings it.
const probeEvery = 250 * time.Millisecond

// Bounds of the memory: entries, and bytes of cached results (the rest
// are small rows).
const (
	recallEntries = 20000
	recallBytes   = 256 << 20
)

type recall struct {
	window time.Duration
	mu     sync.Mutex
	m      map[string]recalled
	bytes  int64
	// down is set while PostgreSQL is held down; probing while its
	// probe runs.
	down    atomic.Bool
	probing atomic.Bool
}

type recalled struct {
	v    any
	at   time.Time
	size int64
}

func newRecall(window time.Duration) *recall {
	return &recall{window: window, m: map[string]recalled{}}
}

// get returns key's answer if it was read within the window.
func (r *recall) get(key string) (any, bool) {
	if r.window <= 0 {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.m[key]
	if !ok || time.Since(e.at) > r.window {
		return nil, false
	}
	return e.v, true
}

// put remembers v as key's answer now; size counts what v holds beyond a
// row (a cached result's bytes).
func (r *recall) put(key string, v any, size int64) {
	if r.window <= 0 || size > recallBytes/4 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.m[key]; ok {
		r.bytes -= old.size
		delete(r.m, key)
	}
	if len(r.m) >= recallEntries || r.bytes+size > recallBytes {
		now := time.Now()
		for k, e := range r.m {
			if now.Sub(e.at) > r.window {
				r.bytes -= e.size
				delete(r.m, k)
			}
		}
		for k, e := range r.m {
			if len(r.m) < recallEntries && r.bytes+size <= recallBytes {
				break
			}
			r.bytes -= e.size
			delete(r.m, k)
		}
	}
	r.m[key] = recalled{v: v, at: time.Now(), size: size}
	r.bytes += size
}

func (r *recall) forget(key string) {
	r.mu.Lock()
	if e, ok := r.m[key]; ok {
		r.bytes -= e.size
		delete(r.m, key)
	}
	r.mu.Unlock()
}

// Down reports whether the store holds PostgreSQL down: a read failed
// for want of it and no ping has been answered since.
func (s *Store) Down() bool { return s.recall.down.Load() }

// markDown holds PostgreSQL down and starts the probe that lifts it.
func (s *Store) markDown() {
	s.recall.down.Store(true)
	if !s.recall.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.recall.probing.Store(false)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), s.roundTrip)
			err := s.db.PingContext(ctx)
			cancel()
			if err == nil {
				s.recall.down.Store(false)
				return
			}
			time.Sleep(probeEvery)
		}
	}()
}

// recallRead answers read, remembered under key: PostgreSQL's answer
// while it answers (remembered, unless it is ErrNotFound, which forgets
// key), the remembered one while it is down.
func recallRead[V any](s *Store, key string, read func() (V, error)) (V, error) {
	if s.recall.down.Load() {
		if v, ok := s.recall.get(key); ok {
			return v.(V), nil
		}
	}
	v, err := read()
	switch {
	case err == nil:
		var size int64
		if r, ok := any(v).(*CachedResult); ok {
			size = int64(len(r.Result))
		}
		s.recall.put(key, v, size)
	case errors.Is(err, ErrNotFound):
		s.recall.forget(key)
	case Unavailable(err):
		s.markDown()
		if old, ok := s.recall.get(key); ok {
			return old.(V), nil
		}
	}
	return v, err
}

// recallInto is recallRead for a read into dest (a pointer), as getOne
// and sqlx read; key is the query and its arguments. The remembered
// value is a copy of what dest pointed to: readers do not change what
// they read.
func (s *Store) recallInto(dest any, query string, args []any, read func() error) error {
	key := recallKey(query, args)
	v, err := recallRead(s, key, func() (any, error) {
		if err := read(); err != nil {
			return nil, err
		}
		return reflect.ValueOf(dest).Elem().Interface(), nil
	})
	if err != nil {
		return err
	}
	reflect.ValueOf(dest).Elem().Set(reflect.ValueOf(v))
	return nil
}

func recallKey(query string, args []any) string {
	return fmt.Sprintf("%s\x00%v", query, args)
}

// Unavailable reports an error of PostgreSQL being unreachable, frozen
// or refusing connections, as opposed to refusing a statement.
func Unavailable(err error) bool {
	var pe *pq.Error
	if errors.As(err, &pe) {
		// 08: connection exception; 57P01-57P03: shutting down or not
		// accepting connections yet; 53300: too many connections; 57014:
		// a statement stopped by statement_timeout (deadlines.go).
		return pe.Code.Class() == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300" || pe.Code == "57014"
	}
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
