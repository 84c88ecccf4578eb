package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Keys in Redis: a counter's rate is a string (its TAT in microseconds of
// Redis's clock), its quota a hash {day, n}; a lease set is a sorted set
// of members scored by expiry; the fleet is a sorted set of replicas
// scored the same way. Names and keys are hashed, so no caller input
// shapes a Redis key. Every key carries a TTL: a rate's until it is full
// again, a quota's two days, a lease set's its longest lease.

func (l *Limiter) counterKeys(c *Counter) (rate, quota string) {
	sum := sha256.Sum256([]byte(strconv.Itoa(len(c.Rule)) + ":" + c.Rule + c.Key))
	h := hex.EncodeToString(sum[:16])
	return l.prefix + "rate:" + h, l.prefix + "quota:" + h
}

// takeScript checks every counter and takes from all of them only when
// all admit. KEYS: rate and quota key of each counter, in turn. ARGV:
// interval (µs, 0: no rate), tolerance (µs) and quota (0: none) of each.
// Answers {admitted (1|0), the refusing counter with the longest wait
// (1-based; negative for its quota), that wait in µs, then each counter's count of the day (after the take
// when admitted)}.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local day = math.floor(tonumber(t[1]) / 86400)
local n = #KEYS / 2
local tats, counts = {}, {}
local first, retry = 0, 0
for i = 1, n do
  local interval, tol, quota = tonumber(ARGV[3*i-2]), tonumber(ARGV[3*i-1]), tonumber(ARGV[3*i])
  if interval > 0 then
    local tat = tonumber(redis.call('GET', KEYS[2*i-1]) or '0') or 0
    if tat < now then tat = now end
    local over = tat - now - tol
    if over > 0 and over > retry then first, retry = i, over end
    tats[i] = tat + interval
  end
  counts[i] = 0
  if quota > 0 then
    local h = redis.call('HMGET', KEYS[2*i], 'day', 'n')
    if tonumber(h[1]) == day then counts[i] = tonumber(h[2]) or 0 end
    local wait = (day + 1) * 86400000000 - now
    if counts[i] + 1 > quota and wait > retry then first, retry = -i, wait end
  end
end
local out = {0, first, retry}
if first ~= 0 then
  for i = 1, n do out[3+i] = counts[i] end
  return out
end
out[1] = 1
for i = 1, n do
  if tats[i] then
    local ttl = math.floor((tats[i] - now) / 1000) + 1000
    redis.call('SET', KEYS[2*i-1], string.format('%.0f', tats[i]), 'PX', ttl)
  end
  if tonumber(ARGV[3*i]) > 0 then
    counts[i] = counts[i] + 1
    redis.call('HSET', KEYS[2*i], 'day', day, 'n', counts[i])
    redis.call('PEXPIRE', KEYS[2*i], 172800000)
  end
  out[3+i] = counts[i]
end
return out
`)

func (l *Limiter) redisTake(ctx context.Context, cs []Counter) (*Refusal, []int64, error) {
	ctx, cancel := l.opContext(ctx)
	defer cancel()
	keys := make([]string, 0, 2*len(cs))
	args := make([]any, 0, 3*len(cs))
	for i := range cs {
		c := &cs[i]
		rk, qk := l.counterKeys(c)
		keys = append(keys, rk, qk)
		var interval, tol time.Duration
		if c.RPS > 0 {
			interval, tol = gcra(c, 1)
		}
		args = append(args, interval.Microseconds(), tol.Microseconds(), c.PerDay)
	}
	res, err := takeScript.Run(ctx, l.rdb, keys, args...).Int64Slice()
	if err != nil {
		return nil, nil, err
	}
	if len(res) != 3+len(cs) {
		return nil, nil, errShortReply
	}
	counts := res[3:]
	if res[0] == 1 {
		return nil, counts, nil
	}
	i, quota := res[1], false
	if i < 0 {
		i, quota = -i, true
	}
	if i < 1 || int(i) > len(cs) {
		return nil, nil, fmt.Errorf("limit store: Redis refused counter %d of %d", i, len(cs))
	}
	c := cs[i-1]
	return &Refusal{Rule: c.Rule, Quota: quota, Retry: time.Duration(res[2]) * time.Microsecond, Counter: c}, counts, nil
}

func (l *Limiter) leaseKeys(ls Lease) (upstream, workspace string) {
	u := sha256.Sum256([]byte(ls.Upstream))
	w := sha256.Sum256([]byte(strconv.Itoa(len(ls.Upstream)) + ":" + ls.Upstream + ls.Workspace))
	return l.prefix + "lease:" + hex.EncodeToString(u[:16]), l.prefix + "lease:ws:" + hex.EncodeToString(w[:16])
}

// acquireScript takes a lease when the workspace's set and the upstream's
// are under their caps (0: none), after dropping expired leases. KEYS:
// the upstream's set, the workspace's. ARGV: member, cap, workspace cap,
// TTL µs. Answers 0 (taken), 1 (the upstream is full) or 2 (the
// workspace's share is).
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cap, wsCap, ttl = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if wsCap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= wsCap then return 2 end
end
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= cap then return 1 end
end
local exp = string.format('%.0f', now + ttl)
local pttl = math.floor(ttl / 1000) + 1000
for i = 1, 2 do
  if (i == 1 and cap > 0) or (i == 2 and wsCap > 0) then
    redis.call('ZADD', KEYS[i], exp, ARGV[1])
    if redis.call('PTTL', KEYS[i]) < pttl then redis.call('PEXPIRE', KEYS[i], pttl) end
  end
end
return 0
`)

func (l *Limiter) redisAcquire(ctx context.Context, ls Lease, member string) (heldBy string, err error) {
	ctx, cancel := l.opContext(ctx)
	defer cancel()
	uk, wk := l.leaseKeys(ls)
	r, err := acquireScript.Run(ctx, l.rdb, []string{uk, wk}, member, ls.Max, ls.MaxPerWorkspace, ls.TTL.Microseconds()).Int64()
	switch {
	case err != nil:
		return "", err
	case r == 1:
		return CapUpstream, nil
	case r == 2:
		return CapWorkspace, nil
	}
	return "", nil
}

func (l *Limiter) redisRelease(ls Lease, member string) error {
	ctx, cancel := l.opContext(context.Background())
	defer cancel()
	uk, wk := l.leaseKeys(ls)
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if ls.Max > 0 {
			p.ZRem(ctx, uk, member)
		}
		if ls.MaxPerWorkspace > 0 {
			p.ZRem(ctx, wk, member)
		}
		return nil
	})
	return err
}

// beatScript keeps this replica in the fleet's set for three heartbeats
// and answers how many replicas are in it. KEYS: the set. ARGV: member,
// TTL µs.
var beatScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[2]) / 1000) + 1000)
return redis.call('ZCARD', KEYS[1])
`)

func (l *Limiter) redisBeat() (int64, error) {
	ctx, cancel := l.opContext(context.Background())
	defer cancel()
	return beatScript.Run(ctx, l.rdb, []string{l.prefix + "replicas"}, l.id, (3 * heartbeat).Microseconds()).Int64()
}
