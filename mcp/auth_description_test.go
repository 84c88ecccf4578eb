package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// signClaims signs the usual test claims with changes: a nil value drops
// the claim.
func signClaims(t *testing.T, key string, changes map[string]any) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"iss": "iss", "aud": "aud", "sub": "alice", "ws": "acme", "scope": "read",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRefusedTokenSaysWhy: a 401 for a refused token names the reason
// class in WWW-Authenticate's error_description (RFC 6750 §3), on the MCP
// endpoint and the REST mirror, and the JSON body carries the same text;
// neither names the expected issuer or audience nor echoes the token.
func TestRefusedTokenSaysWhy(t *testing.T) {
	e := newEnv(t, strings.Replace(testCatalog, "auth:\n", "auth:\n  max_token_lifetime: 2h\n  principal: { workspace_pattern: '^[a-z]+$' }\n", 1))
	now := time.Now()
	cases := []struct {
		name, token, want string
	}{
		{"expired", signClaims(t, testSecret, map[string]any{"exp": now.Add(-time.Minute).Unix()}), "the token has expired"},
		{"not-yet-valid", signClaims(t, testSecret, map[string]any{"nbf": now.Add(time.Minute).Unix()}), "the token is not valid yet (nbf)"},
		{"wrong-audience", signClaims(t, testSecret, map[string]any{"aud": "other"}), "the token's audience (aud) does not include this resource"},
		{"wrong-issuer", signClaims(t, testSecret, map[string]any{"iss": "other"}), "the token's issuer (iss) is not the one this gateway trusts"},
		{"bad-signature", signClaims(t, "Xq3uVvGQ2bR8yT1mK7pL0sW9eZ4cN6hJ5aD2fB8gH1k=", nil), "the token's signature does not verify, or its algorithm is not accepted"},
		{"malformed", "not.a.jwt", "the token is not a well-formed JWT"},
		{"workspace-refused", signClaims(t, testSecret, map[string]any{"ws": "ACME/../x"}), "the token's workspace is refused by the workspace pattern"},
		{"no-subject", signClaims(t, testSecret, map[string]any{"sub": nil}), "the token has no subject claim (sub)"},
		{"no-workspace", signClaims(t, testSecret, map[string]any{"ws": nil}), "the token has no workspace claim (ws)"},
		{"lifetime", signClaims(t, testSecret, map[string]any{"exp": now.Add(3 * time.Hour).Unix()}), "the token lives longer than auth.max_token_lifetime allows"},
	}
	list, hdr := modern(t, "1", "tools/list", "")
	for _, tc := range cases {
		for _, surface := range []req{
			{body: list, header: with(hdr, "Authorization", "Bearer "+tc.token)},
			{path: "/admin/mcp/call", body: `{"name":"get_item","arguments":{"id":"a"}}`, header: map[string]string{"Authorization": "Bearer " + tc.token}},
			{method: "GET", path: "/admin/mcp/tools", header: map[string]string{"Authorization": "Bearer " + tc.token}},
		} {
			name := tc.name + "/" + surface.method + strings.ReplaceAll(surface.path, "/", "_")
			t.Run(name, func(t *testing.T) {
				r := e.do(surface)
				if r.status != 401 {
					t.Fatalf("status = %d %s, want 401", r.status, r.body)
				}
				chal := r.header.Get("WWW-Authenticate")
				wantChal := `Bearer error="invalid_token", error_description="` + tc.want + `", scope="read", resource_metadata="` + prmURL + `"`
				if chal != wantChal {
					t.Errorf("WWW-Authenticate =\n%s\nwant\n%s", chal, wantChal)
				}
				var body struct {
					Error            string
					Message          string
					ErrorDescription string `json:"error_description"`
				}
				if err := json.Unmarshal(r.body, &body); err != nil || body.Error != "unauthorized" || body.ErrorDescription != tc.want {
					t.Errorf("body = %s, want error unauthorized and error_description %q", r.body, tc.want)
				}
				for _, leak := range []string{`"iss"`, `"aud"`, testSecret, tc.token} {
					if strings.Contains(chal, leak) || strings.Contains(string(r.body), leak) {
						t.Errorf("401 leaks %q: %s / %s", leak, chal, r.body)
					}
				}
			})
		}
	}
	t.Run("no-token-has-no-error-code", func(t *testing.T) {
		r := e.do(req{body: list, header: with(hdr, "Authorization", "")})
		if chal := r.header.Get("WWW-Authenticate"); strings.Contains(chal, "error") {
			t.Errorf("WWW-Authenticate without a token = %s, want no error code (RFC 6750 §3.1)", chal)
		}
	})
}
