package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/mcp"
	"github.com/mcpgw/gateway/proxy"
)

// tokenFor signs a token for another subject than token's alice.
func tokenFor(t *testing.T, sub, scope string) string {
	t.Helper()
	now := time.Now()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": sub, "ws": "acme", "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withLimits returns testCatalog with extra lines under limits:.
func withLimits(extra string) string {
	return strings.Replace(testCatalog, "limits:\n", "limits:\n"+extra, 1)
}

// slowUpstream answers /v1/items/* only when release is closed, counting
// how many requests it holds at once.
type slowUpstream struct {
	release chan struct{}
	cur     atomic.Int32
	peak    atomic.Int32
	total   atomic.Int32
}

func newSlowUpstream() *slowUpstream { return &slowUpstream{release: make(chan struct{})} }

func (u *slowUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := u.cur.Add(1)
	u.total.Add(1)
	for {
		p := u.peak.Load()
		if n <= p || u.peak.CompareAndSwap(p, n) {
			break
		}
	}
	defer u.cur.Add(-1)
	select {
	case <-u.release:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true}`)
}

// recMetrics records what the handler reports.
type recMetrics struct {
	mu           sync.Mutex
	requests     []string // surface method status
	authFailures []string
	inFlight     int
	peakInFlight int
	rateLimited  []string
}

func (m *recMetrics) Request(surface, method string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, fmt.Sprintf("%s %s %d", surface, method, status))
}

func (m *recMetrics) AuthFailure(reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.authFailures = append(m.authFailures, reason)
}

func (m *recMetrics) InFlight(delta int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight += delta
	m.peakInFlight = max(m.peakInFlight, m.inFlight)
}

func (m *recMetrics) RateLimited(kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rateLimited = append(m.rateLimited, kind)
}

func (m *recMetrics) snapshot() recMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	return recMetrics{
		requests: append([]string(nil), m.requests...), authFailures: append([]string(nil), m.authFailures...),
		inFlight: m.inFlight, peakInFlight: m.peakInFlight, rateLimited: append([]string(nil), m.rateLimited...),
	}
}

func TestMaxInFlightWaitsAndNeverRejects(t *testing.T) {
	synctest.Test(t, testMaxInFlightWaitsAndNeverRejects)
}

func testMaxInFlightWaitsAndNeverRejects(t *testing.T) {
	const limit = 3
	up := newSlowUpstream()
	m := &recMetrics{}
	e := newEnvWith(t, withLimits(fmt.Sprintf("  max_in_flight: %d\n", limit)), envConfig{upstream: up, opts: mcp.Options{Metrics: m}, memnet: true})

	const calls = limit + 5
	type answer struct {
		status int
		body   string
	}
	answers := make(chan answer, calls)
	for i := range calls {
		go func() {
			var r response
			if i%2 == 0 {
				r = e.do(req{body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"k%d"}}}`, i, i), header: auth(t, "read")})
			} else {
				r = e.do(req{path: "/admin/mcp/call", body: fmt.Sprintf(`{"name":"get_item","arguments":{"id":"k%d"}}`, i), header: auth(t, "read")})
			}
			answers <- answer{r.status, string(r.body)}
		}()
	}
	// Every call is now at the upstream or waiting in the gateway: the
	// others are waiting, not failing and not upstream.
	synctest.Wait()
	if got := up.cur.Load(); got != limit {
		t.Fatalf("%d requests at the upstream, want %d", got, limit)
	}
	if len(answers) != 0 {
		a := <-answers
		t.Fatalf("a request over the cap was answered at once: %d %s", a.status, a.body)
	}
	close(up.release)
	for range calls {
		a := <-answers
		if a.status != 200 || strings.Contains(a.body, `"error"`) || strings.Contains(a.body, `"isError":true`) || strings.Contains(a.body, `"is_error":true`) {
			t.Errorf("answer = %d %s, want a successful call", a.status, a.body)
		}
	}
	if got := up.peak.Load(); got > limit {
		t.Errorf("peak upstream concurrency = %d, want at most %d", got, limit)
	}
	if got := up.total.Load(); got != calls {
		t.Errorf("upstream saw %d calls, want %d", got, calls)
	}
	ms := m.snapshot()
	if ms.inFlight != 0 || ms.peakInFlight != limit {
		t.Errorf("InFlight metric ends at %d, peaked at %d; want 0 and %d", ms.inFlight, ms.peakInFlight, limit)
	}
}

