package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/mcp"
)

// bigBodyCatalog lets a request body be as large as the attack declares,
// so only the order of admission keeps it from being buffered.
var bigBodyCatalog = strings.Replace(testCatalog, "  request_bytes: 4KiB\n", "  request_bytes: 2MiB\n", 1)

// rawPost opens a connection to srv and sends the head of a POST to path
// declaring a body of declared bytes, then prefix of that body. The caller
// reads the answer with readStatus and closes the connection.
func rawPost(t testing.TB, srv *httptest.Server, path string, declared int, authz, prefix string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	head := "POST " + path + " HTTP/1.1\r\nHost: " + srv.Listener.Addr().String() +
		"\r\nContent-Type: application/json\r\nAccept: application/json\r\n" +
		"Content-Length: " + fmt.Sprint(declared) + "\r\n"
	if authz != "" {
		head += "Authorization: " + authz + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"+prefix); err != nil {
		t.Fatal(err)
	}
	return c
}

// readStatus reads the status code of the answer on c, or 0 when none
// comes before the deadline.
func readStatus(c net.Conn, deadline time.Time) int {
	c.SetReadDeadline(deadline)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// An unauthenticated request declaring a large body is refused before a
// byte of it is read or a buffer is sized from its Content-Length
// (300 such connections grew the heap by ~300 MB).
func TestUnauthenticatedBodiesAreNeverRead(t *testing.T) {
	e := newEnv(t, bigBodyCatalog)
	const conns = 200
	before := heapInUse()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		open   []net.Conn
		status = map[int]int{}
	)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/mcp"
			if i%2 == 1 {
				path = "/admin/mcp/call"
			}
			c := rawPost(t, e.srv, path, 1<<20, "", `{"jsonrpc":`)
			code := readStatus(c, deadline)
			mu.Lock()
			open = append(open, c)
			status[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	grown := int64(heapInUse()) - int64(before)
	for _, c := range open {
		c.Close()
	}
	if status[http.StatusUnauthorized] != conns {
		t.Errorf("answers by status = %v, want all %d to be 401 without the body", status, conns)
	}
	t.Logf("heap grew by %d KiB for %d unauthenticated 1 MiB requests", grown>>10, conns)
	if grown > 50<<20 {
		t.Errorf("heap grew by %d MiB for %d unauthenticated requests that sent no body, want < 50 MiB", grown>>20, conns)
	}
}

// An authenticated request is read as its bytes arrive: a declared
// Content-Length does not size the buffer.
func TestBodyBufferGrowsAsBytesArrive(t *testing.T) {
	e := newEnv(t, bigBodyCatalog)
	const conns = 20
	tok := "Bearer " + token(t, "read")
	// Warm up the server, the verifier and the pools.
	c := rawPost(t, e.srv, "/mcp", 2, tok, "{}")
	readStatus(c, time.Now().Add(10*time.Second))
	c.Close()

	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	var wg sync.WaitGroup
	var bad atomic.Int32
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := rawPost(t, e.srv, "/mcp", 1<<20, tok, `{"jsonrpc":"2.0"`)
			c.(*net.TCPConn).CloseWrite()
			if code := readStatus(c, time.Now().Add(10*time.Second)); code != http.StatusBadRequest {
				bad.Add(1)
				t.Errorf("truncated body = %d, want 400", code)
			}
			c.Close()
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&m1)
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("%d requests declaring 1 MiB and sending 16 bytes allocated %d KiB in all", conns, alloc>>10)
	if alloc > 8<<20 {
		t.Errorf("%d requests declaring 1 MiB and sending 16 bytes allocated %d MiB, want < 8 MiB (no buffer sized from Content-Length)", conns, alloc>>20)
	}
}

// The limits.request_bytes bound still holds when the body is read as it
// arrives, declared or not.
func TestRequestBytesBoundWithoutContentLength(t *testing.T) {
	e := newEnv(t, testCatalog)
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`
	hr, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp", io.MultiReader(strings.NewReader(big))) // no Content-Length: chunked
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer "+token(t, "read"))
	resp, err := e.srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body over request_bytes = %d, want 413", resp.StatusCode)
	}
}

// countingUpstream counts the requests that reach it.
func countingUpstream(n *atomic.Int32) http.Handler {
	inner := itemsUpstream()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		inner.ServeHTTP(w, r)
	})
}

// Two Authorization headers, or two credentials in one, are a 400: which
// one a proxy in front and the gateway each read is not something to
// guess at (the first one won).
func TestTwoAuthorizationHeadersAre400(t *testing.T) {
	var hits atomic.Int32
	e := newEnvWith(t, testCatalog, envConfig{upstream: countingUpstream(&hits)})
	good, other := token(t, "read"), tokenFor(t, "mallory", "read")
	routes := []struct {
		name, method, path, body string
	}{
		{"mcp", http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"a"}}}`},
		{"rest-call", http.MethodPost, "/admin/mcp/call", `{"name":"get_item","arguments":{"id":"a"}}`},
		{"rest-tools", http.MethodGet, "/admin/mcp/tools", ""},
	}
	creds := []struct {
		name   string
		values []string
	}{
		{"two-headers", []string{"Bearer " + good, "Bearer " + other}},
		{"two-headers-same-token", []string{"Bearer " + good, "Bearer " + good}},
		{"good-then-empty", []string{"Bearer " + good, ""}},
		{"comma-joined", []string{"Bearer " + good + ", Bearer " + other}},
		{"comma-joined-no-space", []string{"Bearer " + good + ",Bearer " + other}},
	}
	for _, rt := range routes {
		for _, cr := range creds {
			t.Run(rt.name+"/"+cr.name, func(t *testing.T) {
				hr, _ := http.NewRequest(rt.method, e.srv.URL+rt.path, strings.NewReader(rt.body))
				hr.Header.Set("Content-Type", "application/json")
				for _, v := range cr.values {
					hr.Header.Add("Authorization", v)
				}
				resp, err := e.srv.Client().Do(hr)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var m map[string]string
				if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &m) != nil || m["error"] != "bad_request" || !strings.Contains(m["message"], "Authorization") {
					t.Errorf("= %d %s, want 400 bad_request naming Authorization", resp.StatusCode, body)
				}
			})
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the upstream, want none", n)
	}
	// One credential still works.
	if r := e.do(req{body: routes[0].body, header: auth(t, "read")}); r.status != 200 || hits.Load() != 1 {
		t.Errorf("one Authorization header = %d %s (upstream hits %d), want 200", r.status, r.body, hits.Load())
	}
}

