package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// coreWith builds a core over the test catalog with extra upstream keys.
// Its upstream timeout is a generous 10 s: none of its users waits for the
// timeout, and a 1 s one was missed on a machine loaded to 20 (a
// rule: a bound, never a timing assertion).
func coreWith(t *testing.T, upURL string, opts *proxy.Options, extra string) *proxy.Core {
	t.Helper()
	src := strings.Replace(testCatalog, "    max_response_bytes: 64KiB\n", "    max_response_bytes: 64KiB\n"+extra, 1)
	cat, err := catalog.Parse("test.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		return map[string]string{"UP": upURL, "SECRET": strings.Repeat("k", 32), "TIMEOUT": "10s"}[k], true
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := proxy.New(cat, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCircuitBreakerOpensOnTransportFailuresAndRecovers(t *testing.T) {
	// In a bubble: the cooldown passes on the bubble's clock, exactly.
	synctest.Test(t, func(t *testing.T) {
		var failing atomic.Bool
		failing.Store(true)
		var hits atomic.Int32
		const cooldown = 200 * time.Millisecond
		rec, tr := newMemRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			if failing.Load() {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close() // the connection ends before any answer
				return
			}
			w.Write([]byte(`{"ok":true}`))
		})
		c := coreWith(t, rec.srv.URL, &proxy.Options{BreakerCooldown: cooldown, Transport: tr}, "")
		for i := 0; i < 10; i++ {
			if res := call(t, c, reader, "get_item", `{"id":"a"}`); !strings.Contains(res.Text, "reset the connection") {
				t.Fatalf("call %d = %s, want a reset", i, res.Text)
			}
		}
		res := call(t, c, reader, "get_item", `{"id":"a"}`)
		if !strings.Contains(res.Text, "is unavailable") || hits.Load() != 10 {
			t.Fatalf("11th call = %q after %d upstream hits, want a fast failure with 10 hits", res.Text, hits.Load())
		}
		// One workspace failing opens its own breaker, which the metrics
		// report; the upstream's own stays closed for other workspaces.
		if got := c.Breakers(); len(got) != 1 || got[0].Open || got[0].OpenWorkspaces != 1 {
			t.Fatalf("Breakers() while open = %+v, want the workspace's breaker open", got)
		}
		failing.Store(false)
		time.Sleep(cooldown / 2)
		if res := call(t, c, reader, "get_item", `{"id":"a"}`); !res.IsError || hits.Load() != 10 {
			t.Fatalf("a call halfway through the cooldown = %q after %d hits, want a fast failure", res.Text, hits.Load())
		}
		time.Sleep(cooldown / 2)
		if res = call(t, c, reader, "get_item", `{"id":"a"}`); res.IsError {
			t.Fatalf("after the cooldown the half-open probe = %s, want it through and the breaker closed", res.Text)
		}
		if got := c.Breakers(); got[0].Open || got[0].OpenWorkspaces != 0 {
			t.Fatalf("Breakers() after recovery = %+v, want none open", got)
		}
	})
}

func TestHTTPErrorsNeverTripTheBreaker(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	c := coreWith(t, rec.srv.URL, nil, "")
	for i := 0; i < 30; i++ {
		if res := call(t, c, reader, "get_item", `{"id":"a"}`); !strings.Contains(res.Text, "503") {
			t.Fatalf("call %d = %s", i, res.Text)
		}
	}
	if n := rec.count(); n != 30 {
		t.Errorf("upstream saw %d of 30 calls", n)
	}
}

func TestConnectFailureRetriedOnceForReads(t *testing.T) {
	// A listener that is closed refuses: a read is tried twice, a write once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	c := coreWith(t, url, nil, "")
	start := time.Now()
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	if !strings.Contains(res.Text, "refused") || time.Since(start) < 50*time.Millisecond {
		t.Errorf("read = %q after %v, want a refusal after one jittered retry", res.Text, time.Since(start))
	}
}

func TestMaxConcurrentPerUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var inFlight, peak atomic.Int32
		rec, tr := newMemRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			<-release
			inFlight.Add(-1)
			w.Write([]byte(`{}`))
		})
		c := coreWith(t, rec.srv.URL, &proxy.Options{Transport: tr}, "    max_concurrent: 2\n")
		done := make(chan struct{})
		for i := 0; i < 6; i++ {
			go func() {
				c.Call(context.Background(), reader, "get_item", []byte(`{"id":"a"}`))
				done <- struct{}{}
			}()
		}
		// Every call is now either at the upstream or waiting for a slot:
		// a third could not have slipped through.
		synctest.Wait()
		if n := rec.count(); n != 2 {
			t.Fatalf("%d calls reached the upstream while it held two, want 2", n)
		}
		close(release)
		for i := 0; i < 6; i++ {
			<-done
		}
		if p := peak.Load(); p != 2 {
			t.Errorf("peak concurrent upstream calls = %d, want 2", p)
		}
	})
}

