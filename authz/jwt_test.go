package authz_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
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

func TestRejectedTokens(t *testing.T) {
	v := hsVerifier(t)
	now := time.Now()
	noneTok, _ := jwt.NewWithClaims(jwt.SigningMethodNone, good()).SignedString(jwt.UnsafeAllowNoneSignatureType)
	wrongKey, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, good()).SignedString([]byte(strings.Repeat("x", 32)))
	critTok := func() string {
		tk := jwt.NewWithClaims(jwt.SigningMethodHS256, good())
		tk.Header["crit"] = []string{"exp"}
		s, _ := tk.SignedString([]byte(secret))
		return s
	}()
	parts := strings.Split(hs(t, good()), ".")
	badB64 := parts[0] + "." + parts[1] + "!." + parts[2]
	padded := parts[0] + "." + parts[1] + "==." + parts[2]
	cases := map[string]string{
		"empty":              "",
		"alg-none":           noneTok,
		"wrong-key":          wrongKey,
		"expired":            hs(t, with(good(), "exp", now.Add(-time.Minute).Unix())),
		"not-yet-valid":      hs(t, with(good(), "nbf", now.Add(time.Minute).Unix())),
		"issued-in-future":   hs(t, with(good(), "iat", now.Add(time.Minute).Unix())),
		"missing-exp":        hs(t, with(good(), "exp", nil)),
		"wrong-aud":          hs(t, with(good(), "aud", "https://other/mcp")),
		"wrong-iss":          hs(t, with(good(), "iss", "https://idp")),
		"missing-workspace":  hs(t, with(good(), "ws", nil)),
		"empty-workspace":    hs(t, with(good(), "ws", "")),
		"workspace-pattern":  hs(t, with(good(), "ws", "../acme")),
		"numeric-workspace":  hs(t, with(good(), "ws", 7)),
		"missing-subject":    hs(t, with(good(), "sub", nil)),
		"crit-header":        critTok,
		"malformed-base64":   badB64,
		"padded-base64":      padded,
		"garbage":            "not.a.jwt",
		"oversized":          hs(t, with(good(), "pad", strings.Repeat("p", authz.MaxTokenBytes))),
		"scope-not-a-string": hs(t, with(good(), "scope", 5)),
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tok)
			if err == nil {
				t.Fatalf("Verify(%s) = %+v, want an error", name, p)
			}
			if !errors.Is(err, authz.ErrInvalidToken) && !errors.Is(err, authz.ErrNoToken) {
				t.Errorf("Verify(%s) error %v is neither ErrInvalidToken nor ErrNoToken", name, err)
			}
		})
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

func TestPublicKeyFileAndAlgorithmConfusion(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaDER, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ek.PublicKey)
	rsaPath := writePEM(t, "PUBLIC KEY", rsaDER)

	auth := hsAuth()
	auth.JWT = &catalog.JWT{PublicKeyFile: rsaPath, Algorithms: []string{"RS256"}, Issuer: "https://idp/", Audience: "https://gw/mcp"}
	v, err := authz.NewVerifier(auth, nil)
	if err != nil {
		t.Fatal(err)
	}
	rsTok, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, good()).SignedString(rk)
	if _, err := v.Verify(context.Background(), rsTok); err != nil {
		t.Errorf("RS256 token: %v", err)
	}
	// HS/RS confusion: an HS256 token keyed with the public key's bytes.
	pemBytes, _ := os.ReadFile(rsaPath)
	confused, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, good()).SignedString(pemBytes)
	if _, err := v.Verify(context.Background(), confused); err == nil {
		t.Errorf("an HS256 token signed with the RSA public key verified")
	}
	esTok, _ := jwt.NewWithClaims(jwt.SigningMethodES256, good()).SignedString(ek)
	if _, err := v.Verify(context.Background(), esTok); err == nil {
		t.Errorf("an ES256 token verified against an RS256-only configuration")
	}

	auth.JWT = &catalog.JWT{PublicKeyFile: writePEM(t, "PUBLIC KEY", ecDER), Algorithms: []string{"ES256"}, Issuer: "https://idp/", Audience: "https://gw/mcp"}
	v, err = authz.NewVerifier(auth, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), esTok); err != nil {
		t.Errorf("ES256 token: %v", err)
	}
}

func TestVerifierConfigErrors(t *testing.T) {
	auth := hsAuth()
	if _, err := authz.NewVerifier(auth, &authz.VerifierOptions{Getenv: func(string) string { return "short" }}); err == nil {
		t.Errorf("a 5-byte HMAC secret was accepted")
	}
	auth.JWT.Algorithms = []string{"none"}
	if _, err := authz.NewVerifier(auth, &authz.VerifierOptions{Getenv: func(string) string { return secret }}); err == nil {
		t.Errorf(`algorithm "none" was accepted`)
	}
}

var _ = base64.RawURLEncoding
