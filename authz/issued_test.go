package authz_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
)

const (
	gwIssuer   = "https://mcp.example.com"
	gwResource = "https://mcp.example.com/mcp"
)

func issuedToken(t *testing.T, key ed25519.PrivateKey, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gwClaims(mut func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": gwIssuer, "aud": []string{gwResource}, "sub": "alice", "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		authz.IssuedWorkspaceClaim: "acme", authz.IssuedScopesClaim: []string{"jobs:read"}, authz.IssuedActorClaim: "alice@acme.example", authz.IssuedGrantClaim: "g_1"}
	if mut != nil {
		mut(c)
	}
	return c
}

// otherVerifier stands for the catalog's verifier: it accepts one fixed
// token, so a test can see which verifier answered.
type otherVerifier struct{}

func (otherVerifier) Verify(_ context.Context, tok string) (*authz.Principal, error) {
	if tok == "catalog-token" {
		return authz.NewPrincipal("bob", "globex", "", nil, nil), nil
	}
	return nil, authz.ErrInvalidToken
}
func (otherVerifier) Close() error { return nil }

func TestIssuedTokensAreHeldToTheGatewaysKeysAndGrants(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	_, stranger, _ := ed25519.GenerateKey(rand.Reader)
	revoked := map[string]bool{"g_revoked": true}
	v := &authz.Federated{Issuer: gwIssuer, Other: otherVerifier{}, Issued: authz.NewIssuedVerifier(authz.IssuedOptions{
		Issuer: gwIssuer, Audience: gwResource, Keys: map[string]ed25519.PublicKey{"k1": key.Public().(ed25519.PublicKey)},
		Revoked: func(_ context.Context, g string) (bool, error) {
			if g == "g_store_down" {
				return false, errors.New("store down")
			}
			return revoked[g], nil
		},
	})}
	p, err := v.Verify(context.Background(), issuedToken(t, key, "k1", gwClaims(nil)))
	if err != nil || p.Subject != "alice" || p.Workspace != "acme" || p.Actor != "alice@acme.example" || !p.HasScope("jobs:read") {
		t.Fatalf("issued token: %+v %v", p, err)
	}
	if p, err := v.Verify(context.Background(), "catalog-token"); err != nil || p.Workspace != "globex" {
		t.Errorf("a catalog token is not handed to the catalog's verifier: %v %v", p, err)
	}
	cases := map[string]string{
		"signed-by-another-key": issuedToken(t, stranger, "k1", gwClaims(nil)),
		"unknown-kid":           issuedToken(t, key, "k2", gwClaims(nil)),
		"other-audience":        issuedToken(t, key, "k1", gwClaims(func(c jwt.MapClaims) { c["aud"] = []string{"https://other.example/mcp"} })),
		"expired":               issuedToken(t, key, "k1", gwClaims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Second).Unix() })),
		"revoked-grant":         issuedToken(t, key, "k1", gwClaims(func(c jwt.MapClaims) { c[authz.IssuedGrantClaim] = "g_revoked" })),
		"no-grant":              issuedToken(t, key, "k1", gwClaims(func(c jwt.MapClaims) { delete(c, authz.IssuedGrantClaim) })),
		"revocation-unknowable": issuedToken(t, key, "k1", gwClaims(func(c jwt.MapClaims) { c[authz.IssuedGrantClaim] = "g_store_down" })),
		"gateway-key-other-iss": issuedToken(t, key, "k1", gwClaims(func(c jwt.MapClaims) { c["iss"] = "https://login.example.com" })),
		"hmac-with-gateway-iss": hmacGatewayToken(t),
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tok)
			if err == nil || !errors.Is(err, authz.ErrInvalidToken) {
				t.Errorf("Verify = %+v, %v; want an invalid token", p, err)
			}
		})
	}
}

// A token naming the gateway's issuer but signed with HMAC is held to
// the gateway's EdDSA keys, never to the catalog's verifier.
func hmacGatewayToken(t *testing.T) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, gwClaims(nil)).SignedString([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
