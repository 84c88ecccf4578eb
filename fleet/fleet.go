package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults for [Options].
const (
	// DefaultOpTimeout bounds one Redis operation; past it the operation
	// is counted locally.
	DefaultOpTimeout = 100 * time.Millisecond
	// slowOps is how many operations in a row must time out before the
	// store counts locally for RetryAfter: one slow answer (a busy
	// machine, a pause) costs one operation, not a second of counting
	// beside the fleet. An error that is not a timeout (refused, reset)
	// counts at once.
	slowOps = 3
	// DefaultRetryAfter is how long the store counts locally after a
	// failed Redis operation before it tries Redis again.
	DefaultRetryAfter = time.Second
	// DefaultMaxKeys bounds the counters kept in memory.
	DefaultMaxKeys = 65536
	// DefaultPrefix starts every key the store writes in Redis.
	DefaultPrefix = "mcpgw:fleet:"
)

// heartbeat is how often a replica announces itself; it is counted in the
// fleet for three times as long.
const heartbeat = 2 * time.Second

// Modes, as [Limiter.Mode] reports them.
const (
	ModeLocal = "local" // no Redis configured: every count is this process's
	ModeRedis = "redis" // counting in Redis (or locally for a moment while it is away)
)

// Options configures a [Limiter]. The zero value counts locally.
type Options struct {
	// Redis is the server's URL (redis://, rediss:// or unix://). Empty:
	// count in this process only.
	Redis string
	// Prefix starts every key in Redis. Empty: [DefaultPrefix].
	Prefix string
	// OpTimeout bounds each Redis operation. Zero: [DefaultOpTimeout].
	OpTimeout time.Duration
	// RetryAfter is how long to count locally after Redis failed before
	// trying it again. Zero: [DefaultRetryAfter].
	RetryAfter time.Duration
	// Logger receives the outage and recovery lines. Nil: discard.
	Logger *slog.Logger
	// Metrics observes fallbacks and the fleet's size. Nil: none.
	Metrics Metrics
	// Now is the local clock. Nil: time.Now.
	Now func() time.Time
	// MaxKeys bounds the local counters. Zero: [DefaultMaxKeys].
	MaxKeys int
}

// Metrics observes the store. Implementations must be safe for concurrent
// use.
type Metrics interface {
	// Fallback is one operation ("take", "acquire", "release",
	// "heartbeat") done locally because Redis failed or was away.
	Fallback(op string)
	// Shared is true while counting in Redis, false while counting
	// locally (always false without Redis).
	Shared(on bool)
	// Replicas is the fleet's size as last seen.
	Replicas(n int)
}

type noMetrics struct{}

func (noMetrics) Fallback(string) {}
func (noMetrics) Shared(bool)     {}
func (noMetrics) Replicas(int)    {}

// Counter is one counter a call takes from.
type Counter struct {
	// Rule names the limit in refusals and metrics.
	Rule string
	// Key tells this counter from the rule's others (a workspace, a
	// subject and tool…). Any bytes; it is hashed before it reaches Redis.
	Key string
	// RPS and Burst are the rate; RPS 0: no rate.
	RPS   float64
	Burst int
	// PerDay is the daily quota (UTC days); 0: none.
	PerDay int64
}

// Refusal says why a Take admitted nothing.
type Refusal struct {
	// Rule is the refusing counter with the longest wait (the first of
	// them when several wait as long): the one that binds.
	Rule string
	// Quota is true when that counter refused for its daily quota.
	Quota bool
	// Retry is how long until every refusing counter admits a call again:
	// that counter's wait.
	Retry time.Duration
	// Counter is the refusing counter, as given.
	Counter Counter
}

