package catalog

import (
	"fmt"
	"strings"
	"testing"
)

const upstreamAuthCatalog = `version: 1
server: { name: t }
auth: { api_keys_file: keys.yaml }
upstreams:
  tickets:
    base_url: "http://127.0.0.1:1"
    workspace: { header: X-Workspace-Id }
%s
prerequisites:
  enabled: { claim: features.tickets }
tools:
  - { name: a, description: A., request: { upstream: tickets, path: /a } }
`

var upstreamAuthEnv = map[string]string{"TICKETS_SECRET": "s3cret-value", "MY_ISSUER": "https://mcp.example.com"}

func parseUpstreamAuth(block string) (*Catalog, error) {
	src := fmt.Sprintf(upstreamAuthCatalog, block)
	return Parse("c.yaml", []byte(src), &LoadOptions{Getenv: func(k string) (string, bool) { v, ok := upstreamAuthEnv[k]; return v, ok }})
}

func TestUpstreamAuthLoad(t *testing.T) {
	t.Run("absent-means-headers", func(t *testing.T) {
		c, err := parseUpstreamAuth("")
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if a := c.Upstreams["tickets"].Auth; a.Tokens() {
			t.Errorf("auth = %+v, want static headers", a)
		}
	})
	t.Run("client-credentials-defaults-and-secret", func(t *testing.T) {
		c, err := parseUpstreamAuth(`    auth:
      type: client_credentials
      token_url: http://127.0.0.1:9/oauth/token
      client_id: gateway
      client_secret_env: TICKETS_SECRET
      scopes: [tickets.read, tickets.write]
      audience: https://tickets.example.com`)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		a := c.Upstreams["tickets"].Auth
		if !a.Tokens() || a.ClientAuth != ClientAuthBasic || a.Timeout != DefaultTokenTimeout || a.MaxCachedTokens != DefaultMaxCachedTokens {
			t.Errorf("auth = %+v, want client_credentials with the defaults", a)
		}
		if a.ClientSecret.Reveal() != "s3cret-value" {
			t.Errorf("client secret not read from TICKETS_SECRET")
		}
		if s := fmt.Sprintf("%v %+v", a, *a); strings.Contains(s, "s3cret") {
			t.Errorf("printing the auth block shows the secret: %s", s)
		}
	})
	t.Run("token-exchange-expands-config-fields", func(t *testing.T) {
		c, err := parseUpstreamAuth(`    auth:
      type: token_exchange
      token_url: https://as.example.com/oauth/token
      client_id: gateway
      client_secret_env: TICKETS_SECRET
      subject_token: { issuer: "${MY_ISSUER}", key_file: keys/exchange.pem }`)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		st := c.Upstreams["tickets"].Auth.SubjectToken
		if st.Issuer != "https://mcp.example.com" || st.Audience != "https://as.example.com/oauth/token" || st.Lifetime != DefaultSubjectTokenLifetime {
			t.Errorf("subject_token = %+v, want the expanded issuer, the token_url as audience and the default lifetime", st)
		}
	})
}

