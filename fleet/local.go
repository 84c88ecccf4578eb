package fleet

import (
	"container/list"
	"context"
	"math"
	"sync"
	"time"
)

// local counts in this process: rates and quotas in an LRU of counters,
// leases as counts of calls in flight. A mutex guards each; no I/O
// happens under either.
type local struct {
	max int

	mu    sync.Mutex
	lru   list.List // of *entry; front: most recently used
	byKey map[counterKey]*list.Element

	smu   sync.Mutex
	slots map[slotKey]*slot
}

// counterKey names a counter: a struct, so no key can forge another
// rule's by holding a separator.
type counterKey struct{ rule, key string }

type entry struct {
	key counterKey
	tat time.Time // GCRA's theoretical arrival time; zero: full
	day int64     // the UTC day used counts
	// used counts the day's calls in units: one per call without Redis;
	// while Redis is away, one per call times the fleet's size, starting
	// from the count Redis last gave.
	used int64
}

func newLocal(maxKeys int) *local {
	return &local{max: maxKeys, byKey: make(map[counterKey]*list.Element), slots: make(map[slotKey]*slot)}
}

// gcra is a rate as GCRA sees it, scaled to a share of the fleet.
func gcra(c *Counter, share int64) (interval, tolerance time.Duration) {
	rps := c.RPS / float64(max(share, 1))
	burst := scaled(int64(c.Burst), share)
	interval = time.Duration(math.Ceil(float64(time.Second) / rps))
	return interval, time.Duration(burst-1) * interval
}

// take takes from every counter, or none; see [Limiter.Take].
func (lc *local) take(cs []Counter, now time.Time, share int64) *Refusal {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.sweep(now)
	today := utcDay(now)
	es := make([]*entry, len(cs))
	var out *Refusal
	refuse := func(c *Counter, quota bool, wait time.Duration) {
		if out == nil || wait > out.Retry {
			out = &Refusal{Rule: c.Rule, Quota: quota, Retry: wait, Counter: *c}
		}
	}
	for i := range cs {
		c := &cs[i]
		e := lc.entry(counterKey{c.Rule, c.Key})
		es[i] = e
		if c.RPS > 0 {
			_, tol := gcra(c, share)
			if tat := e.tat; tat.After(now) && tat.Sub(now) > tol {
				refuse(c, false, tat.Sub(now)-tol)
			}
		}
		if c.PerDay > 0 {
			used := e.used
			if e.day != today {
				used = 0
			}
			// Each call counts share units, so a replica admits
			// ⌈(per_day − used) / share⌉ calls: the fleet may go over by
			// fewer than share calls, never refuse below the quota.
			if used >= c.PerDay {
				refuse(c, true, untilTomorrow(now))
			}
		}
	}
	if out != nil {
		return out
	}
	for i := range cs {
		c, e := &cs[i], es[i]
		if c.RPS > 0 {
			interval, _ := gcra(c, share)
			e.tat = later(e.tat, now).Add(interval)
		}
		if c.PerDay > 0 {
			if e.day != today {
				e.day, e.used = today, 0
			}
			e.used += share
		}
	}
	return nil
}

