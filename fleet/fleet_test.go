package fleet_test

import (
	"context"
	"github.com/mcpgw/gateway/test/redistest"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/gateway/fleet"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }

func localLimiter(t *testing.T, c *clock) *fleet.Limiter {
	t.Helper()
	l, err := fleet.New(&fleet.Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLocalRate(t *testing.T) {
	ctx := context.Background()
	rate := fleet.Counter{Rule: "r", Key: "acme", RPS: 2, Burst: 3}
	t.Run("burst-then-one-per-interval", func(t *testing.T) {
		c := newClock()
		l := localLimiter(t, c)
		for i := range 3 {
			if r := l.Take(ctx, []fleet.Counter{rate}); r != nil {
				t.Fatalf("take %d of the burst refused: %+v", i, r)
			}
		}
		r := l.Take(ctx, []fleet.Counter{rate})
		if r == nil || r.Rule != "r" || r.Quota || r.Retry != 500*time.Millisecond {
			t.Fatalf("fourth take = %+v, want rule r refusing for 500ms", r)
		}
		c.advance(500 * time.Millisecond)
		if r := l.Take(ctx, []fleet.Counter{rate}); r != nil {
			t.Fatalf("after the wait = %+v", r)
		}
	})
	t.Run("other-key-has-its-own-counter", func(t *testing.T) {
		c := newClock()
		l := localLimiter(t, c)
		for range 3 {
			l.Take(ctx, []fleet.Counter{rate})
		}
		other := rate
		other.Key = "globex"
		if r := l.Take(ctx, []fleet.Counter{other}); r != nil {
			t.Fatalf("globex refused by acme's use: %+v", r)
		}
	})
	t.Run("refusal-takes-from-no-counter", func(t *testing.T) {
		c := newClock()
		l := localLimiter(t, c)
		tight := fleet.Counter{Rule: "tight", Key: "k", RPS: 0.001, Burst: 1}
		loose := fleet.Counter{Rule: "loose", Key: "k", RPS: 0.001, Burst: 2}
		if r := l.Take(ctx, []fleet.Counter{loose, tight}); r != nil {
			t.Fatal(r)
		}
		if r := l.Take(ctx, []fleet.Counter{loose, tight}); r == nil || r.Rule != "tight" {
			t.Fatalf("= %+v, want tight to refuse", r)
		}
		if r := l.Take(ctx, []fleet.Counter{loose}); r != nil {
			t.Fatalf("loose alone = %+v, want its second call: the refused take took none", r)
		}
	})
}

func TestLocalQuotaEndsWithTheUTCDay(t *testing.T) {
	ctx := context.Background()
	c := newClock() // 12:00 UTC
	l := localLimiter(t, c)
	q := fleet.Counter{Rule: "daily", Key: "acme", PerDay: 2}
	for i := range 2 {
		if r := l.Take(ctx, []fleet.Counter{q}); r != nil {
			t.Fatalf("take %d refused: %+v", i, r)
		}
	}
	r := l.Take(ctx, []fleet.Counter{q})
	if r == nil || !r.Quota || r.Rule != "daily" || r.Retry != 12*time.Hour {
		t.Fatalf("third take = %+v, want the quota refusing until midnight (12h)", r)
	}
	c.advance(12 * time.Hour)
	if r := l.Take(ctx, []fleet.Counter{q}); r != nil {
		t.Fatalf("the next day = %+v", r)
	}
}

func TestLocalLeasesCapAndWake(t *testing.T) {
	l := localLimiterNoClock(t)
	ls := fleet.Lease{Upstream: "up", Workspace: "acme", Max: 3, MaxPerWorkspace: 2, TTL: time.Minute}
	ctx := context.Background()
	var held []func()
	for range 2 {
		rel, by := l.Acquire(ctx, ls)
		if rel == nil {
			t.Fatalf("held by %s", by)
		}
		held = append(held, rel)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	rel, by := l.Acquire(short, ls)
	cancel()
	if rel != nil || by != fleet.CapWorkspace {
		t.Fatalf("acme's third = %v %q, want held by %s", rel != nil, by, fleet.CapWorkspace)
	}
	other := ls
	other.Workspace = "globex"
	rel, _ = l.Acquire(ctx, other)
	if rel == nil {
		t.Fatal("globex refused while acme holds its share")
	}
	short, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	rel2, by := l.Acquire(short, other)
	cancel()
	if rel2 != nil || by != fleet.CapUpstream {
		t.Fatalf("a fourth call = %v %q, want held by %s", rel2 != nil, by, fleet.CapUpstream)
	}
	done := make(chan func())
	go func() { r, _ := l.Acquire(ctx, other); done <- r }()
	held[0]()
	select {
	case r := <-done:
		if r == nil {
			t.Fatal("the waiter got nothing")
		}
		r()
	case <-time.After(10 * time.Second):
		t.Fatal("a freed slot did not wake the waiter within 10s")
	}
	rel()
	held[1]()
}

func localLimiterNoClock(t *testing.T) *fleet.Limiter {
	l, err := fleet.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func redisLimiter(t *testing.T, url string, retry time.Duration) *fleet.Limiter {
	t.Helper()
	l, err := fleet.New(&fleet.Options{Redis: url, RetryAfter: retry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestRedisSharesRatesAndQuotas(t *testing.T) {
	r := redistest.New(t, false)
	a, b := redisLimiter(t, r.URL(), 0), redisLimiter(t, r.URL(), 0)
	ctx := context.Background()
	t.Run("one-burst-for-both", func(t *testing.T) {
		c := fleet.Counter{Rule: "shared", Key: "acme", RPS: 0.001, Burst: 4}
		admitted := 0
		for i := range 8 {
			l := a
			if i%2 == 1 {
				l = b
			}
			if l.Take(ctx, []fleet.Counter{c}) == nil {
				admitted++
			}
		}
		if admitted != 4 {
			t.Fatalf("two replicas admitted %d calls, want the one burst of 4", admitted)
		}
		if r := b.Take(ctx, []fleet.Counter{c}); r == nil || r.Rule != "shared" || r.Retry < 900*time.Second {
			t.Fatalf("= %+v, want a refusal for about 1000s", r)
		}
	})
	t.Run("one-quota-for-both", func(t *testing.T) {
		c := fleet.Counter{Rule: "daily", Key: "acme", PerDay: 3}
		for i, l := range []*fleet.Limiter{a, b, a} {
			if r := l.Take(ctx, []fleet.Counter{c}); r != nil {
				t.Fatalf("take %d refused: %+v", i, r)
			}
		}
		r := b.Take(ctx, []fleet.Counter{c})
		if r == nil || !r.Quota || r.Retry <= 0 || r.Retry > 24*time.Hour {
			t.Fatalf("fourth take = %+v, want the quota refusing until midnight", r)
		}
	})
	t.Run("refusal-takes-from-no-counter", func(t *testing.T) {
		tight := fleet.Counter{Rule: "tight", Key: "k", RPS: 0.001, Burst: 1}
		quota := fleet.Counter{Rule: "q", Key: "k", PerDay: 10}
		if r := a.Take(ctx, []fleet.Counter{quota, tight}); r != nil {
			t.Fatal(r)
		}
		if r := b.Take(ctx, []fleet.Counter{quota, tight}); r == nil || r.Rule != "tight" {
			t.Fatalf("= %+v, want tight to refuse", r)
		}
		for i := range 9 {
			if r := b.Take(ctx, []fleet.Counter{quota}); r != nil {
				t.Fatalf("quota take %d = %+v: the refused take counted", i, r)
			}
		}
	})
}

func TestRedisLeasesCapTheFleetAndExpire(t *testing.T) {
	r := redistest.New(t, false)
	a, b := redisLimiter(t, r.URL(), 0), redisLimiter(t, r.URL(), 0)
	ctx := context.Background()
	ls := fleet.Lease{Upstream: "up", Workspace: "acme", Max: 2, MaxPerWorkspace: 2, TTL: 500 * time.Millisecond}
	// a takes both slots and "dies": it never gives them back.
	for range 2 {
		if rel, by := a.Acquire(ctx, ls); rel == nil {
			t.Fatalf("held by %s", by)
		}
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	rel, by := b.Acquire(short, ls)
	cancel()
	if rel != nil || by != fleet.CapWorkspace {
		t.Fatalf("b while a holds both = %v %q, want held back by %s", rel != nil, by, fleet.CapWorkspace)
	}
	other := ls
	other.Workspace = "globex"
	short, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
	rel, by = b.Acquire(short, other)
	cancel()
	if rel != nil || by != fleet.CapUpstream {
		t.Fatalf("globex while a holds the upstream = %v %q, want held back by %s", rel != nil, by, fleet.CapUpstream)
	}
	// The leases expire with their TTL: b gets a slot within it.
	start := time.Now()
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rel, by = b.Acquire(wait, other)
	if rel == nil {
		t.Fatalf("the dead replica's leases never expired (held by %s)", by)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a lease with a 500ms TTL was freed after %v", d)
	}
	rel()
}

// Redis stopped, then started again: operations fall back to local
// counting at once, scaled to this replica's share of the fleet, and
// shared counting resumes by itself.
func TestRedisLostFallsBackAndRecovers(t *testing.T) {
	r := redistest.New(t, false)
	a, b := redisLimiter(t, r.URL(), 200*time.Millisecond), redisLimiter(t, r.URL(), 200*time.Millisecond)
	ctx := context.Background()
	// Both heartbeats have been seen: the fleet is two.
	for deadline := time.Now().Add(10 * time.Second); a.Replicas() != 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("replicas = %d, want 2", a.Replicas())
		}
	}
	r.Stop()
	c := fleet.Counter{Rule: "r", Key: "acme", RPS: 0.001, Burst: 4}
	admitted := 0
	start := time.Now()
	for range 4 {
		if a.Take(ctx, []fleet.Counter{c}) == nil {
			admitted++
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("four takes without Redis took %v, want each bounded by the op timeout", d)
	}
	if admitted != 2 {
		t.Errorf("without Redis one of two replicas admitted %d of a burst of 4, want its share, 2", admitted)
	}
	if a.Shared() {
		t.Error("Shared() is true while Redis is down")
	}
	_ = b
	r.Start()
	for deadline := time.Now().Add(10 * time.Second); !a.Shared(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("shared counting did not resume within 10s of Redis coming back")
		}
		a.Take(ctx, []fleet.Counter{{Rule: "probe", Key: "x", RPS: 1000, Burst: 1000}})
	}
	// Counting is shared again: a fresh Redis has a full burst for both.
	admitted = 0
	for i := range 6 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if l.Take(ctx, []fleet.Counter{c}) == nil {
			admitted++
		}
	}
	if admitted != 4 {
		t.Errorf("after recovery the fleet admitted %d, want the shared burst of 4", admitted)
	}
}

// A Redis that stops answering (paused) costs each operation no more than
// the op timeout, and three timeouts in a row switch to local counting.
func TestRedisSlowIsBounded(t *testing.T) {
	r := redistest.New(t, false)
	l := redisLimiter(t, r.URL(), time.Hour)
	ctx := context.Background()
	c := fleet.Counter{Rule: "r", Key: "acme", RPS: 100, Burst: 100}
	if l.Take(ctx, []fleet.Counter{c}) != nil {
		t.Fatal("refused with Redis up")
	}
	r.Pause()
	defer r.Resume()
	start := time.Now()
	if ref := l.Take(ctx, []fleet.Counter{c}); ref != nil {
		t.Fatalf("refused while Redis is paused: %+v", ref)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a take with Redis paused took %v, want about the 100ms op timeout", d)
	}
	// One slow answer is not an outage; three in a row are.
	if !l.Shared() {
		t.Error("one timed-out operation switched the store to local counting")
	}
	l.Take(ctx, []fleet.Counter{c})
	l.Take(ctx, []fleet.Counter{c})
	if l.Shared() {
		t.Error("three timed-out operations in a row left the store counting in Redis")
	}
	ls := fleet.Lease{Upstream: "up", Workspace: "acme", Max: 1, TTL: time.Minute}
	start = time.Now()
	rel, _ := l.Acquire(ctx, ls)
	if rel == nil {
		t.Fatal("no local slot with Redis paused")
	}
	rel()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("an acquire and release with Redis paused took %v", d)
	}
}

// A quota counted locally while Redis is away starts from the count Redis
// last gave: the day's calls are not granted again.
func TestRedisLostQuotaStartsFromTheLastCount(t *testing.T) {
	r := redistest.New(t, false)
	l := redisLimiter(t, r.URL(), time.Hour)
	ctx := context.Background()
	q := fleet.Counter{Rule: "daily", Key: "acme", PerDay: 10}
	for i := range 7 {
		if ref := l.Take(ctx, []fleet.Counter{q}); ref != nil {
			t.Fatalf("take %d with Redis up: %+v", i, ref)
		}
	}
	r.Stop()
	admitted := 0
	for range 10 {
		if l.Take(ctx, []fleet.Counter{q}) == nil {
			admitted++
		}
	}
	if admitted != 3 {
		t.Errorf("without Redis the quota admitted %d more calls, want the 3 left of 10", admitted)
	}
}
