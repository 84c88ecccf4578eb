package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpgw/gateway/test/redistest"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/redis/go-redis/v9"
)

// twoNodes returns two clients of one store, as two gateway replicas see
// it: two FileStores on one file, or two Redis connections.
type storeKind struct {
	name string
	open func(t *testing.T) (approval.Store, approval.Store)
}

func storeKinds(t *testing.T) []storeKind {
	return []storeKind{
		{"file", func(t *testing.T) (approval.Store, approval.Store) {
			path := filepath.Join(t.TempDir(), "approvals.json")
			a, err := approval.OpenFileStore(path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := approval.OpenFileStore(path)
			return a, b
		}},
		{"redis", func(t *testing.T) (approval.Store, approval.Store) {
			url := redistest.Start(t)
			prefix := "test:" + approval.NewNonce() + ":"
			return openRedis(t, url, prefix), openRedis(t, url, prefix)
		}},
	}
}

func newRequest(requester, ws, args string, now time.Time, ttl time.Duration) *approval.Request {
	d, _ := approval.Digest([]byte(args))
	return &approval.Request{
		ID: approval.NewID(), Tool: "cancel_workflow", Workspace: ws, Requester: requester, Actor: requester,
		Arguments: json.RawMessage(args), Digest: d, Approvers: "approve",
		Created: now, Expires: now.Add(ttl), Status: approval.StatusPending,
	}
}

func TestStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			a, b := k.open(t)
			now := time.Now().Truncate(time.Millisecond)
			r := newRequest("alice", "acme", `{"id":"w1"}`, now, time.Minute)
			if err := a.Create(ctx, r, approval.Limits{}); err != nil {
				t.Fatalf("Create: %v", err)
			}
			if l, _ := b.List(ctx, "acme", now); len(l) != 1 || l[0].ID != r.ID {
				t.Fatalf("List(acme) on the other node = %v, want the request", l)
			}
			if l, _ := b.List(ctx, "globex", now); len(l) != 0 {
				t.Fatalf("List(globex) = %v, want none", l)
			}
			if _, err := b.Claim(ctx, r.ID, now); !errors.Is(err, approval.ErrConflict) {
				t.Fatalf("Claim before approval = %v, want ErrConflict", err)
			}
			got, err := b.Decide(ctx, r.ID, "bob", true, now)
			if err != nil || got.Status != approval.StatusApproved || got.Approver != "bob" {
				t.Fatalf("Decide = %+v, %v", got, err)
			}
			if _, err := a.Decide(ctx, r.ID, "carol", false, now); !errors.Is(err, approval.ErrConflict) {
				t.Fatalf("second Decide = %v, want ErrConflict", err)
			}
			if l, _ := a.List(ctx, "acme", now); len(l) != 0 {
				t.Fatalf("List after the decision = %v, want none pending", l)
			}
			if _, err := a.Claim(ctx, r.ID, now); err != nil {
				t.Fatalf("Claim = %v", err)
			}
			c, err := b.Claim(ctx, r.ID, now)
			if !errors.Is(err, approval.ErrConflict) || c.Status != approval.StatusExecuted {
				t.Fatalf("second Claim = %+v, %v; want executed conflict", c, err)
			}
			if _, err := a.Get(ctx, "apr_00000000000000000000000000000000"); !errors.Is(err, approval.ErrNotFound) {
				t.Fatalf("Get(unknown) = %v", err)
			}
			// Expiry: neither decided nor claimed after it.
			late := newRequest("alice", "acme", `{}`, now, time.Second)
			a.Create(ctx, late, approval.Limits{})
			if d, err := b.Decide(ctx, late.ID, "bob", true, now.Add(time.Second)); !errors.Is(err, approval.ErrConflict) || d.Status != approval.StatusExpired {
				t.Fatalf("Decide after expiry = %+v, %v", d, err)
			}
			// Nonces spend once across nodes.
			n := approval.NewNonce()
			epoch, err := a.Epoch(ctx)
			if e2, _ := b.Epoch(ctx); err != nil || epoch == "" || e2 != epoch {
				t.Fatalf("Epoch = %q, %v on one node and %q on the other; want one epoch", epoch, err, e2)
			}
			if ok, _ := a.Spend(ctx, n, epoch, now.Add(time.Minute)); !ok {
				t.Fatal("first Spend = false")
			}
			if ok, _ := b.Spend(ctx, n, epoch, now.Add(time.Minute)); ok {
				t.Fatal("second Spend on the other node = true")
			}
		})
	}
}

func TestFileStoreSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "approvals.json")
	s, _ := approval.OpenFileStore(path)
	now := time.Now()
	r := newRequest("alice", "acme", `{}`, now, time.Minute)
	s.Create(ctx, r, approval.Limits{})
	s.Decide(ctx, r.ID, "bob", true, now)
	s2, err := approval.OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Claim(ctx, r.ID, now); err != nil {
		t.Fatalf("Claim after reopening = %v", err)
	}
}

// TestPropertyNoWriteWithoutApprovalNorTwice drives random sequences of
// calls (creating requests), approvals (some by the requester, some from
// another workspace, some without the gate), rejections, time passing
// past expiries and retries with right or changed arguments, from two
// nodes of one store, retries also racing each other. Whatever the
// sequence, a write is executed only through Release of a request that a
// rightful approver approved before expiry, with its exact arguments, and
// never twice.
func TestPropertyNoWriteWithoutApprovalNorTwice(t *testing.T) {
	ctx := context.Background()
	subjects := []string{"alice", "bob", "carol"}
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			var total, refused atomic.Int64
			defer func() {
				// The property must not hold vacuously.
				if total.Load() == 0 || refused.Load() == 0 {
					t.Errorf("%d executions and %d refused retries over all seeds: the sequences exercise too little", total.Load(), refused.Load())
				}
			}()
			for seed := range uint64(25) {
				a, b := k.open(t)
				nodes := []approval.Store{a, b}
				rng := rand.New(rand.NewPCG(seed, 14))
				now := time.Now().Truncate(time.Millisecond)
				type model struct {
					r          *approval.Request
					approvedBy string
					approvedAt time.Time
					decided    bool
				}
				var reqs []*model
				executed := map[string]int{}
				var mu sync.Mutex
				execute := func(id string) {
					mu.Lock()
					executed[id]++
					mu.Unlock()
				}
				for step := range 60 {
					node := nodes[rng.IntN(2)]
					switch op := rng.IntN(6); {
					case op == 0 || len(reqs) == 0: // a call creates a request
						sub := subjects[rng.IntN(3)]
						r := newRequest(sub, "acme", fmt.Sprintf(`{"id":"w%d"}`, rng.IntN(3)), now, time.Duration(1+rng.IntN(5))*time.Second)
						r.AllowSelf = rng.IntN(4) == 0
						err := node.Create(ctx, r, approval.Limits{})
						if pe, ok := errors.AsType[*approval.PendingError](err); ok {
							// One pending request per call: the retry waits on it.
							if pe.Request.Requester != sub || pe.Request.Digest != r.Digest || pe.Request.StatusAt(now) != approval.StatusPending {
								t.Fatalf("seed %d step %d: Create answered pending %+v for %s %s", seed, step, pe.Request, sub, r.Arguments)
							}
							continue
						}
						if err != nil {
							t.Fatal(err)
						}
						for _, m := range reqs {
							if m.r.Requester == sub && m.r.Digest == r.Digest && m.r.Status == approval.StatusPending && m.approvedBy == "" && !m.decided && now.Before(m.r.Expires) {
								t.Fatalf("seed %d step %d: a second pending request was created for %s %s beside %s", seed, step, sub, r.Arguments, m.r.ID)
							}
						}
						reqs = append(reqs, &model{r: r})
					case op == 1 || op == 2: // someone approves or rejects
						m := reqs[rng.IntN(len(reqs))]
						sub, ws := subjects[rng.IntN(3)], "acme"
						if rng.IntN(5) == 0 {
							ws = "globex"
						}
						passes := rng.IntN(5) != 0
						if approval.CheckDecider(m.r, approval.Decider{Subject: sub, Actor: sub, Workspace: ws}, passes, true) != approval.RefusalNone {
							continue
						}
						approve := op == 1
						got, err := node.Decide(ctx, m.r.ID, sub, approve, now)
						if err == nil {
							m.decided = true
						}
						if err == nil && approve {
							m.approvedBy, m.approvedAt = got.Approver, now
						}
					case op == 3: // time passes
						now = now.Add(time.Duration(rng.IntN(2000)) * time.Millisecond)
					default: // the requester (or someone else) retries, maybe twice at once
						m := reqs[rng.IntN(len(reqs))]
						sub := m.r.Requester
						if rng.IntN(6) == 0 {
							sub = subjects[rng.IntN(3)]
						}
						args := string(m.r.Arguments)
						if rng.IntN(6) == 0 {
							args = `{"id":"changed"}`
						}
						digest, _ := approval.Digest([]byte(args))
						var wg sync.WaitGroup
						for i := range 1 + rng.IntN(3) {
							wg.Add(1)
							go func() {
								defer wg.Done()
								r, err := approval.Release(ctx, nodes[i%2], m.r.ID, approval.CallKey{Workspace: "acme", Subject: sub, Actor: sub, Tool: m.r.Tool, Digest: digest}, now)
								if err != nil {
									refused.Add(1)
									return
								}
								total.Add(1)
								// The property: released only for its requester, exact
								// arguments, a rightful approver, before expiry.
								if sub != m.r.Requester || digest != m.r.Digest || m.approvedBy == "" ||
									(m.approvedBy == m.r.Requester && !m.r.AllowSelf) || !now.Before(m.r.Expires) || r.ID != m.r.ID {
									t.Errorf("seed %d step %d: released %+v for %s with digest %s (approved by %q)", seed, step, r, sub, digest, m.approvedBy)
								}
								execute(r.ID)
							}()
						}
						wg.Wait()
					}
				}
				for id, n := range executed {
					if n > 1 {
						t.Errorf("seed %d: %s executed %d times", seed, id, n)
					}
				}
			}
		})
	}
}

