package mcp

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/proxy"
)

// Caller limits (catalog limits.max_in_flight and limits.rate) live here,
// in the wire package, because they act on requests before the core sees
// them; every surface of one handler (MCP, REST) or one ServeStdio shares
// one set.
//
// In-flight cap. At most max_in_flight requests are served at once; the
// next ones wait, in arrival order, for a slot. The contract says they
// wait (bounded) and never fail, so nobody is refused for being over the
// cap: a request waits until a slot frees, its context ends (the client
// went away: nothing is sent upstream), or [DefaultInFlightWait] passes,
// after which it is served anyway, over the cap, and logged at Warn. The
// cap paces bursts; the bound keeps a stuck slot from becoming an outage.
// The capacity follows reloads: a changed max_in_flight starts a fresh
// semaphore, and requests holding slots of the old one release them there,
// so for a moment both counts apply.
//
// Rate limits. Token buckets from golang.org/x/time/rate, applied to
// tools/call only (MCP, REST and stdio alike): tools/list, server/discover,
// initialize and ping are answered from memory, and refusing them would
// break a client's handshake while costing the upstreams nothing.
//
//   - per_principal: one bucket per (subject, workspace).
//   - per_tool[T]: one bucket per (subject, workspace, T), not one global
//     bucket per tool: a global bucket would let one noisy caller use up a
//     tool for every tenant, which is exactly what a rate limit should
//     prevent. It bounds how hard each caller may hit that tool's upstream.
//
// A call needs a token from every bucket that applies; tokens are taken
// only when all have one, so a refusal costs nothing. Refused: HTTP 429
// with Retry-After (whole seconds, rounded up) and JSON-RPC -31429, or
// REST 429 rate_limited; stdio gets the JSON-RPC error.
//
// Rules (limits.rules) and the fleet. A catalog with rules, or a gateway
// with a shared store (Redis), counts through a [fleet.Limiter]: the
// rules' counters, and limits.rate's buckets as counters of the same
// kind (GCRA with the same rps and burst, so a caller sees the same
// limit), all taken in one step so a refusal still costs nothing. Only a
// process with neither keeps the x/time/rate buckets below. A rule keyed
// or matched by tool or upstream applies only to calls of a tool the
// catalog has: a name no tool has must not mint counters.
//
// Buckets survive reloads: a bucket whose rps or burst changed is adjusted
// in place on its next use. Memory is bounded without a goroutine: buckets
// sit in an LRU list; each check drops least recently used buckets that
// have refilled to their burst (forgetting a full bucket changes nothing,
// since a new one starts full), and at most [MaxRateBuckets] are kept (past
// that the least recently used one is dropped even when not full, which
// only happens with that many callers active at once).

// DefaultInFlightWait bounds how long a request waits for an in-flight
// slot before it is served anyway.
const DefaultInFlightWait = 30 * time.Second

// MaxRateBuckets bounds the token buckets kept in memory.
const MaxRateBuckets = 65536

// Rate limit kinds, as [Metrics.RateLimited] and error data report them.
const (
	RateLimitPrincipal = "principal"
	RateLimitTool      = "tool"
)

// limits is one surface set's in-flight cap and rate buckets.
type limits struct {
	wait    time.Duration
	metrics Metrics
	flight  inFlight
	rate    *rateLimiter
	// fleet counts rules, and everything when it is shared; nil until a
	// catalog with rules needs one, when none was given.
	fleetMu sync.Mutex
	fleet   *fleet.Limiter
}

func newLimits(wait time.Duration, m Metrics, fl *fleet.Limiter) *limits {
	if wait <= 0 {
		wait = DefaultInFlightWait
	}
	return &limits{wait: wait, metrics: metricsOrNop(m), rate: newRateLimiter(time.Now, MaxRateBuckets), fleet: fl}
}

// limiter is the fleet limiter: the one given, or a local one of this
// surface set's own, made on first use.
func (l *limits) limiter() *fleet.Limiter {
	l.fleetMu.Lock()
	defer l.fleetMu.Unlock()
	if l.fleet == nil {
		l.fleet, _ = fleet.New(nil) // local: cannot fail
	}
	return l.fleet
}

