package authz_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// clock is a test clock that moves only when told to.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Keys are generated once per test binary: RSA generation is slow.
var (
	rsaKeys sync.Map // name → *rsa.PrivateKey
	ecKeys  sync.Map
)

func rsaKey(name string) *rsa.PrivateKey {
	if k, ok := rsaKeys.Load(name); ok {
		return k.(*rsa.PrivateKey)
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	k2, _ := rsaKeys.LoadOrStore(name, k)
	return k2.(*rsa.PrivateKey)
}

func ecKey(name string, curve elliptic.Curve) *ecdsa.PrivateKey {
	id := name + curve.Params().Name
	if k, ok := ecKeys.Load(id); ok {
		return k.(*ecdsa.PrivateKey)
	}
	k, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		panic(err)
	}
	k2, _ := ecKeys.LoadOrStore(id, k)
	return k2.(*ecdsa.PrivateKey)
}

var edPub, edPriv = func() (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return pub, priv
}()

var b64 = base64.RawURLEncoding.EncodeToString

// jwkOf renders pub as a JWK; alg is omitted when empty.
func jwkOf(kid, alg string, pub crypto.PublicKey) map[string]any {
	m := map[string]any{"kid": kid}
	if alg != "" {
		m["alg"] = alg
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		m["kty"], m["n"], m["e"] = "RSA", b64(k.N.Bytes()), b64(big.NewInt(int64(k.E)).Bytes())
	case *ecdsa.PublicKey:
		pt, err := k.Bytes()
		if err != nil {
			panic(err)
		}
		size := (len(pt) - 1) / 2
		m["kty"], m["crv"], m["x"], m["y"] = "EC", k.Curve.Params().Name, b64(pt[1:1+size]), b64(pt[1+size:])
	case ed25519.PublicKey:
		m["kty"], m["crv"], m["x"] = "OKP", "Ed25519", b64(k)
	default:
		panic("unsupported key")
	}
	return m
}

// jwksServer serves a key set the test can change or break, and counts
// the requests it gets.
type jwksServer struct {
	*httptest.Server
	fetches atomic.Int64
	fetched chan struct{} // one value per request, dropped when full

	mu     sync.Mutex
	status int
	body   []byte
	slow   bool
}

func newJWKSServer(t testing.TB, keys ...map[string]any) *jwksServer {
	t.Helper()
	s := &jwksServer{fetched: make(chan struct{}, 64)}
	s.publish(keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		select {
		case s.fetched <- struct{}{}:
		default:
		}
		s.mu.Lock()
		status, body, slow := s.status, s.body, s.slow
		s.mu.Unlock()
		if slow {
			<-r.Context().Done() // never answers; the client must give up
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// publish replaces the key set.
func (s *jwksServer) publish(keys ...map[string]any) {
	if keys == nil {
		keys = []map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		panic(err)
	}
	s.serve(http.StatusOK, string(body))
}

// serve answers every request with status and body.
func (s *jwksServer) serve(status int, body string) {
	s.mu.Lock()
	s.status, s.body, s.slow = status, []byte(body), false
	s.mu.Unlock()
}

// hang makes every request wait until the client gives up.
func (s *jwksServer) hang() {
	s.mu.Lock()
	s.slow = true
	s.mu.Unlock()
}

// jwksAuth is an auth section verifying algs against url.
func jwksAuth(url string, algs ...string) catalog.Auth {
	return catalog.Auth{
		JWT:       &catalog.JWT{JWKSURL: url, Algorithms: algs, Issuer: "https://idp/", Audience: "https://gw/mcp", Leeway: catalog.Duration(5 * time.Second)},
		Principal: catalog.Principal{Subject: "sub", Workspace: "ws", Scopes: "scope", Actor: "email"},
	}
}

// newVerifier builds a verifier and closes it when the test ends.
func newVerifier(t testing.TB, auth catalog.Auth, opts *authz.VerifierOptions) authz.ClosableVerifier {
	t.Helper()
	v, err := authz.NewVerifier(auth, opts)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	cv, ok := v.(authz.ClosableVerifier)
	if !ok {
		t.Fatalf("NewVerifier returned %T, which has no Close", v)
	}
	t.Cleanup(func() { cv.Close() })
	return cv
}

// claimsAt is a good claim set for a token issued at now.
func claimsAt(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{"iss": "https://idp/", "aud": "https://gw/mcp", "sub": "alice", "ws": "acme",
		"scope": "jobs:read", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// sign signs claims with key under method, setting kid (when not empty)
// and any extra headers.
func sign(t testing.TB, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims, headers map[string]any) string {
	t.Helper()
	tk := jwt.NewWithClaims(m, c)
	if kid != "" {
		tk.Header["kid"] = kid
	}
	for k, v := range headers {
		tk.Header[k] = v
	}
	s, err := tk.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// verify runs v.Verify and returns its error's reason ("" on success).
func verify(v authz.Verifier, token string) string {
	_, err := v.Verify(context.Background(), token)
	return authz.Reason(err)
}

// attackerCert is a self-signed certificate for key, base64 DER as the
// x5c header carries it.
func attackerCert(t testing.TB, key *rsa.PrivateKey) string {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(der)
}