// addrListener reports a chosen local address for its connections, so a
// handler served on loopback sees itself on a public interface.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return addrConn{c, l.addr}, nil
}

type addrConn struct {
	net.Conn
	addr net.Addr
}

func (c addrConn) LocalAddr() net.Addr { return c.addr }

// newPublicEnv serves yaml on a listener that looks like 192.0.2.10:443.
func newPublicEnv(t *testing.T, yaml string) *env {
	e := newEnv(t, yaml)
	srv := httptest.NewUnstartedServer(mcp.NewHandler(&mcp.Options{State: e.current}))
	srv.Listener = addrListener{srv.Listener, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 443}}
	srv.Start()
	t.Cleanup(srv.Close)
	e.srv = srv
	return e
}

func TestDNSRebindingGuard(t *testing.T) {
	withServer := func(lines string) string {
		return strings.Replace(testCatalog, "  version: 1.2.3\n", "  version: 1.2.3\n"+lines, 1)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	hosts := withServer("  public_url: https://gw.example.com/mcp\n  allowed_hosts: [GW.internal:8080, gw.lan]\n")
	publicOnly := withServer("  public_url: https://gw.example.com:8443\n")
	cases := []struct {
		name   string
		public bool // served on a non-loopback listener
		yaml   string
		host   string
		origin string
		status int
	}{
		// Neither set: today's rules.
		{"loopback-no-config-foreign-host-is-403", false, testCatalog, "evil.example", "", 403},
		{"loopback-no-config-localhost-passes", false, testCatalog, "localhost:1234", "", 200},
		{"public-no-config-any-host-passes", true, testCatalog, "evil.example", "", 200},
		// allowed_hosts and public_url: every listener checks Host.
		{"public-unlisted-host-is-403", true, hosts, "evil.example", "", 403},
		{"public-rebound-ip-host-is-403", true, hosts, "192.0.2.10", "", 403},
		{"public-public-url-host-passes", true, hosts, "gw.example.com", "", 200},
		{"public-public-url-host-default-port-passes", true, hosts, "gw.example.com:443", "", 200},
		{"public-listed-host-port-passes", true, hosts, "gw.internal:8080", "", 200},
		{"public-listed-host-case-insensitive", true, hosts, "GW.LAN", "", 200},
		{"public-listed-host-wrong-port-is-403", true, hosts, "gw.internal:9090", "", 403},
		{"public-listed-host-missing-port-is-403", true, hosts, "gw.internal", "", 403},
		{"public-portless-entry-refuses-a-port", true, hosts, "gw.lan:8080", "", 403},
		{"loopback-unlisted-localhost-is-403", false, hosts, "localhost", "", 403},
		{"loopback-listed-host-passes", false, hosts, "gw.lan", "", 200},
		{"public-url-only-checks-host", true, publicOnly, "evil.example", "", 403},
		{"public-url-only-its-host-passes", true, publicOnly, "gw.example.com:8443", "", 200},
		// public_url is the own origin, not the request's Host.
		{"public-url-origin-passes", true, hosts, "gw.example.com", "https://gw.example.com", 200},
		{"public-url-origin-default-port-passes", true, hosts, "gw.example.com", "https://GW.example.com:443", 200},
		{"host-derived-origin-is-403", true, hosts, "gw.lan", "http://gw.lan", 403},
		{"http-origin-of-https-public-url-is-403", true, hosts, "gw.example.com", "http://gw.example.com", 403},
		{"listed-origin-still-passes", true, hosts, "gw.example.com", "https://app.example.com", 200},
		{"public-url-with-port-origin", true, publicOnly, "gw.example.com:8443", "https://gw.example.com:8443", 200},
		{"public-url-with-port-wrong-port-origin-is-403", true, publicOnly, "gw.example.com:8443", "https://gw.example.com", 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var e *env
			if tc.public {
				e = newPublicEnv(t, tc.yaml)
			} else {
				e = newEnv(t, tc.yaml)
			}
			h := auth(t, "read")
			if tc.origin != "" {
				h["Origin"] = tc.origin
			}
			r := e.do(req{body: list, header: h, host: tc.host})
			if r.status != tc.status {
				t.Fatalf("Host %q Origin %q = %d %s, want %d", tc.host, tc.origin, r.status, r.body, tc.status)
			}
			if tc.status == 403 && !bytes.Contains(r.body, []byte("not allowed")) {
				t.Errorf("403 body = %s, want a reason", r.body)
			}
			// The REST mirror has the same guard.
			rr := e.do(req{method: http.MethodGet, path: "/admin/mcp/tools", header: h, host: tc.host})
			if rr.status != tc.status {
				t.Errorf("REST: Host %q Origin %q = %d %s, want %d", tc.host, tc.origin, rr.status, rr.body, tc.status)
			}
		})
	}
}
