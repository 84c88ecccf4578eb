package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

const oauthServerCatalog = `version: 1
server: { name: t, public_url: "https://mcp.example.com" }
auth:
  principal: { workspace: tenant, actor: email }
  oauth_server:
    provider:
      issuer: https://login.example.com/realms/acme
      client_id: gateway
      client_secret: ${IDP_SECRET}
      scopes: [profile, email]
upstreams:
  svc: { base_url: "http://127.0.0.1:9090" }
tools:
  - name: read
    description: Read.
    request: { upstream: svc, path: /v1/read }
`

func TestOAuthServerLoadsAloneWithDefaultsAndPointsTheResourceMetadataAtItself(t *testing.T) {
	t.Setenv("IDP_SECRET", "s3cret")
	cat, err := catalog.Parse("catalog.yaml", []byte(oauthServerCatalog), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	o := cat.Auth.OAuthServer
	switch {
	case o.Issuer != "https://mcp.example.com":
		t.Errorf("issuer %q, want server.public_url", o.Issuer)
	case o.Provider.ClientSecret != "s3cret":
		t.Errorf("client_secret not expanded: %q", o.Provider.ClientSecret)
	case strings.Join(o.Provider.Scopes, " ") != "openid profile email":
		t.Errorf("scopes %q, want openid first", o.Provider.Scopes)
	case o.AccessTokenTTL.D() != 10*time.Minute || o.RefreshTokenTTL.D() != 7*24*time.Hour:
		t.Errorf("lifetimes %s %s", o.AccessTokenTTL, o.RefreshTokenTTL)
	case !o.Registration.Enabled || o.Registration.PerMinute != 10 || !o.ClientMetadata.Enabled:
		t.Errorf("registration %+v, client_metadata %+v", o.Registration, o.ClientMetadata)
	case o.ClientMetadata.MaxBytes != 5<<10 || o.ClientMetadata.Timeout.D() != 5*time.Second:
		t.Errorf("client_metadata bounds %+v", o.ClientMetadata)
	}
	rm := cat.Auth.ResourceMetadata
	if rm == nil || rm.Resource != "https://mcp.example.com/mcp" || len(rm.AuthorizationServers) != 1 || rm.AuthorizationServers[0] != "https://mcp.example.com" {
		t.Errorf("resource_metadata = %+v, want the MCP URL served by this issuer", rm)
	}
	if got, want := cat.OAuthCallbackURL(), "https://mcp.example.com/oauth/callback"; got != want {
		t.Errorf("callback %q, want %q", got, want)
	}
}

func TestOAuthServerPutsItselfFirstAmongConfiguredAuthorizationServers(t *testing.T) {
	t.Setenv("IDP_SECRET", "s")
	src := strings.Replace(oauthServerCatalog, "  oauth_server:\n", "  resource_metadata: { resource: \"https://mcp.example.com/mcp\", authorization_servers: [\"https://other.example.com\"] }\n  oauth_server:\n", 1)
	cat, err := catalog.Parse("catalog.yaml", []byte(src), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := strings.Join(cat.Auth.ResourceMetadata.AuthorizationServers, " "); got != "https://mcp.example.com https://other.example.com" {
		t.Errorf("authorization_servers %q", got)
	}
}

func TestOAuthServerRefusals(t *testing.T) {
	t.Setenv("IDP_SECRET", "s")
	cases := map[string]struct{ from, to, want string }{
		"no public url":        {`public_url: "https://mcp.example.com"`, `mcp_path: /mcp`, "needs server.public_url (or issuer)"},
		"http provider":        {"issuer: https://login.example.com/realms/acme", "issuer: http://login.example.com", "provider.issuer must be https://"},
		"no client id":         {"client_id: gateway", "", "provider.client_id is required"},
		"long access tokens":   {"client_secret: ${IDP_SECRET}", "client_secret: x\n    access_token_ttl: 2h", "access_token_ttl must be greater than 0 and at most 1h0m0s"},
		"zero registrations":   {"client_secret: ${IDP_SECRET}", "client_secret: x\n    registration: { per_minute: 0 }", "registration.per_minute must be greater than 0"},
		"bad private prefix":   {"client_secret: ${IDP_SECRET}", "client_secret: x\n    client_metadata: { allow_private_addresses: [\"10.0.0.1\"] }", `allow_private_addresses entry "10.0.0.1" is not an address prefix`},
		"host with scheme":     {"client_secret: ${IDP_SECRET}", "client_secret: x\n    client_metadata: { allowed_hosts: [\"https://a.example\"] }", `allowed_hosts entry "https://a.example" must be a host name`},
		"mcp path under oauth": {`public_url: "https://mcp.example.com"`, `public_url: "https://mcp.example.com", mcp_path: /oauth/mcp`, `server.mcp_path "/oauth/mcp" lies under /oauth/`},
		"issuer of the jwts":   {"  principal:", "  jwt: { jwks_url: \"https://mcp.example.com/jwks\", algorithms: [RS256], issuer: \"https://mcp.example.com/\", audience: a }\n  principal:", `issuer "https://mcp.example.com" is also auth.jwt.issuer`},
		"no way to get client": {"client_secret: ${IDP_SECRET}", "client_secret: x\n    registration: { enabled: false }\n    client_metadata: { enabled: false }", "registration and client_metadata are both off"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			src := strings.Replace(oauthServerCatalog, c.from, c.to, 1)
			// Keys written after client_secret at four spaces belong to
			// oauth_server, so the provider's scopes must go first.
			src = strings.Replace(src, "\n      scopes: [profile, email]", "", 1)
			_, err := catalog.Parse("catalog.yaml", []byte(src), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %s", err, c.want)
			}
		})
	}
}
