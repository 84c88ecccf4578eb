package proxy

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Breaker defaults: it opens after this many failures in a row that say
// the upstream is unhealthy (see unhealthy: refused, reset, timed out;
// never an HTTP status, never a request refused for its own sake) and lets
// one probe through after the cool-down.
const (
	breakerThreshold = 10
	breakerCooldown  = 5 * time.Second
)

// maxWorkspaceBreakers bounds the workspace breakers one upstream keeps;
// workspaceBreakerIdle is how long one may go unused before it may be
// dropped to make room.
const (
	maxWorkspaceBreakers = 4096
	workspaceBreakerIdle = time.Minute
)

// breakers is an upstream's circuit breakers: one per workspace, and one
// for the upstream as a whole. The rule, so that one tenant can only ever
// open a breaker on itself:
//
//   - Every failure that says the upstream is unhealthy counts toward the
//     breaker of the workspace whose call failed. Ten in a row (a success
//     of that workspace resets the count) open it, for that workspace
//     only: its calls fail fast for the cool-down, then one is let through
//     as a probe. A tenant whose calls time out (slow queries, on purpose
//     or not) refuses only itself.
//   - The upstream's own breaker opens when the upstream is down for
//     everyone: ten failures in a row, with no success of any workspace in
//     between, that either came from at least two workspaces, or were all
//     connection failures (refused, unreachable, unresolved), which
//     nothing a caller sends can cause. Then every workspace's calls fail
//     fast, and one probe is let through after the cool-down.
//
// A workspace has a breaker only while its calls are failing: a success
// drops it, and at most maxWorkspaceBreakers are kept, the ones idle for
// workspaceBreakerIdle giving way to new ones (past that, a new
// workspace's failures count toward the upstream's breaker alone).
// Breakers are per process; a reload starts fresh ones.
type breakers struct {
	now      func() time.Time
	cooldown time.Duration

	global breaker

	mu       sync.Mutex
	first    string // the current streak's first workspace
	many     bool   // the streak holds failures of more than one workspace
	dialOnly bool   // every failure of the streak was a connection failure
	ws       map[string]*wsBreaker
}

type wsBreaker struct {
	breaker
	last time.Time // last use; guarded by breakers.mu
}

func newBreakers(now func() time.Time, cooldown time.Duration) *breakers {
	b := &breakers{now: now, cooldown: cooldown, ws: make(map[string]*wsBreaker)}
	b.global.now, b.global.cooldown = now, cooldown
	return b
}

// ticket is what allow hands a call, which it passes back to record or
// release: whether it is a half-open probe of either breaker.
type ticket struct {
	ws          string
	wsb         *wsBreaker // nil: the workspace has no breaker
	globalProbe bool
	wsProbe     bool
}

// allow reports whether ws's call may go upstream now, and if not, how
// long until the breaker that refuses it half-opens.
func (b *breakers) allow(ws string) (ok bool, tk ticket, wait time.Duration) {
	tk.ws = ws
	ok, tk.globalProbe, wait = b.global.allow()
	if !ok {
		return false, tk, wait
	}
	b.mu.Lock()
	wb := b.ws[ws]
	if wb != nil {
		wb.last = b.now()
	}
	b.mu.Unlock()
	if wb == nil {
		return true, tk, 0
	}
	tk.wsb = wb
	ok, tk.wsProbe, wait = wb.allow()
	if !ok {
		b.global.release(tk.globalProbe)
		return false, tk, wait
	}
	return true, tk, 0
}

// record notes a finished exchange that judged the upstream: failed when
// it found it unhealthy, dial when that was a connection failure.
func (b *breakers) record(tk ticket, failed, dial bool) {
	if !failed {
		b.global.record(tk.globalProbe, false, 0)
		b.mu.Lock()
		b.first, b.many, b.dialOnly = "", false, false
		if tk.wsb != nil {
			tk.wsb.record(tk.wsProbe, false, 0)
			if b.ws[tk.ws] == tk.wsb {
				delete(b.ws, tk.ws)
			}
		}
		b.mu.Unlock()
		return
	}
	b.mu.Lock()
	if b.global.count() == 0 {
		b.first, b.many, b.dialOnly = tk.ws, false, dial
	} else {
		b.many = b.many || tk.ws != b.first
		b.dialOnly = b.dialOnly && dial
	}
	globalThreshold := 0 // never
	if b.many || b.dialOnly {
		globalThreshold = breakerThreshold
	}
	wb := tk.wsb
	if wb == nil {
		wb = b.workspace(tk.ws)
	}
	b.mu.Unlock()
	b.global.record(tk.globalProbe, true, globalThreshold)
	if wb != nil {
		wb.record(tk.wsProbe, true, breakerThreshold)
	}
}

