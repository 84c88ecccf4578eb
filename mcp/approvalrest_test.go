package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/mcp"
	"github.com/mcpgw/gateway/proxy"
)

// An approver's decision that cannot be audited is answered 503 with the
// reason, and the approval stays pending; once the trail can be written,
// the same POST approves it.
func TestRESTDecisionIsRefusedWhenItCannotBeAudited(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) }))
	t.Cleanup(up.Close)
	yaml := `version: 1
server: { name: t }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  op: { scopes: [op] }
  approve: { scopes: [approve] }
upstreams:
  up: { base_url: "` + up.URL + `" , workspace: none }
tools:
  - name: cancel
    description: Cancel.
    kind: write
    gate: op
    approval: { approvers: approve }
    request: { upstream: up, method: POST, path: /cancel }
`
	getenv := func(k string) (string, bool) { return testSecret, k == "SECRET" }
	cat, err := catalog.Parse("t.yaml", []byte(yaml), &catalog.LoadOptions{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := proxy.OpenFileAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	sealer, _ := approval.NewSealer(approval.RandomKey())
	store, _ := approval.OpenFileStore(filepath.Join(t.TempDir(), "approvals.json"))
	core, err := proxy.New(cat, &proxy.Options{Audit: sink, Approvals: &proxy.Approvals{Sealer: sealer, Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	ver, err := authz.NewVerifier(cat.Auth, &authz.VerifierOptions{Getenv: func(k string) string { v, _ := getenv(k); return v }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mcp.NewHandler(&mcp.Options{State: func() (*proxy.Core, authz.Verifier) { return core, ver }}))
	t.Cleanup(srv.Close)
	res, err := core.Call(context.Background(), authz.NewPrincipal("alice", "acme", "alice", []string{"op"}, nil), "cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(res.Text, "apr_")
	if i < 0 {
		t.Fatalf("no approval: %+v", res)
	}
	id := res.Text[i : i+36]
	bob := signed(t, "bob", "approve")
	decide := func() (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/admin/mcp/approvals/"+id+"/approve", nil)
		req.Header.Set("Authorization", "Bearer "+bob)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	os.Remove(path)
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
	sink.Reopen()
	if code, body := decide(); code != http.StatusServiceUnavailable || !strings.Contains(body, "auditing is unavailable") {
		t.Errorf("approve with a full audit disk = %d %s; want 503 saying auditing is unavailable", code, body)
	}
	if r, err := store.Get(context.Background(), id); err != nil || r.Status != approval.StatusPending {
		t.Errorf("approval after the refused decision = %+v, %v; want pending", r, err)
	}
	os.Remove(path)
	sink.Reopen()
	code, body := decide()
	var got struct{ Status, Approver string }
	json.Unmarshal([]byte(body), &got)
	if code != http.StatusOK || got.Status != "approved" || got.Approver != "bob" {
		t.Errorf("approve once the trail recovered = %d %s; want 200, approved by bob", code, body)
	}
}

// signed is an HS256 token of subject in workspace acme with scope.
func signed(t *testing.T, subject, scope string) string {
	t.Helper()
	now := time.Now()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": subject, "ws": "acme", "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