// shared reports a limiter counting in Redis.
func (l *limits) shared() bool {
	l.fleetMu.Lock()
	defer l.fleetMu.Unlock()
	return l.fleet != nil && l.fleet.Mode() == fleet.ModeRedis
}

// inFlight is a counting semaphore whose capacity can change between
// acquisitions. Waiters on a full channel are served in arrival order (Go
// queues blocked senders FIFO).
type inFlight struct {
	mu   sync.Mutex
	size int
	sem  chan struct{}
}

func (f *inFlight) chanFor(size int) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sem == nil || f.size != size {
		f.size, f.sem = size, make(chan struct{}, size)
	}
	return f.sem
}

// acquire takes an in-flight slot for a request under a cap of size. It
// returns the slot to give back, and false when ctx ended first (the
// caller answers nothing useful: its client is gone). After l.wait it
// gives up waiting and admits the request over the cap.
func (l *limits) acquire(ctx context.Context, size int, log *slog.Logger) (*slot, bool) {
	sem := l.flight.chanFor(size)
	select {
	case sem <- struct{}{}:
	default:
		t := time.NewTimer(l.wait)
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			t.Stop()
			return nil, false
		case <-t.C:
			log.Warn("in-flight cap reached; serving over it after waiting", "max_in_flight", size, "waited", l.wait)
			sem = nil // admitted over the cap: no slot to give back
		}
		t.Stop()
	}
	l.metrics.InFlight(1)
	return &slot{l: l, sem: sem}, true
}

// slot is a request's place under the in-flight cap. release gives it
// back, once however often it is called; a nil slot holds nothing.
type slot struct {
	l    *limits
	sem  chan struct{} // nil: admitted over the cap
	done atomic.Bool
}

func (s *slot) release() {
	if s == nil || s.done.Swap(true) {
		return
	}
	s.l.metrics.InFlight(-1)
	if s.sem != nil {
		<-s.sem
	}
}

// rateLimited is a refusal: which limit, and when to retry.
type rateLimited struct {
	kind  string
	retry time.Duration
	// rule is set when a limits.rules rule refused; quota when it was
	// its daily quota.
	rule  bool
	quota bool
	// policy is the refusing limit's numbers, for the RateLimit-Policy
	// field: a rate's burst and rps, or a quota per day.
	rps    float64
	burst  int
	perDay int64
}

// message says which limit refused and when to retry, in words.
func (r *rateLimited) message() string {
	wait := time.Duration(r.retryAfterSeconds()) * time.Second
	if r.quota {
		return fmt.Sprintf("quota exhausted: limit %q allows %d calls a day; retry after %s", r.kind, r.perDay, wait)
	}
	return fmt.Sprintf("rate limited: limit %q allows %s calls a second (bursts of %d); retry after %s", r.kind, strconv.FormatFloat(r.rps, 'f', -1, 64), r.burst, wait)
}

// retryAfterSeconds is the Retry-After value: whole seconds, rounded up,
// at least 1.
func (r *rateLimited) retryAfterSeconds() int64 {
	s := int64(math.Ceil(r.retry.Seconds()))
	return max(s, 1)
}

// checkRate takes from every limit of cfg that applies to p calling
// tool, or returns why not: through the fleet limiter when cfg has rules
// or the limiter is shared, else from the local buckets. No limit: nil.
func (l *limits) checkRate(ctx context.Context, cfg *proxy.Config, p *authz.Principal, tool string) *rateLimited {
	if p == nil {
		return nil
	}
	if len(cfg.Rules) == 0 && !l.shared() {
		return l.checkBuckets(&cfg.Rate, p, tool)
	}
	cs := counters(cfg, p, tool)
	if len(cs) == 0 {
		return nil
	}
	ref := l.limiter().Take(ctx, cs)
	lm, _ := l.metrics.(LimitMetrics)
	if ref == nil {
		if lm != nil {
			for i := range cs {
				lm.LimitCall(cs[i].Rule, LimitAllowed)
			}
		}
		return nil
	}
	if lm != nil {
		result := LimitRefusedRate
		if ref.Quota {
			result = LimitRefusedQuota
		}
		lm.LimitCall(ref.Rule, result)
	}
	l.metrics.RateLimited(ref.Rule)
	c := ref.Counter
	return &rateLimited{kind: ref.Rule, retry: ref.Retry, rule: ref.Rule != RateLimitPrincipal && ref.Rule != RateLimitTool,
		quota: ref.Quota, rps: c.RPS, burst: c.Burst, perDay: c.PerDay}
}

