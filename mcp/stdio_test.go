package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/mcp"
	"github.com/mcpgw/gateway/proxy"
)

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newJSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// requestLines returns the access log lines (msg "request") of a JSON log.
func requestLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(log) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if m["msg"] == "request" {
			if m["level"] != "INFO" {
				t.Errorf("access line at %v, want INFO", m["level"])
			}
			out = append(out, m)
		}
	}
	return out
}

// stdioConn is ServeStdio running over pipes.
type stdioConn struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
	log   *lockedBuffer
}

func startStdio(t *testing.T, e *env, tok string) *stdioConn {
	t.Helper()
	return startStdioWith(t, context.Background(), &mcp.StdioOptions{State: e.current, Token: tok})
}

// startStdioWith runs ServeStdio with opts; a nil Logger becomes a JSON
// logger into s.log.
func startStdioWith(t *testing.T, ctx context.Context, opts *mcp.StdioOptions) *stdioConn {
	t.Helper()
	s := &stdioConn{t: t, lines: make(chan string, 16), done: make(chan error, 1), log: &lockedBuffer{}}
	if opts.Logger == nil {
		opts.Logger = newJSONLogger(s.log)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.in = inW
	go func() {
		s.done <- mcp.ServeStdio(ctx, inR, outW, opts)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			t.Error("ServeStdio did not return after its input closed")
		}
	})
	return s
}

func (s *stdioConn) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line); err != nil {
		s.t.Fatalf("writing to stdio: %v", err)
	}
}

func (s *stdioConn) read() string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("stdio output ended")
		}
		return l
	case <-time.After(10 * time.Second):
		s.t.Fatal("no stdio answer")
	}
	return ""
}

func (s *stdioConn) roundTrip(line string) string {
	s.t.Helper()
	s.send(line + "\n")
	return s.read()
}

// rpc decodes one answer line.
type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  map[string]json.RawMessage
	Error   *struct {
		Code    int
		Message string
		Data    json.RawMessage
	}
}

func decodeRPC(t *testing.T, line string) rpc {
	t.Helper()
	var r rpc
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.JSONRPC != "2.0" {
		t.Fatalf("answer %q is not a JSON-RPC response: %v", line, err)
	}
	return r
}

const metaModern = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestStdioBothEras(t *testing.T) {
	e := newEnv(t, testCatalog)
	s := startStdio(t, e, token(t, "read"))
	cases := []struct {
		name, line string
		check      func(t *testing.T, r rpc)
	}{
		{"legacy-initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, func(t *testing.T, r rpc) {
			if string(r.Result["protocolVersion"]) != `"2025-06-18"` || r.Result["serverInfo"] == nil {
				t.Fatalf("initialize = %v", r.Result)
			}
		}},
		{"legacy-ping", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, func(t *testing.T, r rpc) {
			if string(r.ID) != `"p"` || r.Result == nil || len(r.Result) != 0 {
				t.Fatalf("ping = %+v", r)
			}
		}},
		{"legacy-tools-list", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, func(t *testing.T, r rpc) {
			var tools []struct{ Name string }
			_ = json.Unmarshal(r.Result["tools"], &tools)
			if len(tools) != 3 || r.Result["ttlMs"] != nil {
				t.Fatalf("tools/list = %v", r.Result)
			}
		}},
		{"legacy-tools-call-has-structured-content", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"s1"}}}`, func(t *testing.T, r rpc) {
			if string(r.Result["structuredContent"]) != `{"id":"s1","ok":true}` {
				t.Fatalf("tools/call = %v", r.Result)
			}
		}},
		{"modern-discover-without-headers", `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{` + metaModern + `}}`, func(t *testing.T, r rpc) {
			if string(r.Result["resultType"]) != `"complete"` || r.Result["supportedVersions"] == nil {
				t.Fatalf("server/discover = %v", r.Result)
			}
		}},
		{"modern-tools-call", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{` + metaModern + `,"name":"get_item","arguments":{"id":"m1"}}}`, func(t *testing.T, r rpc) {
			if string(r.Result["structuredContent"]) != `{"id":"m1","ok":true}` || string(r.Result["resultType"]) != `"complete"` {
				t.Fatalf("tools/call = %v", r.Result)
			}
		}},
		{"modern-ping-is-removed", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{` + metaModern + `}}`, func(t *testing.T, r rpc) {
			if r.Error == nil || r.Error.Code != -32601 {
				t.Fatalf("modern ping = %+v", r)
			}
		}},
		{"unknown-tool-is-32602", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`, func(t *testing.T, r rpc) {
			if r.Error == nil || r.Error.Code != -32602 {
				t.Fatalf("unknown tool = %+v", r)
			}
		}},
		{"output-too-large-is-31413", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_blob"}}`, func(t *testing.T, r rpc) {
			if r.Error == nil || r.Error.Code != -31413 {
				t.Fatalf("get_blob = %+v", r)
			}
		}},
		{"challenge-is-31403", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"set_limit","arguments":{"id":"a"}}}`, func(t *testing.T, r rpc) {
			if r.Error == nil || r.Error.Code != -31403 {
				t.Fatalf("set_limit = %+v", r)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, decodeRPC(t, s.roundTrip(tc.line))) })
	}
}

func TestStdioFraming(t *testing.T) {
	e := newEnv(t, testCatalog) // request_bytes: 4KiB
	s := startStdio(t, e, token(t, "read"))
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	expectID := func(line, id string) rpc {
		t.Helper()
		r := decodeRPC(t, line)
		if string(r.ID) != id {
			t.Fatalf("answer %s, want id %s", line, id)
		}
		return r
	}

	// Notifications and blank lines produce nothing: the next answer is
	// the ping's.
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n\n   \n")
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}` + "\n")
	expectID(s.roundTrip(ping("1")), "1")

	r := decodeRPC(t, s.roundTrip(`{"jsonrpc":"2.0","id":2,`))
	if r.Error == nil || r.Error.Code != -32700 || string(r.ID) != "null" {
		t.Fatalf("malformed = %+v, want -32700 id null", r)
	}
	expectID(s.roundTrip(ping("3")), "3")

	big := `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200_000) + `"}}`
	r = decodeRPC(t, s.roundTrip(big))
	if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" || !strings.Contains(r.Error.Message, "4096") {
		t.Fatalf("oversize = %+v, want -32600 id null naming the limit", r)
	}
	// Just under the limit is read whole.
	pad := 4096 - len(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":""}}`)
	expectID(s.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"`+strings.Repeat("y", pad)+`"}}`), "5")

	expectID(s.roundTrip(ping("6")+"\r"), "6")
	r = decodeRPC(t, s.roundTrip(`[`+ping("7")+`]`))
	if r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("batch = %+v, want -32600", r)
	}
	r = decodeRPC(t, s.roundTrip(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"a","id":"b"}}}`))
	if r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("duplicate arguments = %+v, want -32602", r)
	}

	// A last line without a newline is answered, then EOF ends cleanly.
	s.send(ping("9"))
	s.in.Close()
	expectID(s.read(), "9")
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("ServeStdio at EOF = %v, want nil", err)
		}
		s.done <- nil // for Cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return at EOF")
	}
}

