package authz_test

import (
	"context"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// secret is what `openssl rand -base64 32` prints: the HMAC secret rule
// refuses patterned ones such as "0123456789abcdef0123456789abcdef".
const secret = "1JfZpKXcI0BFKy756xdtmrE5DEmxiz2eARfHGDZ70Vs="

func hsAuth() catalog.Auth {
	return catalog.Auth{
		JWT:       &catalog.JWT{HMACSecretEnv: "S", Algorithms: []string{"HS256"}, Issuer: "https://idp/", Audience: "https://gw/mcp", Leeway: catalog.Duration(5 * time.Second)},
		Principal: catalog.Principal{Subject: "sub", Workspace: "ws", Scopes: "scope", Actor: "email"},
	}
}

func hsVerifier(t *testing.T) authz.Verifier {
	t.Helper()
	v, err := authz.NewVerifier(hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return secret }})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func good() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": "https://idp/", "aud": "https://gw/mcp", "sub": "alice", "ws": "acme",
		"scope": "jobs:read jobs:write", "email": "alice@example.com", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

func with(c jwt.MapClaims, k string, v any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for key, val := range c {
		out[key] = val
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func hs(t *testing.T, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHS256Principal(t *testing.T) {
	v := hsVerifier(t)
	p, err := v.Verify(context.Background(), hs(t, good()))
	if err != nil {
		t.Fatalf("Verify(good) = %v", err)
	}
	if p.Subject != "alice" || p.Workspace != "acme" || p.Actor != "alice@example.com" || !p.HasScope("jobs:write") || p.HasScope("jobs") {
		t.Errorf("principal = %+v", p)
	}
	p, err = v.Verify(context.Background(), hs(t, with(with(good(), "scope", []string{"a", "b"}), "email", nil)))
	if err != nil || !p.HasScope("b") || p.Actor != "alice" {
		t.Errorf("array scopes, no email: %+v, %v; want scopes a b and the subject as actor", p, err)
	}
}

// TestRejectedTokens: each refused token is refused for its own reason,
// named by [authz.Reason] and by the log text, so a fixture that came out
// wrong (or a check that stopped working while another one refuses the
// token) fails here.
func TestRejectedTokens(t *testing.T) {
	v := hsVerifier(t)
	now := time.Now()
	hsWith := func(key []byte, headers map[string]any) string {
		return sign(t, jwt.SigningMethodHS256, key, "", good(), headers)
	}
	parts := strings.Split(hs(t, good()), ".")
	badB64 := parts[0] + "." + parts[1] + "!." + parts[2]
	padded := parts[0] + "." + parts[1] + "==." + parts[2]
	cases := []struct {
		name, token, reason, detail string
	}{
		{"alg-none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "", good(), nil), authz.ReasonSignature, "signing method none is invalid"},
		{"wrong-key", hsWith([]byte(strings.Repeat("x", 32)), nil), authz.ReasonSignature, "signature is invalid"},
		{"hs512-not-configured", sign(t, jwt.SigningMethodHS512, []byte(secret), "", good(), nil), authz.ReasonSignature, "signing method HS512 is invalid"},
		{"expired", hs(t, with(good(), "exp", now.Add(-time.Minute).Unix())), authz.ReasonExpired, "token is expired"},
		{"not-yet-valid", hs(t, with(good(), "nbf", now.Add(time.Minute).Unix())), authz.ReasonClaims, "token is not valid yet"},
		{"issued-in-future", hs(t, with(good(), "iat", now.Add(time.Minute).Unix())), authz.ReasonClaims, "token used before issued"},
		{"missing-exp", hs(t, with(good(), "exp", nil)), authz.ReasonClaims, "exp claim is required"},
		{"wrong-aud", hs(t, with(good(), "aud", "https://other/mcp")), authz.ReasonClaims, "token has invalid audience"},
		{"wrong-iss", hs(t, with(good(), "iss", "https://idp")), authz.ReasonClaims, "token has invalid issuer"},
		{"missing-workspace", hs(t, with(good(), "ws", nil)), authz.ReasonClaims, `no workspace in claim "ws"`},
		{"empty-workspace", hs(t, with(good(), "ws", "")), authz.ReasonClaims, `no workspace in claim "ws"`},
		{"null-workspace", hs(t, with(good(), "ws", json.RawMessage("null"))), authz.ReasonClaims, `no workspace in claim "ws"`},
		{"workspace-pattern", hs(t, with(good(), "ws", "../acme")), authz.ReasonClaims, "workspace does not match the workspace pattern"},
		{"workspace-over-128-bytes", hs(t, with(good(), "ws", strings.Repeat("a", 129))), authz.ReasonClaims, "workspace does not match the workspace pattern"},
		{"numeric-workspace", hs(t, with(good(), "ws", 7)), authz.ReasonClaims, `no workspace in claim "ws"`},
		{"missing-subject", hs(t, with(good(), "sub", nil)), authz.ReasonClaims, `claim "sub" is not a non-empty string`},
		{"empty-subject", hs(t, with(good(), "sub", "")), authz.ReasonClaims, `claim "sub" is not a non-empty string`},
		{"numeric-subject", hs(t, with(good(), "sub", 42)), authz.ReasonMalformed, "cannot unmarshal number"},
		{"crit-header", hsWith([]byte(secret), map[string]any{"crit": []string{"exp"}}), authz.ReasonMalformed, "unsupported crit header"},
		{"malformed-base64", badB64, authz.ReasonMalformed, "token is malformed"},
		{"padded-base64", padded, authz.ReasonMalformed, "token is malformed"},
		{"garbage", "not.a.jwt", authz.ReasonMalformed, "token is malformed"},
		{"two-segments", parts[0] + "." + parts[1], authz.ReasonMalformed, "token is malformed"},
		{"oversized", hs(t, with(good(), "pad", strings.Repeat("p", authz.MaxTokenBytes))), authz.ReasonOversize, fmt.Sprintf("token longer than %d bytes", authz.MaxTokenBytes)},
		{"scope-not-a-string", hs(t, with(good(), "scope", 5)), authz.ReasonClaims, `claim "scope" is neither a string nor an array`},
		{"scope-object", hs(t, with(good(), "scope", map[string]any{"a": "b"})), authz.ReasonClaims, `claim "scope" is neither a string nor an array`},
		{"scope-list-with-a-number", hs(t, with(good(), "scope", []any{"jobs:read", 7})), authz.ReasonClaims, `claim "scope" holds a non-string scope`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tc.token)
			if err == nil {
				t.Fatalf("Verify(%s) = %+v, want an error", tc.name, p)
			}
			if !errors.Is(err, authz.ErrInvalidToken) || errors.Is(err, authz.ErrNoToken) {
				t.Errorf("Verify(%s) error %v: want ErrInvalidToken (a 401 with error=invalid_token), not ErrNoToken", tc.name, err)
			}
			if got := authz.Reason(err); got != tc.reason {
				t.Errorf("Reason(Verify(%s)) = %q (%v), want %q", tc.name, got, err, tc.reason)
			}
			if !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("Verify(%s) error %q does not hold %q", tc.name, err, tc.detail)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		_, err := v.Verify(context.Background(), "")
		if !errors.Is(err, authz.ErrNoToken) || errors.Is(err, authz.ErrInvalidToken) || authz.Reason(err) != authz.ReasonMissing {
			t.Errorf("Verify(\"\") = %v (reason %q), want ErrNoToken alone, reason %q", err, authz.Reason(err), authz.ReasonMissing)
		}
	})
	// The fixtures above differ from good() in one claim each: good()
	// itself must verify, or every case could be refused for the same
	// unrelated reason.
	if _, err := v.Verify(context.Background(), hs(t, good())); err != nil {
		t.Fatalf("Verify(good) = %v", err)
	}
}

func writePEM(t *testing.T, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pub.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func marshalPKIX(t *testing.T, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatalf("MarshalPKIXPublicKey(%T) = %v", pub, err)
	}
	return der
}

func TestPublicKeyFileAndAlgorithmConfusion(t *testing.T) {
	rk, ek := rsaKey("a"), ecKey("a", elliptic.P256())
	rsaPath := writePEM(t, "PUBLIC KEY", marshalPKIX(t, &rk.PublicKey))

	auth := hsAuth()
	auth.JWT = &catalog.JWT{PublicKeyFile: rsaPath, Algorithms: []string{"RS256"}, Issuer: "https://idp/", Audience: "https://gw/mcp"}
	v := newVerifier(t, auth, nil)
	rsTok := sign(t, jwt.SigningMethodRS256, rk, "", good(), nil)
	if got := verify(v, rsTok); got != "" {
		t.Errorf("RS256 token: reason %q, want success", got)
	}
	// HS/RS confusion: an HS256 token keyed with the public key's bytes.
	pemBytes, err := os.ReadFile(rsaPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := verify(v, sign(t, jwt.SigningMethodHS256, pemBytes, "", good(), nil)); got != authz.ReasonSignature {
		t.Errorf("an HS256 token signed with the RSA public key: reason %q, want %q", got, authz.ReasonSignature)
	}
	esTok := sign(t, jwt.SigningMethodES256, ek, "", good(), nil)
	if got := verify(v, esTok); got != authz.ReasonSignature {
		t.Errorf("an ES256 token against an RS256-only configuration: reason %q, want %q", got, authz.ReasonSignature)
	}
	if got := verify(v, sign(t, jwt.SigningMethodRS256, rsaKey("b"), "", good(), nil)); got != authz.ReasonSignature {
		t.Errorf("an RS256 token of another key: reason %q, want %q", got, authz.ReasonSignature)
	}

	auth.JWT = &catalog.JWT{PublicKeyFile: writePEM(t, "PUBLIC KEY", marshalPKIX(t, &ek.PublicKey)), Algorithms: []string{"ES256"}, Issuer: "https://idp/", Audience: "https://gw/mcp"}
	v = newVerifier(t, auth, nil)
	if got := verify(v, esTok); got != "" {
		t.Errorf("ES256 token: reason %q, want success", got)
	}

	// PKCS#1 "RSA PUBLIC KEY" and Ed25519 are read too.
	auth.JWT = &catalog.JWT{PublicKeyFile: writePEM(t, "RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&rk.PublicKey)), Algorithms: []string{"RS256"}, Issuer: "https://idp/", Audience: "https://gw/mcp"}
	if got := verify(newVerifier(t, auth, nil), rsTok); got != "" {
		t.Errorf("RS256 token against a PKCS#1 key file: reason %q, want success", got)
	}
	auth.JWT = &catalog.JWT{PublicKeyFile: writePEM(t, "PUBLIC KEY", marshalPKIX(t, edPub)), Algorithms: []string{"EdDSA"}, Issuer: "https://idp/", Audience: "https://gw/mcp"}
	if got := verify(newVerifier(t, auth, nil), sign(t, jwt.SigningMethodEdDSA, edPriv, "", good(), nil)); got != "" {
		t.Errorf("EdDSA token against an Ed25519 key file: reason %q, want success", got)
	}
}

// TestVerifierConfigErrors: a configuration the verifier cannot honour is
// refused at build time, with an error naming the field and the rule.
func TestVerifierConfigErrors(t *testing.T) {
	withSecret := &authz.VerifierOptions{Getenv: func(string) string { return secret }}
	jwtAuth := func(mod func(*catalog.JWT)) catalog.Auth {
		a := hsAuth()
		mod(a.JWT)
		return a
	}
	cases := []struct {
		name string
		auth catalog.Auth
		opts *authz.VerifierOptions
		want string
	}{
		{"short-secret", hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return "short" }}, "the secret is 5 bytes"},
		{"unset-secret", hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return "" }}, "S is not set"},
		{"patterned-secret", hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return strings.Repeat("ab", 20) }}, "low-entropy"},
		{"alg-none", jwtAuth(func(j *catalog.JWT) { j.Algorithms = []string{"none"} }), withSecret, `"none" is never accepted`},
		{"alg-None", jwtAuth(func(j *catalog.JWT) { j.Algorithms = []string{"HS256", "None"} }), withSecret, `"none" is never accepted`},
		{"no-algorithms", jwtAuth(func(j *catalog.JWT) { j.Algorithms = nil }), withSecret, "at least one algorithm is required"},
		{"rs256-with-a-secret", jwtAuth(func(j *catalog.JWT) { j.Algorithms = []string{"RS256"} }), withSecret, `"RS256" cannot be verified with hmac_secret_env`},
		{"hs256-with-a-public-key", jwtAuth(func(j *catalog.JWT) { j.HMACSecretEnv, j.PublicKeyFile = "", "k.pem" }), withSecret, `"HS256" cannot be verified with a public key`},
		{"no-key-source", jwtAuth(func(j *catalog.JWT) { j.HMACSecretEnv, j.Algorithms = "", []string{"RS256"} }), withSecret, "set one key source"},
		{"missing-key-file", jwtAuth(func(j *catalog.JWT) {
			j.HMACSecretEnv, j.PublicKeyFile, j.Algorithms = "", filepath.Join(t.TempDir(), "absent.pem"), []string{"RS256"}
		}), withSecret, "auth.jwt.public_key_file"},
		{"key-file-not-pem", jwtAuth(func(j *catalog.JWT) {
			j.HMACSecretEnv, j.PublicKeyFile, j.Algorithms = "", writePEM(t, "CERTIFICATE", []byte{1, 2, 3}), []string{"RS256"}
		}), withSecret, `PEM block "CERTIFICATE" is not a public key`},
		{"bad-workspace-pattern", func() catalog.Auth { a := hsAuth(); a.Principal.WorkspacePattern = "("; return a }(), withSecret, "auth.principal.workspace_pattern"},
		{"no-verifier", catalog.Auth{}, nil, "no verifier configured"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := authz.NewVerifier(tc.auth, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewVerifier = %v, %v; want an error holding %q", v, err, tc.want)
			}
			if v != nil {
				t.Errorf("NewVerifier returned a verifier %v beside its error", v)
			}
		})
	}
}