// counters are the fleet counters p's call of tool takes from:
// limits.rate's buckets, then each rule that matches.
func counters(cfg *proxy.Config, p *authz.Principal, tool string) []fleet.Counter {
	var cs []fleet.Counter
	if b := cfg.Rate.PerPrincipal; b != nil {
		cs = append(cs, fleet.Counter{Rule: RateLimitPrincipal, Key: part(p.Subject) + part(p.Workspace), RPS: b.RPS, Burst: b.Burst})
	}
	if b := cfg.Rate.PerTool[tool]; b != nil && tool != "" {
		cs = append(cs, fleet.Counter{Rule: RateLimitTool, Key: part(p.Subject) + part(p.Workspace) + part(tool), RPS: b.RPS, Burst: b.Burst})
	}
	upstream, known := cfg.ToolUpstream[tool]
	for _, r := range cfg.Rules {
		switch {
		case r.NeedsTool() && !known,
			(r.ByUpstream || r.Upstreams != nil) && upstream == "",
			r.Workspaces != nil && !r.Workspaces[p.Workspace],
			r.Subjects != nil && !r.Subjects[p.Subject],
			r.Tools != nil && !r.Tools[tool],
			r.Upstreams != nil && !r.Upstreams[upstream]:
			continue
		}
		var key string
		if r.ByWorkspace {
			key += "w" + part(p.Workspace)
		}
		if r.BySubject {
			key += "s" + part(p.Subject)
		}
		if r.ByTool {
			key += "t" + part(tool)
		}
		if r.ByUpstream {
			key += "u" + part(upstream)
		}
		c := fleet.Counter{Rule: r.Name, Key: key, PerDay: r.PerDay}
		if r.Rate != nil {
			c.RPS, c.Burst = r.Rate.RPS, r.Rate.Burst
		}
		cs = append(cs, c)
	}
	return cs
}

// part writes one value of a counter's key with its length first, so no
// value can pass for two.
func part(s string) string { return strconv.Itoa(len(s)) + ":" + s }

// checkBuckets takes a token from each bucket of cfg that applies to p
// calling tool, or returns why not. No bucket: no limit.
func (l *limits) checkBuckets(cfg *proxy.RateLimits, p *authz.Principal, tool string) *rateLimited {
	var want [2]wantToken
	n := 0
	if b := cfg.PerPrincipal; b != nil {
		want[n] = wantToken{bucketKey{p.Subject, p.Workspace, ""}, b, RateLimitPrincipal}
		n++
	}
	if b := cfg.PerTool[tool]; b != nil && tool != "" {
		want[n] = wantToken{bucketKey{p.Subject, p.Workspace, tool}, b, RateLimitTool}
		n++
	}
	if n == 0 {
		return nil
	}
	rl := l.rate.take(want[:n])
	if rl != nil {
		l.metrics.RateLimited(rl.kind)
		b := want[0].cfg
		for _, w := range want[:n] {
			if w.kind == rl.kind {
				b = w.cfg
			}
		}
		rl.rps, rl.burst = b.RPS, b.Burst
	}
	return rl
}

// bucketKey names a bucket; tool is "" for the per-principal one. It is a
// struct, not a joined string, so no subject can forge a separator.
type bucketKey struct{ subject, workspace, tool string }

type wantToken struct {
	key  bucketKey
	cfg  *proxy.Bucket
	kind string
}

type bucketEntry struct {
	key bucketKey
	lim *rate.Limiter
}

// rateLimiter holds the token buckets in an LRU list (front: most recently
// used). A mutex guards it; rate.Limiter's own lock nests inside, and no
// I/O happens under either.
type rateLimiter struct {
	now func() time.Time
	max int

	mu    sync.Mutex
	lru   list.List // of *bucketEntry
	byKey map[bucketKey]*list.Element
}

