package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore keeps approvals in Redis so that replicas share them: a
// request granted through one gateway releases the call retried on
// another. Each request is a hash (its JSON, its status and its expiry in
// milliseconds); a state change is one Lua script that compares the
// status and the expiry and sets the new state, so two nodes racing to
// claim the same approval see one winner. Requests are listed per
// workspace through a sorted set; a request's key expires a day after
// it ends, or KeepUndecided after it expires undecided.
type RedisStore struct {
	rdb    *redis.Client
	prefix string
}

// RedisOptions configures a [RedisStore].
type RedisOptions struct {
	// Prefix starts every key. Empty: "mcpgw:approval:".
	Prefix string
}

// OpenRedisStore connects to the Redis server at url
// (redis://[user:password@]host:port/db) and checks that it answers.
func OpenRedisStore(ctx context.Context, url string, opts *RedisOptions) (*RedisStore, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("approval store: %v", err)
	}
	s := &RedisStore{rdb: redis.NewClient(o), prefix: "mcpgw:approval:"}
	if opts != nil && opts.Prefix != "" {
		s.prefix = opts.Prefix
	}
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.rdb.Close()
		return nil, fmt.Errorf("approval store: redis at %s does not answer: %v", o.Addr, err)
	}
	if _, err := s.Epoch(ctx); err != nil {
		s.rdb.Close()
		return nil, err
	}
	return s, nil
}

func (s *RedisStore) Close() error { return s.rdb.Close() }

func (s *RedisStore) reqKey(id string) string { return s.prefix + "req:" + id }
func (s *RedisStore) wsKey(ws string) string  { return s.prefix + "ws:" + ws }

// callKey indexes the requests of one call: the same requester and actor
// asking the same tool with the same arguments in one workspace, so
// Latest reads one entry instead of the workspace's whole day.
func (s *RedisStore) callKey(k CallKey) string {
	return s.prefix + "call:" + callHash(k.Workspace, k.Subject, k.Actor, k.Tool, k.Digest)
}

func callHash(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}

// pendingKeys are the sorted sets of the undecided requests (scored by
// expiry in milliseconds) that r counts in: its call's, its requester's
// in its workspace, and its workspace's. Create admits through them;
// a decision takes r out of them.
func (s *RedisStore) pendingKeys(r *Request) []string {
	k := r.Key()
	return []string{
		s.prefix + "pend:call:" + callHash(k.Workspace, k.Subject, k.Actor, k.Tool, k.Digest),
		s.prefix + "pend:req:" + callHash(k.Workspace, k.Subject),
		s.prefix + "pend:ws:" + k.Workspace,
	}
}

func (s *RedisStore) nonceKey(n string) string {
	return s.prefix + "nonce:" + n
}

// createScript stores a pending request when its call has none pending
// and its requester and workspace are under their caps, all in one step.
// The caps count undecided requests until KeepUndecided past their
// expiry (see Limits), when they leave the sets and their hash expires;
// an expired request of the same call no longer counts, as the new one
// replaces it.
// KEYS: the request, the workspace index, the call index, then the
// pending sets (call, requester, workspace). ARGV: id, data, status,
// expiry ms, created score, now ms, ttl ms, requester cap, workspace cap
// (0: none), now less KeepUndecided ms. Answers {"ok"}, {"pending", id},
// {"requester"}, {"workspace"} or {"exists"}.
var createScript = redis.NewScript(`
local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[6])
for _, id in ipairs(gone) do
  for i = 5, 6 do redis.call('ZREM', KEYS[i], id) end
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[6])
for i = 5, 6 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[10]) end
local cur = redis.call('ZRANGE', KEYS[4], 0, 0)
if #cur > 0 then return {'pending', cur[1]} end
local maxReq, maxWs = tonumber(ARGV[8]), tonumber(ARGV[9])
if maxReq > 0 and redis.call('ZCARD', KEYS[5]) >= maxReq then return {'requester'} end
if maxWs > 0 and redis.call('ZCARD', KEYS[6]) >= maxWs then return {'workspace'} end
if redis.call('HSETNX', KEYS[1], 'data', ARGV[2]) == 0 then return {'exists'} end
local ttl = tonumber(ARGV[7])
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'expires', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl)
for i = 2, 3 do
  redis.call('ZADD', KEYS[i], ARGV[5], ARGV[1])
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
for i = 4, 6 do
  redis.call('ZADD', KEYS[i], ARGV[4], ARGV[1])
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return {'ok'}
`)

func (s *RedisStore) Create(ctx context.Context, r *Request, lim Limits) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// Undecided, a request is kept KeepUndecided past its expiry (a
	// decision keeps it a day longer); at least a minute, so a request
	// whose clock is far behind is not deleted as it is stored.
	ttl := max(time.Until(r.Expires)+KeepUndecided, time.Minute)
	keys := append([]string{s.reqKey(r.ID), s.wsKey(r.Workspace), s.callKey(r.Key())}, s.pendingKeys(r)...)
	out, err := createScript.Run(ctx, s.rdb, keys, r.ID, data, string(r.Status), r.Expires.UnixMilli(),
		strconv.FormatInt(r.Created.UnixNano(), 10), r.Created.UnixMilli(), ttl.Milliseconds(), lim.PerRequester, lim.PerWorkspace,
		r.Created.Add(-KeepUndecided).UnixMilli()).StringSlice()
	if err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	switch out[0] {
	case "ok":
		return nil
	case "pending":
		cur, err := s.Get(ctx, out[1])
		if err != nil {
			return err
		}
		return &PendingError{Request: cur}
	case "requester":
		return &LimitError{Scope: "requester", Max: lim.PerRequester}
	case "workspace":
		return &LimitError{Scope: "workspace", Max: lim.PerWorkspace}
	}
	return fmt.Errorf("approval %s already exists", r.ID)
}

