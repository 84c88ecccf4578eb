package proxy_test

import (
	"context"
	"github.com/mcpgw/gateway/test/redistest"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/proxy"
)

// Two cores, as two replicas would build them, sharing one Redis: the
// upstream's max_concurrent and each workspace's share hold for both
// together.
func TestMaxConcurrentIsSharedByTheFleet(t *testing.T) {
	url := redistest.Start(t)
	release := make(chan struct{})
	var cur, peak, peakAcme, curAcme atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		acme := r.Header.Get("X-Workspace-Id") == "acme"
		if acme {
			bump(&peakAcme, curAcme.Add(1))
		}
		bump(&peak, n)
		<-release
		if acme {
			curAcme.Add(-1)
		}
		cur.Add(-1)
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	var cores []*proxy.Core
	for range 2 {
		fl, err := fleet.New(&fleet.Options{Redis: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fl.Close() })
		cores = append(cores, coreWith(t, srv.URL, &proxy.Options{Fleet: fl}, "    max_concurrent: 3\n    max_concurrent_per_workspace: 2\n"))
	}
	acme := authz.NewPrincipal("alice", "acme", "alice@example.com", []string{"read"}, nil)
	globex := authz.NewPrincipal("bob", "globex", "bob@example.com", []string{"read"}, nil)
	var wg sync.WaitGroup
	results := make(chan string, 8)
	for i := range 8 {
		p := acme
		if i%2 == 1 {
			p = globex
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := cores[i%2].Call(context.Background(), p, "get_item", []byte(`{"id":"a"}`))
			results <- res.Text
		}()
	}
	// Let every call reach the upstream or its wait, then free them.
	for deadline := time.Now().Add(10 * time.Second); cur.Load() < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d calls reached the upstream", cur.Load())
		}
	}
	time.Sleep(200 * time.Millisecond) // would a fourth slip through?
	close(release)
	wg.Wait()
	close(results)
	for text := range results {
		if strings.Contains(text, "limit") {
			t.Errorf("a call = %q, want it served once a slot freed", text)
		}
	}
	if p := peak.Load(); p != 3 {
		t.Errorf("peak calls in flight from two cores = %d, want max_concurrent 3", p)
	}
	if p := peakAcme.Load(); p == 0 || p > 2 {
		t.Errorf("acme had %d calls in flight, over its share of 2", p)
	}
}

func bump(peak *atomic.Int32, n int32) {
	for {
		p := peak.Load()
		if n <= p || peak.CompareAndSwap(p, n) {
			return
		}
	}
}
