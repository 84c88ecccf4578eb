package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

const testCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  view: { scopes: [read] }
  write: { scopes: [write] }
upstreams:
  up:
    base_url: ${UP}
    timeout: ${TIMEOUT:-2s}
    headers: { Authorization: "Bearer upstream-secret" }
    workspace: { header: X-Workspace-Id }
    actor_header: X-Actor
    max_response_bytes: 64KiB
tools:
  - name: get_item
    description: Get an item by id.
    input:
      type: object
      properties:
        id: { type: string }
        q: { type: string }
        h: { type: string }
        tags: { type: array, items: { type: string } }
      required: [id]
      additionalProperties: false
    request:
      upstream: up
      path: /v1/items/{id}
      query: { q: "{q}", tag: "{tags}" }
      headers: { X-Trace: "{h}" }
    response:
      not_found: { status: [404] }
  - name: cancel_item
    description: Cancel an item.
    input:
      type: object
      properties:
        id: { type: string }
      required: [id]
      additionalProperties: false
    request: { upstream: up, path: "/v1/items/{id}:cancel" }
  - name: set_limit
    description: Set or remove a limit.
    kind: write
    gate: write
    input:
      type: object
      properties:
        id: { type: string }
        limit: { type: [integer, "null"], minimum: 1 }
        reason: { type: string }
        approval_code: { type: string, writeOnly: true }
      required: [id]
      additionalProperties: false
    request:
      upstream: up
      method: POST
      path: /v1/items/{id}/limit
      body: { limit: "{limit}", reason: "{reason}", by: "{actor}" }
`

// seen is one request as the upstream received it.
type seen struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

// recorder is a real upstream that records what it receives and answers
// with handle.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
	srv  *httptest.Server
}

func newRecorder(t *testing.T, handle http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(recordingHandler(rec, handle))
	t.Cleanup(rec.srv.Close)
	return rec
}

// recordingHandler records each request in rec, then answers with handle,
// or a small JSON object when handle is nil.
func recordingHandler(rec *recorder, handle http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
		rec.mu.Unlock()
		if handle != nil {
			handle(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","ok":true}`)
	})
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

func newCore(t *testing.T, upURL string, env map[string]string) *proxy.Core {
	t.Helper()
	return parseCore(t, testCatalog, upURL, env)
}

// parseCore loads src with UP=upURL, a test secret and env, and builds a
// core whose environment (the kill switch) is the same variables.
func parseCore(t *testing.T, src, upURL string, env map[string]string) *proxy.Core {
	t.Helper()
	return parseCoreOver(t, src, upURL, env, nil)
}

// parseCoreOver is parseCore with upstream requests carried by rt (nil:
// the shared transport).
func parseCoreOver(t *testing.T, src, upURL string, env map[string]string, rt http.RoundTripper) *proxy.Core {
	t.Helper()
	vars := map[string]string{"UP": upURL, "SECRET": strings.Repeat("k", 32)}
	for k, v := range env {
		vars[k] = v
	}
	cat, err := catalog.Parse("test.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c, err := proxy.New(cat, &proxy.Options{Getenv: func(k string) string { return vars[k] }, Transport: rt})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

var (
	reader = authz.NewPrincipal("alice", "acme", "alice@example.com", []string{"read"}, nil)
	writer = authz.NewPrincipal("bob", "acme", "bob@example.com", []string{"read", "write"}, nil)
)

func call(t *testing.T, c *proxy.Core, p *authz.Principal, name, args string) *proxy.Result {
	t.Helper()
	res, err := c.Call(context.Background(), p, name, []byte(args))
	if err != nil {
		t.Fatalf("Call(%s, %s) error: %v", name, args, err)
	}
	return res
}

func TestHostilePathValuesStayInOneSegment(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newCore(t, rec.srv.URL, nil)
	cases := []struct {
		id, wantPath string
	}{
		{"a?x=1", "/v1/items/a%3Fx=1"},
		{"a#frag", "/v1/items/a%23frag"},
		{"a b", "/v1/items/a%20b"},
		{"caf\u00e9", "/v1/items/caf%C3%A9"},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"id": tc.id})
			res := call(t, c, reader, "get_item", string(args))
			if res.IsError {
				t.Fatalf("get_item(%q) is an error: %s", tc.id, res.Text)
			}
			reqs := rec.all()
			if got := reqs[len(reqs)-1].Path; got != tc.wantPath {
				t.Errorf("upstream path for %q = %q, want %q", tc.id, got, tc.wantPath)
			}
		})
	}
}

func TestDotSegmentsAndInvalidArgumentsSendNothing(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newCore(t, rec.srv.URL, nil)
	for _, args := range []string{
		`{"id":".."}`, `{"id":"."}`, `{"id":""}`, `{"id":"../admin"}`, `{"id":"%2e%2e"}`, `{"id":"a/b"}`,
		`{}`, `{"id":7}`, `{"id":"x","workspace":"globex"}`, `{"id":"x","h":"a\r\nX-Workspace-Id: globex"}`,
		`{"id":"x","h":"a\u0000b"}`, `[1,2]`, `{"id":"x","extra":1}`,
	} {
		res := call(t, c, reader, "get_item", args)
		if !res.IsError {
			t.Errorf("get_item(%s) = %s, want a tool error", args, res.Text)
		}
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("upstream received %d requests, want 0: %+v", n, rec.all())
	}
}