func TestMaxInFlightServesOverTheCapAfterTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const wait = 50 * time.Millisecond
		up := newSlowUpstream()
		e := newEnvWith(t, withLimits("  max_in_flight: 1\n"), envConfig{upstream: up, opts: mcp.Options{InFlightWait: wait}, memnet: true})
		done := make(chan response, 2)
		tok := auth(t, "read")
		for i := range 2 {
			go func() {
				done <- e.do(req{body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"a"}}}`, i), header: tok})
			}()
		}
		synctest.Wait()
		if n := up.cur.Load(); n != 1 {
			t.Fatalf("%d calls at the upstream under max_in_flight 1 before the wait ran out, want 1", n)
		}
		// The second is let through once it has waited, while the first
		// still holds the only slot.
		time.Sleep(wait)
		synctest.Wait()
		if n := up.cur.Load(); n != 2 {
			t.Fatalf("%d calls at the upstream after the wait, want 2", n)
		}
		close(up.release)
		for range 2 {
			if r := <-done; r.status != 200 {
				t.Fatalf("= %d %s", r.status, r.body)
			}
		}
	})
}

func TestMaxInFlightFollowsReload(t *testing.T) {
	synctest.Test(t, testMaxInFlightFollowsReload)
}

func testMaxInFlightFollowsReload(t *testing.T) {
	up := newSlowUpstream()
	e := newEnvWith(t, withLimits("  max_in_flight: 1\n"), envConfig{upstream: up, memnet: true})
	if r := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, header: auth(t, "read")}); r.status != 200 {
		t.Fatalf("ping = %d %s", r.status, r.body)
	}
	e.load(withLimits("  max_in_flight: 2\n"))
	done := make(chan response, 2)
	for i := range 2 {
		go func() {
			done <- e.do(req{path: "/admin/mcp/call", body: fmt.Sprintf(`{"name":"get_item","arguments":{"id":"r%d"}}`, i), header: auth(t, "read")})
		}()
	}
	synctest.Wait()
	if n := up.cur.Load(); n != 2 {
		t.Fatalf("%d calls at the upstream under the reloaded cap of 2, want 2", n)
	}
	close(up.release)
	for range 2 {
		if r := <-done; r.status != 200 {
			t.Fatalf("= %d %s", r.status, r.body)
		}
	}
}

func TestRateLimits(t *testing.T) {
	m := &recMetrics{}
	// rps so low that no token comes back during the test.
	e := newEnvWith(t, withLimits("  rate:\n    per_principal: { rps: 0.001, burst: 3 }\n    per_tool: { get_item: { rps: 0.001, burst: 2 } }\n"), envConfig{opts: mcp.Options{Metrics: m}})
	call := func(tok, name string) response {
		return e.do(req{body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{"id":"a"}}}`, header: map[string]string{"Authorization": "Bearer " + tok}})
	}
	alice, bob, carol := tokenFor(t, "alice", "read"), tokenFor(t, "bob", "read"), tokenFor(t, "carol", "read")

	t.Run("per-tool-bucket-empties-first", func(t *testing.T) {
		for i := range 2 {
			if r := call(alice, "get_item"); r.status != 200 {
				t.Fatalf("call %d = %d %s", i, r.status, r.body)
			}
		}
		r := call(alice, "get_item")
		if r.status != 429 {
			t.Fatalf("third get_item = %d %s, want 429", r.status, r.body)
		}
		if got := r.header.Get("Retry-After"); got != "1000" {
			t.Errorf("Retry-After = %q, want 1000 (one token at 0.001 rps)", got)
		}
		var body struct {
			ID    int
			Error struct {
				Code    int
				Message string
				Data    struct {
					Error        string
					Limit        string
					RetryAfterMs int64
				}
			}
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		if g := body.Error; body.ID != 7 || g.Code != -31429 || g.Message != "rate limited" || g.Data.Error != "rate_limited" || g.Data.Limit != "tool" || g.Data.RetryAfterMs < 990_000 || g.Data.RetryAfterMs > 1_000_000 {
			t.Fatalf("429 body = %s", r.body)
		}
	})
	t.Run("refusal-costs-no-principal-token", func(t *testing.T) {
		// alice spent 2 of her 3 principal tokens; the refused call took none.
		if r := call(alice, "list_items"); r.status != 200 {
			t.Fatalf("list_items = %d %s", r.status, r.body)
		}
		r := call(alice, "list_items")
		if r.status != 429 || !strings.Contains(string(r.body), `"limit":"principal"`) {
			t.Fatalf("= %d %s, want 429 for the principal bucket", r.status, r.body)
		}
	})
	t.Run("tools-list-is-not-limited", func(t *testing.T) {
		for range 5 {
			if r := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: map[string]string{"Authorization": "Bearer " + alice}}); r.status != 200 {
				t.Fatalf("tools/list = %d %s", r.status, r.body)
			}
		}
	})
	t.Run("another-principal-has-its-own-buckets", func(t *testing.T) {
		for range 2 {
			if r := call(bob, "get_item"); r.status != 200 {
				t.Fatalf("bob's get_item = %d %s", r.status, r.body)
			}
		}
	})
	t.Run("rest-mirror-is-429-rate-limited", func(t *testing.T) {
		for range 3 {
			e.do(req{path: "/admin/mcp/call", body: `{"name":"list_items"}`, header: map[string]string{"Authorization": "Bearer " + carol}})
		}
		r := e.do(req{path: "/admin/mcp/call", body: `{"name":"list_items"}`, header: map[string]string{"Authorization": "Bearer " + carol}})
		var body struct {
			Error        string
			Limit        string
			RetryAfterMs int64 `json:"retry_after_ms"`
		}
		if r.status != 429 || json.Unmarshal(r.body, &body) != nil || body.Error != "rate_limited" || body.Limit != "principal" || body.RetryAfterMs <= 0 || r.header.Get("Retry-After") == "" {
			t.Fatalf("= %d %s (Retry-After %q), want 429 rate_limited", r.status, r.body, r.header.Get("Retry-After"))
		}
	})
	t.Run("buckets-survive-a-reload-with-the-same-limits", func(t *testing.T) {
		e.load(withLimits("  rate:\n    per_principal: { rps: 0.001, burst: 3 }\n    per_tool: { get_item: { rps: 0.001, burst: 2 } }\n") + "  - { name: extra, description: x, request: { upstream: up, path: /v1/items } }\n")
		if r := call(alice, "get_item"); r.status != 429 {
			t.Fatalf("after reload = %d %s, want still 429", r.status, r.body)
		}
	})
	t.Run("no-rate-section-means-no-limit", func(t *testing.T) {
		e.load(testCatalog)
		for range 5 {
			if r := call(alice, "get_item"); r.status != 200 {
				t.Fatalf("= %d %s", r.status, r.body)
			}
		}
	})
	ms := m.snapshot()
	// The last refusal finds both of alice's buckets empty and names the
	// first, the principal's.
	if strings.Join(ms.rateLimited, ",") != "tool,principal,principal,principal" {
		t.Errorf("RateLimited metrics = %v", ms.rateLimited)
	}
}

