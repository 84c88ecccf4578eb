package authz

import (
	"crypto/sha256"
	"testing"
	"time"
)

// TestTokenCacheRing checks the ring's bookkeeping: a key dropped on expiry
// and inserted again must not be evicted through its old slot.
func TestTokenCacheRing(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newTokenCache(3)
	key := func(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }
	p := NewPrincipal("s", "w", "", nil, nil)

	c.put(key("a"), p, now.Add(time.Second), 1)
	c.put(key("b"), p, now.Add(time.Hour), 1)
	if _, ok := c.get(key("a"), 1, now.Add(2*time.Second)); ok {
		t.Fatal("expired entry a was returned")
	}
	if _, ok := c.get(key("b"), 2, now); ok {
		t.Fatal("entry b of generation 1 was returned for generation 2")
	}
	c.put(key("a"), p, now.Add(time.Hour), 1) // slot 2; slot 0 still names a
	c.put(key("c"), p, now.Add(time.Hour), 1) // evicts slot 0: a lives in slot 2 now
	if _, ok := c.get(key("a"), 1, now); !ok {
		t.Error("a was evicted through its stale slot")
	}
	if _, ok := c.get(key("c"), 1, now); !ok {
		t.Error("c is missing")
	}
	if n := c.len(); n > 3 {
		t.Errorf("cache of 3 holds %d entries", n)
	}
}
