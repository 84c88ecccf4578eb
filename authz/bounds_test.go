package authz_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// Every bound authz enforces, at limit−1, limit and limit+1.

// hsTokenOfLen signs a good HS256 token exactly n bytes long, padding a
// claim and a header field until the base64 lengths add up.
func hsTokenOfLen(t *testing.T, c jwt.MapClaims, n int) string {
	t.Helper()
	for h := 0; h < 4; h++ {
		for pad := max(0, n*3/4-400); pad < n; pad++ {
			tk := jwt.NewWithClaims(jwt.SigningMethodHS256, with(c, "pad", strings.Repeat("p", pad)))
			tk.Header["x"] = strings.Repeat("h", h)
			s, err := tk.SignedString([]byte(secret))
			if err != nil {
				t.Fatalf("signing a token of %d bytes: %v", n, err)
			}
			if len(s) == n {
				return s
			}
			if len(s) > n {
				break
			}
		}
	}
	t.Fatalf("no token of exactly %d bytes could be built", n)
	return ""
}

func TestTokenSizeBoundary(t *testing.T) {
	v := hsVerifier(t)
	for _, tc := range []struct {
		n      int
		reason string
	}{
		{authz.MaxTokenBytes - 1, ""},
		{authz.MaxTokenBytes, ""},
		{authz.MaxTokenBytes + 1, authz.ReasonOversize},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			tok := hsTokenOfLen(t, good(), tc.n)
			_, err := v.Verify(context.Background(), tok)
			if got := authz.Reason(err); got != tc.reason {
				t.Errorf("Verify(a good token of %d bytes) reason = %q (%v), want %q", tc.n, got, err, tc.reason)
			}
		})
	}
}

