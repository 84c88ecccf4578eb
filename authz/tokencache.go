package authz

import (
	"crypto/sha256"
	"sync"
	"time"
)

// DefaultTokenCacheSize bounds the verified-token cache.
const DefaultTokenCacheSize = 10_000

// tokenCache remembers verified tokens by their SHA-256 so a busy agent
// does not pay for signature verification on every call.
//
// An entry holds only while three things stay true: the clock is before the
// token's exp plus the same leeway the parser allows (so the cache never
// extends a token: the first call after that re-verifies and fails); the key
// set has the generation it was verified under (any change to the set drops
// every entry, so a removed key stops verifying at once); and the entry is
// among the newest size insertions (a ring evicts the oldest, O(1) per
// insert). Expired or stale entries are dropped when looked up.
//
// Failures are never cached: a refused token may verify after a key
// refresh, and caching refusals would let a flood of junk fill the cache.
type tokenCache struct {
	mu   sync.Mutex
	m    map[[sha256.Size]byte]*cacheEntry
	ring [][sha256.Size]byte // insertion order; ring[next] is the oldest slot
	next int
}

type cacheEntry struct {
	p     *Principal
	until time.Time // exp + leeway: valid while now is before it
	gen   uint64    // key set generation the token was verified under
	slot  int       // ring slot, so a reused key is not evicted by its old slot
}

// newTokenCache returns a cache of size entries, or nil (no caching) when
// size is negative.
func newTokenCache(size int) *tokenCache {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = DefaultTokenCacheSize
	}
	return &tokenCache{m: make(map[[sha256.Size]byte]*cacheEntry, size), ring: make([][sha256.Size]byte, size)}
}

func (c *tokenCache) get(key [sha256.Size]byte, gen uint64, now time.Time) (*Principal, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	if e.gen != gen || !now.Before(e.until) {
		delete(c.m, key)
		return nil, false
	}
	return e.p, true
}

func (c *tokenCache) put(key [sha256.Size]byte, p *Principal, until time.Time, gen uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok { // verified twice concurrently: refresh in place
		e.p, e.until, e.gen = p, until, gen
		return
	}
	if old := c.ring[c.next]; c.m[old] != nil && c.m[old].slot == c.next {
		delete(c.m, old)
	}
	c.ring[c.next] = key
	c.m[key] = &cacheEntry{p: p, until: until, gen: gen, slot: c.next}
	c.next = (c.next + 1) % len(c.ring)
}

func (c *tokenCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