// TestLatestFindsTheCallAmongOthers: Latest answers for one call (the
// requester, actor, tool and arguments) whatever else the workspace holds,
// newest first; another actor of the same requester is another call.
func TestLatestFindsTheCallAmongOthers(t *testing.T) {
	ctx := context.Background()
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s, _ := k.open(t)
			now := time.Now().Truncate(time.Millisecond)
			older := newRequest("alice", "acme", `{"id":"w1"}`, now, time.Minute)
			newer := newRequest("alice", "acme", `{"id":"w1"}`, now.Add(time.Second), time.Minute)
			if err := s.Create(ctx, older, approval.Limits{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Decide(ctx, older.ID, "bob", false, now); err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, newer, approval.Limits{}); err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				noise := newRequest(fmt.Sprintf("user%d", i), "acme", `{"id":"w1"}`, now.Add(2*time.Second), time.Minute)
				if err := s.Create(ctx, noise, approval.Limits{}); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := s.Latest(ctx, approval.CallKey{Workspace: "acme", Subject: "alice", Actor: "alice", Tool: "cancel_workflow", Digest: newer.Digest}); err != nil || got.ID != newer.ID {
				t.Errorf("Latest = %v, %v; want %s", got, err, newer.ID)
			}
			if _, err := s.Latest(ctx, approval.CallKey{Workspace: "acme", Subject: "alice", Actor: "bot", Tool: "cancel_workflow", Digest: newer.Digest}); !errors.Is(err, approval.ErrNotFound) {
				t.Errorf("Latest for another actor = %v, want ErrNotFound", err)
			}
			if _, err := s.Latest(ctx, approval.CallKey{Workspace: "globex", Subject: "alice", Actor: "alice", Tool: "cancel_workflow", Digest: newer.Digest}); !errors.Is(err, approval.ErrNotFound) {
				t.Errorf("Latest in another workspace = %v, want ErrNotFound", err)
			}
		})
	}
}