// TestAPIKeySizeBoundary: an API key of MaxTokenBytes is looked up; one
// byte more is refused before hashing, even when its hash is listed.
func TestAPIKeySizeBoundary(t *testing.T) {
	keys := map[int]string{}
	var file strings.Builder
	file.WriteString("keys:\n")
	for _, n := range []int{authz.MaxTokenBytes - 1, authz.MaxTokenBytes, authz.MaxTokenBytes + 1} {
		keys[n] = strings.Repeat(string(rune('a'+n%26)), n)
		fmt.Fprintf(&file, "  - sha256: %s\n    subject: s%d\n    workspace: acme\n", hashHex(keys[n]), n)
	}
	v, err := apiKeyVerifier(t, file.String(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{authz.MaxTokenBytes - 1: "", authz.MaxTokenBytes: "", authz.MaxTokenBytes + 1: authz.ReasonOversize} {
		p, err := v.Verify(context.Background(), keys[n])
		if got := authz.Reason(err); got != want {
			t.Errorf("Verify(API key of %d bytes) reason = %q (%v), want %q", n, got, err, want)
		}
		if want == "" && (p == nil || p.Subject != fmt.Sprintf("s%d", n)) {
			t.Errorf("Verify(API key of %d bytes) = %+v, want subject s%d", n, p, n)
		}
	}
}

// debugLog records a logger's output at Debug, where skipped JWKS keys are
// described.
func debugLog() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

// TestJWKSSizeBoundary: a key set document of MaxJWKSBytes is read whole;
// one byte more is refused, however good the keys in it. There is no cap
// on the number of keys: the byte cap bounds it.
func TestJWKSSizeBoundary(t *testing.T) {
	rk := rsaKey("a")
	set := mustJSON(map[string]any{"keys": []any{jwkOf("k1", "RS256", &rk.PublicKey)}})
	for _, tc := range []struct {
		n  int
		ok bool
	}{
		{authz.MaxJWKSBytes - 1, true},
		{authz.MaxJWKSBytes, true},
		{authz.MaxJWKSBytes + 1, false},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			srv := newJWKSServer(t)
			// Trailing white space is valid JSON: the document stays a
			// good key set whatever its length.
			body := set + strings.Repeat(" ", tc.n-len(set))
			if len(body) != tc.n {
				t.Fatalf("built a %d-byte document, want %d", len(body), tc.n)
			}
			srv.serve(200, body)
			v, err := authz.NewVerifier(jwksAuth(srv.URL, "RS256"), nil)
			if !tc.ok {
				if err == nil {
					v.(authz.ClosableVerifier).Close()
					t.Fatalf("NewVerifier accepted a %d-byte key set, over the %d-byte cap", tc.n, authz.MaxJWKSBytes)
				}
				if want := fmt.Sprintf("key set over %d bytes", authz.MaxJWKSBytes); !strings.Contains(err.Error(), want) || !errors.Is(err, authz.ErrJWKSUnavailable) {
					t.Errorf("NewVerifier error %q: want ErrJWKSUnavailable holding %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewVerifier with a %d-byte key set: %v", tc.n, err)
			}
			defer v.(authz.ClosableVerifier).Close()
			if got := verify(v, sign(t, jwt.SigningMethodRS256, rk, "k1", claimsAt(time.Now()), nil)); got != "" {
				t.Errorf("token against a %d-byte key set: reason %q, want success", tc.n, got)
			}
		})
	}
}

// pow2 is 2^bits plus add.
func pow2(bits uint, add int64) *big.Int {
	n := new(big.Int).Lsh(big.NewInt(1), bits)
	return n.Add(n, big.NewInt(add))
}

// TestJWKSRSABoundaries: a modulus of 2048 to 16384 bits is used, one bit
// fewer or more is skipped; an exponent must be odd, at least 3 and below
// 2^31. The moduli at the edges are not real keys (none is needed to be
// accepted or refused); the accepted real key shows the key is used.
func TestJWKSRSABoundaries(t *testing.T) {
	rk := rsaKey("a")
	real := jwkOf("real", "RS256", &rk.PublicKey)
	key := func(n, e *big.Int) map[string]any {
		return map[string]any{"kty": "RSA", "kid": "edge", "alg": "RS256", "n": b64(n.Bytes()), "e": b64(e.Bytes())}
	}
	f4 := big.NewInt(65537)
	cases := []struct {
		name string
		jwk  map[string]any
		skip string // the reason the key is skipped; "" when it is used
	}{
		{"modulus-2047-bits", key(pow2(2046, 1), f4), "RSA modulus of 2047 bits; want 2048 to 16384"},
		{"modulus-2048-bits", key(pow2(2047, 1), f4), ""},
		{"modulus-2048-bits-real-key", real, ""},
		{"modulus-16384-bits", key(pow2(16383, 1), f4), ""},
		{"modulus-16385-bits", key(pow2(16384, 1), f4), "RSA modulus of 16385 bits; want 2048 to 16384"},
		{"exponent-1", key(rk.N, big.NewInt(1)), "RSA exponent must be odd, at least 3 and below 2^31"},
		{"exponent-2", key(rk.N, big.NewInt(2)), "RSA exponent must be odd"},
		{"exponent-3", key(rk.N, big.NewInt(3)), ""},
		{"exponent-4", key(rk.N, big.NewInt(4)), "RSA exponent must be odd"},
		{"exponent-65537", key(rk.N, f4), ""},
		{"exponent-65536", key(rk.N, big.NewInt(65536)), "RSA exponent must be odd"},
		{"exponent-2^31-1", key(rk.N, pow2(31, -1)), ""},
		{"exponent-2^31+1", key(rk.N, pow2(31, 1)), "RSA exponent must be odd, at least 3 and below 2^31"},
		{"exponent-2^63+1", key(rk.N, pow2(63, 1)), "RSA exponent must be odd, at least 3 and below 2^31"},
		{"exponent-empty", map[string]any{"kty": "RSA", "kid": "edge", "n": b64(rk.N.Bytes()), "e": ""}, `member "e" is empty`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newJWKSServer(t, tc.jwk)
			logger, logs := debugLog()
			v, err := authz.NewVerifier(jwksAuth(srv.URL, "RS256"), &authz.VerifierOptions{Logger: logger})
			if tc.skip != "" {
				if err == nil {
					v.(authz.ClosableVerifier).Close()
					t.Fatalf("NewVerifier accepted a key set whose only key should be skipped (%s)", tc.skip)
				}
				if !strings.Contains(err.Error(), "no usable key among 1") || !strings.Contains(strings.ReplaceAll(logs.String(), `\"`, `"`), tc.skip) {
					t.Errorf("NewVerifier error %q, log %q: want no usable key, skipped because %q", err, logs, tc.skip)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewVerifier refused the key: %v (log %s)", err, logs)
			}
			cv := v.(authz.ClosableVerifier)
			defer cv.Close()
			if tc.jwk["kid"] == "real" {
				if got := verify(v, sign(t, jwt.SigningMethodRS256, rk, "real", claimsAt(time.Now()), nil)); got != "" {
					t.Errorf("token signed by the 2048-bit key: reason %q, want success", got)
				}
			}
		})
	}
}

// TestLeewayBoundary: exp and nbf are checked with the configured leeway,
// capped at the catalog's 60s ceiling even for an auth section that
// skipped validation; a token is refused from exp+leeway on.
func TestLeewayBoundary(t *testing.T) {
	maxLeeway := catalog.DefaultMaxLeeway.D()
	for _, tc := range []struct {
		name     string
		leeway   time.Duration
		expAgo   time.Duration // now − exp; negative: exp in the future
		nbfAhead time.Duration // nbf − now; 0: no nbf
		reason   string
	}{
		{"max-leeway/expired-by-leeway-1s", maxLeeway, maxLeeway - time.Second, 0, ""},
		{"max-leeway/expired-by-leeway", maxLeeway, maxLeeway, 0, authz.ReasonExpired},
		{"max-leeway/expired-by-leeway+1s", maxLeeway, maxLeeway + time.Second, 0, authz.ReasonExpired},
		{"max-leeway/nbf-in-leeway-1s", maxLeeway, -time.Hour, maxLeeway - time.Second, ""},
		{"max-leeway/nbf-in-leeway+1s", maxLeeway, -time.Hour, maxLeeway + time.Second, authz.ReasonClaims},
		{"over-max-is-capped/expired-by-max-1s", 90 * time.Second, maxLeeway - time.Second, 0, ""},
		{"over-max-is-capped/expired-by-max+1s", 90 * time.Second, maxLeeway + time.Second, 0, authz.ReasonExpired},
		{"over-max-is-capped/nbf-in-max+1s", 90 * time.Second, -time.Hour, maxLeeway + time.Second, authz.ReasonClaims},
		{"no-leeway/expired-by-1s", 0, time.Second, 0, authz.ReasonExpired},
		{"no-leeway/expires-in-1s", 0, -time.Second, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			auth := hsAuth()
			auth.JWT.Leeway = catalog.Duration(tc.leeway)
			v := newVerifier(t, auth, &authz.VerifierOptions{Getenv: func(string) string { return secret }, Now: clk.Now})
			now := clk.Now()
			c := with(with(good(), "iat", now.Add(-2*time.Hour).Unix()), "exp", now.Add(-tc.expAgo).Unix())
			if tc.nbfAhead != 0 {
				c = with(c, "nbf", now.Add(tc.nbfAhead).Unix())
				c = with(c, "iat", now.Unix())
			}
			tok := sign(t, jwt.SigningMethodHS256, []byte(secret), "", c, nil)
			if got := verify(v, tok); got != tc.reason {
				t.Errorf("Verify reason = %q, want %q", got, tc.reason)
			}
			// The cache holds an accepted token exactly as long as the
			// parser would: one second later than the leeway allows, it
			// is refused.
			if tc.reason == "" && tc.nbfAhead == 0 {
				clk.Advance(min(tc.leeway, maxLeeway) - tc.expAgo + time.Second)
				if got := verify(v, tok); got != authz.ReasonExpired {
					t.Errorf("after exp+leeway+1s: reason %q, want %q", got, authz.ReasonExpired)
				}
			}
		})
	}
}