func TestPartialSegmentPlaceholder(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newCore(t, rec.srv.URL, nil)
	res := call(t, c, reader, "cancel_item", `{"id":".."}`)
	if res.IsError {
		t.Fatalf("cancel_item: %s", res.Text)
	}
	if got := rec.all()[0].Path; got != "/v1/items/..:cancel" {
		t.Errorf("path = %q", got)
	}
}

func TestQueryHeadersAndWorkspaceBinding(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newCore(t, rec.srv.URL, nil)
	long := strings.Repeat("z", 10_000)
	res := call(t, c, reader, "get_item", `{"id":"j1","q":"a&b=c#d","tags":["x=1","y"],"h":"`+long+`"}`)
	if res.IsError {
		t.Fatalf("get_item: %s", res.Text)
	}
	got := rec.all()[0]
	if got.Query != "q=a%26b%3Dc%23d&tag=x%3D1&tag=y" {
		t.Errorf("query = %q", got.Query)
	}
	if got.Header.Get("X-Workspace-Id") != "acme" {
		t.Errorf("X-Workspace-Id = %q, want the token's workspace", got.Header.Get("X-Workspace-Id"))
	}
	if got.Header.Get("Authorization") != "Bearer upstream-secret" {
		t.Errorf("Authorization = %q, want the upstream's own credential", got.Header.Get("Authorization"))
	}
	if got.Header.Get("X-Trace") != long {
		t.Errorf("X-Trace not sent as given")
	}
	if got.Header.Get("X-Actor") != "" {
		t.Errorf("a read sent X-Actor %q", got.Header.Get("X-Actor"))
	}
	// Absent optional arguments drop their parameter and header.
	call(t, c, reader, "get_item", `{"id":"j2"}`)
	got = rec.all()[1]
	if got.Query != "" || got.Header.Get("X-Trace") != "" {
		t.Errorf("absent arguments sent: query %q, X-Trace %q", got.Query, got.Header.Get("X-Trace"))
	}
}

func TestWriteBodyKeepsTypesAndBindsActor(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newCore(t, rec.srv.URL, nil)
	cases := []struct{ args, body string }{
		{`{"id":"q1","limit":5,"reason":"load"}`, `{"by":"bob@example.com","limit":5,"reason":"load"}`},
		{`{"id":"q1"}`, `{"by":"bob@example.com"}`},
		{`{"id":"q1","limit":null}`, `{"by":"bob@example.com","limit":null}`},
	}
	for i, tc := range cases {
		res := call(t, c, writer, "set_limit", tc.args)
		if res.IsError {
			t.Fatalf("set_limit(%s): %s", tc.args, res.Text)
		}
		got := rec.all()[i]
		if got.Body != tc.body {
			t.Errorf("set_limit(%s) body = %s, want %s", tc.args, got.Body, tc.body)
		}
		if got.Header.Get("X-Actor") != "bob@example.com" || got.Method != "POST" {
			t.Errorf("set_limit: method %s, X-Actor %q", got.Method, got.Header.Get("X-Actor"))
		}
	}
}

func TestGateDeniesWriteAndSendsNothing(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newCore(t, rec.srv.URL, nil)
	res := call(t, c, reader, "set_limit", `{"id":"q1","limit":3}`)
	if !res.IsError || !strings.Contains(res.Text, `"write" gate`) {
		t.Errorf("set_limit by a reader = %+v, want a tool error naming the gate", res)
	}
	for _, l := range c.List(context.Background(), reader) {
		if l.Tool.Name == "set_limit" {
			t.Errorf("a reader's list shows set_limit")
		}
	}
	if res := call(t, c, nil, "get_item", `{"id":"x"}`); !res.IsError {
		t.Errorf("a call without a principal succeeded")
	}
	if len(c.List(context.Background(), nil)) != 0 {
		t.Errorf("a list without a principal is not empty")
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("upstream received %d requests", n)
	}
}

func TestUnknownTool(t *testing.T) {
	c := newCore(t, "http://127.0.0.1:1", nil)
	_, err := c.Call(context.Background(), reader, "nope", nil)
	var ute *proxy.UnknownToolError
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !errorsAs(err, &ute) {
		t.Errorf("Call(nope) error = %v, want UnknownToolError", err)
	}
}

func errorsAs(err error, target **proxy.UnknownToolError) bool {
	e, ok := err.(*proxy.UnknownToolError)
	*target = e
	return ok
}

