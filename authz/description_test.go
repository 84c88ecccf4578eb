package authz_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// TestDescriptionNamesTheReasonClass: each refused token gets a public
// description (an RFC 6750 error_description) that names what was wrong
// with it, in printable ASCII without '"' or '\', and never quotes the
// token, the secret, or the issuer and audience the gateway expects.
func TestDescriptionNamesTheReasonClass(t *testing.T) {
	auth := hsAuth()
	auth.MaxTokenLifetime = catalog.Duration(2 * time.Hour)
	auth.Principal.WorkspacePattern = `^[a-z]+$`
	v := newVerifier(t, auth, &authz.VerifierOptions{Getenv: func(string) string { return secret }})
	now := time.Now()
	hs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, []byte(secret), "", c, nil) }
	parts := strings.Split(hs(good()), ".")
	cases := []struct {
		name, token, want string
	}{
		{"expired", hs(with(good(), "exp", now.Add(-time.Minute).Unix())), "the token has expired"},
		{"not-yet-valid", hs(with(good(), "nbf", now.Add(time.Minute).Unix())), "the token is not valid yet (nbf)"},
		{"issued-in-the-future", hs(with(good(), "iat", now.Add(time.Minute).Unix())), "the token was issued in the future (iat)"},
		{"wrong-audience", hs(with(good(), "aud", "https://other/mcp")), "the token's audience (aud) does not include this resource"},
		{"no-audience", hs(with(good(), "aud", nil)), "the token has no audience (aud)"},
		{"wrong-issuer", hs(with(good(), "iss", "https://evil/")), "the token's issuer (iss) is not the one this gateway trusts"},
		{"no-issuer", hs(with(good(), "iss", nil)), "the token has no issuer (iss)"},
		{"no-expiry", hs(with(good(), "exp", nil)), "the token has no expiry (exp)"},
		{"bad-signature", sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-enough-length-xyz"), "", good(), nil), "the token's signature does not verify, or its algorithm is not accepted"},
		{"algorithm-not-accepted", sign(t, jwt.SigningMethodHS512, []byte(secret), "", good(), nil), "the token's signature does not verify, or its algorithm is not accepted"},
		{"malformed", "not.a.jwt", "the token is not a well-formed JWT"},
		{"truncated", parts[0] + "." + parts[1], "the token is not a well-formed JWT"},
		{"crit-header", sign(t, jwt.SigningMethodHS256, []byte(secret), "", good(), map[string]any{"crit": []string{"exp"}}), "the token has a crit header this gateway does not implement"},
		{"oversized", hs(with(good(), "pad", strings.Repeat("p", authz.MaxTokenBytes))), "the token is longer than 8192 bytes"},
		{"no-subject", hs(with(good(), "sub", nil)), "the token has no subject claim (sub)"},
		{"empty-subject", hs(with(good(), "sub", "")), "the token has no subject claim (sub)"},
		{"no-workspace", hs(with(good(), "ws", nil)), "the token has no workspace claim (ws)"},
		{"workspace-refused", hs(with(good(), "ws", "Acme/../x")), "the token's workspace is refused by the workspace pattern"},
		{"scope-not-a-list", hs(with(good(), "scope", 7)), "the token's scope claim (scope) is neither a string nor a list of strings"},
		{"lifetime", hs(with(good(), "exp", now.Add(3*time.Hour).Unix())), "the token lives longer than auth.max_token_lifetime allows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tc.token)
			if err == nil {
				t.Fatal("Verify accepted the token")
			}
			got := authz.Description(err)
			if got != tc.want {
				t.Errorf("Description(%v) = %q, want %q", err, got, tc.want)
			}
			for _, leak := range []string{secret, "https://idp/", "https://gw/mcp", tc.token} {
				if leak != "" && strings.Contains(got, leak) {
					t.Errorf("Description = %q leaks %q", got, leak)
				}
			}
		})
	}
	if got := authz.Description(nil); got != "" {
		t.Errorf("Description(nil) = %q, want empty", got)
	}
	if got := authz.Description(authz.ErrNoToken); got != "" {
		t.Errorf("Description(ErrNoToken) = %q, want empty: RFC 6750 §3.1 wants no error code without a token", got)
	}
}

// TestDescriptionIsHeaderSafe: a claim path from the catalog that holds
// a quote, a backslash or non-ASCII text cannot break the header the
// description goes into.
func TestDescriptionIsHeaderSafe(t *testing.T) {
	auth := hsAuth()
	auth.Principal.Subject = `who\"é`
	v := newVerifier(t, auth, &authz.VerifierOptions{Getenv: func(string) string { return secret }})
	_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, []byte(secret), "", good(), nil))
	if err == nil {
		t.Fatal("Verify accepted a token without the configured subject claim")
	}
	d := authz.Description(err)
	if d == "" {
		t.Fatal("Description is empty")
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			t.Fatalf("Description = %q holds byte %#x, outside RFC 6750's error_description set", d, c)
		}
	}
}

// TestAPIKeyDescriptions: API keys are described too, without the key.
func TestAPIKeyDescriptions(t *testing.T) {
	clk := newClock()
	file := "keys:\n  - sha256: " + hashHex("old-key") + "\n    subject: ops\n    workspace: acme\n    expires: " +
		clk.Now().Add(-time.Hour).Format(time.RFC3339) + "\n"
	v, err := apiKeyVerifier(t, file, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"guess": "the API key is not recognised", "old-key": "the API key has expired"} {
		_, err := v.Verify(context.Background(), key)
		if got := authz.Description(err); got != want {
			t.Errorf("Description(Verify(%q)) = %q, want %q", key, got, want)
		}
	}
}
