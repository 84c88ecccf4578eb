package authz_test

import (
	"context"
	"crypto/elliptic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
)

func TestTokenCacheSkipsSignatureWork(t *testing.T) {
	ek := ecKey("a", elliptic.P256())
	srv := newJWKSServer(t, jwkOf("k1", "ES256", &ek.PublicKey))
	v := newVerifier(t, jwksAuth(srv.URL, "ES256"), nil)
	tok := sign(t, jwt.SigningMethodES256, ek, "k1", claimsAt(time.Now()), nil)
	p1, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	n := authz.KeyLookups(v)
	p2, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if got := authz.KeyLookups(v); got != n {
		t.Errorf("second Verify of the same token did signature work (%d key lookups, want %d)", got, n)
	}
	if p1 != p2 {
		t.Errorf("second Verify returned another principal")
	}
	if _, err := v.Verify(context.Background(), tok+"x"); err == nil {
		t.Errorf("a token differing from a cached one by a byte verified")
	}
}

func TestTokenCacheDisabled(t *testing.T) {
	v := newVerifier(t, hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return secret }, CacheSize: -1})
	tok := hs(t, good())
	for range 3 {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if got := authz.KeyLookups(v); got != 3 {
		t.Errorf("with CacheSize -1, 3 Verify calls made %d key lookups, want 3", got)
	}
}

// TestTokenCacheKeySetChangeEvicts: a cached verification holds only while
// the key set is the one it was verified under.
func TestTokenCacheKeySetChangeEvicts(t *testing.T) {
	k1, k2 := rsaKey("old"), rsaKey("new")
	clk := newClock()
	srv := newJWKSServer(t, jwkOf("k1", "RS256", &k1.PublicKey))
	v := newVerifier(t, jwksAuth(srv.URL, "RS256"), &authz.VerifierOptions{Now: clk.Now, RefreshInterval: time.Hour})
	tok := sign(t, jwt.SigningMethodRS256, k1, "k1", claimsAt(clk.Now()), nil)
	refresh := func() {
		clk.Advance(time.Minute)
		verify(v, sign(t, jwt.SigningMethodRS256, k2, "unknown", claimsAt(clk.Now()), nil))
	}
	if got := verify(v, tok); got != "" {
		t.Fatalf("first Verify: reason %q", got)
	}

	refresh() // same set refetched: the cache survives
	n := authz.KeyLookups(v)
	if got := verify(v, tok); got != "" || authz.KeyLookups(v) != n {
		t.Errorf("after refetching an unchanged set: reason %q, key lookups %d → %d; want a cache hit", got, n, authz.KeyLookups(v))
	}

	srv.publish(jwkOf("k1", "RS256", &k1.PublicKey), jwkOf("k2", "RS256", &k2.PublicKey))
	refresh() // a key added: cached entries are re-verified
	n = authz.KeyLookups(v)
	if got := verify(v, tok); got != "" || authz.KeyLookups(v) != n+1 {
		t.Errorf("after a key was added: reason %q, key lookups %d → %d; want one fresh verification", got, n, authz.KeyLookups(v))
	}

	srv.publish(jwkOf("k2", "RS256", &k2.PublicKey))
	refresh() // k1 removed
	if got := verify(v, tok); got != authz.ReasonUnknownKey {
		t.Errorf("cached token after its key was removed: reason %q, want %q", got, authz.ReasonUnknownKey)
	}
}

// TestTokenCacheNeverExtendsExp: the cache answers until exp plus leeway,
// exactly as the parser would, and not a moment after.
func TestTokenCacheNeverExtendsExp(t *testing.T) {
	clk := newClock()
	auth := hsAuth() // leeway 5s
	v := newVerifier(t, auth, &authz.VerifierOptions{Getenv: func(string) string { return secret }, Now: clk.Now})
	exp := clk.Now().Add(10 * time.Second)
	tok := hs(t, with(with(good(), "iat", clk.Now().Unix()), "exp", exp.Unix()))
	if got := verify(v, tok); got != "" {
		t.Fatalf("fresh token: reason %q", got)
	}
	clk.Advance(exp.Sub(clk.Now()) + 5*time.Second - time.Millisecond)
	n := authz.KeyLookups(v)
	if got := verify(v, tok); got != "" || authz.KeyLookups(v) != n {
		t.Errorf("1ms before exp+leeway: reason %q, key lookups %d → %d; want a cache hit", got, n, authz.KeyLookups(v))
	}
	clk.Advance(time.Millisecond)
	if got := verify(v, tok); got != authz.ReasonExpired {
		t.Errorf("at exp+leeway: reason %q, want %q", got, authz.ReasonExpired)
	}
	if got := authz.KeyLookups(v); got != n+1 {
		t.Errorf("at exp+leeway the token was not re-verified (key lookups %d → %d)", n, got)
	}
}

func TestTokenCacheIsBounded(t *testing.T) {
	v := newVerifier(t, hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return secret }, CacheSize: 2})
	toks := []string{hs(t, with(good(), "jti", "1")), hs(t, with(good(), "jti", "2")), hs(t, with(good(), "jti", "3"))}
	for _, tok := range toks {
		verify(v, tok)
	}
	if got := authz.CachedTokens(v); got != 2 {
		t.Errorf("cache of 2 holds %d tokens after 3", got)
	}
	n := authz.KeyLookups(v)
	verify(v, toks[2]) // newest: cached
	verify(v, toks[0]) // oldest: evicted
	if got := authz.KeyLookups(v); got != n+1 {
		t.Errorf("key lookups %d → %d, want one: the newest cached, the oldest evicted", n, got)
	}
}
