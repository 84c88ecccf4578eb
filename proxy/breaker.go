package proxy

import (
	"sync"
	"time"
)

// Breaker defaults: it opens after this many transport failures in a row
// (refused, reset, timed out; never an HTTP status) and lets one probe
// through after the cool-down.
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

// allow reports whether a call may go upstream now, and if not, how long
// until the breaker half-opens.
func (b *breaker) allow() (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return true, 0
	}
	now := b.now()
	if now.Before(b.openUntil) {
		return false, b.openUntil.Sub(now)
	}
	if b.probing {
		return false, b.cooldown
	}
	b.probing = true // half-open: this call is the probe
	return true, 0
}

// record notes a finished exchange: failed is true only for transport
// failures.
func (b *breaker) record(failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	wasProbe := b.probing
	b.probing = false
	if !failed {
		b.failures, b.openUntil = 0, time.Time{}
		return
	}
	b.failures++
	if wasProbe || b.failures >= breakerThreshold {
		b.openUntil = b.now().Add(b.cooldown)
	}
}

// release undoes a probe that ended without judging the upstream (the
// caller went away), so the next call may probe.
func (b *breaker) release() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}