func newRateLimiter(now func() time.Time, maxBuckets int) *rateLimiter {
	return &rateLimiter{now: now, max: maxBuckets, byKey: make(map[bucketKey]*list.Element)}
}

// take takes one token from every wanted bucket, or none: when a bucket is
// empty it returns the first empty one's kind and the longest wait.
func (rl *rateLimiter) take(want []wantToken) *rateLimited {
	now := rl.now()
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.sweep(now)
	var (
		lims [2]*rate.Limiter
		out  *rateLimited
	)
	for i, w := range want {
		lim := rl.bucket(w.key, w.cfg, now)
		lims[i] = lim
		if tokens := lim.TokensAt(now); tokens < 1 {
			wait := time.Duration((1 - tokens) / float64(lim.Limit()) * float64(time.Second))
			if out == nil {
				out = &rateLimited{kind: w.kind, retry: wait}
			} else {
				out.retry = max(out.retry, wait)
			}
		}
	}
	if out != nil {
		return out
	}
	for _, lim := range lims[:len(want)] {
		lim.AllowN(now, 1)
	}
	return nil
}

// bucket returns the bucket for key, made (full) or adjusted to cfg, and
// marks it most recently used.
func (rl *rateLimiter) bucket(key bucketKey, cfg *proxy.Bucket, now time.Time) *rate.Limiter {
	if el, ok := rl.byKey[key]; ok {
		rl.lru.MoveToFront(el)
		lim := el.Value.(*bucketEntry).lim
		if lim.Limit() != rate.Limit(cfg.RPS) {
			lim.SetLimitAt(now, rate.Limit(cfg.RPS))
		}
		if lim.Burst() != cfg.Burst {
			lim.SetBurstAt(now, cfg.Burst)
		}
		return lim
	}
	e := &bucketEntry{key: key, lim: rate.NewLimiter(rate.Limit(cfg.RPS), cfg.Burst)}
	rl.byKey[key] = rl.lru.PushFront(e)
	for rl.lru.Len() > rl.max {
		rl.remove(rl.lru.Back())
	}
	return e.lim
}

// sweep drops least recently used buckets that are full again. It stops
// at the first one that is not, so each call costs O(1) amortized.
func (rl *rateLimiter) sweep(now time.Time) {
	for el := rl.lru.Back(); el != nil; el = rl.lru.Back() {
		lim := el.Value.(*bucketEntry).lim
		if lim.TokensAt(now) < float64(lim.Burst()) {
			return
		}
		rl.remove(el)
	}
}

func (rl *rateLimiter) remove(el *list.Element) {
	delete(rl.byKey, el.Value.(*bucketEntry).key)
	rl.lru.Remove(el)
}

func (rl *rateLimiter) len() int {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return len(rl.byKey)
}

// headerFields are the refusing limit as the RateLimit-Policy and
// RateLimit fields of draft-ietf-httpapi-ratelimit-headers (structured
// field lists): the policy's quota q over a window of w seconds (a rate:
// its burst over the time it takes to refill; a quota: the day), and the
// remaining r (none) with t seconds until calls are admitted again. The
// policy name is the limit's, quoted as an sf-string.
func (r *rateLimited) headerFields() (policy, state string) {
	name := strconv.Quote(r.kind) // rule names are [A-Za-z0-9._-]: no escapes needed
	if r.quota {
		policy = fmt.Sprintf("%s;q=%d;w=86400", name, r.perDay)
	} else {
		w := int64(1)
		if r.rps > 0 {
			w = max(1, int64(math.Ceil(float64(r.burst)/r.rps)))
		}
		policy = fmt.Sprintf("%s;q=%d;w=%d", name, max(r.burst, 1), w)
	}
	return policy, fmt.Sprintf("%s;r=0;t=%d", name, r.retryAfterSeconds())
}

// retryAfterMillis rounds up, so a client that waits that long finds a
// token.
func retryAfterMillis(d time.Duration) int64 {
	return max(int64(math.Ceil(float64(d)/float64(time.Millisecond))), 1)
}