func TestUpstreamAuthRules(t *testing.T) {
	const cc = `    auth:
      type: client_credentials
      token_url: http://127.0.0.1:9/token
      client_id: gateway
      client_secret_env: TICKETS_SECRET
`
	for _, tt := range []struct {
		name, block string
		want        []string // each must appear in the error
		leak        string   // must not appear in the error
	}{
		{"unknown-type", "    auth: { type: oauth }", []string{`type "oauth" must be headers, client_credentials or token_exchange`}, ""},
		{"headers-takes-no-token-url", "    auth: { type: headers, token_url: https://as/token }", []string{"token_url is for type client_credentials or token_exchange"}, ""},
		{"token-url-required", "    auth: { type: client_credentials, client_id: g, client_secret_env: TICKETS_SECRET }", []string{"token_url is required"}, ""},
		{"token-url-https-off-loopback", "    auth: { type: client_credentials, token_url: http://as.example.com/token, client_id: g, client_secret_env: TICKETS_SECRET }", []string{"token_url must use https"}, ""},
		{"client-id-required", "    auth: { type: client_credentials, token_url: https://as/token, client_secret_env: TICKETS_SECRET }", []string{"client_id is required"}, ""},
		{"secret-env-unset", "    auth: { type: client_credentials, token_url: https://as/token, client_id: g, client_secret_env: NOPE }", []string{"environment variable NOPE is not set"}, ""},
		{"secret-env-written-as-expansion-is-not-expanded", "    auth: { type: client_credentials, token_url: https://as/token, client_id: g, client_secret_env: \"${TICKETS_SECRET}\" }", []string{"write TICKETS_SECRET, without ${}"}, "s3cret"},
		{"client-auth", cc + "      client_auth: jwt", []string{`client_auth "jwt" must be basic or post`}, ""},
		{"scope-with-space", cc + "      scopes: [\"a b\"]", []string{`scope "a b" must be a non-empty token`}, ""},
		{"resource-not-absolute", cc + "      resource: tickets", []string{`resource "tickets" must be an absolute URI`}, ""},
		{"subject-token-on-client-credentials", cc + "      subject_token: { issuer: x, key_file: k.pem }", []string{"subject_token is for type token_exchange"}, ""},
		{"token-exchange-needs-subject-token", "    auth: { type: token_exchange, token_url: https://as/token, client_id: g, client_secret_env: TICKETS_SECRET }", []string{"type token_exchange needs subject_token"}, ""},
		{"subject-token-fields", "    auth: { type: token_exchange, token_url: https://as/token, client_id: g, client_secret_env: TICKETS_SECRET, subject_token: { lifetime: 1h } }", []string{"issuer is required", "key_file is required", "lifetime must be greater than 0 and at most 5m0s"}, ""},
		{"credentials-and-tokens-exclusive", cc + "    credentials: { by_workspace: { acme: TICKETS_SECRET } }", []string{"client_credentials and credentials both authenticate every request"}, "s3cret"},
		{"authorization-header-and-tokens-exclusive", cc + "    headers: { Authorization: Bearer static }", []string{"headers set Authorization, which carries the token"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseUpstreamAuth(tt.block)
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tt.block)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse error = %v\nwant it to contain %q", err, w)
				}
			}
			if tt.leak != "" && strings.Contains(err.Error(), tt.leak) {
				t.Errorf("Parse error shows the secret: %v", err)
			}
		})
	}
}

// A tool must not set the header that carries the obtained token, and a
// prerequisite probe cannot run against a token_exchange upstream: it
// acts for a workspace, and there is no person to exchange for.
func TestUpstreamAuthToolAndProbeRules(t *testing.T) {
	const base = `version: 1
server: { name: t }
auth: { api_keys_file: keys.yaml }
upstreams:
  tickets:
    base_url: "http://127.0.0.1:1"
    auth:
      type: token_exchange
      token_url: https://as.example.com/token
      client_id: gateway
      client_secret_env: TICKETS_SECRET
      subject_token: { issuer: https://mcp.example.com, key_file: k.pem }
%s`
	for _, tt := range []struct{ name, rest, want string }{
		{"tool-sets-authorization", `tools:
  - { name: a, description: A., request: { upstream: tickets, path: /a, headers: { authorization: "Bearer {t}" } }, input: { type: object, properties: { t: { type: string } } } }
`, `header authorization: upstream "tickets" sends the token its auth (token_exchange) obtains in this header`},
		{"probe-on-token-exchange", `prerequisites:
  ready: { probe: { upstream: tickets, path: /ready } }
tools:
  - { name: a, description: A., requires: [ready], request: { upstream: tickets, path: /a } }
`, `probe upstream "tickets" authenticates with token_exchange, which needs a person`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(fmt.Sprintf(base, tt.rest)), &LoadOptions{Getenv: func(k string) (string, bool) { v, ok := upstreamAuthEnv[k]; return v, ok }})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
