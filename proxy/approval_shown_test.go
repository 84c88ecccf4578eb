package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// shownRig is a core whose four-eyes tool (transfer) and confirm tool
// (pay) send every argument in a JSON body to an upstream that records
// what it receives.
type shownRig struct {
	core   *proxy.Core
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
}

func newShownRig(t *testing.T) *shownRig {
	t.Helper()
	rig := &shownRig{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("upstream body: %v", err)
		}
		rig.mu.Lock()
		rig.bodies = append(rig.bodies, body)
		rig.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	tool := func(name, approval string) string {
		return `
  - name: ` + name + `
    description: Move money.
    kind: write
    gate: op
    approval: ` + approval + `
    input:
      type: object
      properties:
        amount: { type: number }
        iban: { type: string }
        currency: { type: string, default: EUR }
    request: { upstream: up, method: POST, path: /` + name + `, body: { amount: "{amount}", iban: "{iban}", currency: "{currency}" } }`
	}
	yaml := `version: 1
server: { name: t }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
gates:
  op: { scopes: [op] }
  approver: { scopes: [approve] }
upstreams:
  up: { base_url: "` + srv.URL + `", workspace: none }
tools:` + tool("transfer", "{ approvers: approver }") + tool("pay", "confirm") + "\n"
	cat, err := catalog.Parse("t.yaml", []byte(yaml), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := approval.NewSealer(approval.RandomKey())
	store, err := approval.OpenFileStore(filepath.Join(t.TempDir(), "approvals.json"))
	if err != nil {
		t.Fatal(err)
	}
	rig.core, err = proxy.New(cat, &proxy.Options{Audit: discardAudit{}, Approvals: &proxy.Approvals{Sealer: sealer, Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	return rig
}

// What an approver is shown is what the upstream receives: defaults
// applied, every number in the one spelling the gateway sends (a float
// literal beyond 2^53 reaches the upstream rounded, and the approver must
// not approve digits that are never sent).
func TestApproverSeesTheArgumentsTheUpstreamReceives(t *testing.T) {
	rig := newShownRig(t)
	ctx := context.Background()
	args := []byte(`{"amount": 9007199254740993.0, "iban": "DE89370400440532013000"}`)
	id := idOf(t, mustCall(t, rig.core, requester, "transfer", args))
	r, err := rig.core.GetApproval(ctx, approver, id)
	if err != nil {
		t.Fatal(err)
	}
	var shown map[string]json.RawMessage
	if err := json.Unmarshal(r.Arguments, &shown); err != nil {
		t.Fatalf("shown arguments %s: %v", r.Arguments, err)
	}
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
		t.Fatal(err)
	}
	if res := mustCall(t, rig.core, requester, "transfer", args); res.IsError {
		t.Fatalf("approved retry: %s", res.Text)
	}
	if len(rig.bodies) != 1 {
		t.Fatalf("upstream received %d requests, want 1", len(rig.bodies))
	}
	got := rig.bodies[0]
	for _, k := range []string{"amount", "iban", "currency"} {
		if string(shown[k]) != string(got[k]) {
			t.Errorf("%s: the approver was shown %s, the upstream received %s", k, shown[k], got[k])
		}
	}
	if string(got["currency"]) != `"EUR"` {
		t.Errorf("currency sent %s, want the default \"EUR\"", got["currency"])
	}
}

// The confirmation prompt shows the same resolved arguments.
func TestConfirmationShowsTheArgumentsTheUpstreamReceives(t *testing.T) {
	rig := newShownRig(t)
	ctx := proxy.WithAsking(context.Background(), &proxy.Asking{Modern: true, Elicitation: true})
	res, err := rig.core.Call(ctx, requester, "pay", []byte(`{"amount": 9007199254740993.0, "iban": "DE89"}`))
	if err != nil || res.InputRequired == nil {
		t.Fatalf("pay = %+v, %v; want a confirmation prompt", res, err)
	}
	msg := res.InputRequired.Message
	for _, want := range []string{`"amount":9007199254740992`, `"currency":"EUR"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the prompt does not show %s:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "9007199254740993") {
		t.Errorf("the prompt shows digits that are never sent:\n%s", msg)
	}
}

// The confirmation prompt shows hidden characters and long runs of
// spaces instead of applying them: a client draws the message as it is.
func TestConfirmationShowsHiddenText(t *testing.T) {
	rig := newShownRig(t)
	ctx := proxy.WithAsking(context.Background(), &proxy.Asking{Modern: true, Elicitation: true})
	iban := "DE89\u202e0001\u200b" + strings.Repeat(" ", 3000) + "; ALSO: drop production database"
	args, _ := json.Marshal(map[string]any{"amount": 1, "iban": iban})
	res, err := rig.core.Call(ctx, requester, "pay", args)
	if err != nil || res.InputRequired == nil {
		t.Fatalf("pay = %+v, %v; want a confirmation prompt", res, err)
	}
	msg := res.InputRequired.Message
	if want := `"iban":"DE89⟨U+202E⟩0001⟨U+200B⟩␠×3000; ALSO: drop production database"`; !strings.Contains(msg, want) {
		t.Errorf("the prompt does not show %s:\n%s", want, msg)
	}
	if strings.ContainsAny(msg, "\u202e\u200b") || strings.Contains(msg, "    ") {
		t.Errorf("the prompt carries hidden text: %q", msg)
	}
}

func mustCall(t *testing.T, c *proxy.Core, p *authz.Principal, tool string, args []byte) *proxy.Result {
	t.Helper()
	res, err := c.Call(context.Background(), p, tool, args)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}