// A store that loses its data (a deleted file, a Redis whose keys are
// gone) starts a new epoch: a nonce of the old epoch is refused with
// ErrEpoch, since whether it was spent is lost with the data, and
// nonces of the new epoch spend as before.
func TestSpendRefusesNoncesOfALostStore(t *testing.T) {
	ctx := context.Background()
	for _, k := range []struct {
		name string
		open func(t *testing.T) (approval.Store, func())
	}{
		{"file", func(t *testing.T) (approval.Store, func()) {
			path := filepath.Join(t.TempDir(), "approvals.json")
			s, err := approval.OpenFileStore(path)
			if err != nil {
				t.Fatal(err)
			}
			return s, func() {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"redis", func(t *testing.T) (approval.Store, func()) {
			url := redistest.Start(t)
			prefix := "test:" + approval.NewNonce() + ":"
			s := openRedis(t, url, prefix)
			o, _ := redis.ParseURL(url)
			rdb := redis.NewClient(o)
			t.Cleanup(func() { rdb.Close() })
			return s, func() {
				keys, err := rdb.Keys(ctx, prefix+"*").Result()
				if err != nil || len(keys) == 0 {
					t.Fatalf("keys under %s: %v, %v", prefix, keys, err)
				}
				rdb.Del(ctx, keys...)
			}
		}},
	} {
		t.Run(k.name, func(t *testing.T) {
			s, lose := k.open(t)
			exp := time.Now().Add(time.Minute)
			old, _ := s.Epoch(ctx)
			n := approval.NewNonce()
			if ok, err := s.Spend(ctx, n, old, exp); !ok || err != nil {
				t.Fatalf("Spend = %v, %v", ok, err)
			}
			lose()
			if ok, err := s.Spend(ctx, n, old, exp); ok || !errors.Is(err, approval.ErrEpoch) {
				t.Errorf("Spend of a spent nonce after the store lost its data = %v, %v; want ErrEpoch", ok, err)
			}
			if ok, err := s.Spend(ctx, approval.NewNonce(), old, exp); ok || !errors.Is(err, approval.ErrEpoch) {
				t.Errorf("Spend of an unspent nonce of the lost epoch = %v, %v; want ErrEpoch", ok, err)
			}
			cur, err := s.Epoch(ctx)
			if err != nil || cur == old || cur == "" {
				t.Fatalf("Epoch after the loss = %q, %v; want a new one (was %q)", cur, err, old)
			}
			m := approval.NewNonce()
			if ok, err := s.Spend(ctx, m, cur, exp); !ok || err != nil {
				t.Errorf("Spend in the new epoch = %v, %v; want spent", ok, err)
			}
			if ok, err := s.Spend(ctx, m, cur, exp); ok || err != nil {
				t.Errorf("second Spend in the new epoch = %v, %v; want already spent", ok, err)
			}
		})
	}
}

// Racing first calls of one call (same requester, tool and arguments),
// over two nodes of one store, make one pending request: every other
// Create answers PendingError naming it. Once it is decided, the next
// call opens a new one.
func TestRacingCallsMakeOnePendingRequest(t *testing.T) {
	ctx := context.Background()
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			a, b := k.open(t)
			nodes := []approval.Store{a, b}
			now := time.Now().Truncate(time.Millisecond)
			const n = 16
			errs := make([]error, n)
			reqs := make([]*approval.Request, n)
			var wg sync.WaitGroup
			for i := range n {
				reqs[i] = newRequest("alice", "acme", `{"id":"w1"}`, now, time.Minute)
				wg.Go(func() {
					errs[i] = nodes[i%2].Create(ctx, reqs[i], approval.Limits{PerRequester: 20, PerWorkspace: 200})
				})
			}
			wg.Wait()
			var winner string
			for i, err := range errs {
				if err == nil {
					if winner != "" {
						t.Fatalf("two pending requests for one call: %s and %s", winner, reqs[i].ID)
					}
					winner = reqs[i].ID
				}
			}
			if winner == "" {
				t.Fatalf("no racing Create succeeded: %v", errs)
			}
			for i, err := range errs {
				if err == nil {
					continue
				}
				if pe, ok := errors.AsType[*approval.PendingError](err); !ok || pe.Request.ID != winner {
					t.Errorf("Create %d = %v, want PendingError naming %s", i, err, winner)
				}
			}
			if l, _ := a.List(ctx, "acme", now); len(l) != 1 {
				t.Errorf("List = %d requests, want 1", len(l))
			}
			// Another actor of the same subject is another call.
			other := newRequest("alice", "acme", `{"id":"w1"}`, now, time.Minute)
			other.Actor = "bot"
			if err := b.Create(ctx, other, approval.Limits{}); err != nil {
				t.Errorf("Create for another actor = %v, want stored", err)
			}
			if _, err := b.Decide(ctx, winner, "bob", false, now); err != nil {
				t.Fatal(err)
			}
			if err := a.Create(ctx, newRequest("alice", "acme", `{"id":"w1"}`, now, time.Minute), approval.Limits{}); err != nil {
				t.Errorf("Create after the pending request was decided = %v, want stored", err)
			}
		})
	}
}

