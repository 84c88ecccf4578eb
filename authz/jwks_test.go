package authz_test

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
)

func TestJWKSVerifiesEachKeyType(t *testing.T) {
	rk, ek, ek384 := rsaKey("a"), ecKey("a", elliptic.P256()), ecKey("a", elliptic.P384())
	srv := newJWKSServer(t,
		jwkOf("rsa", "", &rk.PublicKey),
		jwkOf("ec256", "ES256", &ek.PublicKey),
		jwkOf("ec384", "", &ek384.PublicKey),
		jwkOf("ed", "EdDSA", edPub),
	)
	v := newVerifier(t, jwksAuth(srv.URL, "RS256", "RS512", "PS256", "ES256", "ES384", "EdDSA"), nil)
	now := time.Now()
	cases := []struct {
		name string
		m    jwt.SigningMethod
		key  any
		kid  string
	}{
		{"rs256", jwt.SigningMethodRS256, rk, "rsa"},
		{"rs512", jwt.SigningMethodRS512, rk, "rsa"},
		{"ps256", jwt.SigningMethodPS256, rk, "rsa"},
		{"es256", jwt.SigningMethodES256, ek, "ec256"},
		{"es384", jwt.SigningMethodES384, ek384, "ec384"},
		{"eddsa", jwt.SigningMethodEdDSA, edPriv, "ed"},
		{"no-kid-with-one-fitting-key", jwt.SigningMethodES256, ek, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), sign(t, tc.m, tc.key, tc.kid, claimsAt(now), nil))
			if err != nil {
				t.Fatalf("Verify = %v, want a principal", err)
			}
			if p.Subject != "alice" || p.Workspace != "acme" || !p.HasScope("jobs:read") {
				t.Errorf("principal = %+v", p)
			}
		})
	}
}

func TestJWKSRejectedTokens(t *testing.T) {
	rk, other := rsaKey("a"), rsaKey("b")
	srv := newJWKSServer(t, jwkOf("k1", "RS256", &rk.PublicKey), jwkOf("k2", "", &other.PublicKey))
	v := newVerifier(t, jwksAuth(srv.URL, "RS256"), nil)
	now := time.Now()
	good := claimsAt(now)
	rs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodRS256, rk, "k1", c, nil) }

	noneTok := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "k1", good, nil)
	// HS/RS confusion: an HS256 token keyed with the public key as the
	// attacker can fetch it, in each form a confused verifier might use.
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: marshalPKIX(t, &rk.PublicKey)})
	parts := strings.Split(rs(good), ".")

	cases := []struct {
		name, token, reason string
	}{
		{"empty", "", authz.ReasonMissing},
		{"alg-none", noneTok, authz.ReasonSignature},
		{"hs256-keyed-with-public-pem", sign(t, jwt.SigningMethodHS256, pemKey, "k1", good, nil), authz.ReasonSignature},
		{"hs256-keyed-with-modulus", sign(t, jwt.SigningMethodHS256, rk.N.Bytes(), "k1", good, nil), authz.ReasonSignature},
		{"wrong-key-same-kid", sign(t, jwt.SigningMethodRS256, other, "k1", good, nil), authz.ReasonSignature},
		{"unknown-kid", sign(t, jwt.SigningMethodRS256, rk, "k9", good, nil), authz.ReasonUnknownKey},
		{"no-kid-with-two-fitting-keys", sign(t, jwt.SigningMethodRS256, rk, "", good, nil), authz.ReasonUnknownKey},
		{"kid-not-a-string", sign(t, jwt.SigningMethodRS256, rk, "", good, map[string]any{"kid": 7}), authz.ReasonMalformed},
		{"expired", rs(with(good, "exp", now.Add(-time.Minute).Unix())), authz.ReasonExpired},
		{"not-yet-valid", rs(with(good, "nbf", now.Add(time.Minute).Unix())), authz.ReasonClaims},
		{"missing-exp", rs(with(good, "exp", nil)), authz.ReasonClaims},
		{"wrong-aud", rs(with(good, "aud", "https://other/mcp")), authz.ReasonClaims},
		{"aud-list-without-ours", rs(with(good, "aud", []string{"https://a/", "https://b/"})), authz.ReasonClaims},
		{"wrong-iss", rs(with(good, "iss", "https://idp")), authz.ReasonClaims},
		{"workspace-pattern", rs(with(good, "ws", "a/b")), authz.ReasonClaims},
		{"oversized", rs(with(good, "pad", strings.Repeat("p", authz.MaxTokenBytes))), authz.ReasonOversize},
		{"malformed-base64", parts[0] + "." + parts[1] + "*." + parts[2], authz.ReasonMalformed},
		{"crit-header", sign(t, jwt.SigningMethodRS256, rk, "k1", good, map[string]any{"crit": []string{"exp"}}), authz.ReasonMalformed},
		{"truncated-signature", parts[0] + "." + parts[1] + "." + parts[2][:20], authz.ReasonSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tc.token)
			if err == nil {
				t.Fatalf("Verify = %+v, want an error", p)
			}
			// Only the empty token is "no token"; every other is invalid.
			if empty := tc.token == ""; errors.Is(err, authz.ErrNoToken) != empty || errors.Is(err, authz.ErrInvalidToken) == empty {
				t.Errorf("Verify error %v: ErrNoToken %v, ErrInvalidToken %v; want ErrNoToken only for the empty token",
					err, errors.Is(err, authz.ErrNoToken), errors.Is(err, authz.ErrInvalidToken))
			}
			if got := authz.Reason(err); got != tc.reason {
				t.Errorf("Reason(%v) = %q, want %q", err, got, tc.reason)
			}
		})
	}
	if p, err := v.Verify(context.Background(), rs(with(good, "aud", []string{"https://a/", "https://gw/mcp"}))); err != nil {
		t.Errorf("aud list containing ours: Verify = %v, %v; want a principal", p, err)
	}
}

