package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	gateway "github.com/mcpgw/gateway"
	"github.com/mcpgw/gateway/demo"
)

// idp is an identity provider's JWKS endpoint the test can break: it
// answers 503 or hangs until told to serve its key set.
type idp struct {
	*httptest.Server
	key      *ecdsa.PrivateKey
	requests atomic.Int64

	mu   sync.Mutex
	mode string // "fail", "hang" or "serve"
}

func newIDP(t *testing.T, mode string) *idp {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{key: key, mode: mode}
	pt, _ := key.PublicKey.Bytes()
	b64 := base64.RawURLEncoding.EncodeToString
	set, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig", "x": b64(pt[1:33]), "y": b64(pt[33:]),
	}}})
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		switch p.get() {
		case "hang":
			<-r.Context().Done() // never answers; the client must give up
		case "fail":
			http.Error(w, "identity provider starting", http.StatusServiceUnavailable)
		default:
			w.Header().Set("Content-Type", "application/jwk-set+json")
			w.Write(set)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *idp) get() string     { p.mu.Lock(); defer p.mu.Unlock(); return p.mode }
func (p *idp) set(mode string) { p.mu.Lock(); p.mode = mode; p.mu.Unlock() }

// token signs a token the default catalog's auth section accepts.
func (p *idp) token(t *testing.T) string {
	t.Helper()
	tk := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": "u", "ws": "acme", "scope": "jobs:read",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	})
	tk.Header["kid"] = "k1"
	s, err := tk.SignedString(p.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jwksCatalog writes the default catalog verifying with p's key set.
func jwksCatalog(t *testing.T, p *idp, startDeadline string) (string, lookupEnv) {
	t.Helper()
	up := httptest.NewServer(demo.New(demo.Options{ServiceToken: "svc"}))
	t.Cleanup(up.Close)
	env := testEnv(map[string]string{"MONITOR_URL": up.URL, "OPERATOR_URL": up.URL, "KB_URL": up.URL, "GATEWAY_AUDIENCE": "aud", "GATEWAY_ISSUER": "iss"})
	old := "    hmac_secret_env: GATEWAY_JWT_SECRET\n    algorithms: [HS256]\n"
	src := strings.Replace(string(gateway.DefaultCatalog), old,
		"    jwks_url: "+p.URL+"/jwks\n    algorithms: [ES256]\n    start_deadline: "+startDeadline+"\n", 1)
	if src == string(gateway.DefaultCatalog) {
		t.Fatal("could not point the default catalog at a JWKS")
	}
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	os.WriteFile(path, []byte(src), 0o600)
	return path, env
}

// post sends a JSON-RPC request to /mcp and returns status and body.
func post(t *testing.T, base, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /mcp: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const listQueues = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_queues","arguments":{}}}`

// TestStartWaitsForTheIdentityProvider: an identity provider that is
// down when the gateway starts does not stop it. The gateway
// listens, answers 503 "not initialised" while it retries the key set,
// and serves as soon as a fetch succeeds.
func TestStartWaitsForTheIdentityProvider(t *testing.T) {
	p := newIDP(t, "fail")
	path, env := jwksCatalog(t, p, "60s")
	rt, cat, err := loadRuntime(path, env, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, ln, rt, cat, serveOptions{ready: func() { close(ready) }}) }()

	// Wait for a retry: the first fetch failed and the gateway is still up.
	deadline := time.After(20 * time.Second)
	for p.requests.Load() < 2 {
		select {
		case err := <-errc:
			t.Fatalf("serve returned %v while the identity provider was down, want it to keep retrying", err)
		case <-deadline:
			t.Fatalf("no retry of the JWKS fetch within 20s (%d requests)", p.requests.Load())
		case <-time.After(20 * time.Millisecond):
		}
	}
	tok := p.token(t)
	if code, body := post(t, base, tok, listQueues); code != http.StatusServiceUnavailable || !strings.Contains(body, "not initialised") {
		t.Errorf("a call while the identity provider is down = %d %s, want 503 not initialised", code, body)
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz while the identity provider is down = %d, want 503", resp.StatusCode)
	}

	p.set("serve")
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("serve returned %v", err)
	case <-time.After(20 * time.Second):
		t.Fatalf("not ready 20s after the identity provider came back (%d requests)", p.requests.Load())
	}
	if code, body := post(t, base, tok, listQueues); code != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Errorf("a call once ready = %d %.300s", code, body)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("serve after cancel = %v, want nil", err)
	}
}

// TestStartGivesUpAtTheDeadline: an identity provider that never answers
// makes the gateway exit once auth.jwt.start_deadline has passed, with an
// error naming the deadline, the host and the last failure.
func TestStartGivesUpAtTheDeadline(t *testing.T) {
	p := newIDP(t, "hang")
	path, env := jwksCatalog(t, p, "1s")
	var out, errb bytes.Buffer
	errc := make(chan error, 1)
	start := time.Now()
	go func() {
		errc <- run(context.Background(), []string{"serve", "--catalog", path, "--listen", "127.0.0.1:0", "--watch=false"}, nil, &out, &errb, env)
	}()
	var err error
	select {
	case err = <-errc:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve still running 30s after a 1s start deadline")
	}
	if err == nil {
		t.Fatalf("serve returned nil with an identity provider that never answers")
	}
	host := strings.TrimPrefix(p.URL, "http://")
	for _, want := range []string{"start_deadline", "1s", host, "no answer within 3s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("serve error %q does not mention %q", err, want)
		}
	}
	t.Logf("gave up after %s: %v", time.Since(start).Round(time.Millisecond), err)
}

// TestReloadKeepsTheVerifierWhenTheIdentityProviderIsDown: a reload
// (SIGHUP) while the key set cannot be fetched keeps the gateway serving
// on the verifier it has; it does not go back to "not initialised".
func TestReloadKeepsTheVerifierWhenTheIdentityProviderIsDown(t *testing.T) {
	p := newIDP(t, "serve")
	path, env := jwksCatalog(t, p, "60s")
	rt, cat, err := loadRuntime(path, env, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.install(cat); err != nil {
		t.Fatal(err)
	}
	defer func() { closeVerifier(rt.cur.Load().verifier) }()
	srv := httptest.NewServer(rt.routes())
	defer srv.Close()
	tok := p.token(t)
	p.set("fail")
	if err := rt.reload("SIGHUP", true); err == nil {
		t.Errorf("reload with the identity provider down = nil, want the failure reported")
	}
	if code, body := post(t, srv.URL, tok, listQueues); code != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Errorf("a call after a failed reload = %d %.300s, want the old verifier serving", code, body)
	}
}
