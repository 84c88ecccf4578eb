package proxy_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// configOf is the Config of a Core built from yaml.
func configOf(t *testing.T, yaml string, change func(*catalog.Catalog)) *proxy.Config {
	t.Helper()
	cat, err := catalog.Parse("t.yaml", []byte(yaml), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(cat)
	}
	c, err := proxy.New(cat, &proxy.Options{Audit: discardAudit{}})
	if err != nil {
		t.Fatal(err)
	}
	return c.Config()
}

const configTool = `
upstreams:
  up: { base_url: "http://127.0.0.1:1", workspace: none }
tools:
  - name: get
    description: Get.
    request: { upstream: up, method: GET, path: /x }
`

// The surfaces read a catalog through its Config, resolved once: every
// setting as written, where approvers decide and how the approval page
// signs them in, and the view gate's scopes.
func TestConfigIsTheCatalogResolved(t *testing.T) {
	got := configOf(t, `version: 1
server:
  name: t
  title: T
  version: "1.2"
  instructions: Use it.
  mcp_path: /m
  admin_path: /adm
  public_url: https://mcp.example.com
  allowed_origins: [https://app.example.com]
  allowed_hosts: [mcp.example.com]
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
  resource_metadata: { resource: "https://mcp.example.com/m", authorization_servers: ["https://login.example.com/"], scopes_supported: [r] }
approval_page: { issuer: "https://idp.example.com", client_id: g, client_secret: s3, scopes: [profile], session_ttl: 30m }
gates:
  view: { scopes: [v] }
limits:
  request_bytes: 2KiB
  max_in_flight: 7
  rate: { per_principal: { rps: 2, burst: 3 }, per_tool: { get: { rps: 1, burst: 1 } } }
`+configTool, nil)
	want := &proxy.Config{
		Enabled: true, MCPPath: "/m", AdminPath: "/adm",
		Server:         proxy.ServerInfo{Name: "t", Version: "1.2", Title: "T"},
		Instructions:   "Use it.",
		AllowedOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"mcp.example.com"},
		PublicURL:    "https://mcp.example.com",
		RequestBytes: 2048, MaxInFlight: 7,
		Rate:       proxy.RateLimits{PerPrincipal: &proxy.Bucket{RPS: 2, Burst: 3}, PerTool: map[string]*proxy.Bucket{"get": {RPS: 1, Burst: 1}}},
		ToolKeyed:  true,
		ViewScopes: []string{"v"},
		ResourceMetadata: &proxy.ResourceMetadata{Resource: "https://mcp.example.com/m",
			AuthorizationServers: []string{"https://login.example.com/"}, ScopesSupported: []string{"r"}},
		Hash: got.Hash,
		Approvals: proxy.ApprovalConfig{Base: "/adm/approvals", URL: "https://mcp.example.com/adm/approvals/",
			Page: &proxy.ApprovalPage{Issuer: "https://idp.example.com", ClientID: "g", ClientSecret: "s3", Scopes: []string{"openid", "profile"},
				SessionTTL: 30 * time.Minute, RedirectURL: "https://mcp.example.com/adm/approvals" + catalog.ApprovalCallbackPath,
				SecureCookies: true, Principal: got.Approvals.Page.Principal}},
	}
	if got.Hash == "" {
		t.Error("Config has no catalog hash")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Config =\n%+v\nwant\n%+v", got, want)
	}
}

// A catalog that leaves settings out gets the defaults, applied once
// where the Config is built: the loader's, or the Core's own when a
// catalog reaches it without them. Without an admin path there is no
// approver surface, and without an approval page, a view gate, rate
// limits or resource metadata (or with a view gate that asks for no
// scope), none is configured.
func TestConfigDefaultsAreAppliedOnce(t *testing.T) {
	const minimal = "version: 1\nserver: { name: t, admin_path: \"\" }\nauth:\n  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }\n" + configTool
	for name, change := range map[string]func(*catalog.Catalog){
		"as loaded": nil,
		"without the loader's defaults": func(cat *catalog.Catalog) {
			cat.Server.MCPPath, cat.Limits.RequestBytes, cat.Limits.MaxInFlight = "", 0, 0
		},
		// A view gate that asks for no scope asks nothing of the surface.
		"with a view gate of no scopes": func(cat *catalog.Catalog) {
			if cat.Gates == nil {
				cat.Gates = map[string]*catalog.Gate{}
			}
			cat.Gates[catalog.ViewGate] = &catalog.Gate{Scopes: []string{}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := configOf(t, minimal, change)
			want := &proxy.Config{Enabled: true, MCPPath: catalog.DefaultMCPPath, Server: proxy.ServerInfo{Name: "t", Version: "unknown"},
				RequestBytes: proxy.DefaultRequestBytes, MaxInFlight: catalog.DefaultMaxInFlight, Hash: got.Hash}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Config =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