func TestJWKSKeysThatDoNotFitAreNotUsed(t *testing.T) {
	rk, ek := rsaKey("a"), ecKey("a", elliptic.P256())
	enc := jwkOf("enc", "", &rk.PublicKey)
	enc["use"] = "enc"
	wrapOnly := jwkOf("wrap", "", &rk.PublicKey)
	wrapOnly["key_ops"] = []string{"wrapKey"}
	srv := newJWKSServer(t,
		jwkOf("rs384-only", "RS384", &rk.PublicKey),
		enc,
		wrapOnly,
		jwkOf("p256", "", &ek.PublicKey),
		jwkOf("good", "RS256", &rk.PublicKey), // keeps the set usable
	)
	v := newVerifier(t, jwksAuth(srv.URL, "RS256", "RS384", "ES256", "ES384"), nil)
	now := time.Now()
	cases := []struct {
		name  string
		token string
	}{
		{"key-pinned-to-another-alg", sign(t, jwt.SigningMethodRS256, rk, "rs384-only", claimsAt(now), nil)},
		{"key-for-encryption", sign(t, jwt.SigningMethodRS256, rk, "enc", claimsAt(now), nil)},
		{"key-ops-without-verify", sign(t, jwt.SigningMethodRS256, rk, "wrap", claimsAt(now), nil)},
		{"p256-key-for-es384", sign(t, jwt.SigningMethodES384, ecKey("a", elliptic.P384()), "p256", claimsAt(now), nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := verify(v, tc.token); got != authz.ReasonUnknownKey {
				t.Errorf("Verify reason = %q, want %q", got, authz.ReasonUnknownKey)
			}
		})
	}
	if got := verify(v, sign(t, jwt.SigningMethodRS256, rk, "good", claimsAt(now), nil)); got != "" {
		t.Errorf("the fitting key: reason %q, want success", got)
	}
}

