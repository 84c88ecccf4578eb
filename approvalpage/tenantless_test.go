package approvalpage_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/approvalpage"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// In a tenantless catalog (every upstream workspace: none) principals
// have no workspace: the page names none, instead of an empty one.
func TestPageOfATenantlessCatalogNamesNoWorkspace(t *testing.T) {
	yaml := `version: 1
server: { name: t, public_url: "https://mcp.example.com" }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
approval_page: { issuer: "https://idp.example.com", client_id: g }
gates:
  op: { scopes: [op] }
  approver: { scopes: [approve] }
upstreams:
  up: { base_url: "http://127.0.0.1:9", workspace: none }
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
	res, err := core.Call(context.Background(), authz.NewPrincipal("alice", "", "alice", []string{"op"}, nil), "cancel", []byte(`{"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(res.Text, "apr_")
	if i < 0 {
		t.Fatalf("no approval: %+v", res)
	}
	id := res.Text[i : i+36]
	sess, _ := json.Marshal(map[string]any{"claims": json.RawMessage(`{"sub":"bob","scope":"approve"}`), "csrf": "c",
		"iss": "https://idp.example.com", "aud": "g", "exp": time.Now().Add(time.Hour).Unix()})
	cookie, _ := sealer.SealData("approval-page-session", sess)
	r := httptest.NewRequest(http.MethodGet, "/admin/approvals/"+id, nil)
	r.Header.Set("Accept", "text/html")
	r.AddCookie(&http.Cookie{Name: approvalpage.SessionCookie, Value: cookie})
	w := httptest.NewRecorder()
	(&approvalpage.Page{}).Serve(w, r, &approvalpage.Request{Core: core, Rest: "/" + id, Log: slog.New(slog.DiscardHandler),
		Context: func(*authz.Principal) context.Context { return context.Background() },
		Guard:   func(http.ResponseWriter, *http.Request) bool { return true }})
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `id="arguments"`) || !strings.Contains(body, "Signed in as <b>bob</b>.") {
		t.Fatalf("GET %s = %d\n%s", id, w.Code, body)
	}
	if strings.Contains(body, "workspace") || strings.Contains(body, "Workspace") {
		t.Errorf("the page names a workspace for a tenantless catalog:\n%s", body)
	}
}
