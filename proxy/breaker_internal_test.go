package proxy

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hangingUpstream answers at once, except requests whose path starts
// with /slow, which it holds until the client gives up. It counts what
// it receives.
func hangingUpstream(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if strings.HasPrefix(r.URL.Path, "/slow") {
			<-r.Context().Done()
			return
		}
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func get(t *testing.T, u *upstream, base, path, ws string) error {
	t.Helper()
	r, _ := http.NewRequest("GET", base+path, http.NoBody)
	_, err := u.do(context.Background(), r, redirectPolicy{}, ws, 0)
	return err
}

// One workspace's calls that time out (slow queries, on purpose or not)
// open a breaker for that workspace alone: another workspace's calls go
// through meanwhile.
func TestOneWorkspacesTimeoutsRefuseOnlyItself(t *testing.T) {
	srv, hits := hangingUpstream(t)
	u := testUpstream(t, srv.URL, 30*time.Millisecond, 0)
	for i := 0; i < breakerThreshold; i++ {
		if err := get(t, u, srv.URL, "/slow", "acme"); err == nil || !strings.Contains(err.Error(), "did not answer") {
			t.Fatalf("acme's slow call %d = %v, want a timeout", i, err)
		}
	}
	before := hits.Load()
	err := get(t, u, srv.URL, "/fast", "acme")
	if err == nil || !strings.Contains(err.Error(), "is unavailable") || hits.Load() != before {
		t.Fatalf("acme after 10 timeouts = %v (upstream reached %d more times), want a fast failure", err, hits.Load()-before)
	}
	for _, ws := range []string{"globex", "initech", "globex"} {
		if err := get(t, u, srv.URL, "/fast", ws); err != nil {
			t.Fatalf("%s while acme's breaker is open: %v", ws, err)
		}
	}
	// A success drops a workspace's breaker: acme alone keeps one.
	if n := u.breaker.workspaces(); n != 1 {
		t.Errorf("%d workspace breakers, want acme's alone (a success drops a workspace's)", n)
	}
}

// The upstream itself down: every workspace's calls time out, and the
// upstream's own breaker opens for all of them, a workspace that never
// failed included.
func TestUpstreamBreakerOpensWhenEveryWorkspaceFails(t *testing.T) {
	srv, hits := hangingUpstream(t)
	u := testUpstream(t, srv.URL, 30*time.Millisecond, 0)
	for i := 0; i < breakerThreshold; i++ {
		ws := []string{"acme", "globex"}[i%2]
		if err := get(t, u, srv.URL, "/slow", ws); err == nil {
			t.Fatalf("call %d succeeded", i)
		}
	}
	before := hits.Load()
	err := get(t, u, srv.URL, "/fast", "initech")
	if err == nil || !strings.Contains(err.Error(), "is unavailable") || hits.Load() != before {
		t.Fatalf("initech after two workspaces failed 10 times in a row = %v, want a fast failure", err)
	}
}

// Connections refused say the upstream is down whatever the caller sent:
// ten in a row open the upstream's breaker even when one workspace made
// them all.
func TestRefusedConnectionsOpenTheUpstreamBreaker(t *testing.T) {
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
	r, _ := http.NewRequest("POST", closed+"/x", http.NoBody)
	_, err = u.do(context.Background(), r, redirectPolicy{}, "globex", 0)
	if err == nil || !strings.Contains(err.Error(), "is unavailable") {
		t.Fatalf("globex after 10 refused connections = %v, want the upstream's breaker open", err)
	}
}

// Workspace breakers are bounded: past the cap, idle ones give way, and a
// workspace that finds no room still counts toward the upstream's.
func TestWorkspaceBreakersAreBounded(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	b := newBreakers(func() time.Time { return now }, time.Second)
	fail := func(ws string) {
		_, tk, _ := b.allow(ws)
		b.record(tk, true, false)
	}
	for i := 0; i < maxWorkspaceBreakers+10; i++ {
		fail("ws" + string(rune('a'+i%26)) + time.Duration(i).String())
	}
	if n := b.workspaces(); n != maxWorkspaceBreakers {
		t.Fatalf("%d workspace breakers, want the cap %d", n, maxWorkspaceBreakers)
	}
	// Idle for exactly workspaceBreakerIdle is not yet idle enough.
	now = now.Add(workspaceBreakerIdle)
	fail("early")
	if n := b.workspaces(); n != maxWorkspaceBreakers {
		t.Fatalf("%d workspace breakers when the others had been idle for exactly %v, want the cap %d kept", n, workspaceBreakerIdle, maxWorkspaceBreakers)
	}
	now = now.Add(time.Second)
	fail("newcomer")
	if n := b.workspaces(); n != 1 {
		t.Errorf("%d workspace breakers after the idle ones gave way, want the newcomer's alone", n)
	}
}