// rawHS256 signs payload, as written, under the test secret.
func rawHS256(payload string) string {
	enc := base64.RawURLEncoding
	in := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(payload))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(in))
	return in + "." + enc.EncodeToString(mac.Sum(nil))
}

// A payload that names a claim twice is refused: the registered claims
// are read last-wins and the others first-wins, so a duplicate would
// mean one tenant here and another to the next reader of the token. So
// is a registered claim in other capitals ("Exp", "AUD"), which the
// registered claims' decoder would take for the claim itself.
func TestDuplicateClaimsAreRefused(t *testing.T) {
	v := hsVerifier(t)
	exp := time.Now().Add(time.Hour).Unix()
	base := fmt.Sprintf(`"iss":"https://idp/","aud":"https://gw/mcp","sub":"alice","scope":"jobs:read","exp":%d`, exp)
	if r := verify(v, rawHS256(`{`+base+`,"ws":"acme"}`)); r != "" {
		t.Fatalf("the good payload: %s", r)
	}
	for name, payload := range map[string]string{
		"workspace": `{"ws":"globex",` + base + `,"ws":"acme"}`,
		"exp":       `{"exp":1,` + base + `,"ws":"acme"}`,
		"nested":    `{` + base + `,"ws":"acme","realm":{"roles":["a"],"roles":["admin"]}}`,
		// encoding/json would read these as exp and aud, last-wins.
		"Exp in capitals": `{` + base + `,"ws":"acme","Exp":99999999999}`,
		"AUD in capitals": `{"iss":"https://idp/","aud":"https://other/","sub":"alice","exp":` + fmt.Sprint(exp) + `,"ws":"acme","AUD":"https://gw/mcp"}`,
	} {
		if r := verify(v, rawHS256(payload)); r == "" {
			t.Errorf("a payload naming a claim twice (%s) was accepted", name)
		}
	}
}