func TestUpstreamFaultsBecomeToolErrors(t *testing.T) {
	other := newRecorder(t, nil)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	cases := []struct {
		name    string
		url     string // when set, used instead of a recorder
		handle  http.HandlerFunc
		follow  bool // the upstream sets follow_redirects
		want    string
		notWant string
	}{
		{name: "refused", url: closedURL, want: "refused the connection", notWant: "127.0.0.1"},
		{name: "reset", handle: func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}, want: "reset the connection"},
		{name: "timeout", handle: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, want: "did not answer within"},
		{name: "500-with-problem", handle: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(500)
			io.WriteString(w, `{"title":"Database unavailable","detail":"primary is failing over"}`)
		}, want: "answered 500 Internal Server Error: primary is failing over"},
		{name: "429-retry-after", handle: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":"slow down"}`)
		}, want: "(retry after 7)"},
		{name: "non-json", handle: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>oops</html>")
		}, want: "not JSON (text/html)"},
		{name: "over-the-cap", handle: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"big":"`+strings.Repeat("x", 100<<10)+`"}`)
		}, want: "more than max_response_bytes"},
		{name: "redirect-not-followed", handle: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		}, want: "answered 302 Found (a redirect, not followed): the upstream does not set follow_redirects"},
		{name: "redirect-loop", follow: true, handle: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		}, want: "answered 302 Found (a redirect, not followed): more than 3 redirects in a row"},
		{name: "foreign-redirect", follow: true, handle: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.srv.URL+"/v1/items/steal", http.StatusFound)
		}, want: "answered 302 Found (a redirect, not followed): it leads to another origin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if url == "" {
				url = newRecorder(t, tc.handle).srv.URL
			}
			src := testCatalog
			if tc.follow {
				src = followCatalog
			}
			c := parseCore(t, src, url, map[string]string{"TIMEOUT": "300ms"})
			start := time.Now()
			res := call(t, c, reader, "get_item", `{"id":"j1"}`)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if !res.IsError || !strings.Contains(res.Text, tc.want) {
				t.Errorf("result = %+v, want a tool error containing %q", res, tc.want)
			}
			if tc.notWant != "" && strings.Contains(res.Text, tc.notWant) {
				t.Errorf("error text leaks %q: %s", tc.notWant, res.Text)
			}
			if strings.Contains(res.Text, "upstream-secret") {
				t.Errorf("error text leaks the upstream credential")
			}
		})
	}
	if n := len(other.all()); n != 0 {
		t.Errorf("the foreign redirect target received %d requests", n)
	}
}

// followCatalog is testCatalog with follow_redirects: true on its upstream.
var followCatalog = strings.Replace(testCatalog, "    max_response_bytes: 64KiB\n", "    max_response_bytes: 64KiB\n    follow_redirects: true\n", 1)

func TestSameOriginRedirectKeepsCredentials(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/items/moved" {
			http.Redirect(w, r, "/v1/items/moved", http.StatusFound)
			return
		}
		io.WriteString(w, `{"moved":true}`)
	})
	c := parseCore(t, followCatalog, rec.srv.URL, nil)
	res := call(t, c, reader, "get_item", `{"id":"j1"}`)
	if res.IsError || res.Text != `{"moved":true}` {
		t.Fatalf("result = %+v", res)
	}
	last := rec.all()[1]
	if last.Header.Get("Authorization") != "Bearer upstream-secret" || last.Header.Get("X-Workspace-Id") != "acme" {
		t.Errorf("redirected request lost headers: %v", last.Header)
	}
}

func TestNotFoundAndInvalidUTF8(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(404)
			return
		}
		io.WriteString(w, "{\"name\":\"bad \xff\xfe bytes\",\"list\":[1, 2,\n 3]}")
	})
	c := newCore(t, rec.srv.URL, nil)
	res := call(t, c, reader, "get_item", `{"id":"missing"}`)
	if res.IsError || string(res.Structured) != `{"found":false}` {
		t.Errorf("not found = %+v, want {found:false}", res)
	}
	res = call(t, c, reader, "get_item", `{"id":"j1"}`)
	if res.IsError || !utf8.ValidString(res.Text) || !json.Valid(res.Structured) {
		t.Fatalf("invalid UTF-8 result = %+v", res)
	}
	if want := "{\"name\":\"bad \uFFFD bytes\",\"list\":[1,2,3]}"; res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
}

func newTestServer(tb testing.TB, h http.Handler) string {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL
}

func TestWriteNeverFollowsRedirects(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/moved") {
			http.Redirect(w, r, r.URL.Path+"/moved", http.StatusTemporaryRedirect)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	})
	c := parseCore(t, followCatalog, rec.srv.URL, nil)
	res := call(t, c, writer, "set_limit", `{"id":"q1","limit":2}`)
	if !res.IsError || !strings.Contains(res.Text, "answered 307 Temporary Redirect (a redirect, not followed): writes never follow redirects") {
		t.Fatalf("set_limit through a 307 = %+v, want a tool error naming the redirect", res)
	}
	if reqs := rec.all(); len(reqs) != 1 || reqs[0].Method != "POST" {
		t.Errorf("the upstream received %+v, want the one POST", reqs)
	}
}