func TestJWKSUnusableSetsFailStart(t *testing.T) {
	rk := rsaKey("a")
	offCurve := jwkOf("ec", "", &ecKey("a", elliptic.P256()).PublicKey)
	offCurve["y"] = offCurve["x"] // (x, x) is on P-256 only by astronomic luck
	short := jwkOf("ec", "", &ecKey("a", elliptic.P256()).PublicKey)
	short["x"] = b64([]byte{1, 2, 3})
	weakRSA := jwkOf("rsa", "", &rk.PublicKey)
	weakRSA["n"] = b64(rk.N.Bytes()[:128]) // 1024 bits
	evenE := jwkOf("rsa", "", &rk.PublicKey)
	evenE["e"] = b64([]byte{2})
	cases := []struct {
		name, body string
		status     int
	}{
		{"point-off-the-curve", mustJSON(map[string]any{"keys": []any{offCurve}}), 200},
		{"short-coordinate", mustJSON(map[string]any{"keys": []any{short}}), 200},
		{"rsa-under-2048-bits", mustJSON(map[string]any{"keys": []any{weakRSA}}), 200},
		{"rsa-even-exponent", mustJSON(map[string]any{"keys": []any{evenE}}), 200},
		{"symmetric-key", `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`, 200},
		{"empty-set", `{"keys":[]}`, 200},
		{"not-json", `<html>`, 200},
		{"status-500", `{"keys":[]}`, 500},
		{"over-1MiB", `{"keys":[],"pad":"` + strings.Repeat("p", authz.MaxJWKSBytes) + `"}`, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newJWKSServer(t)
			srv.serve(tc.status, tc.body)
			v, err := authz.NewVerifier(jwksAuth(srv.URL, "RS256", "ES256"), nil)
			if err == nil {
				v.(authz.ClosableVerifier).Close()
				t.Fatalf("NewVerifier succeeded, want an error for an unusable key set")
			}
			if !strings.Contains(err.Error(), "jwks_url") {
				t.Errorf("NewVerifier error %q does not name jwks_url", err)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestJWKSStartWithoutKeysRetries(t *testing.T) {
	rk := rsaKey("a")
	srv := newJWKSServer(t)
	srv.serve(http.StatusServiceUnavailable, "down")
	if _, err := authz.NewVerifier(jwksAuth(srv.URL, "RS256"), nil); err == nil {
		t.Fatal("NewVerifier with the JWKS down succeeded; want an error by default")
	}

	clk := newClock()
	v := newVerifier(t, jwksAuth(srv.URL, "RS256"), &authz.VerifierOptions{Now: clk.Now, StartWithoutJWKS: true, RefreshInterval: time.Hour, MinRefreshInterval: time.Hour})
	tok := sign(t, jwt.SigningMethodRS256, rk, "k1", claimsAt(clk.Now()), nil)
	if got := verify(v, tok); got != authz.ReasonUnknownKey {
		t.Errorf("with no keys: reason %q, want %q", got, authz.ReasonUnknownKey)
	}
	srv.publish(jwkOf("k1", "RS256", &rk.PublicKey))
	clk.Advance(time.Hour)
	if got := verify(v, tok); got != "" {
		t.Errorf("after the JWKS recovered: reason %q, want success", got)
	}
}

// TestJWKSRotation publishes a new key and removes the old one; the new
// kid verifies as soon as the rate limit allows a refresh, and the old
// kid stops verifying, with no restart.
func TestJWKSRotation(t *testing.T) {
	oldK, newK := rsaKey("old"), rsaKey("new")
	clk := newClock()
	srv := newJWKSServer(t, jwkOf("old", "RS256", &oldK.PublicKey))
	v := newVerifier(t, jwksAuth(srv.URL, "RS256"), &authz.VerifierOptions{Now: clk.Now, RefreshInterval: time.Hour, MinRefreshInterval: 10 * time.Second})
	oldTok := func() string { return sign(t, jwt.SigningMethodRS256, oldK, "old", claimsAt(clk.Now()), nil) }
	newTok := func() string { return sign(t, jwt.SigningMethodRS256, newK, "new", claimsAt(clk.Now()), nil) }
	cachedOld := oldTok()
	if got := verify(v, cachedOld); got != "" {
		t.Fatalf("old key before rotation: reason %q", got)
	}

	srv.publish(jwkOf("new", "RS256", &newK.PublicKey))
	clk.Advance(2 * time.Second)
	if got := verify(v, newTok()); got != authz.ReasonUnknownKey {
		t.Errorf("new kid within the rate limit of the start fetch: reason %q, want %q", got, authz.ReasonUnknownKey)
	}
	clk.Advance(10 * time.Second)
	if got := verify(v, newTok()); got != "" {
		t.Errorf("new kid after the rate limit: reason %q, want success", got)
	}
	if got := verify(v, oldTok()); got != authz.ReasonUnknownKey {
		t.Errorf("old kid after rotation: reason %q, want %q", got, authz.ReasonUnknownKey)
	}
	if got := verify(v, cachedOld); got != authz.ReasonUnknownKey {
		t.Errorf("old kid's cached token after rotation: reason %q, want %q", got, authz.ReasonUnknownKey)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times, want 2 (start, one refresh)", n)
	}
}

// TestJWKSPeriodicRefreshRemovesKeys checks that a removed key stops
// verifying with no unknown kid to prompt a refresh.
func TestJWKSPeriodicRefreshRemovesKeys(t *testing.T) {
	k1, k2 := rsaKey("old"), rsaKey("new")
	srv := newJWKSServer(t, jwkOf("k1", "RS256", &k1.PublicKey), jwkOf("k2", "RS256", &k2.PublicKey))
	v := newVerifier(t, jwksAuth(srv.URL, "RS256"), &authz.VerifierOptions{RefreshInterval: 10 * time.Millisecond, CacheSize: -1})
	tok := sign(t, jwt.SigningMethodRS256, k1, "k1", claimsAt(time.Now()), nil)
	if got := verify(v, tok); got != "" {
		t.Fatalf("before removal: reason %q", got)
	}
	srv.publish(jwkOf("k2", "RS256", &k2.PublicKey))
	// A fetch starts only after the previous one is installed, so once two
	// more requests arrived the set without k1 is in use.
	drain(srv.fetched)
	waitFetches(t, srv, 2)
	if got := verify(v, tok); got != authz.ReasonUnknownKey {
		t.Errorf("after k1 was removed: reason %q, want %q", got, authz.ReasonUnknownKey)
	}
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

func waitFetches(t *testing.T, srv *jwksServer, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case <-srv.fetched:
		case <-timeout:
			t.Fatalf("the JWKS was not fetched %d times", n)
		}
	}
}

// TestJWKSFailuresKeepLastGoodSet breaks the JWKS in each way and checks
// that a refresh attempt happened and the last good key still verifies.
func TestJWKSFailuresKeepLastGoodSet(t *testing.T) {
	rk := rsaKey("a")
	cases := []struct {
		name   string
		outage func(*jwksServer)
		log    string // the logged refresh error holds this
	}{
		{"status-500", func(s *jwksServer) { s.serve(500, `{"keys":[]}`) }, "status 500"},
		{"malformed", func(s *jwksServer) { s.serve(200, `{"keys":[`) }, "malformed key set"},
		{"not-a-key-set", func(s *jwksServer) { s.serve(200, `[1,2,3]`) }, "malformed key set"},
		{"empty", func(s *jwksServer) { s.publish() }, "no usable key among 0"},
		{"keyless", func(s *jwksServer) { s.serve(200, `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`) }, "no usable key among 1"},
		{"oversize", func(s *jwksServer) { s.serve(200, strings.Repeat(" ", authz.MaxJWKSBytes+1)) }, fmt.Sprintf("key set over %d bytes", authz.MaxJWKSBytes)},
		{"slow", func(s *jwksServer) { s.hang() }, fmt.Sprintf("no answer within %s", authz.JWKSFetchTimeout)},
		{"unreachable", func(s *jwksServer) { s.CloseClientConnections(); s.Listener.Close() }, "refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			srv := newJWKSServer(t, jwkOf("k1", "RS256", &rk.PublicKey))
			logs := &syncBuffer{}
			var mu sync.Mutex
			var fetched []bool
			v := newVerifier(t, jwksAuth(srv.URL, "RS256"), &authz.VerifierOptions{Now: clk.Now, RefreshInterval: time.Hour, CacheSize: -1,
				Logger: slog.New(slog.NewTextHandler(logs, nil)),
				OnJWKSFetch: func(ok bool) {
					mu.Lock()
					fetched = append(fetched, ok)
					mu.Unlock()
				}})
			tc.outage(srv)
			clk.Advance(time.Minute)
			before := srv.fetches.Load()
			start := time.Now()
			if got := verify(v, sign(t, jwt.SigningMethodRS256, rk, "k2", claimsAt(clk.Now()), nil)); got != authz.ReasonUnknownKey {
				t.Errorf("unknown kid during the outage: reason %q, want %q", got, authz.ReasonUnknownKey)
			}
			if d := time.Since(start); d > authz.JWKSFetchTimeout+time.Second {
				t.Errorf("the refresh took %s, over the %s fetch timeout", d, authz.JWKSFetchTimeout)
			}
			if tc.name != "unreachable" && srv.fetches.Load() == before {
				t.Errorf("no refresh was attempted")
			}
			if got := verify(v, sign(t, jwt.SigningMethodRS256, rk, "k1", claimsAt(clk.Now()), nil)); got != "" {
				t.Errorf("last good key after a failed refresh: reason %q, want success", got)
			}
			if l := logs.String(); !strings.Contains(l, "jwks refresh failed; keeping the last good key set") || !strings.Contains(l, tc.log) {
				t.Errorf("log = %q, want the failed refresh logged with %q", l, tc.log)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(fetched) != 2 || !fetched[0] || fetched[1] {
				t.Errorf("OnJWKSFetch was told %v, want [true false] (the start fetch, the failed refresh)", fetched)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestJWKSRandomKidFlood sends 1000 tokens with random kids, concurrently
// and then one by one; the identity provider sees a handful of requests.
func TestJWKSRandomKidFlood(t *testing.T) {
	ek, attacker := ecKey("a", elliptic.P256()), ecKey("attacker", elliptic.P256())
	srv := newJWKSServer(t, jwkOf("k1", "ES256", &ek.PublicKey))
	clk := newClock()
	v := newVerifier(t, jwksAuth(srv.URL, "ES256"), &authz.VerifierOptions{Now: clk.Now})
	clk.Advance(authz.DefaultJWKSMinRefreshInterval) // past the start fetch's rate limit
	now := clk.Now()
	tokens := make([]string, 1000)
	for i := range tokens {
		tokens[i] = sign(t, jwt.SigningMethodES256, attacker, fmt.Sprintf("kid-%d-%d", i, now.UnixNano()), claimsAt(now), nil)
	}
	var wg sync.WaitGroup
	var accepted atomic.Int64
	for i := range 500 {
		wg.Go(func() {
			if verify(v, tokens[i]) == "" {
				accepted.Add(1)
			}
		})
	}
	wg.Wait()
	for _, tok := range tokens[500:] {
		if verify(v, tok) == "" {
			accepted.Add(1)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d attacker tokens verified", n)
	}
	if n := srv.fetches.Load(); n > 3 {
		t.Errorf("1000 random kids caused %d JWKS fetches, want at most 3", n)
	}
	if got := verify(v, sign(t, jwt.SigningMethodES256, ek, "k1", claimsAt(now), nil)); got != "" {
		t.Errorf("a good token after the flood: reason %q", got)
	}
}

// TestJWKSIgnoresKeyHeaders: a token that names its own key, by URL or
// inline, is verified against the configured set only.
func TestJWKSIgnoresKeyHeaders(t *testing.T) {
	rk, attacker := rsaKey("a"), rsaKey("attacker")
	srv := newJWKSServer(t, jwkOf("k1", "RS256", &rk.PublicKey))
	var attackerHits atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attackerHits.Add(1)
		fmt.Fprint(w, mustJSON(map[string]any{"keys": []any{jwkOf("k1", "RS256", &attacker.PublicKey)}}))
	}))
	defer evil.Close()
	cert := attackerCert(t, attacker)
	v := newVerifier(t, jwksAuth(srv.URL, "RS256"), nil)
	now := time.Now()
	cases := map[string]map[string]any{
		"jku": {"jku": evil.URL},
		"x5u": {"x5u": evil.URL},
		"jwk": {"jwk": jwkOf("k1", "RS256", &attacker.PublicKey)},
		"x5c": {"x5c": []string{cert}},
	}
	for name, hdr := range cases {
		for _, kid := range []string{"k1", "attacker"} {
			t.Run(name+"/kid-"+kid, func(t *testing.T) {
				tok := sign(t, jwt.SigningMethodRS256, attacker, kid, claimsAt(now), hdr)
				// k1 is known, so the attacker's signature fails against
				// the configured key; "attacker" is no kid of the set.
				want := map[string]string{"k1": authz.ReasonSignature, "attacker": authz.ReasonUnknownKey}[kid]
				if got := verify(v, tok); got != want {
					t.Errorf("a token signed by the key its %s header names: reason %q, want %q", name, got, want)
				}
			})
		}
	}
	if n := attackerHits.Load(); n != 0 {
		t.Errorf("the attacker's server was fetched %d times", n)
	}
}

func TestJWKSClose(t *testing.T) {
	rk := rsaKey("a")
	srv := newJWKSServer(t, jwkOf("k1", "RS256", &rk.PublicKey))
	v := newVerifier(t, jwksAuth(srv.URL, "RS256"), &authz.VerifierOptions{RefreshInterval: time.Millisecond, CacheSize: -1})
	waitFetches(t, srv, 3) // start and two periodic refreshes
	if err := v.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := v.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	after := srv.fetches.Load()
	if got := verify(v, sign(t, jwt.SigningMethodRS256, rk, "k1", claimsAt(time.Now()), nil)); got != "" {
		t.Errorf("Verify after Close: reason %q, want success with the last key set", got)
	}
	if got := verify(v, sign(t, jwt.SigningMethodRS256, rk, "k2", claimsAt(time.Now()), nil)); got != authz.ReasonUnknownKey {
		t.Errorf("unknown kid after Close: reason %q, want %q", got, authz.ReasonUnknownKey)
	}
	if n := srv.fetches.Load(); n != after {
		t.Errorf("the JWKS was fetched %d more times after Close", n-after)
	}
}
