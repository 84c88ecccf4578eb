package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgw/gateway/test/redistest"
	"github.com/redis/go-redis/v9"
)

// A call whose Redis acquire timed out and that then gives up waiting for
// a local slot (ctx ends) returns nil: nothing removes the member Redis
// adds when it runs the late acquire, so a fleet slot is held with no
// call behind it until the TTL.
func TestLateAcquireOfARefusedCallLeavesNoLease(t *testing.T) {
	r := redistest.New(t, false)
	l, err := New(&Options{Redis: r.URL(), RetryAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	o, _ := redis.ParseURL(r.URL())
	rdb := redis.NewClient(o)
	defer rdb.Close()
	ctx := context.Background()
	ls := Lease{Upstream: "up", Workspace: "acme", Max: 2, TTL: time.Minute}
	uk, _ := l.leaseKeys(ls)
	held := func() int64 { return rdb.ZCard(ctx, uk).Val() }

	time.Sleep(100 * time.Millisecond) // after the first heartbeat
	l.replicas.Store(2)                // local share of max_concurrent 2: one slot
	relA, _ := l.Acquire(ctx, ls)
	if relA == nil || held() != 1 {
		t.Fatalf("A not admitted through Redis (held %d)", held())
	}
	r.Pause()
	cctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
	relB, by := l.Acquire(cctx, ls)
	cancel()
	r.Resume()
	if relB != nil {
		t.Fatal("B admitted; want it held back by the local share")
	}
	t.Logf("B refused (held by %q)", by)
	relA()
	time.Sleep(500 * time.Millisecond)
	if n := held(); n != 0 {
		t.Errorf("%d lease member(s) stay in Redis with no call in flight (B's late acquire); the fleet slot is lost until the TTL", n)
	}
}
