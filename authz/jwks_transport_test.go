package authz_test

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
)

// Environment variables the proxy test hands its child process.
const (
	proxyChildEnv    = "AUTHZ_TEST_PROXY_CHILD"
	proxyJWKSURLEnv  = "AUTHZ_TEST_PROXY_JWKS_URL"
	proxyRealTokEnv  = "AUTHZ_TEST_PROXY_REAL_TOKEN"
	proxyAttackTokEn = "AUTHZ_TEST_PROXY_ATTACK_TOKEN"
)

// TestJWKSClientIgnoresEnvironmentProxies is the attack: with
// HTTP_PROXY pointing at an attacker, a JWKS client that honours the
// environment fetches the attacker's keys, and the attacker's tokens
// verify. The key source is the configured URL and nothing else.
//
// net/http reads the proxy variables once per process, so the verifier
// runs in a child process that starts with them set. The real key server
// is named by 0.0.0.0, which the kernel connects locally but which the
// proxy rules do not treat as loopback (they never proxy 127.0.0.1 or
// localhost), so the attack is the one a remote jwks_url would suffer.
func TestJWKSClientIgnoresEnvironmentProxies(t *testing.T) {
	if os.Getenv(proxyChildEnv) != "" {
		proxyChild(t)
		return
	}
	realKey, attackerKey := ecKey("real", elliptic.P256()), ecKey("attacker", elliptic.P256())
	real := newJWKSServer(t, jwkOf("k1", "ES256", &realKey.PublicKey))
	attacker := newJWKSServer(t, jwkOf("k1", "ES256", &attackerKey.PublicKey))

	_, port, _ := net.SplitHostPort(real.Listener.Addr().String())
	jwksURL := "http://0.0.0.0:" + port + "/jwks"
	if c, err := net.DialTimeout("tcp", "0.0.0.0:"+port, 2*time.Second); err != nil {
		t.Skipf("this system does not connect 0.0.0.0 locally (%v); the test needs a non-loopback name for a local server", err)
	} else {
		c.Close()
	}

	now := time.Now()
	t.Setenv("HTTP_PROXY", attacker.URL)
	t.Setenv("HTTPS_PROXY", attacker.URL)
	t.Setenv("http_proxy", attacker.URL)
	t.Setenv("https_proxy", attacker.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	t.Setenv("REQUEST_METHOD", "") // CGI mode would ignore HTTP_PROXY
	t.Setenv(proxyChildEnv, "1")
	t.Setenv(proxyJWKSURLEnv, jwksURL)
	t.Setenv(proxyRealTokEnv, sign(t, jwt.SigningMethodES256, realKey, "k1", claimsAt(now), nil))
	t.Setenv(proxyAttackTokEn, sign(t, jwt.SigningMethodES256, attackerKey, "k1", claimsAt(now), nil))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestJWKSClientIgnoresEnvironmentProxies$", "-test.v", "-test.count=1")
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if n := attacker.fetches.Load(); n != 0 {
		t.Errorf("the proxy from HTTP_PROXY got %d requests, want none", n)
	}
	if real.fetches.Load() == 0 {
		t.Errorf("the configured JWKS server got no request")
	}
	if err != nil {
		t.Errorf("verifier under HTTP_PROXY: %v\n%s", err, out.String())
	}
}

// proxyChild builds a verifier in the environment the parent set up.
func proxyChild(t *testing.T) {
	auth := jwksAuth(os.Getenv(proxyJWKSURLEnv), "ES256")
	auth.JWT.AllowInsecureJWKS = true
	v := newVerifier(t, auth, &authz.VerifierOptions{StartWithoutJWKS: true, MinRefreshInterval: time.Hour, RefreshInterval: time.Hour})
	if r := verify(v, os.Getenv(proxyAttackTokEn)); r == "" {
		t.Errorf("a token signed with the proxy's key verified")
	}
	if r := verify(v, os.Getenv(proxyRealTokEnv)); r != "" {
		t.Errorf("a token signed with the configured key set was refused: %s", r)
	}
}

// TestJWKSPlainHTTPRefused checks the constructor, not only catalog
// validation, refuses a plain-http key source off loopback: a programmatic
// caller cannot skip the rule. The server poses as idp.example.com through
// a dialer that reaches it on loopback, so no name is resolved.
func TestJWKSPlainHTTPRefused(t *testing.T) {
	k := ecKey("a", elliptic.P256())
	srv := newJWKSServer(t, jwkOf("k1", "ES256", &k.PublicKey))
	var dials atomic.Int64
	client := &http.Client{Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		},
	}}
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	cases := []struct {
		name, url string
		allow     bool
		wantErr   bool
	}{
		{"http-remote-host", "http://idp.example.com/jwks", false, true},
		{"http-remote-ip", "http://192.0.2.7:8080/jwks", false, true},
		{"http-unspecified-address", "http://0.0.0.0:" + port + "/jwks", false, true},
		{"ftp-scheme", "ftp://idp.example.com/jwks", false, true},
		{"no-scheme", "idp.example.com/jwks", false, true},
		{"http-remote-host-allowed", "http://idp.example.com/jwks", true, false},
		{"http-loopback-ip", "http://127.0.0.1:" + port + "/jwks", false, false},
		{"http-localhost", "http://localhost:" + port + "/jwks", false, false},
		{"http-ipv6-loopback", "http://[::1]:" + port + "/jwks", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.fetches.Load()
			auth := jwksAuth(tc.url, "ES256")
			auth.JWT.AllowInsecureJWKS = tc.allow
			v, err := authz.NewVerifier(auth, &authz.VerifierOptions{HTTPClient: client, StartWithoutJWKS: true, MinRefreshInterval: time.Hour})
			if v != nil {
				defer v.(authz.ClosableVerifier).Close()
			}
			switch {
			case tc.wantErr && err == nil:
				t.Fatalf("NewVerifier(%q) built a verifier, want it refused", tc.url)
			case tc.wantErr && !strings.Contains(err.Error(), "auth.jwt.jwks_url"):
				t.Errorf("NewVerifier(%q) = %v, want an error naming auth.jwt.jwks_url", tc.url, err)
			case tc.wantErr && srv.fetches.Load() != before:
				t.Errorf("NewVerifier(%q) fetched the refused URL", tc.url)
			case !tc.wantErr && err != nil:
				t.Fatalf("NewVerifier(%q) = %v, want a verifier", tc.url, err)
			}
			if tc.wantErr && errors.Is(err, authz.ErrJWKSUnavailable) {
				t.Errorf("a refused URL is reported as an unavailable key set, which start-up would retry: %v", err)
			}
		})
	}
}

// TestJWKSUnavailableIsMarked: a failed first fetch is an
// [authz.ErrJWKSUnavailable] (the gateway retries it at start); a bad
// configuration is not.
func TestJWKSUnavailableIsMarked(t *testing.T) {
	srv := newJWKSServer(t)
	srv.serve(http.StatusServiceUnavailable, "starting")
	_, err := authz.NewVerifier(jwksAuth(srv.URL, "ES256"), nil)
	if !errors.Is(err, authz.ErrJWKSUnavailable) || !strings.Contains(err.Error(), "status 503") {
		t.Errorf("NewVerifier with a failing JWKS = %v, want ErrJWKSUnavailable naming the status", err)
	}
	_, err = authz.NewVerifier(jwksAuth(srv.URL, "HS256"), nil)
	if err == nil || errors.Is(err, authz.ErrJWKSUnavailable) {
		t.Errorf("NewVerifier with HS256 over a JWKS = %v, want a configuration error", err)
	}
}