// Pending requests are capped per requester (in a workspace) and per
// workspace: a request over a cap is refused with a LimitError naming it
// and stored nowhere; requests that were decided no longer count, nor
// expired ones once dropped; other workspaces have their own count. Racing creates never
// overshoot a cap.
func TestPendingRequestsAreCapped(t *testing.T) {
	ctx := context.Background()
	lim := approval.Limits{PerRequester: 2, PerWorkspace: 3}
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			a, b := k.open(t)
			now := time.Now().Truncate(time.Millisecond)
			create := func(s approval.Store, who, ws, args string, ttl time.Duration) (*approval.Request, error) {
				r := newRequest(who, ws, args, now, ttl)
				return r, s.Create(ctx, r, lim)
			}
			first, _ := create(a, "alice", "acme", `{"n":1}`, time.Minute)
			short, _ := create(b, "alice", "acme", `{"n":2}`, time.Second)
			if _, err := create(a, "alice", "acme", `{"n":3}`, time.Minute); !isLimit(err, "requester", 2) {
				t.Fatalf("alice's third pending request = %v, want a requester LimitError of 2", err)
			}
			if _, err := create(b, "bob", "acme", `{"n":1}`, time.Minute); err != nil {
				t.Fatalf("bob's first = %v", err)
			}
			if _, err := create(a, "carol", "acme", `{"n":1}`, time.Minute); !isLimit(err, "workspace", 3) {
				t.Fatalf("a fourth pending request in acme = %v, want a workspace LimitError of 3", err)
			}
			if _, err := create(b, "carol", "globex", `{"n":1}`, time.Minute); err != nil {
				t.Fatalf("another workspace = %v, want stored", err)
			}
			if l, _ := a.List(ctx, "acme", now); len(l) != 3 {
				t.Fatalf("acme has %d pending, want 3 (nothing stored over a cap)", len(l))
			}
			// A decision frees a place; so does an expiry.
			if _, err := a.Decide(ctx, first.ID, "bob", false, now); err != nil {
				t.Fatal(err)
			}
			if _, err := create(b, "alice", "acme", `{"n":3}`, time.Minute); err != nil {
				t.Fatalf("after a decision = %v, want stored", err)
			}
			// An expired, undecided request still counts until the store
			// drops it, KeepUndecided later: expiring is no way to make
			// room, so what one requester piles up stays capped.
			now = short.Expires
			if _, err := create(a, "carol", "acme", `{"n":1}`, time.Minute); !isLimit(err, "workspace", 3) {
				t.Fatalf("just after an expiry = %v, want a workspace LimitError of 3", err)
			}
			if l, _ := a.List(ctx, "acme", now); len(l) != 2 {
				t.Fatalf("acme lists %d pending after the expiry, want 2 (the expired one is not pending)", len(l))
			}
			// Except by the same call: its retry replaces the expired
			// request, which counts no more.
			if _, err := create(b, "alice", "acme", `{"n":2}`, time.Second); err != nil {
				t.Fatalf("the expired call asked again = %v, want stored in its place", err)
			}
			now = now.Add(time.Second)
			now = now.Add(approval.KeepUndecided + time.Millisecond)
			if _, err := create(a, "carol", "acme", `{"n":1}`, time.Hour); err != nil {
				t.Fatalf("once the expired requests are dropped = %v, want stored", err)
			}

			// Racing callers of one workspace: exactly the cap is stored.
			var stored atomic.Int64
			var wg sync.WaitGroup
			for i := range 12 {
				wg.Go(func() {
					r := newRequest(fmt.Sprintf("user%d", i), "initech", `{}`, now, time.Minute)
					if err := []approval.Store{a, b}[i%2].Create(ctx, r, lim); err == nil {
						stored.Add(1)
					} else if !isLimit(err, "workspace", 3) {
						t.Errorf("racing Create = %v", err)
					}
				})
			}
			wg.Wait()
			if n := stored.Load(); n != 3 {
				t.Errorf("racing creates stored %d requests in initech, want the cap of 3", n)
			}
		})
	}
}

// A requester who lets request after request expire undecided cannot
// grow the store: at any time it holds at most their cap of them, so a
// day of short-lived requests is the cap, not thousands.
func TestExpiredRequestsDoNotPileUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "approvals.json")
	s, err := approval.OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	lim := approval.Limits{PerRequester: 5, PerWorkspace: 50}
	now := time.Now().Truncate(time.Millisecond)
	made := 0
	for round := range 40 {
		for i := range 10 {
			r := newRequest("mallory", "acme", fmt.Sprintf(`{"round":%d,"i":%d}`, round, i), now, time.Second)
			if err := s.Create(ctx, r, lim); err == nil {
				made++
			} else if !isLimit(err, "requester", 5) {
				t.Fatalf("Create = %v", err)
			}
		}
		now = now.Add(3 * time.Minute)
	}
	var d struct{ Requests map[string]json.RawMessage }
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Requests) > 5 {
		t.Errorf("after %d requests left to expire over two hours, the file holds %d, want at most the cap of 5", made, len(d.Requests))
	}
	// Each batch of 5 makes way KeepUndecided after it expires, within
	// one 3-minute round more.
	if refills := int(40 * 3 * time.Minute / (approval.KeepUndecided + 3*time.Minute)); made < 5*refills {
		t.Errorf("only %d requests were admitted over two hours, want the cap again once expired ones are dropped", made)
	}
}