// Limiter counts rates, quotas and leases; see the package comment. Safe
// for concurrent use; Close stops its heartbeat.
type Limiter struct {
	log      *slog.Logger
	metrics  Metrics
	now      func() time.Time
	local    *local
	rdb      *redis.Client // nil: local only
	prefix   string
	opTime   time.Duration
	retry    time.Duration
	id       string // this replica in the fleet set and in lease members
	seq      atomic.Uint64
	replicas atomic.Int64

	mu      sync.Mutex
	downTil time.Time // zero: Redis is believed up
	down    bool      // an outage is being reported
	slow    int       // operations in a row that timed out

	stop chan struct{}
	done chan struct{}
}

// New returns a Limiter. With Options.Redis it parses the URL (a bad one
// is an error) but does not need Redis to answer: a store that cannot
// reach it counts locally until it can.
func New(opts *Options) (*Limiter, error) {
	if opts == nil {
		opts = &Options{}
	}
	l := &Limiter{log: opts.Logger, metrics: opts.Metrics, now: opts.Now, prefix: opts.Prefix,
		opTime: opts.OpTimeout, retry: opts.RetryAfter}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.metrics == nil {
		l.metrics = noMetrics{}
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.prefix == "" {
		l.prefix = DefaultPrefix
	}
	if l.opTime <= 0 {
		l.opTime = DefaultOpTimeout
	}
	if l.retry <= 0 {
		l.retry = DefaultRetryAfter
	}
	maxKeys := opts.MaxKeys
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	l.local = newLocal(maxKeys)
	l.replicas.Store(1)
	var b [8]byte
	_, _ = rand.Read(b[:])
	l.id = hex.EncodeToString(b[:])
	if opts.Redis == "" {
		l.metrics.Shared(false)
		return l, nil
	}
	o, err := redis.ParseURL(opts.Redis)
	if err != nil {
		return nil, fmt.Errorf("limit store: %v", err)
	}
	clientLogOnce.Do(func() { redis.SetLogger(clientLog{l.log}) })
	// Our own deadline bounds each operation, retries included. A
	// connection pooled before Redis restarted fails on first use: the
	// operation is retried at once on a fresh one, rather than taken for
	// an outage (which would count locally, beside the replicas that
	// count in Redis, for a second).
	o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff = 2, -1, -1
	// A refused dial is an answer: one attempt, not five 100 ms apart,
	// so an outage is seen (and counted locally) at once, not after
	// timeouts.
	o.DialerRetries, o.DialerRetryTimeout = 1, time.Millisecond
	o.DialTimeout = max(l.opTime, 100*time.Millisecond)
	o.ReadTimeout, o.WriteTimeout = l.opTime, l.opTime
	o.PoolTimeout = l.opTime
	o.ContextTimeoutEnabled = true
	l.rdb = redis.NewClient(o)
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	l.metrics.Shared(true)
	go l.beat()
	return l, nil
}

// Close stops the heartbeat and closes the connection to Redis.
func (l *Limiter) Close() error {
	if l == nil || l.rdb == nil {
		return nil
	}
	select {
	case <-l.stop:
		return nil
	default:
	}
	close(l.stop)
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), l.opTime)
	l.rdb.ZRem(ctx, l.prefix+"replicas", l.id)
	cancel()
	return l.rdb.Close()
}

// Mode is [ModeRedis] when a Redis server is configured, else [ModeLocal].
func (l *Limiter) Mode() string {
	if l.rdb != nil {
		return ModeRedis
	}
	return ModeLocal
}

// Shared reports whether counts go to Redis now: false without Redis and
// while it is away.
func (l *Limiter) Shared() bool {
	if l.rdb == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.downTil.IsZero()
}

// Replicas is the fleet's size as last seen in Redis (1 without Redis,
// or before it was ever reached).
func (l *Limiter) Replicas() int { return int(l.replicas.Load()) }

// useRedis reports whether the next operation should try Redis.
func (l *Limiter) useRedis() bool {
	if l.rdb == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.downTil.IsZero() || !l.now().Before(l.downTil)
}

