package proxy_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

const probeCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  up: { base_url: "${UP}" }
  kb: { base_url: "${KB}", timeout: 2s }
prerequisites:
  kb: { probe: { upstream: kb, path: "/kb/{workspace}/status", true_when: enabled, cache: 60s } }
tools:
  - name: ask_kb
    description: Ask the knowledge base.
    requires: [kb]
    request: { upstream: up, path: /ask }
`

// testClock moves only when told to.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// An upstream that refused a probe is asked again after a few seconds,
// not after the probe's whole cache period; one that answered "no" is not.
func TestRefusedProbeIsRetriedAfterTheOutage(t *testing.T) {
	rec := newRecorder(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the probe is refused

	clk := &testClock{t: time.Now()}
	cat := parseCore(t, probeCatalog, rec.srv.URL, map[string]string{"KB": "http://" + addr}).Catalog()
	c, err := proxy.New(cat, &proxy.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ws := func(name string) *authz.Principal { return authz.NewPrincipal("alice", name, "", nil, nil) }
	ask := func(p *authz.Principal) *proxy.Result {
		t.Helper()
		res, err := c.Call(context.Background(), p, "ask_kb", nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := ask(ws("acme")); !res.IsError || !strings.Contains(res.Text, "lacks prerequisite") {
		t.Fatalf("with the knowledge base down: %q, want the prerequisite unmet", res.Text)
	}

	// The knowledge base comes back on the same address; it says no to
	// "globex".
	var probes atomic.Int64
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		// Another process took the port meanwhile; authz's tests cover
		// the cache with a clock alone.
		t.Skipf("listening again on %s: %v", addr, err)
	}
	kb := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		if strings.Contains(r.URL.Path, "globex") {
			io.WriteString(w, `{"enabled":false}`)
			return
		}
		io.WriteString(w, `{"enabled":true}`)
	}))
	kb.Listener.Close()
	kb.Listener = ln
	kb.Start()
	t.Cleanup(kb.Close)

	if res := ask(ws("globex")); !res.IsError {
		t.Fatalf("globex: %q, want the prerequisite unmet", res.Text)
	}
	clk.Advance(authz.ProbeFailureCache)
	if res := ask(ws("acme")); res.IsError {
		t.Errorf("%s after the outage: %q, want the tool available", authz.ProbeFailureCache, res.Text)
	}
	if res := ask(ws("globex")); !res.IsError {
		t.Errorf("globex: %q, want the answered probe still cached", res.Text)
	}
	if n := probes.Load(); n != 2 {
		t.Errorf("the knowledge base was probed %d times, want 2 (acme again, globex once)", n)
	}
}

// A probe answered 503 (or 429) says the upstream is out, not that the
// workspace lacks the feature: it is kept only as long as a refused probe.
func TestProbeAnsweredUnavailableIsRetriedSoon(t *testing.T) {
	rec := newRecorder(t, nil)
	var down atomic.Bool
	down.Store(true)
	var probes atomic.Int64
	kb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"enabled":true}`)
	}))
	t.Cleanup(kb.Close)
	clk := &testClock{t: time.Now()}
	cat := parseCore(t, probeCatalog, rec.srv.URL, map[string]string{"KB": kb.URL}).Catalog()
	c, err := proxy.New(cat, &proxy.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	acme := authz.NewPrincipal("alice", "acme", "", nil, nil)
	if res, _ := c.Call(context.Background(), acme, "ask_kb", nil); !res.IsError {
		t.Fatalf("with the knowledge base answering 503: %q, want the prerequisite unmet", res.Text)
	}
	down.Store(false)
	clk.Advance(authz.ProbeFailureCache)
	if res, _ := c.Call(context.Background(), acme, "ask_kb", nil); res.IsError {
		t.Fatalf("%s after the 503: %q, want the tool available", authz.ProbeFailureCache, res.Text)
	}
	if n := probes.Load(); n != 2 {
		t.Errorf("%d probes, want 2", n)
	}
}