func isLimit(err error, scope string, max int) bool {
	le, ok := errors.AsType[*approval.LimitError](err)
	return ok && le.Scope == scope && le.Max == max
}

// One person gets one say: the requester is whoever goes by a name the
// request's subject or actor went by, compared as people read names; an
// empty actor matches no one.
func TestDeciderRequestedIsTheSamePerson(t *testing.T) {
	r := &approval.Request{Requester: "alice", Actor: "alice@example.com"}
	noActor := &approval.Request{Requester: "alice"}
	cases := []struct {
		name string
		d    approval.Decider
		r    *approval.Request
		want bool
	}{
		{"same-subject-other-actor", approval.Decider{Subject: "alice", Actor: "bot"}, r, true},
		{"other-subject-same-actor", approval.Decider{Subject: "alice-2", Actor: "alice@example.com"}, r, true},
		{"other-subject-other-actor", approval.Decider{Subject: "bob", Actor: "bob@example.com"}, r, false},
		{"other-subject-both-actors-empty", approval.Decider{Subject: "bob"}, noActor, false},
		// Names as a person reads them: another identity provider's
		// casing, a trailing space or a zero-width character does not
		// make a second person.
		{"actor-cased-differently", approval.Decider{Subject: "alice-okta", Actor: "Alice@Example.COM"}, r, true},
		{"subject-cased-differently", approval.Decider{Subject: "ALICE"}, noActor, true},
		{"subject-with-space-and-zero-width", approval.Decider{Subject: " al\u200bice "}, noActor, true},
		{"non-ascii-case", approval.Decider{Subject: "ÉLODIE"}, &approval.Request{Requester: "élodie"}, true},
		// A name the requester went by is theirs, whichever field holds it.
		{"subject-is-requesters-actor", approval.Decider{Subject: "alice@example.com"}, r, true},
		{"actor-is-requesters-subject", approval.Decider{Subject: "svc-7", Actor: "alice"}, r, true},
		{"hidden-only-names-match-no-one", approval.Decider{Subject: "bob", Actor: "\u200b"}, &approval.Request{Requester: "carol", Actor: "\u200b\u200b"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.d.Requested(c.r); got != c.want {
				t.Errorf("Requested = %v, want %v", got, c.want)
			}
		})
	}
}

// The pending list shows the oldest request first, whatever the ids.
func TestListIsOldestFirst(t *testing.T) {
	ctx := context.Background()
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s, _ := k.open(t)
			now := time.Now().Truncate(time.Millisecond)
			older := newRequest("alice", "acme", `{"id":"w1"}`, now, time.Minute)
			newer := newRequest("bob", "acme", `{"id":"w2"}`, now.Add(time.Second), time.Minute)
			older.ID, newer.ID = "apr_ffffffffffffffffffffffffffffffff", "apr_00000000000000000000000000000000"
			for _, r := range []*approval.Request{newer, older} {
				if err := s.Create(ctx, r, approval.Limits{}); err != nil {
					t.Fatal(err)
				}
			}
			l, err := s.List(ctx, "acme", now.Add(time.Second))
			if err != nil || len(l) != 2 || l[0].ID != older.ID || l[1].ID != newer.ID {
				t.Fatalf("List = %v, %v; want %s then %s", l, err, older.ID, newer.ID)
			}
		})
	}
}

// An in-memory store works; a file store refuses a corrupt file when it
// opens, not at the first approval.
func TestOpenFileStore(t *testing.T) {
	ctx := context.Background()
	mem, err := approval.OpenFileStore("")
	if err != nil {
		t.Fatalf("OpenFileStore(\"\") = %v", err)
	}
	if e, err := mem.Epoch(ctx); err != nil || e == "" {
		t.Errorf("in-memory Epoch = %q, %v", e, err)
	}
	path := filepath.Join(t.TempDir(), "approvals.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := approval.OpenFileStore(path); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("OpenFileStore(corrupt file) = %v, want an error naming invalid JSON", err)
	}
}