func TestStdioAuth(t *testing.T) {
	e := newEnv(t, testCatalog)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, tc := range []struct{ name, tok, reason, desc string }{
		{"no-token", "", "missing", ""},
		{"garbage-token", "not.a.jwt", "malformed", "the token is not a well-formed JWT"},
		{"wrong-key", otherKeyToken(t), "signature", "the token's signature does not verify, or its algorithm is not accepted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &recMetrics{}
			s := startStdioWith(t, context.Background(), &mcp.StdioOptions{State: e.current, Token: tc.tok, Metrics: m})
			r := decodeRPC(t, s.roundTrip(list))
			if r.Error == nil || r.Error.Code != -31401 || string(r.ID) != "1" || !strings.HasPrefix(r.Error.Message, "unauthorized") {
				t.Fatalf("= %+v, want -31401 unauthorized", r)
			}
			// The reason class, as the HTTP 401 gives it.
			var data struct {
				Desc *string `json:"error_description"`
			}
			json.Unmarshal(r.Error.Data, &data)
			if (tc.desc == "") != (data.Desc == nil) || (data.Desc != nil && *data.Desc != tc.desc) {
				t.Errorf("error data = %s, want error_description %q", r.Error.Data, tc.desc)
			}
			// Notifications still get no answer.
			s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
			if r := decodeRPC(t, s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)); r.Error == nil || string(r.ID) != "2" {
				t.Fatalf("= %+v", r)
			}
			if ms := m.snapshot(); len(ms.authFailures) != 2 || (tc.reason != "" && ms.authFailures[0] != tc.reason) {
				t.Fatalf("AuthFailure = %v, want %s twice", ms.authFailures, tc.reason)
			}
			if tc.tok != "" && strings.Contains(s.log.String(), tc.tok) {
				t.Fatal("the log carries the token")
			}
		})
	}
	t.Run("token-is-reverified-after-a-state-swap", func(t *testing.T) {
		s := startStdio(t, e, token(t, "read"))
		if r := decodeRPC(t, s.roundTrip(list)); r.Error != nil {
			t.Fatalf("before the swap = %+v", r)
		}
		// The new catalog expects another audience: the same token no
		// longer verifies.
		e.load(strings.Replace(testCatalog, "audience: aud", "audience: aud2", 1))
		if r := decodeRPC(t, s.roundTrip(list)); r.Error == nil || r.Error.Code != -31401 {
			t.Fatalf("after the swap = %+v, want -31401", r)
		}
		e.load(testCatalog)
		if r := decodeRPC(t, s.roundTrip(list)); r.Error != nil {
			t.Fatalf("after swapping back = %+v", r)
		}
	})
}