func (s *RedisStore) Get(ctx context.Context, id string) (*Request, error) {
	data, err := s.rdb.HGet(ctx, s.reqKey(id), "data").Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	var r Request
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("approval store: request %s is not valid JSON: %v", id, err)
	}
	return &r, nil
}

func (s *RedisStore) List(ctx context.Context, workspace string, now time.Time) ([]*Request, error) {
	ids, err := s.rdb.ZRange(ctx, s.wsKey(workspace), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	var out []*Request
	for _, id := range ids {
		r, err := s.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			s.rdb.ZRem(ctx, s.wsKey(workspace), id)
			continue
		}
		if err != nil {
			return nil, err
		}
		if r.StatusAt(now) == StatusPending {
			out = append(out, r)
		}
	}
	return out, nil
}

// casScript sets a request's status and data when its status is ARGV[1]
// and it has not expired at ARGV[2] (milliseconds), keeps it ARGV[6]
// milliseconds longer (a decided request stays a day past its end), and
// takes it (ARGV[5]) out of the sorted sets KEYS[2…] (the pending sets,
// on a decision): 1 when set, 0 when not, -1 when there is no such
// request.
var casScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return -1 end
if st ~= ARGV[1] then return 0 end
local exp = tonumber(redis.call('HGET', KEYS[1], 'expires'))
if tonumber(ARGV[2]) >= exp then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'data', ARGV[4])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[6]) then redis.call('PEXPIRE', KEYS[1], ARGV[6]) end
for i = 2, #KEYS do redis.call('ZREM', KEYS[i], ARGV[5]) end
return 1
`)

// transition moves id from status from to the status change sets.
func (s *RedisStore) transition(ctx context.Context, id string, from Status, now time.Time, change func(*Request)) (*Request, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.StatusAt(now) != from {
		r.Status = r.StatusAt(now)
		return r, conflict(r)
	}
	change(r)
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	keys := []string{s.reqKey(id)}
	if from == StatusPending {
		keys = append(keys, s.pendingKeys(r)...)
	}
	keep := max(time.Until(r.Expires), 0) + keepFinished
	n, err := casScript.Run(ctx, s.rdb, keys, string(from), strconv.FormatInt(now.UnixMilli(), 10), string(r.Status), data, id, keep.Milliseconds()).Int()
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	switch n {
	case 1:
		return r, nil
	case -1:
		return nil, ErrNotFound
	}
	// Someone else changed it first: report it as it stands now.
	cur, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	cur.Status = cur.StatusAt(now)
	return cur, conflict(cur)
}

func (s *RedisStore) Decide(ctx context.Context, id, approver string, approve bool, now time.Time) (*Request, error) {
	return s.transition(ctx, id, StatusPending, now, func(r *Request) {
		r.Status = StatusRejected
		if approve {
			r.Status = StatusApproved
		}
		r.Approver, r.Decided = approver, now
	})
}

func (s *RedisStore) Claim(ctx context.Context, id string, now time.Time) (*Request, error) {
	return s.transition(ctx, id, StatusApproved, now, func(r *Request) {
		r.Status, r.Executed = StatusExecuted, now
	})
}

// epochKey holds the store's generation; it never expires, so a Redis
// that loses its data (flushed, restarted without persistence) loses it
// too, and the next epoch differs.
func (s *RedisStore) epochKey() string { return s.prefix + "epoch" }

// Epoch returns the store's epoch, making it when absent.
func (s *RedisStore) Epoch(ctx context.Context) (string, error) {
	if _, err := s.rdb.SetNX(ctx, s.epochKey(), newEpoch(), 0).Result(); err != nil {
		return "", fmt.Errorf("approval store: %w", err)
	}
	e, err := s.rdb.Get(ctx, s.epochKey()).Result()
	if err != nil {
		return "", fmt.Errorf("approval store: %w", err)
	}
	return e, nil
}

// spendScript spends nonce KEYS[1] for ARGV[2] milliseconds when the
// epoch (KEYS[2]) is ARGV[1]: 1 when spent now, 0 when spent before, -1
// for another epoch (made anew, ARGV[3], when it was lost).
var spendScript = redis.NewScript(`
local e = redis.call('GET', KEYS[2])
if not e then
  redis.call('SET', KEYS[2], ARGV[3])
  return -1
end
if e ~= ARGV[1] then return -1 end
if redis.call('SET', KEYS[1], 1, 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`)

func (s *RedisStore) Spend(ctx context.Context, nonce, epoch string, expires time.Time) (bool, error) {
	ttl := max(time.Until(expires)+time.Minute, time.Second)
	n, err := spendScript.Run(ctx, s.rdb, []string{s.nonceKey(nonce), s.epochKey()}, epoch, strconv.FormatInt(ttl.Milliseconds(), 10), newEpoch()).Int()
	if err != nil {
		return false, fmt.Errorf("approval store: %w", err)
	}
	if n < 0 {
		return false, ErrEpoch
	}
	return n == 1, nil
}

func (s *RedisStore) Latest(ctx context.Context, k CallKey) (*Request, error) {
	// Newest first, from this call's own index; an id whose request has
	// gone (expired out of Redis) is skipped.
	ids, err := s.rdb.ZRevRange(ctx, s.callKey(k), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	for _, id := range ids {
		r, err := s.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if matches(r, k) {
			return r, nil
		}
	}
	return nil, ErrNotFound
}