// A finished request stays readable for a day after it was decided, to
// the instant, and is dropped after that.
func TestFileStoreKeepsFinishedRequestsForADay(t *testing.T) {
	ctx := context.Background()
	s, _ := approval.OpenFileStore(filepath.Join(t.TempDir(), "approvals.json"))
	now := time.Now().Truncate(time.Millisecond)
	r := newRequest("alice", "acme", `{"id":"w1"}`, now, time.Minute)
	s.Create(ctx, r, approval.Limits{})
	if _, err := s.Decide(ctx, r.ID, "bob", false, now); err != nil {
		t.Fatal(err)
	}
	day := now.Add(24 * time.Hour)
	s.Create(ctx, newRequest("carol", "acme", `{"id":"w2"}`, day, time.Minute), approval.Limits{})
	if _, err := s.Get(ctx, r.ID); err != nil {
		t.Fatalf("Get a day after the decision = %v, want the request", err)
	}
	s.Create(ctx, newRequest("carol", "acme", `{"id":"w3"}`, day.Add(time.Millisecond), time.Minute), approval.Limits{})
	if _, err := s.Get(ctx, r.ID); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("Get after a day = %v, want ErrNotFound", err)
	}
}

// A nonce stays spent through its expiry's last second: spending it
// again in that second is refused.
func TestFileStoreNonceStaysSpentThroughItsExpirySecond(t *testing.T) {
	ctx := context.Background()
	s, _ := approval.OpenFileStore(filepath.Join(t.TempDir(), "approvals.json"))
	epoch, _ := s.Epoch(ctx)
	for range 5 {
		now := time.Now()
		n := approval.NewNonce()
		first, err := s.Spend(ctx, n, epoch, now)
		if err != nil || !first {
			t.Fatalf("first Spend = %v, %v", first, err)
		}
		again, _ := s.Spend(ctx, n, epoch, now)
		if time.Now().Unix() != now.Unix() {
			continue // the second passed between the calls: try again
		}
		if again {
			t.Fatal("a nonce spent twice within its expiry second")
		}
		return
	}
	t.Fatal("could not spend twice within one second")
}

// A spent nonce stays spent in Redis until it expires (and a minute
// more), not for a second; an undecided request outlives its expiry by
// KeepUndecided, and a decided one by a day, so it can still be read.
func TestRedisKeepsNoncesAndRequestsForTheirLifetime(t *testing.T) {
	ctx := context.Background()
	url := redistest.Start(t)
	prefix := "test:" + approval.NewNonce() + ":"
	s := openRedis(t, url, prefix)
	o, _ := redis.ParseURL(url)
	rdb := redis.NewClient(o)
	defer rdb.Close()

	epoch, _ := s.Epoch(ctx)
	n := approval.NewNonce()
	if ok, err := s.Spend(ctx, n, epoch, time.Now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("first Spend = %v, %v", ok, err)
	}
	time.Sleep(1500 * time.Millisecond)
	if ok, err := s.Spend(ctx, n, epoch, time.Now().Add(time.Minute)); err != nil || ok {
		t.Fatalf("Spend of a spent nonce 1.5 s later = %v, %v; want refused", ok, err)
	}

	now := time.Now()
	r := newRequest("alice", "acme", `{"id":"w1"}`, now, time.Hour)
	if err := s.Create(ctx, r, approval.Limits{}); err != nil {
		t.Fatal(err)
	}
	// Undecided, it is kept KeepUndecided past its hour; decided, a day
	// past it.
	if ttl := rdb.PTTL(ctx, prefix+"req:"+r.ID).Val(); ttl < time.Hour+approval.KeepUndecided-time.Minute || ttl > time.Hour+approval.KeepUndecided {
		t.Errorf("undecided request kept in Redis for %v, want its hour and %v more", ttl, approval.KeepUndecided)
	}
	if _, err := s.Decide(ctx, r.ID, "bob", true, time.Now()); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, prefix+"req:"+r.ID).Val(); ttl < 24*time.Hour {
		t.Errorf("decided request kept in Redis for %v, want its hour and a day more", ttl)
	}
}

