package authz_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// A catalog whose every upstream declares workspace: none is
// tenantless, and its tokens need no workspace claim. Any other catalog
// still requires one.

func tenantCatalog(t *testing.T, upstreams string) *catalog.Catalog {
	t.Helper()
	src := `
version: 1
server: { name: t }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: "https://idp/", audience: "https://gw/mcp" }
  principal: { actor: email }
upstreams:
` + upstreams + `
tools:
  - name: t
    description: T.
    request: { upstream: a, path: /t }
`
	cat, err := catalog.Parse("tenant.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cat
}

func TestTokenWithoutWorkspaceOnlyForATenantlessCatalog(t *testing.T) {
	noWS := with(good(), "ws", nil)
	for _, tt := range []struct {
		name      string
		upstreams string
		claims    jwt.MapClaims
		wantWS    string // "" with wantErr empty: accepted without a workspace
		wantErr   string // the log reason, "" when accepted
	}{
		{"tenantless-no-claim-accepted", "  a: { base_url: http://127.0.0.1:1, workspace: none }\n  b: { base_url: http://127.0.0.1:2, workspace: none }", noWS, "", ""},
		{"tenantless-claim-kept", "  a: { base_url: http://127.0.0.1:1, workspace: none }", good(), "acme", ""},
		{"tenantless-claim-still-matches-the-pattern", "  a: { base_url: http://127.0.0.1:1, workspace: none }", with(good(), "ws", "no spaces allowed"), "", "workspace does not match the workspace pattern"},
		{"tenantless-claim-of-the-wrong-type", "  a: { base_url: http://127.0.0.1:1, workspace: none }", with(good(), "ws", 42), "", "no workspace in claim"},
		{"tenantless-empty-claim", "  a: { base_url: http://127.0.0.1:1, workspace: none }", with(good(), "ws", ""), "", "no workspace in claim"},
		{"mixed-needs-the-claim", "  a: { base_url: http://127.0.0.1:1, workspace: none }\n  b: { base_url: http://127.0.0.1:2, workspace: { header: X-Ws } }", noWS, "", "no workspace in claim"},
		{"unbound-needs-the-claim", "  a: { base_url: http://127.0.0.1:1 }", noWS, "", "no workspace in claim"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cat := tenantCatalog(t, tt.upstreams)
			v, err := authz.NewVerifier(cat.Auth, &authz.VerifierOptions{Getenv: func(string) string { return secret }})
			if err != nil {
				t.Fatal(err)
			}
			p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, []byte(secret), "", tt.claims, nil))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Verify = %v, %v; want an error containing %q", p, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify = %v, want a principal", err)
			}
			if p.Workspace != tt.wantWS || p.Subject != "alice" || p.Actor != "alice@example.com" {
				t.Errorf("principal = %+v, want subject alice, workspace %q, actor alice@example.com", p, tt.wantWS)
			}
		})
	}
}

func TestAPIKeyWithoutWorkspaceOnlyForATenantlessCatalog(t *testing.T) {
	file := "keys:\n  - sha256: " + hashHex("ci-key") + "\n    subject: ci-bot\n    scopes: [read]\n"
	read := func(name string) ([]byte, error) {
		if name != "keys.yaml" {
			return nil, fs.ErrNotExist
		}
		return []byte(file), nil
	}
	for _, tt := range []struct {
		name, upstreams string
		ok              bool
	}{
		{"tenantless", "  a: { base_url: http://127.0.0.1:1, workspace: none }", true},
		{"tenant", "  a: { base_url: http://127.0.0.1:1, workspace: { query: ws } }", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			auth := tenantCatalog(t, tt.upstreams).Auth
			auth.JWT, auth.APIKeysFile = nil, "keys.yaml"
			v, err := authz.NewVerifier(auth, &authz.VerifierOptions{ReadFile: read})
			if !tt.ok {
				if err == nil || !strings.Contains(err.Error(), "workspace is required") {
					t.Fatalf("NewVerifier = %v, want the key without a workspace refused", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewVerifier = %v", err)
			}
			p, err := v.Verify(context.Background(), "ci-key")
			if err != nil || p.Workspace != "" || p.Subject != "ci-bot" {
				t.Fatalf("Verify(ci-key) = %+v, %v; want ci-bot without a workspace", p, err)
			}
		})
	}
}
