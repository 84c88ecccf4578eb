package proxy

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

// testUpstream is an upstream for base, as a Core would build it.
func testUpstream(t *testing.T, base string, timeout time.Duration, perWorkspace int) *upstream {
	t.Helper()
	def := &catalog.Upstream{BaseURL: base, Timeout: catalog.Duration(timeout), MaxConcurrentPerWorkspace: perWorkspace}
	u, err := newUpstream("up", def, sharedTransport, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	u.metrics = noMetrics{}
	return u
}

// The transport refuses some requests because of the request itself. Our
// own checks stop these first; should one slip through, it still says
// nothing about the upstream's health.
func TestBreakerIgnoresRequestsTheTransportRefuses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	u := testUpstream(t, srv.URL, time.Second, 0)
	bad := map[string]func() *http.Request{
		"control character in a header value": func() *http.Request {
			r, _ := http.NewRequest("GET", srv.URL+"/x", http.NoBody)
			r.Header["X-Trace"] = []string{"a\x01b"}
			return r
		},
		"invalid header name": func() *http.Request {
			r, _ := http.NewRequest("GET", srv.URL+"/x", http.NoBody)
			r.Header["X Trace"] = []string{"a"}
			return r
		},
		"unsupported scheme": func() *http.Request {
			r, _ := http.NewRequest("GET", "gopher://"+srv.Listener.Addr().String()+"/x", http.NoBody)
			return r
		},
		"invalid method": func() *http.Request {
			r, _ := http.NewRequest("GET", srv.URL+"/x", http.NoBody)
			r.Method = "BAD METHOD"
			return r
		},
	}
	for name, mk := range bad {
		for i := 0; i < 2*breakerThreshold; i++ {
			if _, err := u.do(context.Background(), mk(), redirectPolicy{}, "acme", 0); err == nil {
				t.Fatalf("%s: the transport sent it", name)
			}
		}
		if n, open := u.breaker.state(); n != 0 || open {
			t.Errorf("%s: breaker counts %d failures (open %v), want none", name, n, open)
		}
	}
	r, _ := http.NewRequest("GET", srv.URL+"/x", http.NoBody)
	if _, err := u.do(context.Background(), r, redirectPolicy{}, "acme", 0); err != nil {
		t.Fatalf("a good request after them: %v", err)
	}
}

// A caller whose own deadline ends the call says nothing about the
// upstream either: a tenant could otherwise trip the breaker with short
// deadlines.
func TestBreakerIgnoresTheCallersOwnDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	u := testUpstream(t, srv.URL, 10*time.Second, 0)
	for i := 0; i < breakerThreshold; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		r, _ := http.NewRequest("GET", srv.URL+"/x", http.NoBody)
		_, err := u.do(ctx, r, redirectPolicy{}, "acme", 0)
		cancel()
		if err == nil {
			t.Fatal("the call succeeded")
		}
	}
	if n, open := u.breaker.state(); n != 0 || open {
		t.Errorf("breaker counts %d failures (open %v) after callers' own deadlines, want none", n, open)
	}
}

func TestBreakerCountsRefusalsAndTimeouts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	u := testUpstream(t, closed, time.Second, 0)
	for i := 0; i < breakerThreshold; i++ {
		r, _ := http.NewRequest("POST", closed+"/x", http.NoBody)
		u.do(context.Background(), r, redirectPolicy{}, "acme", 0)
	}
	if _, open := u.breaker.state(); !open {
		t.Errorf("breaker closed after %d refused connections", breakerThreshold)
	}

	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	u = testUpstream(t, srv.URL, 30*time.Millisecond, 0)
	r, _ := http.NewRequest("GET", srv.URL+"/x", http.NoBody)
	if _, err := u.do(context.Background(), r, redirectPolicy{}, "acme", 0); err == nil {
		t.Fatal("a call to a silent upstream succeeded")
	}
	if n, _ := u.breaker.state(); n != 1 {
		t.Errorf("breaker counts %d failures after a timeout, want 1", n)
	}
}

// A call over its workspace's share waits out the upstream's timeout and
// says so; another workspace is served meanwhile; and once the calls are
// over no workspace keeps an entry.
func TestPerWorkspaceShareWaitsOutTheUpstreamTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	u := testUpstream(t, srv.URL, 300*time.Millisecond, 2)
	// acme's two calls in flight, held here so they outlast the timeout.
	var held []*share
	for i := 0; i < 2; i++ {
		sh := u.shares.acquire(context.Background(), "acme")
		if sh == nil {
			t.Fatal("acme could not take its share")
		}
		held = append(held, sh)
	}
	r, _ := http.NewRequest("GET", srv.URL+"/x", http.NoBody)
	start := time.Now()
	_, err := u.do(context.Background(), r, redirectPolicy{}, "acme", 0)
	want := "upstream up is at its max_concurrent_per_workspace limit of 2 calls for this workspace; no slot freed within its 300ms timeout"
	if err == nil || err.Error() != want {
		t.Fatalf("acme's third call: %v, want %q", err, want)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 10*time.Second {
		t.Errorf("acme's third call failed after %v, want after its 300ms timeout", d)
	}
	r, _ = http.NewRequest("GET", srv.URL+"/x", http.NoBody)
	if _, err := u.do(context.Background(), r, redirectPolicy{}, "globex", 0); err != nil {
		t.Fatalf("globex while acme holds its share: %v", err)
	}
	if n, open := u.breaker.state(); n != 0 || open {
		t.Errorf("breaker counts %d failures (open %v) after a per-workspace wait", n, open)
	}
	if n := u.shares.len(); n != 1 {
		t.Errorf("%d workspaces have entries, want acme's alone", n)
	}
	for _, sh := range held {
		u.shares.release("acme", sh)
	}
	if n := u.shares.len(); n != 0 {
		t.Errorf("%d workspaces keep an entry after their calls ended", n)
	}
}