// Without Options.BreakerCooldown an open breaker fails calls fast for
// the default five seconds: the calls after the tenth failure in a row
// reach no upstream and say how long the wait is.
func TestBreakerDefaultCooldown(t *testing.T) {
	var hits atomic.Int32
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	})
	c := coreWith(t, rec.srv.URL, nil, "")
	for i := 0; i < 10; i++ {
		if res := call(t, c, reader, "get_item", `{"id":"a"}`); !strings.Contains(res.Text, "reset the connection") {
			t.Fatalf("call %d = %s, want a reset", i, res.Text)
		}
	}
	for i := 0; i < 3; i++ {
		res := call(t, c, reader, "get_item", `{"id":"a"}`)
		// "for the next 5s", or less on a slow machine: never 0s.
		const want = "upstream up is unavailable: 10 connection failures in a row; calls fail fast for the next "
		if !strings.HasPrefix(res.Text, want) || !strings.HasSuffix(res.Text, "s while it recovers") || strings.Contains(res.Text, " 0s ") {
			t.Fatalf("call %d after the breaker opened = %q, want %q…s while it recovers", 11+i, res.Text, want)
		}
	}
	if n := hits.Load(); n != 10 {
		t.Errorf("the upstream was reached %d times, want 10", n)
	}
}

// countingTransport is a real transport that counts the requests it is
// given.
type countingTransport struct {
	n  atomic.Int32
	rt http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// A connection refused is retried once for a read (GET) and never for a
// write (POST with a body, DELETE without).
func TestConnectFailureRetriesOnlyReads(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	ct := &countingTransport{rt: http.DefaultTransport.(*http.Transport).Clone()}
	c := parseCoreWith(t, testCatalog+`
  - name: delete_item
    description: Delete an item; no body.
    kind: write
    gate: write
    input: { type: object, properties: { id: { type: string } }, required: [id] }
    request: { upstream: up, method: DELETE, path: "/v1/items/{id}" }
`, url, &proxy.Options{Transport: ct})
	if res := call(t, c, reader, "get_item", `{"id":"a"}`); !strings.Contains(res.Text, "refused") {
		t.Fatalf("read = %q, want a refusal", res.Text)
	}
	if n := ct.n.Swap(0); n != 2 {
		t.Errorf("a refused read was tried %d times, want 2", n)
	}
	for _, tool := range []string{"set_limit", "delete_item"} { // with a body, without
		if res := call(t, c, writer, tool, `{"id":"a"}`); !strings.Contains(res.Text, "refused") {
			t.Fatalf("%s = %q, want a refusal", tool, res.Text)
		}
		if n := ct.n.Swap(0); n != 1 {
			t.Errorf("a refused %s was tried %d times, want 1", tool, n)
		}
	}
}

// upstreamStatuses records the status of each upstream exchange reported.
type upstreamStatuses struct {
	mu sync.Mutex
	s  []int
}

func (u *upstreamStatuses) ToolCall(string, string, time.Duration) {}
func (u *upstreamStatuses) Upstream(_ string, status int, _ time.Duration) {
	u.mu.Lock()
	u.s = append(u.s, status)
	u.mu.Unlock()
}

// Metrics: an exchange is reported with the upstream's status when it
// answered, an answer over max_response_bytes included, and with 0 when
// the answer broke off or never came.
func TestUpstreamMetricsReportTheStatus(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/items/big":
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"x":"`+strings.Repeat("a", 100<<10)+`"}`)
		case "/v1/items/cut":
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"ok":`)
			w.(http.Flusher).Flush()
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
		case "/v1/items/gone":
			w.WriteHeader(http.StatusNotFound)
		default:
			io.WriteString(w, `{"ok":true}`)
		}
	})
	m := &upstreamStatuses{}
	c := coreWith(t, rec.srv.URL, &proxy.Options{Metrics: m}, "")
	for _, id := range []string{"ok", "big", "cut", "gone"} {
		call(t, c, reader, "get_item", `{"id":"`+id+`"}`)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if got := fmt.Sprint(m.s); got != "[200 202 0 404]" {
		t.Errorf("upstream statuses reported = %s, want [200 202 0 404]", got)
	}
}
