package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// A probe carries the token's workspace in the upstream's workspace query,
// on every hop of a redirect it follows (a GET probe on an upstream with
// follow_redirects: true, even a 307); a probe sent as a POST follows none.
func TestProbeBindsTheWorkspaceAndFollowsRedirectsAsAReadWould(t *testing.T) {
	rec := newRecorder(t, nil)
	kb := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/v2") {
			// http.Redirect would keep no query: the gateway puts the
			// workspace back.
			w.Header().Set("Location", r.URL.Path+"/v2")
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, `{"enabled":`+strconv.FormatBool(r.URL.Query().Get("ws") == "acme")+`}`)
	})
	src := `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  up: { base_url: "${UP}" }
  kb: { base_url: "${KB}/api", workspace: { query: ws }, follow_redirects: true }
prerequisites:
  kb: { probe: { upstream: kb, path: /kb/status, true_when: enabled } }
  kb_post: { probe: { upstream: kb, method: POST, path: /kb/check, true_when: enabled } }
tools:
  - name: ask_kb
    description: Ask the knowledge base.
    requires: [kb]
    request: { upstream: up, path: /ask }
  - name: check_kb
    description: Ask the knowledge base after a POST probe.
    requires: [kb_post]
    request: { upstream: up, path: /check }
`
	c := parseCore(t, src, rec.srv.URL, map[string]string{"KB": kb.srv.URL})
	acme := authz.NewPrincipal("alice", "acme", "", nil, nil)
	globex := authz.NewPrincipal("carol", "globex", "", nil, nil)
	if res := call(t, c, acme, "ask_kb", `{}`); res.IsError {
		t.Errorf("acme: %q, want the prerequisite met", res.Text)
	}
	if res := call(t, c, globex, "ask_kb", `{}`); !res.IsError || !strings.Contains(res.Text, "lacks prerequisite") {
		t.Errorf("globex: %q, want the prerequisite unmet", res.Text)
	}
	var got []string
	for _, r := range kb.all() {
		got = append(got, r.Method+" "+r.Path+"?"+r.Query)
	}
	want := "GET /api/kb/status?ws=acme, GET /api/kb/status/v2?ws=acme, GET /api/kb/status?ws=globex, GET /api/kb/status/v2?ws=globex"
	if strings.Join(got, ", ") != want {
		t.Errorf("probes sent %q, want %q", strings.Join(got, ", "), want)
	}

	before := kb.count()
	if res := call(t, c, acme, "check_kb", `{}`); !res.IsError || !strings.Contains(res.Text, "lacks prerequisite") {
		t.Errorf("check_kb after a POST probe answered 307: %q, want the prerequisite unmet", res.Text)
	}
	if hops := kb.all()[before:]; len(hops) != 1 || hops[0].Method != "POST" || hops[0].Query != "ws=acme" {
		t.Errorf("the POST probe sent %+v, want one POST with ws=acme and no redirect followed", hops)
	}
}

// A probe's answer at the edges of its classes: 200 and 299 are answers
// (read with true_when), 300 and 499 say the workspace lacks the feature
// (kept for the probe's cache period), 429 and 500 say the upstream is out
// (kept only as long as a refused probe).
func TestProbeStatusBounds(t *testing.T) {
	rec := newRecorder(t, nil)
	var probes sync.Map // workspace → count
	kb := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		ws := strings.Split(r.URL.Path, "/")[2] // /kb/{workspace}/status
		n, _ := probes.LoadOrStore(ws, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		code, _ := strconv.Atoi(strings.TrimPrefix(ws, "s"))
		w.WriteHeader(code)
		io.WriteString(w, `{"enabled":true}`)
	})
	clk := &testClock{t: time.Now()}
	cat := parseCore(t, probeCatalog, rec.srv.URL, map[string]string{"KB": kb.srv.URL}).Catalog()
	c, err := proxy.New(cat, &proxy.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		status    int
		met       bool
		retrySoon bool
	}{
		{200, true, false}, {299, true, false},
		{300, false, false}, {428, false, false}, {499, false, false},
		{429, false, true}, {500, false, true}, {503, false, true},
	}
	ask := func(status int) bool {
		t.Helper()
		p := authz.NewPrincipal("alice", fmt.Sprintf("s%d", status), "", nil, nil)
		res, err := c.Call(context.Background(), p, "ask_kb", nil)
		if err != nil {
			t.Fatal(err)
		}
		return !res.IsError
	}
	for _, tc := range cases {
		if got := ask(tc.status); got != tc.met {
			t.Errorf("probe answered %d: prerequisite met = %v, want %v", tc.status, got, tc.met)
		}
	}
	clk.Advance(authz.ProbeFailureCache)
	for _, tc := range cases {
		ask(tc.status)
		n, _ := probes.Load(fmt.Sprintf("s%d", tc.status))
		want := int64(1)
		if tc.retrySoon {
			want = 2
		}
		if got := n.(*atomic.Int64).Load(); got != want {
			t.Errorf("probe answered %d: probed %d times in %s, want %d", tc.status, got, authz.ProbeFailureCache, want)
		}
	}
}

// A probe's answer is read up to 64 KiB: one of exactly 64 KiB is judged,
// one byte more cannot be and leaves the prerequisite unmet.
func TestProbeAnswerBound(t *testing.T) {
	rec := newRecorder(t, nil)
	kb := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.Split(r.URL.Path, "/")[2]) // /kb/{workspace}/status
		const head = `{"enabled":true,"pad":"`
		io.WriteString(w, head+strings.Repeat("x", n-len(head)-2)+`"}`)
	})
	c := parseCore(t, probeCatalog, rec.srv.URL, map[string]string{"KB": kb.srv.URL})
	for n, met := range map[int]bool{64<<10 - 1: true, 64 << 10: true, 64<<10 + 1: false} {
		p := authz.NewPrincipal("alice", strconv.Itoa(n), "", nil, nil)
		res, err := c.Call(context.Background(), p, "ask_kb", nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError == met {
			t.Errorf("a %d-byte probe answer: prerequisite met = %v, want %v (%s)", n, !res.IsError, met, res.Text)
		}
	}
}
