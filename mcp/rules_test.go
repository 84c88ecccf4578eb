package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/mcp"
)

// ruleMetrics records LimitCall besides the Metrics recMetrics records.
type ruleMetrics struct {
	recMetrics
	calls []string
}

func (m *ruleMetrics) LimitCall(rule, result string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, rule+" "+result)
}

func TestLimitRules(t *testing.T) {
	m := &ruleMetrics{}
	// rps so low that nothing comes back during the test.
	e := newEnvWith(t, withLimits(`  rules:
    - { name: per-workspace, per: [workspace], rate: { rps: 0.001, burst: 3 } }
    - { name: items-daily, per: [subject, tool], match: { tool: [get_item] }, quota: { per_day: 2 } }
    - { name: globex-only, match: { workspace: [globex] }, rate: { rps: 0.001, burst: 1 } }
`), envConfig{opts: mcp.Options{Metrics: m}})
	as := func(sub, ws string) string { return signClaims(t, testSecret, map[string]any{"sub": sub, "ws": ws}) }
	call := func(tok, name string) response {
		return e.do(req{body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{"id":"a"}}}`, header: map[string]string{"Authorization": "Bearer " + tok}})
	}
	type rpcErr struct {
		Error struct {
			Code    int
			Message string
			Data    struct {
				Error        string
				Limit        string
				RetryAfterMs int64
				Quota        string
			}
		}
	}
	decode := func(t *testing.T, r response) rpcErr {
		t.Helper()
		var b rpcErr
		if err := json.Unmarshal(r.body, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	alice, bob := as("alice", "acme"), as("bob", "acme")

	t.Run("quota-per-subject-and-tool-names-itself-and-the-day", func(t *testing.T) {
		for i := range 2 {
			if r := call(alice, "get_item"); r.status != 200 {
				t.Fatalf("call %d = %d %s", i, r.status, r.body)
			}
		}
		r := call(alice, "get_item")
		b := decode(t, r)
		if r.status != 429 || b.Error.Code != -31429 || b.Error.Data.Limit != "items-daily" || b.Error.Data.Quota != "per_day" || b.Error.Data.Error != "rate_limited" {
			t.Fatalf("third get_item = %d %s, want 429 -31429 naming items-daily's daily quota", r.status, r.body)
		}
		if !strings.HasPrefix(b.Error.Message, `quota exhausted: limit "items-daily" allows 2 calls a day; retry after `) {
			t.Errorf("message = %q", b.Error.Message)
		}
		if got := r.header.Get("RateLimit-Policy"); got != `"items-daily";q=2;w=86400` {
			t.Errorf("RateLimit-Policy = %q", got)
		}
		if got, ra := r.header.Get("RateLimit"), r.header.Get("Retry-After"); ra == "" || got != `"items-daily";r=0;t=`+ra {
			t.Errorf("RateLimit = %q with Retry-After %q", got, ra)
		}
	})
	t.Run("refused-call-spent-nothing-of-the-workspace-rate", func(t *testing.T) {
		// acme has spent 2 of its burst of 3; the refused call took none.
		if r := call(bob, "list_items"); r.status != 200 {
			t.Fatalf("bob = %d %s", r.status, r.body)
		}
		r := call(bob, "list_items")
		b := decode(t, r)
		if r.status != 429 || b.Error.Data.Limit != "per-workspace" || b.Error.Data.Quota != "" {
			t.Fatalf("= %d %s, want acme's workspace rate", r.status, r.body)
		}
		if !strings.HasPrefix(b.Error.Message, `rate limited: limit "per-workspace" allows 0.001 calls a second (bursts of 3); retry after `) {
			t.Errorf("message = %q", b.Error.Message)
		}
		if got := r.header.Get("RateLimit-Policy"); got != `"per-workspace";q=3;w=3000` {
			t.Errorf("RateLimit-Policy = %q", got)
		}
	})
	t.Run("another-workspace-is-not-held-back", func(t *testing.T) {
		if r := call(as("carol", "initech"), "list_items"); r.status != 200 {
			t.Fatalf("initech = %d %s", r.status, r.body)
		}
	})
	t.Run("match-selects-the-workspace", func(t *testing.T) {
		dave := as("dave", "globex")
		if r := call(dave, "list_items"); r.status != 200 {
			t.Fatalf("globex's first = %d %s", r.status, r.body)
		}
		if r := call(dave, "list_items"); r.status != 429 || decode(t, r).Error.Data.Limit != "globex-only" {
			t.Fatalf("globex's second = %d %s, want globex-only", r.status, r.body)
		}
	})
	t.Run("unknown-tool-mints-no-tool-counter", func(t *testing.T) {
		// Keyed by tool: a name no tool has is not counted by the rule,
		// only by the rules that do not need a tool.
		r := call(as("erin", "umbrella"), "no_such_tool")
		if r.status != 200 || !strings.Contains(string(r.body), "-32602") {
			t.Fatalf("= %d %s, want the unknown tool's -32602", r.status, r.body)
		}
	})
	t.Run("rest-mirror-names-the-rule", func(t *testing.T) {
		r := e.do(req{path: "/admin/mcp/call", body: `{"name":"get_item","arguments":{"id":"a"}}`, header: map[string]string{"Authorization": "Bearer " + alice}})
		var body struct {
			Error, Message, Limit, Quota string
			RetryAfterMs                 int64 `json:"retry_after_ms"`
		}
		if r.status != 429 || json.Unmarshal(r.body, &body) != nil || body.Error != "rate_limited" || body.Limit != "items-daily" || body.Quota != "per_day" || body.RetryAfterMs <= 0 || !strings.Contains(body.Message, "items-daily") {
			t.Fatalf("= %d %s, want 429 naming items-daily", r.status, r.body)
		}
		if r.header.Get("RateLimit-Policy") == "" || r.header.Get("Retry-After") == "" {
			t.Errorf("headers = %v", r.header)
		}
	})
	m.mu.Lock()
	calls := strings.Join(m.calls, ",")
	m.mu.Unlock()
	for _, want := range []string{"per-workspace allowed", "items-daily refused_quota", "per-workspace refused_rate", "globex-only refused_rate"} {
		if !strings.Contains(calls, want) {
			t.Errorf("LimitCall metrics lack %q: %s", want, calls)
		}
	}
	if strings.Contains(calls, "alice") || strings.Contains(calls, "acme") {
		t.Errorf("a metric carries a subject or workspace: %s", calls)
	}
}