func TestRateLimitStdio(t *testing.T) {
	e := newEnv(t, withLimits("  rate:\n    per_principal: { rps: 0.001, burst: 1 }\n"))
	s := startStdio(t, e, token(t, "read"))
	if got := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_items"}}`); strings.Contains(got, `"error"`) {
		t.Fatalf("first call = %s", got)
	}
	got := s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_items"}}`)
	r := decodeRPC(t, got)
	var data struct{ RetryAfterMs int64 }
	if r.Error == nil || r.Error.Code != -31429 || json.Unmarshal(r.Error.Data, &data) != nil || data.RetryAfterMs < 990_000 || data.RetryAfterMs > 1_000_000 {
		t.Fatalf("second call = %s, want -31429 with retryAfterMs", got)
	}
}

func TestAccessLogAndMetrics(t *testing.T) {
	var buf lockedBuffer
	m := &recMetrics{}
	logger := newJSONLogger(&buf)
	e := newEnvWith(t, testCatalog, envConfig{opts: mcp.Options{Logger: logger, Metrics: m}})
	tok := token(t, "read")
	hdr := map[string]string{"Authorization": "Bearer " + tok}

	r := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"a1"}}}`, header: hdr})
	rid := r.header.Get("X-Request-Id")
	e.do(req{body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`, header: hdr})
	e.do(req{method: "GET", path: "/admin/mcp/tools", header: hdr})
	e.do(req{path: "/admin/mcp/call", body: `{"name":"get_item","arguments":{"id":"a2"}}`, header: hdr})
	e.do(req{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, header: map[string]string{"Authorization": "Bearer " + tok + "x"}})
	e.do(req{body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`})
	e.do(req{method: "GET", path: "/.well-known/oauth-protected-resource"})
	e.do(req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: hdr})
	e.do(req{body: `{"jsonrpc":"2.0","id":5,`, header: hdr})
	e.do(req{method: "GET", path: "/nope"})

	lines := requestLines(t, buf.String())
	want := []struct {
		surface, method, tool string
		status                int
		rpcCode               int
		subject               bool
	}{
		{"mcp", "tools/call", "get_item", 200, 0, true},
		{"mcp", "tools/call", "nope", 200, -32602, true},
		{"rest", "GET /tools", "", 200, 0, true},
		{"rest", "POST /call", "get_item", 200, 0, true},
		{"mcp", "POST", "", 401, 0, false},
		{"mcp", "POST", "", 401, 0, false},
		{"metadata", "GET /.well-known/oauth-protected-resource", "", 200, 0, false},
		{"mcp", "notifications/initialized", "", 202, 0, true},
		{"mcp", "invalid", "", 400, -32700, true},
		{"none", "GET", "", 404, 0, false},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d access lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		l := lines[i]
		for _, k := range []string{"request_id", "surface", "method", "status", "duration"} {
			if _, ok := l[k]; !ok {
				t.Errorf("line %d lacks %q: %v", i, k, l)
			}
		}
		code, _ := l["rpc_code"].(float64)
		if l["surface"] != w.surface || l["method"] != w.method || str(l["tool"]) != w.tool || l["status"] != float64(w.status) || int(code) != w.rpcCode {
			t.Errorf("line %d = %v, want %+v", i, l, w)
		}
		if w.subject && (l["subject"] != "alice" || l["workspace"] != "acme") {
			t.Errorf("line %d = %v, want subject alice in acme", i, l)
		}
	}
	if lines[0]["request_id"] != rid || rid == "" {
		t.Errorf("request_id = %v, X-Request-Id = %q", lines[0]["request_id"], rid)
	}
	if strings.Contains(buf.String(), tok[:40]) || strings.Contains(buf.String(), strings.Split(tok, ".")[2]) {
		t.Fatal("the log carries the token")
	}

	ms := m.snapshot()
	wantReq := []string{
		"mcp tools/call 200", "mcp tools/call 200", "rest GET /tools 200", "rest POST /call 200",
		"mcp other 401", "mcp other 401", "metadata GET /.well-known/oauth-protected-resource 200",
		"mcp notifications/initialized 202", "mcp invalid 400", "none other 404",
	}
	if strings.Join(ms.requests, "|") != strings.Join(wantReq, "|") {
		t.Errorf("Request metrics =\n%v\nwant\n%v", ms.requests, wantReq)
	}
	if strings.Join(ms.authFailures, ",") != "signature,missing" {
		t.Errorf("AuthFailure metrics = %v, want signature, missing", ms.authFailures)
	}
}

func TestMethodLabelIsBounded(t *testing.T) {
	for in, want := range map[string]string{
		"tools/call": "tools/call", "server/discover": "server/discover", "GET /tools": "GET /tools",
		"prompts/list": "other", "x/" + strings.Repeat("y", 100): "other", "PUT /call": "other", "": "other",
	} {
		if got := mcp.MethodLabel(in); got != want {
			t.Errorf("MethodLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRequestIDReachesTheAudit(t *testing.T) {
	sink := &recAudit{}
	e := newEnvWith(t, testCatalog, envConfig{audit: sink})
	r := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"set_limit","arguments":{"id":"a"}}}`, header: auth(t, "read write")})
	rr := e.do(req{path: "/admin/mcp/call", body: `{"name":"set_limit","arguments":{"id":"b"}}`, header: auth(t, "read write")})
	ids := sink.ids()
	// Each write that reached the upstream has a started and a completed record.
	if r.status != 200 || rr.status != 200 || len(ids) != 4 {
		t.Fatalf("= %d %s / %d %s, %d audit records", r.status, r.body, rr.status, rr.body, len(ids))
	}
	if ids[0] != r.header.Get("X-Request-Id") || ids[1] != ids[0] || ids[2] != rr.header.Get("X-Request-Id") || ids[3] != ids[2] || ids[0] == "" {
		t.Fatalf("audit request ids %v, X-Request-Id %q %q", ids, r.header.Get("X-Request-Id"), rr.header.Get("X-Request-Id"))
	}
}

