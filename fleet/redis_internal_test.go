package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgw/gateway/test/redistest"
	"github.com/redis/go-redis/v9"
)

// An acquire Redis answers too late (the call went ahead on a local
// slot) is still run by Redis, adding a lease no call holds. When the
// call ends its member leaves Redis too, so the fleet's slot is free
// again at once rather than when the lease's TTL runs out.
func TestLateAcquireLeavesNoLease(t *testing.T) {
	ls := Lease{Upstream: "up", Workspace: "acme", Max: 1, MaxPerWorkspace: 1, TTL: time.Minute}
	r, l, held := leaseRig(t, ls)
	ctx := context.Background()

	rel, _ := l.Acquire(ctx, ls) // a pooled connection, as in service
	rel()
	r.Pause()
	rel, by := l.Acquire(ctx, ls)
	if rel == nil {
		t.Fatalf("no local slot with Redis paused (held by %s)", by)
	}
	r.Resume()
	// Redis runs the acquire it was sent: the lease appears.
	deadline := time.Now().Add(10 * time.Second)
	for held() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if held() == 0 {
		t.Skip("Redis did not run the late acquire; nothing to check")
	}
	rel()
	if n := untilNone(held); n != 0 {
		t.Errorf("%d lease members stay in Redis after the call ended; the slot is lost until the TTL", n)
	}
}

// leaseRig is a limiter over a Redis of the test's own, and a count of
// the lease members Redis holds for ls.
func leaseRig(t *testing.T, ls Lease) (*redistest.Server, *Limiter, func() int64) {
	t.Helper()
	r := redistest.New(t, false)
	l, err := New(&Options{Redis: r.URL(), RetryAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	o, _ := redis.ParseURL(r.URL())
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	uk, wk := l.leaseKeys(ls)
	return r, l, func() int64 {
		ctx := context.Background()
		return rdb.ZCard(ctx, uk).Val() + rdb.ZCard(ctx, wk).Val()
	}
}

// untilNone waits, up to 10 s, until held reports no lease.
func untilNone(held func() int64) int64 {
	for deadline := time.Now().Add(10 * time.Second); held() != 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return held()
}

// A call whose Redis acquire timed out and that then gives up waiting for
// a local slot (its context ends) removes the member Redis adds when it
// runs the late acquire, as a call admitted locally does.
func TestLateAcquireOfARefusedCallLeavesNoLease(t *testing.T) {
	ls := Lease{Upstream: "up", Workspace: "acme", Max: 2, TTL: time.Minute}
	r, l, held := leaseRig(t, ls)
	ctx := context.Background()
	time.Sleep(100 * time.Millisecond) // after the first heartbeat
	l.replicas.Store(2)                // local share of max_concurrent 2: one slot
	relA, _ := l.Acquire(ctx, ls)
	if relA == nil || held() != 1 {
		t.Fatalf("A not admitted through Redis (held %d)", held())
	}
	r.Pause()
	cctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
	relB, _ := l.Acquire(cctx, ls)
	cancel()
	r.Resume()
	if relB != nil {
		t.Fatal("B admitted; want it held back by the local share")
	}
	relA()
	if n := untilNone(held); n != 0 {
		t.Errorf("%d lease member(s) stay in Redis with no call in flight (B's late acquire); the fleet slot is lost until the TTL", n)
	}
}

// While Redis is away a replica enforces its share of each daily quota,
// rounded up: per_day over the fleet's size, at least one call, never
// zero when per_day is below the fleet's size. A refusal then points the
// caller at the end of the local window, not at midnight.
func TestLocalQuotaShareRoundsUp(t *testing.T) {
	for _, tc := range []struct{ perDay, n, want int64 }{{1, 2, 1}, {5, 2, 3}, {3, 4, 1}, {10, 3, 4}, {10, 1, 10}} {
		l, err := New(&Options{Redis: "redis://127.0.0.1:1/0", OpTimeout: 50 * time.Millisecond, RetryAfter: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		l.replicas.Store(tc.n) // the fleet's size Redis last gave
		c := Counter{Rule: "q", Key: "acme", PerDay: tc.perDay}
		got := int64(0)
		var ref *Refusal
		for range 100 {
			if ref = l.Take(context.Background(), []Counter{c}); ref != nil {
				break
			}
			got++
		}
		l.Close()
		if got != tc.want {
			t.Errorf("per_day %d over %d replicas: a replica admitted %d, want %d", tc.perDay, tc.n, got, tc.want)
		}
		if ref == nil || ref.Retry > 2*time.Second {
			t.Errorf("per_day %d over %d replicas: refusal %+v, want a retry within the 2 s local window", tc.perDay, tc.n, ref)
		}
	}
}
