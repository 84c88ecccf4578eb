package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// resetUpstream is an upstream on a raw TCP listener, so it can do what
// no http.Handler can: read a request whole and then reset the
// connection (SO_LINGER 0, close), as a crashing or overloaded service
// does after it acted. It keeps connections alive and answers 200
// {"ok":true} to everything else. A path starting /reset-once resets only
// the first time that path is asked for; /reset resets every time.
type resetUpstream struct {
	url string

	mu    sync.Mutex
	seen  []arrival
	paths map[string]int
	conns int
	// resetIf, when set, decides instead of the path's prefix whether to
	// reset after reading a request (called under mu).
	resetIf func(arrival) bool
}

// arrival is one request as the upstream read it.
type arrival struct {
	method, path, key string
	conn, nth         int // which connection, and the how-manieth request on it (from 1)
	body              string
	// framing is the request's Content-Length and Transfer-Encoding
	// headers, as sent.
	framing string
}

func newResetUpstream(t *testing.T) *resetUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &resetUpstream{url: "http://" + ln.Addr().String(), paths: map[string]int{}}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			id := u.conns
			u.conns++
			u.mu.Unlock()
			wg.Go(func() { u.serve(c.(*net.TCPConn), id) })
		}
	})
	return u
}

func (u *resetUpstream) serve(c *net.TCPConn, id int) {
	defer c.Close()
	br := bufio.NewReader(c)
	for nth := 1; ; nth++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		u.mu.Lock()
		a := arrival{method: req.Method, path: req.URL.Path, key: req.Header.Get("Idempotency-Key") + req.Header.Get("X-Idempotency-Key"), conn: id, nth: nth, body: string(body),
			framing: fmt.Sprintf("Content-Length=%q Transfer-Encoding=%q", req.Header.Get("Content-Length"), req.TransferEncoding)}
		u.seen = append(u.seen, a)
		u.paths[req.URL.Path]++
		reset := strings.HasPrefix(req.URL.Path, "/reset") && (!strings.HasPrefix(req.URL.Path, "/reset-once") || u.paths[req.URL.Path] == 1)
		if u.resetIf != nil {
			reset = u.resetIf(a)
		}
		u.mu.Unlock()
		if reset {
			c.SetLinger(0)
			return // the deferred Close resets the connection
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}")
	}
}

// arrivals returns the requests the upstream read for path.
func (u *resetUpstream) arrivals(path string) []arrival {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []arrival
	for _, a := range u.seen {
		if a.path == path {
			out = append(out, a)
		}
	}
	return out
}