func TestDuplicateArgumentMembers(t *testing.T) {
	e := newEnv(t, testCatalog)
	r := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"a","\u0069d":"b"}}}`, header: auth(t, "read")})
	if code, id := r.rpcError(t); r.status != 200 || code != -32602 || id != "1" || !strings.Contains(string(r.body), `duplicate member \"id\" in params.arguments`) {
		t.Fatalf("MCP = %d %s, want 200 -32602", r.status, r.body)
	}
	r = e.do(req{path: "/admin/mcp/call", body: `{"name":"get_item","arguments":{"id":"a","id":"b"}}`, header: auth(t, "read")})
	if r.status != 400 || !strings.Contains(string(r.body), `"error":"invalid_request"`) {
		t.Fatalf("REST = %d %s, want 400 invalid_request", r.status, r.body)
	}
}

// recAudit keeps audit records.
type recAudit struct {
	mu   sync.Mutex
	recs []string
}

func (a *recAudit) Write(_ context.Context, rec *proxy.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, rec.RequestID)
	return nil
}

func (a *recAudit) ids() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.recs...)
}

func str(v any) string { s, _ := v.(string); return s }

// A caller who cannot call a tool (hidden by a gate, or no such tool)
// spends none of the budgets keyed by that tool or its upstream, which
// others share: a 429 there would both deny them and say the tool exists.
func TestLimitsCountOnlyCallsOfToolsTheCallerCanCall(t *testing.T) {
	e := newEnv(t, withLimits("  rate:\n    per_tool: { set_limit: { rps: 0.001, burst: 1 } }\n"+
		"  rules:\n    - { name: up-calls, per: [upstream], rate: { rps: 0.001, burst: 2 } }\n"))
	call := func(tok, name string) response {
		return e.do(req{body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{"id":"a"}}}`, header: map[string]string{"Authorization": "Bearer " + tok}})
	}
	reader, writer := tokenFor(t, "alice", "read"), tokenFor(t, "bob", "read write")
	for range 4 {
		if r := call(reader, "set_limit"); r.status != 403 {
			t.Fatalf("a reader's set_limit = %d %s, want 403 (the write gate), never 429", r.status, r.body)
		}
		if r := call(reader, "no_such_tool"); r.status != 200 || !strings.Contains(string(r.body), "unknown tool") {
			t.Fatalf("an unknown tool = %d %s, want unknown tool, never 429", r.status, r.body)
		}
	}
	// The writer finds both budgets whole.
	for i, step := range []struct {
		tool   string
		status int
		limit  string
	}{{"set_limit", 200, ""}, {"set_limit", 429, "tool"}, {"get_item", 200, ""}, {"get_item", 429, "up-calls"}} {
		r := call(writer, step.tool)
		if r.status != step.status || step.limit != "" && !strings.Contains(string(r.body), `"limit":"`+step.limit+`"`) {
			t.Fatalf("writer's call %d (%s) = %d %s, want %d %s", i, step.tool, r.status, r.body, step.status, step.limit)
		}
	}
}
