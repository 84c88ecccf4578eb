package mcp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Unix(1_700_000_000, 0)} }
func principalWant(sub string, b *proxy.Bucket) []wantToken {
	return []wantToken{{bucketKey{sub, "acme", ""}, b, RateLimitPrincipal}}
}

func TestRateLimiterRefillsAndRetryAfter(t *testing.T) {
	c := newClock()
	rl := newRateLimiter(c.now, 100)
	b := &proxy.Bucket{RPS: 2, Burst: 2}
	for i := range 2 {
		if r := rl.take(principalWant("a", b)); r != nil {
			t.Fatalf("take %d refused: %+v", i, r)
		}
	}
	r := rl.take(principalWant("a", b))
	if r == nil || r.kind != RateLimitPrincipal || r.retry != 500*time.Millisecond || r.retryAfterSeconds() != 1 {
		t.Fatalf("third take = %+v, want a 500ms wait, Retry-After 1", r)
	}
	c.advance(500 * time.Millisecond)
	if r := rl.take(principalWant("a", b)); r != nil {
		t.Fatalf("after the wait = %+v, want a token", r)
	}
}

func TestRateLimiterForgetsOnlyFullBuckets(t *testing.T) {
	c := newClock()
	rl := newRateLimiter(c.now, 100)
	b := &proxy.Bucket{RPS: 1, Burst: 2}
	for i := range 10 {
		rl.take(principalWant(fmt.Sprint("idle", i), b))
	}
	rl.take(principalWant("busy", b))
	rl.take(principalWant("busy", b))
	if n := rl.len(); n != 11 {
		t.Fatalf("%d buckets, want 11", n)
	}
	// One second refills each idle bucket (one token spent) but not busy
	// (two spent): the next take drops the idle ones, which are full.
	c.advance(time.Second)
	rl.take(principalWant("other", b))
	if n := rl.len(); n != 2 {
		t.Fatalf("%d buckets after the sweep, want busy and other", n)
	}
	// busy kept its state: one token back, so one take passes and the
	// next waits.
	if r := rl.take(principalWant("busy", b)); r != nil {
		t.Fatalf("busy = %+v", r)
	}
	if r := rl.take(principalWant("busy", b)); r == nil {
		t.Fatal("busy got a token it never earned: its bucket was forgotten")
	}
}

func TestRateLimiterIsBounded(t *testing.T) {
	c := newClock()
	rl := newRateLimiter(c.now, 5)
	b := &proxy.Bucket{RPS: 0.001, Burst: 1}
	for i := range 50 {
		rl.take(principalWant(fmt.Sprint("p", i), b))
		if n := rl.len(); n > 5 {
			t.Fatalf("%d buckets, want at most 5", n)
		}
	}
}

func TestRateLimiterFollowsConfigChanges(t *testing.T) {
	c := newClock()
	rl := newRateLimiter(c.now, 100)
	rl.take(principalWant("a", &proxy.Bucket{RPS: 0.001, Burst: 1}))
	if r := rl.take(principalWant("a", &proxy.Bucket{RPS: 0.001, Burst: 1})); r == nil {
		t.Fatal("second take passed with burst 1")
	}
	// A reload raises the rate: the same bucket refills at the new rate.
	faster := &proxy.Bucket{RPS: 10, Burst: 1}
	rl.take(principalWant("a", faster)) // adjusts; may still be empty
	c.advance(200 * time.Millisecond)
	if r := rl.take(principalWant("a", faster)); r != nil {
		t.Fatalf("after the reload = %+v, want the new rate", r)
	}
}

func TestCheckRateTakesAllOrNothing(t *testing.T) {
	c := newClock()
	l := &limits{metrics: nopMetrics{}, rate: newRateLimiter(c.now, 100)}
	cat := &proxy.RateLimits{
		PerPrincipal: &proxy.Bucket{RPS: 0.001, Burst: 2},
		PerTool:      map[string]*proxy.Bucket{"t": {RPS: 0.001, Burst: 1}},
	}
	p := authz.NewPrincipal("s", "w", "", nil, nil)
	if r := l.checkBuckets(cat, p, "t"); r != nil {
		t.Fatal(r)
	}
	if r := l.checkBuckets(cat, p, "t"); r == nil || r.kind != RateLimitTool {
		t.Fatalf("= %+v, want the tool bucket", r)
	}
	// The refused call took no principal token: one is left for another tool.
	if r := l.checkBuckets(cat, p, "u"); r != nil {
		t.Fatalf("= %+v, want the principal's second token", r)
	}
	// Another workspace, same subject: its own buckets.
	if r := l.checkBuckets(cat, authz.NewPrincipal("s", "w2", "", nil, nil), "t"); r != nil {
		t.Fatalf("other workspace = %+v", r)
	}
}

func TestInFlightCancelledWaiterTakesNoSlot(t *testing.T) {
	l := newLimits(time.Hour, nil, nil)
	const cat = 1 // max_in_flight
	s, ok := l.acquire(context.Background(), cat, logger(nil))
	if !ok {
		t.Fatal("first acquire failed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := l.acquire(ctx, cat, logger(nil)); ok {
		t.Fatal("a cancelled waiter was admitted")
	}
	s.release()
	s.release() // idempotent
	r2, ok := l.acquire(context.Background(), cat, logger(nil))
	if !ok {
		t.Fatal("the slot was not given back")
	}
	r2.release()
}