// Latest skips ids of the call whose requests have gone from Redis and
// finds the newest one still there.
func TestRedisLatestSkipsRequestsThatHaveGone(t *testing.T) {
	ctx := context.Background()
	url := redistest.Start(t)
	prefix := "test:" + approval.NewNonce() + ":"
	s := openRedis(t, url, prefix)
	o, _ := redis.ParseURL(url)
	rdb := redis.NewClient(o)
	defer rdb.Close()
	now := time.Now().Truncate(time.Millisecond)
	var rs []*approval.Request
	for i := range 3 {
		r := newRequest("alice", "acme", `{"id":"w1"}`, now.Add(time.Duration(i)*time.Second), time.Minute)
		if err := s.Create(ctx, r, approval.Limits{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(ctx, r.ID, "bob", false, r.Created); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rdb.Del(ctx, prefix+"req:"+rs[1].ID, prefix+"req:"+rs[2].ID)
	k := approval.CallKey{Workspace: "acme", Subject: "alice", Actor: "alice", Tool: "cancel_workflow", Digest: rs[0].Digest}
	if got, err := s.Latest(ctx, k); err != nil || got.ID != rs[0].ID {
		t.Errorf("Latest = %v, %v; want the oldest, %s", got, err, rs[0].ID)
	}
}

// An approval id from a URL reaches a store key (a file's map, a Redis
// key) only when it has the shape NewID makes: "apr_" and 32 lower-case
// hex digits; anything else, path and key separators included, is
// refused.
func TestValidIDAcceptsOnlyTheShapeNewIDMakes(t *testing.T) {
	hex := func(c string) string { return "apr_" + strings.Repeat(c, 32) }
	cases := []struct {
		name, id string
		want     bool
	}{
		{"new-id", approval.NewID(), true},
		{"digits-0-and-9", "apr_" + strings.Repeat("09", 16), true},
		{"letters-a-and-f", "apr_" + strings.Repeat("af", 16), true},
		{"one-digit-short", approval.NewID()[:35], false},
		{"one-digit-long", approval.NewID() + "0", false},
		{"other-prefix", "apr-" + approval.NewID()[4:], false},
		{"slash-below-0", hex("/"), false},
		{"colon-above-9", hex(":"), false},
		{"backtick-below-a", hex("`"), false},
		{"g-above-f", hex("g"), false},
		{"upper-case", hex("A"), false},
		{"redis-key-separator", "apr_" + strings.Repeat("0", 31) + ":", false},
		{"empty", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := approval.ValidID(c.id); got != c.want {
				t.Errorf("ValidID(%q) = %v, want %v", c.id, got, c.want)
			}
		})
	}
}

// Requests created at the same instant are listed in id order, so every
// node shows the approver one order.
func TestListOrdersRequestsOfOneInstantById(t *testing.T) {
	ctx := context.Background()
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s, _ := k.open(t)
			now := time.Now().Truncate(time.Millisecond)
			var want []string
			for i := range 20 {
				r := newRequest(fmt.Sprintf("user%d", i), "acme", `{"id":"w1"}`, now, time.Minute)
				r.ID = fmt.Sprintf("apr_%032x", 20-i)
				if err := s.Create(ctx, r, approval.Limits{}); err != nil {
					t.Fatal(err)
				}
				want = append([]string{r.ID}, want...)
			}
			l, err := s.List(ctx, "acme", now)
			var got []string
			for _, r := range l {
				got = append(got, r.ID)
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("List = %v, %v; want %v", got, err, want)
			}
		})
	}
}

// A call asked again after its request expired undecided replaces that
// request: the expired one counts towards no cap from then on, in both
// stores alike (the same caps must hold whichever store a fleet uses).
func TestAReplacedRequestCountsNoMore(t *testing.T) {
	ctx := context.Background()
	lim := approval.Limits{PerRequester: 2, PerWorkspace: 10}
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s, _ := k.open(t)
			now := time.Now().Truncate(time.Millisecond)
			create := func(args string, ttl time.Duration) (*approval.Request, error) {
				r := newRequest("alice", "acme", args, now, ttl)
				return r, s.Create(ctx, r, lim)
			}
			short, err := create(`{"n":1}`, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			other, err := create(`{"n":2}`, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			now = short.Expires
			if _, err := create(`{"n":1}`, time.Minute); err != nil {
				t.Fatalf("the expired call asked again = %v, want stored in its place", err)
			}
			if _, err := s.Decide(ctx, other.ID, "bob", false, now); err != nil {
				t.Fatal(err)
			}
			// alice now has one undecided request, the replacement.
			if _, err := create(`{"n":3}`, time.Minute); err != nil {
				t.Errorf("a second undecided request under a cap of 2 = %v, want stored: the replaced request still counted", err)
			}
		})
	}
}