// A JOSE header that names a member twice is refused, though the token
// is well signed: which alg or kid it means depends on the reader.
func TestDuplicateHeaderMembersAreRefused(t *testing.T) {
	v := hsVerifier(t)
	enc := base64.RawURLEncoding
	payload := fmt.Sprintf(`{"iss":"https://idp/","aud":"https://gw/mcp","sub":"alice","scope":"jobs:read","exp":%d,"ws":"acme"}`, time.Now().Add(time.Hour).Unix())
	signed := func(header string) string {
		in := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(payload))
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(in))
		return in + "." + enc.EncodeToString(mac.Sum(nil))
	}
	if r := verify(v, signed(`{"alg":"HS256","typ":"JWT"}`)); r != "" {
		t.Fatalf("the good token: %s", r)
	}
	if r := verify(v, signed(`{"alg":"none","typ":"JWT","alg":"HS256"}`)); r != authz.ReasonMalformed {
		t.Errorf("a header naming alg twice: %q, want %s", r, authz.ReasonMalformed)
	}
}

// Scope tokens are separated by single spaces (RFC 6749 §3.3): another
// blank inside a scope string is part of one scope's name.
func TestScopesSplitOnSpacesOnly(t *testing.T) {
	v := hsVerifier(t)
	p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, []byte(secret), "", with(good(), "scope", "jobs:read\u00a0jobs:cancel  jobs:list\tjobs:x"), nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.HasScope("jobs:cancel") || p.HasScope("jobs:read") || !p.HasScope("jobs:list\tjobs:x") || !p.HasScope("jobs:read\u00a0jobs:cancel") {
		t.Errorf("scopes %v; want three names split at the spaces only", p.Scopes)
	}
}