// mirror keeps, for each quota counter, the count Redis gave: the local
// count starts there if Redis goes away.
func (lc *local) mirror(cs []Counter, counts []int64, now time.Time) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	today := utcDay(now)
	for i := range cs {
		if cs[i].PerDay <= 0 || i >= len(counts) {
			continue
		}
		e := lc.entry(counterKey{cs[i].Rule, cs[i].Key})
		e.day, e.used = today, counts[i]
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// entry returns the counter for k, made if new, and marks it most
// recently used.
func (lc *local) entry(k counterKey) *entry {
	if el, ok := lc.byKey[k]; ok {
		lc.lru.MoveToFront(el)
		return el.Value.(*entry)
	}
	e := &entry{key: k}
	lc.byKey[k] = lc.lru.PushFront(e)
	for lc.lru.Len() > lc.max {
		lc.remove(lc.lru.Back())
	}
	return e
}

// sweep drops least recently used counters that hold nothing: a rate
// refilled to its burst and no calls counted today. It stops at the first
// that holds something, so each take costs O(1) amortized.
func (lc *local) sweep(now time.Time) {
	today := utcDay(now)
	for el := lc.lru.Back(); el != nil; el = lc.lru.Back() {
		e := el.Value.(*entry)
		if e.tat.After(now) || (e.day == today && e.used > 0) {
			return
		}
		lc.remove(el)
	}
}

func (lc *local) remove(el *list.Element) {
	delete(lc.byKey, el.Value.(*entry).key)
	lc.lru.Remove(el)
}

// slotKey names a count of calls in flight: an upstream's (perWorkspace
// false) or one workspace's share of it.
type slotKey struct {
	upstream, workspace string
	perWorkspace        bool
}

type slot struct {
	n    int
	wake chan struct{} // closed and replaced when a call gives its slot back
}

// hold counts a call admitted elsewhere (by Redis) as in flight here, so
// that it weighs on the local caps if Redis goes away; it returns the
// function that stops counting it.
func (lc *local) hold(ls Lease) func() {
	lc.smu.Lock()
	keys := lc.keys(ls)
	for _, k := range keys {
		lc.slot(k).n++
	}
	lc.smu.Unlock()
	return func() { lc.free(keys) }
}

func (lc *local) keys(ls Lease) []slotKey {
	var keys []slotKey
	if ls.Max > 0 {
		keys = append(keys, slotKey{upstream: ls.Upstream})
	}
	if ls.MaxPerWorkspace > 0 {
		keys = append(keys, slotKey{upstream: ls.Upstream, workspace: ls.Workspace, perWorkspace: true})
	}
	return keys
}

func (lc *local) slot(k slotKey) *slot {
	s := lc.slots[k]
	if s == nil {
		s = &slot{wake: make(chan struct{})}
		lc.slots[k] = s
	}
	return s
}

// acquire waits for room under ls's caps scaled to share, or for ctx to
// end (nil and the cap that held the call back). The workspace's share is
// checked first, so a call over it never holds the upstream's room.
func (lc *local) acquire(ctx context.Context, ls Lease, share int64) (release func(), heldBy string) {
	keys := lc.keys(ls)
	for {
		lc.smu.Lock()
		var wake chan struct{}
		for _, k := range keys {
			limit := int64(ls.Max)
			by := CapUpstream
			if k.perWorkspace {
				limit, by = int64(ls.MaxPerWorkspace), CapWorkspace
			}
			if s := lc.slot(k); int64(s.n) >= scaled(limit, share) {
				// Checked in the order that reports the workspace first.
				if wake == nil || by == CapWorkspace {
					wake, heldBy = s.wake, by
				}
			}
		}
		if wake == nil {
			for _, k := range keys {
				lc.slot(k).n++
			}
			lc.smu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { lc.free(keys) }) }, ""
		}
		lc.dropIdle(keys)
		lc.smu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, heldBy
		}
	}
}

func (lc *local) free(keys []slotKey) {
	lc.smu.Lock()
	defer lc.smu.Unlock()
	for _, k := range keys {
		s := lc.slots[k]
		if s == nil {
			continue
		}
		s.n--
		close(s.wake)
		s.wake = make(chan struct{})
	}
	lc.dropIdle(keys)
}

// dropIdle forgets counts at zero: memory follows the calls in flight,
// not the workspaces ever seen. A waiter holding an old wake channel
// loops and finds the fresh slot.
func (lc *local) dropIdle(keys []slotKey) {
	for _, k := range keys {
		if s := lc.slots[k]; s != nil && s.n <= 0 {
			close(s.wake)
			delete(lc.slots, k)
		}
	}
}