// newResetCore is a core in front of up with a plain write, a four-eyes
// write with a body, four-eyes writes without one (their key in
// Idempotency-Key or X-Idempotency-Key), a confirmed write without one,
// and reads; its audit records go to audit and its approvals to a file
// store.
func newResetCore(t *testing.T, up *resetUpstream, audit proxy.AuditSink) (*proxy.Core, string) {
	t.Helper()
	yaml := `version: 1
server: { name: t }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
gates:
  op: { scopes: [op] }
  approver: { scopes: [approve] }
upstreams:
  up: { base_url: "` + up.url + `", workspace: none, timeout: 10s }
  upx: { base_url: "` + up.url + `", workspace: none, timeout: 10s, idempotency_header: X-Idempotency-Key }
tools:
  - name: ping
    description: Ping.
    request: { upstream: up, method: GET, path: /ok }
  - name: flaky_read
    description: A read whose first answer is a reset.
    request: { upstream: up, method: GET, path: /reset-once/read }
  - name: plain_write
    description: A write without approval.
    kind: write
    gate: op
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, method: POST, path: /reset-once/plain, body: { q: "{q}" } }
  - name: approved_write
    description: A four-eyes write with a body.
    kind: write
    gate: op
    approval: { approvers: approver, ttl: 10m }
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, method: POST, path: /reset-once/approved, body: { q: "{q}" } }
  - name: get_write
    description: A write sent as a GET, which net/http deems safe to resend.
    kind: write
    gate: op
    request: { upstream: up, method: GET, path: /reset-once/get }
  - name: delete_write
    description: An approved write sent as a DELETE without a body.
    kind: write
    gate: op
    approval: { approvers: approver, ttl: 10m }
    request: { upstream: up, method: DELETE, path: /reset-once/delete }
  - name: x_key_delete
    description: An approved write without a body, its key in X-Idempotency-Key, which net/http also deems safe to resend.
    kind: write
    gate: op
    approval: { approvers: approver, ttl: 10m }
    request: { upstream: upx, method: DELETE, path: /reset-once/x-key }
  - name: confirmed_write
    description: A confirmed write without a body.
    kind: write
    gate: op
    approval: confirm
    input: { type: object, properties: { q: { type: string } }, required: [q] }
    request: { upstream: up, method: POST, path: "/reset-once/confirmed/{q}" }
`
	cat, err := catalog.Parse("t.yaml", []byte(yaml), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := approval.NewSealer(approval.RandomKey())
	storePath := filepath.Join(t.TempDir(), "approvals.json")
	store, err := approval.OpenFileStore(storePath)
	if err != nil {
		t.Fatal(err)
	}
	// A transport of its own, so the connection the test pools is the
	// one the write is sent on.
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := proxy.New(cat, &proxy.Options{Audit: audit, Transport: tr, Approvals: &proxy.Approvals{Sealer: sealer, Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	return c, storePath
}

// A write goes to the upstream at most once. The upstream reads the
// request whole and resets the kept-alive connection the gateway reused:
// net/http would resend a request with an Idempotency-Key (every approved
// write has one) on a new connection, and the upstream would act twice.
// The write arrives once, the call is an isError saying the request was
// sent and not sent again, and its audit record says it was sent with no
// answer (upstream_sent true, upstream_status 0). A read, which is safe to
// repeat, is resent once by the transport and answers.
func TestWriteIsSentAtMostOnceWhenTheConnectionResets(t *testing.T) {
	ctx := context.Background()
	alice := authz.NewPrincipal("alice", "", "alice", []string{"op"}, nil)
	bob := authz.NewPrincipal("bob", "", "bob", []string{"approve"}, nil)
	for _, tc := range []struct {
		name, tool, path string
		// framing is how the write's body is framed on the wire: as
		// net/http frames it when it may resend the request.
		framing string
		// prepare readies the call (an approval, a confirmation) and
		// returns the context of the call that is sent.
		prepare func(t *testing.T, c *proxy.Core) context.Context
	}{
		{"plain-write-with-a-body", "plain_write", "/reset-once/plain", `Content-Length="9" Transfer-Encoding=[]`, func(*testing.T, *proxy.Core) context.Context { return ctx }},
		{"get-write", "get_write", "/reset-once/get", `Content-Length="" Transfer-Encoding=[]`, func(*testing.T, *proxy.Core) context.Context { return ctx }},
		{"approved-delete-without-a-body", "delete_write", "/reset-once/delete", `Content-Length="" Transfer-Encoding=[]`, func(t *testing.T, c *proxy.Core) context.Context {
			res, err := c.Call(ctx, alice, "delete_write", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.DecideApproval(ctx, bob, idOf(t, res), true); err != nil {
				t.Fatal(err)
			}
			return ctx
		}},
		{"approved-delete-with-x-idempotency-key", "x_key_delete", "/reset-once/x-key", `Content-Length="" Transfer-Encoding=[]`, func(t *testing.T, c *proxy.Core) context.Context {
			res, err := c.Call(ctx, alice, "x_key_delete", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.DecideApproval(ctx, bob, idOf(t, res), true); err != nil {
				t.Fatal(err)
			}
			return ctx
		}},
		{"approved-write-with-a-body", "approved_write", "/reset-once/approved", `Content-Length="9" Transfer-Encoding=[]`, func(t *testing.T, c *proxy.Core) context.Context {
			res, err := c.Call(ctx, alice, "approved_write", []byte(`{"q":"x"}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.DecideApproval(ctx, bob, idOf(t, res), true); err != nil {
				t.Fatal(err)
			}
			return ctx
		}},
		{"confirmed-write-without-a-body", "confirmed_write", "/reset-once/confirmed/x", `Content-Length="0" Transfer-Encoding=[]`, func(t *testing.T, c *proxy.Core) context.Context {
			ask := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true})
			p, err := c.Call(ask, alice, "confirmed_write", []byte(`{"q":"x"}`))
			if err != nil || p.InputRequired == nil {
				t.Fatalf("confirm prompt = %+v, %v", p, err)
			}
			return proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true, RequestState: p.InputRequired.State,
				Responses: json.RawMessage(`{"confirm":{"action":"accept","content":{"confirm":true}}}`)})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newResetUpstream(t)
			audit := &memAudit{}
			c, _ := newResetCore(t, up, audit)
			callCtx := tc.prepare(t, c)
			// One answered call pools the connection the write then reuses.
			if res, err := c.Call(ctx, alice, "ping", nil); err != nil || res.IsError {
				t.Fatalf("ping = %+v, %v", res, err)
			}
			args := []byte(`{"q":"x"}`)
			if tc.tool == "get_write" || tc.tool == "delete_write" || tc.tool == "x_key_delete" {
				args = nil
			}
			res, err := c.Call(callCtx, alice, tc.tool, args)
			if err != nil {
				t.Fatal(err)
			}
			got := up.arrivals(tc.path)
			if len(got) == 0 || got[0].nth < 2 {
				t.Fatalf("the write arrived as %+v; the test needs it on a reused connection", got)
			}
			if len(got) != 1 {
				t.Errorf("the upstream received the write %d times (%+v), want once", len(got), got)
			}
			if tc.tool != "plain_write" && tc.tool != "get_write" && !strings.HasPrefix(got[0].key, "mcpgw-") {
				t.Errorf("the write arrived with Idempotency-Key %q, want the approval's key", got[0].key)
			}
			if got[0].framing != tc.framing {
				t.Errorf("the write arrived framed %s, want %s", got[0].framing, tc.framing)
			}
			if !res.IsError || !strings.Contains(res.Text, "reset the connection") || !strings.Contains(res.Text, "did not send it again") {
				t.Errorf("%s after a reset = %+v; want an isError saying the request was sent and not sent again", tc.tool, res)
			}
			var done *proxy.AuditRecord
			for _, r := range audit.all() {
				if r.Tool == tc.tool && r.Stage == proxy.StageCompleted {
					done = &r
				}
			}
			if done == nil || !done.UpstreamSent || done.UpstreamStatus != 0 || done.Outcome != proxy.OutcomeToolError {
				t.Errorf("completed record = %+v; want upstream_sent true, upstream_status 0, outcome tool_error", done)
			}
		})
	}

	t.Run("a-read-is-resent-once", func(t *testing.T) {
		up := newResetUpstream(t)
		c, _ := newResetCore(t, up, &memAudit{})
		if res, err := c.Call(ctx, alice, "ping", nil); err != nil || res.IsError {
			t.Fatalf("ping = %+v, %v", res, err)
		}
		res, err := c.Call(ctx, alice, "flaky_read", nil)
		got := up.arrivals("/reset-once/read")
		if len(got) == 0 || got[0].nth < 2 {
			t.Fatalf("the read arrived as %+v; the test needs it on a reused connection", got)
		}
		if err != nil || res.IsError || len(got) != 2 {
			t.Errorf("read after a reset = %+v, %v, received %d times; want it resent once on a new connection and answered", res, err, len(got))
		}
	})
}

// Nothing sent is told apart from sent without an answer: a write to an
// upstream that refuses connections is recorded without upstream_sent.
func TestWriteNotSentIsRecordedAsNotSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &resetUpstream{url: "http://" + ln.Addr().String()}
	ln.Close() // connections are refused from now on
	audit := &memAudit{}
	c, _ := newResetCore(t, up, audit)
	alice := authz.NewPrincipal("alice", "", "alice", []string{"op"}, nil)
	res, err := c.Call(context.Background(), alice, "plain_write", []byte(`{"q":"x"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "refused the connection") || strings.Contains(res.Text, "may have acted") {
		t.Errorf("write to a closed port = %+v, %v; want an isError saying the connection was refused", res, err)
	}
	recs := audit.all()
	if len(recs) != 2 || recs[1].Stage != proxy.StageCompleted || recs[1].UpstreamSent || recs[1].UpstreamStatus != 0 {
		t.Errorf("records = %+v; want started, then completed with upstream_sent false and upstream_status 0", recs)
	}
	line, _ := json.Marshal(recs[len(recs)-1])
	if strings.Contains(string(line), "upstream_sent") {
		t.Errorf("record of a write never sent = %s; want no upstream_sent key", line)
	}
}