// failed notes a Redis operation that failed: after an error other than
// a timeout, or slowOps timeouts in a row, the store counts locally for
// l.retry. The first failure of an outage is logged.
func (l *Limiter) failed(op string, err error) {
	l.mu.Lock()
	if isTimeout(err) {
		if l.slow++; l.slow < slowOps && !l.down {
			l.mu.Unlock()
			return
		}
	}
	l.downTil = l.now().Add(l.retry)
	first := !l.down
	l.down = true
	l.mu.Unlock()
	if first {
		l.metrics.Shared(false)
		l.log.Warn("shared limit store unavailable; counting limits locally, scaled to this replica's share of the fleet, until it answers",
			"op", op, "error", err, "replicas", l.Replicas(), "retry_every", l.retry)
	}
}

// succeeded notes a Redis operation that worked: an outage, if any, is
// over.
func (l *Limiter) succeeded() {
	l.mu.Lock()
	was := l.down
	l.down, l.downTil, l.slow = false, time.Time{}, 0
	l.mu.Unlock()
	if was {
		l.metrics.Shared(true)
		l.log.Info("shared limit store answers again; counting limits in Redis", "replicas", l.Replicas())
	}
}

// opContext bounds one Redis operation. It does not end with the caller:
// a call whose client left still gives its lease back.
func (l *Limiter) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), l.opTime)
}

// share is the fraction of a limit this replica enforces while counting
// locally: 1 without Redis, 1/N after a fleet of N was seen.
func (l *Limiter) share() int64 {
	if l.rdb == nil {
		return 1
	}
	return max(l.replicas.Load(), 1)
}

// Take takes one call from every counter, or from none and says why.
// No counters: nil.
func (l *Limiter) Take(ctx context.Context, cs []Counter) *Refusal {
	if len(cs) == 0 {
		return nil
	}
	if l.useRedis() {
		ref, counts, err := l.redisTake(ctx, cs)
		if err == nil {
			l.succeeded()
			l.local.mirror(cs, counts, l.now())
			return ref
		}
		l.failed("take", err)
	}
	if l.rdb == nil {
		return l.local.take(cs, l.now(), 1)
	}
	l.metrics.Fallback("take")
	ref := l.local.take(cs, l.now(), l.share())
	if ref != nil && ref.Quota {
		// A local quota count is this replica's share while Redis is away,
		// not the fleet's word: Redis may be back, with room, once the
		// retry window is over, so the caller is not sent to midnight.
		ref.Retry = min(ref.Retry, l.retry)
	}
	return ref
}

// Lease is a call's claim on an upstream's concurrency caps.
type Lease struct {
	// Upstream names the upstream.
	Upstream string
	// Workspace is the caller's, for MaxPerWorkspace.
	Workspace string
	// Max caps the upstream's calls in flight; 0: no cap.
	Max int
	// MaxPerWorkspace caps one workspace's; 0: no cap.
	MaxPerWorkspace int
	// TTL is how long the lease is held at most: the upstream's timeout
	// plus a margin. A replica that dies holding it gives it back then.
	TTL time.Duration
}

// Caps, as Acquire reports which one held a call back.
const (
	CapUpstream  = "max_concurrent"
	CapWorkspace = "max_concurrent_per_workspace"
)