// workspace returns ws's breaker, made if there is room; nil when there
// is none. b.mu is held.
func (b *breakers) workspace(ws string) *wsBreaker {
	now := b.now()
	if wb := b.ws[ws]; wb != nil {
		wb.last = now
		return wb
	}
	if len(b.ws) >= maxWorkspaceBreakers {
		for k, wb := range b.ws {
			if now.Sub(wb.last) > workspaceBreakerIdle && wb.idle() {
				delete(b.ws, k)
			}
		}
		if len(b.ws) >= maxWorkspaceBreakers {
			return nil
		}
	}
	wb := &wsBreaker{last: now}
	wb.now, wb.cooldown = b.now, b.cooldown
	b.ws[ws] = wb
	return wb
}

// release ends a call that did not judge the upstream; see
// [breaker.release].
func (b *breakers) release(tk ticket) {
	b.global.release(tk.globalProbe)
	if tk.wsb != nil {
		tk.wsb.release(tk.wsProbe)
	}
}

// state is the upstream breaker's failure count, and whether it or any
// workspace's is open (for tests).
func (b *breakers) state() (failures int, open bool) {
	failures, open = b.global.state()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, wb := range b.ws {
		if _, o := wb.state(); o {
			open = true
		}
	}
	return failures, open
}

// workspaces is the number of workspace breakers kept.
func (b *breakers) workspaces() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.ws)
}

// breaker is one circuit breaker. While open, calls fail fast with a clear
// tool error instead of each waiting out a dead upstream.
type breaker struct {
	now      func() time.Time
	cooldown time.Duration

	mu        sync.Mutex
	failures  int       // consecutive transport failures
	openUntil time.Time // zero when closed
	probing   bool      // a half-open probe is in flight
}

// allow reports whether a call may go upstream now, whether that call is
// the half-open probe, and if it may not, how long until the breaker
// half-opens. The call ends with record or release, passing probe back.
func (b *breaker) allow() (ok, probe bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return true, false, 0
	}
	now := b.now()
	if now.Before(b.openUntil) {
		return false, false, b.openUntil.Sub(now)
	}
	if b.probing {
		return false, false, b.cooldown
	}
	b.probing = true // half-open: this call is the probe
	return true, true, 0
}

// record notes a finished exchange that judged the upstream: failed is
// true only when it found the upstream unhealthy. Any call's success
// closes the breaker; a failure opens it when it makes threshold in a
// row (0: never), or when it was the probe's.
func (b *breaker) record(probe, failed bool, threshold int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	if !failed {
		b.failures, b.openUntil = 0, time.Time{}
		return
	}
	b.failures++
	if probe || (threshold > 0 && b.failures >= threshold) {
		b.openUntil = b.now().Add(b.cooldown)
	}
}

// release ends a call that did not judge the upstream (the caller went
// away, or the request was refused for its own sake): the count is left
// as it was, and a probe's turn passes to the next call.
func (b *breaker) release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

func (b *breaker) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures
}

func (b *breaker) state() (failures int, open bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures, !b.openUntil.IsZero()
}

// idle reports a breaker that neither refuses calls nor has a probe out.
func (b *breaker) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.probing && (b.openUntil.IsZero() || !b.now().Before(b.openUntil))
}

// BreakerState is the state of one upstream's circuit breakers, for
// metrics and alerts.
type BreakerState struct {
	Upstream string
	// Open: the upstream's own breaker is open, so every workspace's
	// calls fail fast (the upstream itself looks down).
	Open bool
	// OpenWorkspaces counts workspaces whose own breaker is open: their
	// calls fail fast while others' go through.
	OpenWorkspaces int
}

// Breakers reports every upstream's breakers, sorted by upstream name.
func (c *Core) Breakers() []BreakerState {
	out := make([]BreakerState, 0, len(c.ups))
	for _, name := range slices.Sorted(maps.Keys(c.ups)) {
		b := c.ups[name].breaker
		_, open := b.global.state()
		st := BreakerState{Upstream: name, Open: open}
		b.mu.Lock()
		for _, wb := range b.ws {
			if _, o := wb.state(); o {
				st.OpenWorkspaces++
			}
		}
		b.mu.Unlock()
		out = append(out, st)
	}
	return out
}
