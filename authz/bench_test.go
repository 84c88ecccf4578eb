package authz_test

import (
	"context"
	"crypto/elliptic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// BenchmarkVerify measures one Verify of a typical token, answered from
// the token cache (cached) or verified every time (uncached, CacheSize -1).
func BenchmarkVerify(b *testing.B) {
	rk, ek := rsaKey("a"), ecKey("a", elliptic.P256())
	srv := newJWKSServer(b, jwkOf("rsa", "RS256", &rk.PublicKey), jwkOf("ec", "ES256", &ek.PublicKey))
	now := time.Now()
	kinds := []struct {
		name  string
		auth  catalog.Auth
		opts  authz.VerifierOptions
		token string
	}{
		{"HS256", hsAuth(), authz.VerifierOptions{Getenv: func(string) string { return secret }}, sign(b, jwt.SigningMethodHS256, []byte(secret), "", claimsAt(now), nil)},
		{"RS256", jwksAuth(srv.URL, "RS256"), authz.VerifierOptions{}, sign(b, jwt.SigningMethodRS256, rk, "rsa", claimsAt(now), nil)},
		{"ES256", jwksAuth(srv.URL, "ES256"), authz.VerifierOptions{}, sign(b, jwt.SigningMethodES256, ek, "ec", claimsAt(now), nil)},
	}
	for _, k := range kinds {
		for _, mode := range []struct {
			name string
			size int
		}{{"cached", 0}, {"uncached", -1}} {
			b.Run(k.name+"/"+mode.name, func(b *testing.B) {
				opts := k.opts
				opts.CacheSize = mode.size
				v := newVerifier(b, k.auth, &opts)
				ctx := context.Background()
				if _, err := v.Verify(ctx, k.token); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := v.Verify(ctx, k.token); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