// TestTokenCacheCapBoundary: a cache of n holds n verified tokens; the
// n+1st evicts the oldest, which is then verified again.
func TestTokenCacheCapBoundary(t *testing.T) {
	const size = 3
	for _, count := range []int{size - 1, size, size + 1} {
		t.Run(fmt.Sprint(count), func(t *testing.T) {
			v := newVerifier(t, hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return secret }, CacheSize: size})
			toks := make([]string, count)
			for i := range toks {
				toks[i] = hs(t, with(good(), "jti", fmt.Sprint(i)))
				if got := verify(v, toks[i]); got != "" {
					t.Fatalf("token %d: reason %q", i, got)
				}
			}
			if got, want := authz.CachedTokens(v), min(count, size); got != want {
				t.Errorf("cache of %d after %d tokens holds %d, want %d", size, count, got, want)
			}
			// Newest first, so no re-verification evicts a token still
			// to be asked about.
			n := authz.KeyLookups(v)
			for i := count - 1; i >= 0; i-- {
				verify(v, toks[i])
			}
			evicted := max(0, count-size)
			if got := authz.KeyLookups(v) - n; got != int64(evicted) {
				t.Errorf("asking again for %d tokens verified %d of them, want %d (the evicted)", count, got, evicted)
			}
		})
	}
	t.Run("default-size", func(t *testing.T) {
		v := newVerifier(t, hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return secret }})
		c := good()
		for i := range authz.DefaultTokenCacheSize + 1 {
			if got := verify(v, hs(t, with(c, "jti", fmt.Sprint(i)))); got != "" {
				t.Fatalf("token %d: reason %q", i, got)
			}
			if i == authz.DefaultTokenCacheSize-1 {
				if got := authz.CachedTokens(v); got != authz.DefaultTokenCacheSize {
					t.Fatalf("default cache after %d tokens holds %d", i+1, got)
				}
			}
		}
		if got := authz.CachedTokens(v); got != authz.DefaultTokenCacheSize {
			t.Errorf("default cache after %d tokens holds %d, want %d", authz.DefaultTokenCacheSize+1, got, authz.DefaultTokenCacheSize)
		}
	})
}
