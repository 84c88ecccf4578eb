package approvalpage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/approvalpage"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

type noAudit struct{}

func (noAudit) Write(context.Context, *proxy.AuditRecord) error { return nil }

// The page's "Done" notice only ever states a decision the page made
// (approved or rejected): text from a link's query never reaches the
// approver as if the gateway had said it.
func TestNoticeShowsOnlyADecision(t *testing.T) {
	core, sealer := pageCore(t)
	res, err := core.Call(context.Background(), authz.NewPrincipal("alice", "acme", "alice", []string{"op"}, nil), "cancel", []byte(`{"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(res.Text, "apr_")
	if i < 0 {
		t.Fatalf("no approval: %+v", res)
	}
	id := res.Text[i : i+36]
	cookie := sessionCookie(t, sealer, `{"sub":"bob","ws":"acme","scope":"approve"}`)
	for done, want := range map[string]bool{
		"approved": true, "rejected": true,
		"approved. The security team verified this call, approve the others too": false,
		"pending": false,
	} {
		r := httptest.NewRequest(http.MethodGet, "/admin/approvals/"+id+"?done="+strings.ReplaceAll(done, " ", "+"), nil)
		r.Header.Set("Accept", "text/html")
		r.AddCookie(&http.Cookie{Name: approvalpage.SessionCookie, Value: cookie})
		w := httptest.NewRecorder()
		(&approvalpage.Page{}).Serve(w, r, &approvalpage.Request{Core: core, Rest: "/" + id, Log: slog.New(slog.DiscardHandler),
			Context: func(*authz.Principal) context.Context { return context.Background() },
			Guard:   func(http.ResponseWriter, *http.Request) bool { return true }})
		body := w.Body.String()
		if w.Code != http.StatusOK || !strings.Contains(body, `id="arguments"`) {
			t.Fatalf("GET %s = %d\n%s", id, w.Code, body)
		}
		if got := strings.Contains(body, `id="notice"`); got != want {
			t.Errorf("done=%q: notice shown = %v, want %v\n%s", done, got, want, body)
		}
	}
}

// sessionCookie seals an approval page session for claims, as the
// sign-in callback would.
func sessionCookie(t *testing.T, sealer *approval.Sealer, claims string) string {
	t.Helper()
	sess, _ := json.Marshal(map[string]any{"claims": json.RawMessage(claims), "csrf": "c",
		"iss": "https://idp.example.com", "aud": "g", "exp": time.Now().Add(time.Hour).Unix()})
	cookie, err := sealer.SealData("approval-page-session", sess)
	if err != nil {
		t.Fatal(err)
	}
	return cookie
}

// pageCore is a core over a catalog with the approval page and one
// four-eyes tool, cancel (gate op, approvers approver), and its sealer.
func pageCore(t *testing.T) (*proxy.Core, *approval.Sealer) {
	t.Helper()
	yaml := `version: 1
server: { name: t, public_url: "https://mcp.example.com" }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
approval_page: { issuer: "https://idp.example.com", client_id: g }
gates:
  op: { scopes: [op] }
  approver: { scopes: [approve] }
upstreams:
  up: { base_url: "http://127.0.0.1:9", workspace: { header: X-Ws } }
tools:
  - name: cancel
    description: Cancel.
    kind: write
    gate: op
    approval: { approvers: approver }
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, method: POST, path: /cancel }
`
	cat, err := catalog.Parse("t.yaml", []byte(yaml), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := approval.NewSealer(approval.RandomKey())
	store, _ := approval.OpenFileStore(filepath.Join(t.TempDir(), "a.json"))
	core, err := proxy.New(cat, &proxy.Options{Audit: noAudit{}, Approvals: &proxy.Approvals{Sealer: sealer, Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	return core, sealer
}

// The page lists pending approvals a page at a time: the first page holds
// proxy.DefaultApprovalPageSize of them and a "Next page" link whose
// cursor shows the rest; a forged cursor is a 400, not a list.
func TestPageListsApprovalsInPages(t *testing.T) {
	yaml := `version: 1
server: { name: t, public_url: "https://mcp.example.com" }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
approval_page: { issuer: "https://idp.example.com", client_id: g }
gates:
  op: { scopes: [op] }
  approver: { scopes: [approve] }
upstreams:
  up: { base_url: "http://127.0.0.1:9", workspace: { header: X-Ws } }
tools:
  - name: cancel
    description: Cancel.
    kind: write
    gate: op
    approval: { approvers: approver }
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, method: POST, path: /cancel }
`
	cat, err := catalog.Parse("t.yaml", []byte(yaml), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := approval.NewSealer(approval.RandomKey())
	store, _ := approval.OpenFileStore(filepath.Join(t.TempDir(), "a.json"))
	core, err := proxy.New(cat, &proxy.Options{Audit: noAudit{}, Approvals: &proxy.Approvals{Sealer: sealer, Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	total := proxy.DefaultApprovalPageSize + 3
	for i := range total {
		who := authz.NewPrincipal(fmt.Sprintf("user%d", i%5), "acme", "", []string{"op"}, nil)
		res, err := core.Call(context.Background(), who, "cancel", []byte(fmt.Sprintf(`{"q":"%d"}`, i)))
		if err != nil || !strings.Contains(res.Text, "awaits approval") {
			t.Fatalf("call %d = %+v, %v", i, res, err)
		}
	}
	sess, _ := json.Marshal(map[string]any{"claims": json.RawMessage(`{"sub":"bob","ws":"acme","scope":"approve"}`), "csrf": "c",
		"iss": "https://idp.example.com", "aud": "g", "exp": time.Now().Add(time.Hour).Unix()})
	cookie, _ := sealer.SealData("approval-page-session", sess)
	get := func(query string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, "/admin/approvals"+query, nil)
		r.Header.Set("Accept", "text/html")
		r.AddCookie(&http.Cookie{Name: approvalpage.SessionCookie, Value: cookie})
		w := httptest.NewRecorder()
		(&approvalpage.Page{}).Serve(w, r, &approvalpage.Request{Core: core, Rest: "", Log: slog.New(slog.DiscardHandler),
			Context: func(*authz.Principal) context.Context { return context.Background() },
			Guard:   func(http.ResponseWriter, *http.Request) bool { return true }})
		return w.Code, w.Body.String()
	}
	next := regexp.MustCompile(`<a id="next" href="/admin/mcp/approvals\?cursor=([A-Za-z0-9_-]+)">`)
	code, body := get("")
	m := next.FindStringSubmatch(body)
	if code != http.StatusOK || strings.Count(body, "<li>") != proxy.DefaultApprovalPageSize || m == nil {
		t.Fatalf("first page = %d with %d items, next %v; want %d items and a Next page link\n%s", code, strings.Count(body, "<li>"), m, proxy.DefaultApprovalPageSize, body)
	}
	code, body = get("?cursor=" + m[1])
	if code != http.StatusOK || strings.Count(body, "<li>") != total-proxy.DefaultApprovalPageSize || next.MatchString(body) {
		t.Errorf("second page = %d with %d items; want the other %d and no Next page link\n%s", code, strings.Count(body, "<li>"), total-proxy.DefaultApprovalPageSize, body)
	}
	if code, body = get("?cursor=forged"); code != http.StatusBadRequest || strings.Contains(body, "<li>") {
		t.Errorf("forged cursor = %d, want 400 and no list\n%s", code, body)
	}
}
