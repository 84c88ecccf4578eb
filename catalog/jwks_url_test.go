package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// TestJWKSURLMustBeHTTPSOffLoopback: a plain-http key source off loopback
// lets anyone on the path serve their own keys, so validation
// refuses it unless the operator says the network is trusted.
func TestJWKSURLMustBeHTTPSOffLoopback(t *testing.T) {
	for _, tt := range []struct {
		url   string
		allow bool
		err   string // substring of the error, "" for none
	}{
		{"http://idp.example.com/jwks", false, `c.yaml:3:26: auth.jwt: jwks_url "http://idp.example.com/jwks" is plain http on a non-loopback host`},
		{"http://10.0.0.5:8080/jwks", false, "is plain http on a non-loopback host"},
		{"http://0.0.0.0:8080/jwks", false, "is plain http on a non-loopback host"},
		{"http://idp.example.com/jwks", true, ""},
		{"http://127.0.0.1:8081/jwks", false, ""},
		{"http://localhost/jwks", false, ""},
		{"http://[::1]:9000/jwks", false, ""},
		{"https://idp.example.com/jwks", false, ""},
	} {
		t.Run(fmt.Sprintf("%s-allow-%v", tt.url, tt.allow), func(t *testing.T) {
			src := fmt.Sprintf(`version: 1
server: { name: t }
auth: { jwt: { jwks_url: %q, allow_insecure_jwks_url: %v, algorithms: [ES256], issuer: i, audience: a } }
upstreams: { svc: { base_url: "http://127.0.0.1:1" } }
tools:
  - { name: r, description: R., request: { upstream: svc, path: /r } }
`, tt.url, tt.allow)
			_, err := Parse("c.yaml", []byte(src), nil)
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("Parse(jwks_url %q, allow %v) = %v, want it accepted", tt.url, tt.allow, err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("Parse(jwks_url %q, allow %v) = %v, want error containing %q", tt.url, tt.allow, err, tt.err)
			}
		})
	}
}
