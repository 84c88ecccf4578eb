package authz_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// probes answers prerequisite probes as told per workspace and counts
// them.
type probes struct {
	mu     sync.Mutex
	calls  map[string]int
	answer func(ws string) (bool, error)
}

func (p *probes) probe(_ context.Context, _ *catalog.Prerequisite, ws string) (bool, error) {
	p.mu.Lock()
	p.calls[ws]++
	p.mu.Unlock()
	return p.answer(ws)
}

func (p *probes) count(ws string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[ws]
}

func probeDefs(cache time.Duration) map[string]*catalog.Prerequisite {
	return map[string]*catalog.Prerequisite{"kb": {Name: "kb", Probe: &catalog.Probe{Upstream: "kb", Path: "/kb/{workspace}", Cache: catalog.Duration(cache)}}}
}

func wsPrincipal(ws string) *authz.Principal {
	return authz.NewPrincipal("alice", ws, "", nil, nil)
}

func TestProbeCacheIsBounded(t *testing.T) {
	pr := &probes{calls: map[string]int{}, answer: func(string) (bool, error) { return true, nil }}
	clk := newClock()
	ps := authz.NewPrerequisites(probeDefs(time.Hour), pr.probe, clk.Now)
	ctx := context.Background()
	over := authz.DefaultProbeCacheEntries + 100
	for i := range over {
		if !ps.Met(ctx, wsPrincipal(fmt.Sprintf("ws-%d", i)), "kb") {
			t.Fatalf("ws-%d: not met", i)
		}
	}
	if n := authz.CachedProbes(ps); n != authz.DefaultProbeCacheEntries {
		t.Errorf("after %d workspaces the cache holds %d answers, want %d", over, n, authz.DefaultProbeCacheEntries)
	}
	// The most recent answers are kept; the oldest were evicted and are
	// probed again.
	ps.Met(ctx, wsPrincipal(fmt.Sprintf("ws-%d", over-1)), "kb")
	if n := pr.count(fmt.Sprintf("ws-%d", over-1)); n != 1 {
		t.Errorf("the newest workspace was probed %d times, want 1 (cached)", n)
	}
	ps.Met(ctx, wsPrincipal("ws-0"), "kb")
	if n := pr.count("ws-0"); n != 2 {
		t.Errorf("the oldest workspace was probed %d times, want 2 (evicted, then probed again)", n)
	}
	if n := authz.CachedProbes(ps); n != authz.DefaultProbeCacheEntries {
		t.Errorf("cache holds %d answers, want %d", n, authz.DefaultProbeCacheEntries)
	}
}

func TestProbeCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	pr := &probes{calls: map[string]int{}, answer: func(string) (bool, error) { return true, nil }}
	ps := authz.NewPrerequisites(probeDefs(time.Hour), pr.probe, newClock().Now)
	ctx := context.Background()
	ps.Met(ctx, wsPrincipal("hot"), "kb")
	for i := range authz.DefaultProbeCacheEntries {
		ps.Met(ctx, wsPrincipal("hot"), "kb") // used all along: stays
		ps.Met(ctx, wsPrincipal(fmt.Sprintf("ws-%d", i)), "kb")
	}
	if n := pr.count("hot"); n != 1 {
		t.Errorf("a workspace used all along was probed %d times, want 1", n)
	}
}

func TestFailedProbeIsRetriedSoonAnsweredOneIsNot(t *testing.T) {
	down := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	var mu sync.Mutex
	outage := true
	pr := &probes{calls: map[string]int{}, answer: func(ws string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ws == "answered-no":
			return false, nil // a 2xx saying no, or a non-2xx
		case outage:
			return false, down
		}
		return true, nil
	}}
	clk := newClock()
	ps := authz.NewPrerequisites(probeDefs(time.Minute), pr.probe, clk.Now)
	ctx := context.Background()
	if ps.Met(ctx, wsPrincipal("acme"), "kb") || ps.Met(ctx, wsPrincipal("answered-no"), "kb") {
		t.Fatal("met during an outage, or when the upstream said no")
	}
	mu.Lock()
	outage = false
	mu.Unlock()

	clk.Advance(authz.ProbeFailureCache - time.Millisecond)
	if ps.Met(ctx, wsPrincipal("acme"), "kb") || pr.count("acme") != 1 {
		t.Errorf("a failed probe was retried within %s (%d probes)", authz.ProbeFailureCache, pr.count("acme"))
	}
	clk.Advance(time.Millisecond)
	if !ps.Met(ctx, wsPrincipal("acme"), "kb") {
		t.Errorf("after the outage and %s, the prerequisite is still not met (%d probes)", authz.ProbeFailureCache, pr.count("acme"))
	}
	ps.Met(ctx, wsPrincipal("answered-no"), "kb")
	if n := pr.count("answered-no"); n != 1 {
		t.Errorf("an answered probe was asked again after %s: %d probes, want 1 until its cache: 1m", authz.ProbeFailureCache, n)
	}
	clk.Advance(time.Minute)
	ps.Met(ctx, wsPrincipal("answered-no"), "kb")
	if n := pr.count("answered-no"); n != 2 {
		t.Errorf("an answered probe after its cache: %d probes, want 2", n)
	}
}

func TestFailedProbeKeepsAShorterCacheOfItsOwn(t *testing.T) {
	pr := &probes{calls: map[string]int{}, answer: func(string) (bool, error) { return false, errors.New("breaker open") }}
	clk := newClock()
	ps := authz.NewPrerequisites(probeDefs(2*time.Second), pr.probe, clk.Now)
	ctx := context.Background()
	ps.Met(ctx, wsPrincipal("acme"), "kb")
	clk.Advance(2 * time.Second)
	ps.Met(ctx, wsPrincipal("acme"), "kb")
	if n := pr.count("acme"); n != 2 {
		t.Errorf("a probe with cache: 2s was asked %d times over 2s, want 2", n)
	}
}
