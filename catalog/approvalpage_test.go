package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

func approvalPageCatalog(server, page string) string {
	return strings.Replace(approvalCatalog, "server: { name: t }", server, 1) + page
}

func TestApprovalPageLoadsWithDefaultsAndDerivesTheRedirectURL(t *testing.T) {
	t.Setenv("OIDC_SECRET", "s3cret")
	src := approvalPageCatalog("server: { name: t, public_url: \"https://mcp.example.com\" }",
		"approval_page:\n  issuer: https://login.example.com/realms/acme\n  client_id: gateway\n  client_secret: ${OIDC_SECRET}\n  scopes: [profile]\n")
	cat, err := catalog.Parse("catalog.yaml", []byte(src), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ap := cat.ApprovalPage
	if ap == nil || ap.ClientSecret != "s3cret" || ap.SessionTTL.D() != 10*time.Minute || strings.Join(ap.Scopes, " ") != "openid profile" {
		t.Fatalf("approval_page = %+v", ap)
	}
	if got, want := cat.ApprovalRedirectURL(), "https://mcp.example.com/admin/mcp/approvals/signin/callback"; got != want {
		t.Errorf("redirect URL %q, want %q", got, want)
	}
}

func TestApprovalPageRefusals(t *testing.T) {
	cases := map[string]struct{ server, page, want string }{
		"no public_url": {"server: { name: t }", "approval_page: { issuer: \"https://idp.example.com\", client_id: g }", "needs server.public_url"},
		"no admin path": {"server: { name: t, public_url: \"https://mcp.example.com\", admin_path: \"\" }", "approval_page: { issuer: \"https://idp.example.com\", client_id: g }", "needs server.admin_path"},
		"http issuer":   {"server: { name: t, public_url: \"https://mcp.example.com\" }", "approval_page: { issuer: \"http://idp.example.com\", client_id: g }", "issuer must be https://"},
		"no issuer":     {"server: { name: t, public_url: \"https://mcp.example.com\" }", "approval_page: { client_id: g }", "issuer is required"},
		"no client":     {"server: { name: t, public_url: \"https://mcp.example.com\" }", "approval_page: { issuer: \"https://idp.example.com\" }", "client_id is required"},
		"long session":  {"server: { name: t, public_url: \"https://mcp.example.com\" }", "approval_page: { issuer: \"https://idp.example.com\", client_id: g, session_ttl: 2h }", "session_ttl must be"},
		"bad scope":     {"server: { name: t, public_url: \"https://mcp.example.com\" }", "approval_page: { issuer: \"https://idp.example.com\", client_id: g, scopes: [\"a b\"] }", "scopes entry \"a b\" must be one scope token"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := catalog.Parse("catalog.yaml", []byte(approvalPageCatalog(c.server, c.page)), nil)
			if err == nil || !strings.Contains(err.Error(), "approval_page: "+c.want) {
				t.Errorf("err = %v, want approval_page: %s", err, c.want)
			}
		})
	}
	// A loopback provider may speak http (a test or a local provider).
	src := approvalPageCatalog("server: { name: t, public_url: \"http://127.0.0.1:8080\" }", "approval_page: { issuer: \"http://127.0.0.1:9999\", client_id: g }")
	if _, err := catalog.Parse("catalog.yaml", []byte(src), nil); err != nil {
		t.Errorf("loopback issuer: %v", err)
	}
}

// TestApprovalPageSessionBounds: session_ttl is greater than 0 and at
// most MaxApprovalSessionTTL (1h), at each edge.
func TestApprovalPageSessionBounds(t *testing.T) {
	const server = "server: { name: t, public_url: \"https://mcp.example.com\" }"
	for ttl, ok := range map[string]bool{"0s": false, "1ns": true, "59m59s": true, "1h": true, "3600000000001ns": false} {
		page := "approval_page: { issuer: \"https://idp.example.com\", client_id: g, session_ttl: " + ttl + " }"
		_, err := catalog.Parse("catalog.yaml", []byte(approvalPageCatalog(server, page)), nil)
		if ok != (err == nil) {
			t.Errorf("session_ttl %s: err = %v, want accepted %v", ttl, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "session_ttl must be greater than 0 and at most 1h0m0s") {
			t.Errorf("session_ttl %s: err = %v, want the bound named", ttl, err)
		}
	}
}

// The page signs approvers in with its own provider; when that is not
// the provider whose tokens callers bring, one person may hold an identity
// at each, and the four-eyes rule can only tell them apart by what
// auth.principal maps both to. Loading says so; the same issuer (up to a
// trailing slash) says nothing.
func TestApprovalPageWarnsWhenItsIssuerIsNotTheTokensIssuer(t *testing.T) {
	const server = "server: { name: t, public_url: \"https://mcp.example.com\" }"
	for issuer, warn := range map[string]bool{
		"https://idp.example.com":        false,
		"https://idp.example.com/":       false,
		"https://login.example.com/acme": true,
	} {
		cat, err := catalog.Parse("catalog.yaml", []byte(approvalPageCatalog(server, "approval_page: { issuer: \""+issuer+"\", client_id: g }")), nil)
		if err != nil {
			t.Fatalf("issuer %s: %v", issuer, err)
		}
		got := strings.Join(cat.Warnings, "\n")
		if has := strings.Contains(got, "approval_page: issuer"); has != warn {
			t.Errorf("issuer %s: warnings %q, want an issuer warning: %v", issuer, got, warn)
		}
		if warn && !strings.Contains(got, "approve their own calls") {
			t.Errorf("issuer %s: the warning does not say what it means: %q", issuer, got)
		}
	}
}
