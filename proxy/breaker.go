package proxy

import (
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

// breaker is a per-upstream circuit breaker. While open, calls fail fast
// with a clear tool error instead of each waiting out a dead upstream.
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
// closes the breaker.
func (b *breaker) record(probe, failed bool) {
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
	if probe || b.failures >= breakerThreshold {
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