// Acquire waits until the lease fits under its caps, or ctx ends. It
// returns the function that gives the lease back (call it once the call
// is over), or, when ctx ended first, nil and the cap that held the call
// back ([CapWorkspace] when the workspace's share did).
func (l *Limiter) Acquire(ctx context.Context, ls Lease) (release func(), heldBy string) {
	if ls.Max <= 0 && ls.MaxPerWorkspace <= 0 {
		return func() {}, ""
	}
	member := l.id + ":" + strconv.FormatUint(l.seq.Add(1), 36)
	backoff := 2 * time.Millisecond
	tried := false // an acquire was sent to Redis for member
	for {
		if l.useRedis() {
			tried = true
			blocked, err := l.redisAcquire(ctx, ls, member)
			if err == nil {
				l.succeeded()
				if blocked == "" {
					rel := l.local.hold(ls)
					return l.releaser(ls, member, rel), ""
				}
				heldBy = blocked
				if !sleep(ctx, backoff) {
					return nil, heldBy
				}
				backoff = min(backoff*2, 50*time.Millisecond)
				continue
			}
			l.failed("acquire", err)
		}
		if l.rdb != nil {
			l.metrics.Fallback("acquire")
		}
		// Locally: wait for a local slot, but look at Redis again now and
		// then, so a long wait resumes shared counting when it can.
		wait := ctx
		var cancel context.CancelFunc = func() {}
		if l.rdb != nil {
			wait, cancel = context.WithTimeout(ctx, l.retry)
		}
		rel, by := l.local.acquire(wait, ls, l.share())
		cancel()
		if rel != nil {
			if tried {
				// Redis may still run the acquire that timed out, after
				// this call gave up on it: the lease it adds would hold a
				// slot of the fleet's with no call behind it until its
				// TTL. So the member leaves Redis when the call ends.
				return l.orphanReleaser(ls, member, rel), ""
			}
			return rel, ""
		}
		heldBy = by
		if ctx.Err() != nil {
			if tried {
				go l.redisRelease(ls, member) // a late acquire may still add it
			}
			return nil, heldBy
		}
	}
}

// orphanReleaser gives back the local count at once and, in the
// background, the Redis lease an acquire that failed may have left; a
// Redis that is away costs the caller nothing.
func (l *Limiter) orphanReleaser(ls Lease, member string, rel func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			rel()
			go l.redisRelease(ls, member) // best effort: the lease expires by itself within its TTL
		})
	}
}

// releaser gives back a Redis lease and its local count, once.
func (l *Limiter) releaser(ls Lease, member string, rel func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			rel()
			if err := l.redisRelease(ls, member); err != nil {
				// The lease expires by itself within its TTL.
				l.failed("release", err)
				l.metrics.Fallback("release")
			}
		})
	}
}

// beat announces this replica every heartbeat and reads the fleet's size;
// it also notices Redis coming back when no call does.
func (l *Limiter) beat() {
	defer close(l.done)
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		n, err := l.redisBeat()
		if err != nil {
			l.failed("heartbeat", err)
			l.metrics.Fallback("heartbeat")
		} else {
			l.replicas.Store(n)
			l.metrics.Replicas(int(n))
			l.succeeded()
		}
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
	}
}

// clientLog takes go-redis's own log lines (one per failed dial while
// Redis is away) into the process's log at Debug: left to the client they
// are plain text on stderr in the middle of the JSON log stream, repeated
// for as long as Redis is down, where the limiter logs an outage once.
// The client's logger is process-wide: the first Limiter with Redis sets
// it.
type clientLog struct{ log *slog.Logger }

var clientLogOnce sync.Once

func (c clientLog) Printf(ctx context.Context, format string, v ...any) {
	c.log.DebugContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// untilTomorrow is the time from now to the next UTC midnight.
func untilTomorrow(now time.Time) time.Duration {
	u := now.UTC()
	next := time.Date(u.Year(), u.Month(), u.Day()+1, 0, 0, 0, 0, time.UTC)
	return next.Sub(u)
}

// utcDay numbers UTC days since the epoch.
func utcDay(now time.Time) int64 { return now.Unix() / 86400 }

// scaled divides n by share, rounding up, at least 1.
func scaled(n, share int64) int64 {
	if share <= 1 {
		return n
	}
	return max(1, int64(math.Ceil(float64(n)/float64(share))))
}

var errShortReply = errors.New("limit store: short reply from Redis")

// isTimeout reports an operation that ran out of time rather than one
// Redis (or the network) refused.
func isTimeout(err error) bool {
	var ne net.Error
	// A wait for a pooled connection that runs out is a slow Redis (its
	// connections are all held by operations that have not answered),
	// not one that is down.
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrPoolTimeout) || (errors.As(err, &ne) && ne.Timeout())
}