func TestStdioNotInitialised(t *testing.T) {
	s := startStdioWith(t, context.Background(), &mcp.StdioOptions{State: func() (*proxy.Core, authz.Verifier) { return nil, nil }, Token: "x"})
	r := decodeRPC(t, s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if r.Error == nil || r.Error.Code != -32603 || r.Error.Message != "mcp server not initialised" {
		t.Fatalf("= %+v", r)
	}
	e := newEnv(t, strings.Replace(testCatalog, "  version: 1.2.3\n", "  version: 1.2.3\n  enabled: false\n", 1))
	s = startStdio(t, e, token(t, "read"))
	if r := decodeRPC(t, s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); r.Error == nil || r.Error.Message != "mcp server not initialised" {
		t.Fatalf("disabled = %+v", r)
	}
}

func TestStdioAccessLogStaysOffStdout(t *testing.T) {
	e := newEnv(t, testCatalog)
	tok := token(t, "read")
	s := startStdio(t, e, tok)
	var answers []string
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"q"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":3,`,
	} {
		answers = append(answers, s.roundTrip(l))
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	answers = append(answers, s.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"ping"}`))
	for _, a := range answers {
		if strings.Contains(a, `"msg"`) || strings.Contains(a, `"level"`) {
			t.Fatalf("a log line reached stdout: %s", a)
		}
		decodeRPC(t, a)
	}
	lines := requestLines(t, s.log.String())
	want := []struct {
		method, tool string
		status, code int
	}{
		{"tools/call", "get_item", 200, 0},
		{"tools/call", "nope", 200, -32602},
		{"invalid", "", 400, -32700},
		{"notifications/initialized", "", 202, 0},
		{"ping", "", 200, 0},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d access lines, want %d:\n%s", len(lines), len(want), s.log.String())
	}
	for i, w := range want {
		l := lines[i]
		code, _ := l["rpc_code"].(float64)
		if l["surface"] != "stdio" || l["method"] != w.method || str(l["tool"]) != w.tool || l["status"] != float64(w.status) || int(code) != w.code || l["request_id"] == "" || l["duration"] == nil {
			t.Errorf("line %d = %v, want %+v", i, l, w)
		}
		if w.method != "invalid" && (l["subject"] != "alice" || l["workspace"] != "acme") && w.status != 202 {
			t.Errorf("line %d = %v, want subject and workspace", i, l)
		}
	}
	if strings.Contains(s.log.String(), tok) {
		t.Fatal("the log carries the token")
	}
}

func TestStdioStopsWithContext(t *testing.T) {
	e := newEnv(t, testCatalog)
	ctx, cancel := context.WithCancel(context.Background())
	s := startStdioWith(t, ctx, &mcp.StdioOptions{State: e.current, Token: token(t, "read")})
	if r := decodeRPC(t, s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); r.Error != nil {
		t.Fatal(r.Error)
	}
	cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("ServeStdio after cancel = %v, want nil", err)
		}
		s.done <- nil
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return when its context ended")
	}
}

func TestStdioWriteErrorIsReturned(t *testing.T) {
	e := newEnv(t, testCatalog)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	outR.Close()
	done := make(chan error, 1)
	go func() {
		done <- mcp.ServeStdio(context.Background(), inR, outW, &mcp.StdioOptions{State: e.current, Token: token(t, "read")})
	}()
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	select {
	case err := <-done:
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("ServeStdio = %v, want the write error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return on a write error")
	}
	inW.Close()
}

// TestStdioGoSDKClient drives ServeStdio with the official Go SDK client
// over its IOTransport, in both eras.
func TestStdioGoSDKClient(t *testing.T) {
	e := newEnv(t, testCatalog)
	for _, era := range []struct {
		name string
		opts *sdk.ClientSessionOptions
		want string
	}{
		{"modern", nil, "2026-07-28"},
		{"legacy", &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, "2025-11-25"},
	} {
		t.Run(era.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- mcp.ServeStdio(context.Background(), inR, outW, &mcp.StdioOptions{State: e.current, Token: token(t, "read")})
				outW.Close()
			}()
			ctx := context.Background()
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-stdio", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, era.opts)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != era.want {
				t.Errorf("protocol version = %s, want %s", got, era.want)
			}
			res, err := cs.ListTools(ctx, nil)
			if err != nil || len(res.Tools) != 3 {
				t.Fatalf("ListTools = %v, %v", res, err)
			}
			call, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_item", Arguments: map[string]any{"id": "sdk"}})
			if err != nil || call.IsError || call.Content[0].(*sdk.TextContent).Text != `{"id":"sdk","ok":true}` {
				t.Fatalf("CallTool = %+v, %v", call, err)
			}
			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "nope"})
			if werr, ok := errors.AsType[*jsonrpc.Error](err); !ok || werr.Code != -32602 {
				t.Fatalf("CallTool(unknown) = %v, want -32602", err)
			}
			cs.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ServeStdio = %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ServeStdio did not end when the client closed")
			}
		})
	}
}

// otherKeyToken is a well-formed token signed with a key the catalog does
// not know.
func otherKeyToken(t *testing.T) string {
	t.Helper()
	now := time.Now()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": "alice", "ws": "acme", "scope": "read",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).SignedString([]byte("another-secret-another-secret-0123"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
