package metadata

import (
	"sync"
	"time"
)

// ttlCache remembers lookups on hot request paths for a short time. A TTL
// of zero turns it off (tests use that to see every change at once).
type ttlCache[V any] struct {
	ttl time.Duration
	mu  sync.RWMutex
	m   map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

// ttlCacheSize bounds a cache; past it, expired entries go first and then
// arbitrary ones, which only costs those a lookup.
const ttlCacheSize = 10000

func newTTLCache[V any](ttl time.Duration) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, m: map[string]ttlEntry[V]{}}
}

func (c *ttlCache[V]) get(k string) (V, bool) {
	var zero V
	if c.ttl <= 0 {
		return zero, false
	}
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || time.Now().After(e.expires) {
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) put(k string, v V) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if len(c.m) >= ttlCacheSize {
		for k, e := range c.m {
			if now.After(e.expires) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < ttlCacheSize {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[k] = ttlEntry[V]{v: v, expires: now.Add(c.ttl)}
}

func (c *ttlCache[V]) drop(k string) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}
