package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	gateway "github.com/mcpgw/gateway"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// TestTokenRefusesWeakSecrets: `gateway token` never signs with a secret
// `serve` would refuse, so a developer cannot mint tokens the gateway
// then rejects, nor get used to a guessable secret.
func TestTokenRefusesWeakSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	os.WriteFile(path, gateway.DefaultCatalog, 0o600)
	for name, s := range map[string]string{
		"32-times-a": strings.Repeat("a", 32),
		"digit-run":  strings.Repeat("0123456789", 4),
		"short":      "too-short",
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"token", "--catalog", path, "--sub", "dev", "--workspace", "acme", "--secret-env", "WEAK"},
				nil, &out, &errb, testEnv(map[string]string{"WEAK": s}))
			if err == nil {
				t.Fatalf("token signed with the secret %q: %s", s, out.String())
			}
			if out.Len() != 0 {
				t.Errorf("token printed %q despite the error", out.String())
			}
			if msg := err.Error() + errb.String(); !strings.Contains(msg, "WEAK") || strings.Contains(msg, s) {
				t.Errorf("token error %q: want it to name WEAK and not quote the secret", msg)
			}
		})
	}
}

// TestTokenTTLIsBounded: a development token lives at most a day, and
// never longer than the catalog's auth.max_token_lifetime (the gateway
// would refuse it).
func TestTokenTTLIsBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.yaml")
	os.WriteFile(path, gateway.DefaultCatalog, 0o600)
	capped := filepath.Join(dir, "capped.yaml")
	src := strings.Replace(string(gateway.DefaultCatalog), "  jwt:\n", "  max_token_lifetime: 2h\n  jwt:\n", 1)
	if src == string(gateway.DefaultCatalog) {
		t.Fatal("could not add max_token_lifetime to the default catalog")
	}
	os.WriteFile(capped, []byte(src), 0o600)
	for _, tc := range []struct {
		catalog, ttl string
		err          string // substring of the error; "" for a token
	}{
		{path, "24h", ""},
		{path, "24h0m1s", "--ttl 24h0m1s is over the 24h0m0s"},
		{path, "8760h", "--ttl 8760h0m0s is over the 24h0m0s"},
		{path, "0s", "--ttl must be positive"},
		{path, "-1h", "--ttl must be positive"},
		{capped, "2h", ""},
		{capped, "2h0m1s", "auth.max_token_lifetime 2h"},
	} {
		t.Run(filepath.Base(tc.catalog)+"-"+tc.ttl, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"token", "--catalog", tc.catalog, "--sub", "dev", "--workspace", "acme", "--ttl", tc.ttl, "--secret-env", "GATEWAY_JWT_SECRET"},
				nil, &out, &errb, testEnv(nil))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("token --ttl %s = %v\n%s", tc.ttl, err, errb.String())
			case tc.err == "" && out.Len() == 0:
				t.Fatalf("token --ttl %s printed no token", tc.ttl)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("token --ttl %s = %v, want an error containing %q (printed %q)", tc.ttl, err, tc.err, out.String())
			case tc.err != "" && out.Len() != 0:
				t.Errorf("token --ttl %s printed %q despite the error", tc.ttl, out.String())
			}
		})
	}
}

// TestOverLongTokenGetsTheUsual401: a token over auth.max_token_lifetime
// is answered as a token with a bad signature (status, error code,
// message), except for the error_description naming the reason class,
// which never states the configured ceiling.
func TestOverLongTokenGetsTheUsual401(t *testing.T) {
	env := testEnv(nil)
	src := strings.Replace(string(gateway.DefaultCatalog), "  jwt:\n", "  max_token_lifetime: 1h\n  jwt:\n", 1)
	cat, err := catalog.Parse("catalog.yaml", []byte(src), &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(env, slog.New(slog.DiscardHandler), newMetrics())
	if err := rt.install(cat); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rt.routes())
	defer srv.Close()
	now := time.Now()
	mint := func(life time.Duration, key string) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"iss": cat.Auth.JWT.Issuer, "aud": cat.Auth.JWT.Audience, "sub": "u", "ws": "acme", "scope": "jobs:read",
			"iat": now.Unix(), "exp": now.Add(life).Unix(),
		}).SignedString([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	call := func(tok string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
	}
	secret := env.get("GATEWAY_JWT_SECRET")
	if code, _, body := call(mint(time.Hour, secret)); code != 200 {
		t.Fatalf("a token of exactly max_token_lifetime: %d %s", code, body)
	}
	longCode, longAuth, longBody := call(mint(time.Hour+time.Second, secret))
	badCode, badAuth, badBody := call(mint(time.Hour, "bTzelvbcDLReRnFetnAOn5DOgYWnpeGzVeEnyoRNYlY="))
	const longDesc, badDesc = "the token lives longer than auth.max_token_lifetime allows", "the token's signature does not verify, or its algorithm is not accepted"
	if !strings.Contains(longAuth, longDesc) || !strings.Contains(longBody, longDesc) || strings.Contains(longAuth+longBody, "1h") {
		t.Errorf("over-long token: %q %s, want the description %q and not the ceiling", longAuth, longBody, longDesc)
	}
	same := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, longDesc, "D"), badDesc, "D") }
	if longCode != 401 || longCode != badCode || same(longAuth) != same(badAuth) || same(longBody) != same(badBody) {
		t.Errorf("over-long token: %d %q %s\nbad signature:   %d %q %s", longCode, longAuth, longBody, badCode, badAuth, badBody)
	}
}

// TestTokenAppliesServesChecks: `gateway token` refuses what serve would
// refuse, and a missing or conflicting flag is named: a
// newcomer should never hold a token the gateway then answers with 401.
func TestTokenAppliesServesChecks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.yaml")
	os.WriteFile(path, gateway.DefaultCatalog, 0o600)
	strict := filepath.Join(dir, "strict.yaml")
	src := strings.Replace(string(gateway.DefaultCatalog), "  principal:\n", "  principal:\n    workspace_pattern: '^team-[a-z]+$'\n", 1)
	if src == string(gateway.DefaultCatalog) {
		t.Fatal("could not add workspace_pattern to the default catalog")
	}
	os.WriteFile(strict, []byte(src), 0o600)
	key := filepath.Join(dir, "key.pem")
	os.WriteFile(key, []byte("not a key"), 0o600)
	cases := []struct {
		name string
		args []string
		want string // in the error or stderr
	}{
		{"no-sub", []string{"--catalog", path, "--workspace", "acme", "--secret-env", "GATEWAY_JWT_SECRET"}, "--sub is required"},
		{"empty-sub", []string{"--catalog", path, "--sub", "", "--workspace", "acme", "--secret-env", "GATEWAY_JWT_SECRET"}, "--sub is required"},
		{"no-workspace", []string{"--catalog", path, "--sub", "dev", "--secret-env", "GATEWAY_JWT_SECRET"}, "--workspace is required"},
		{"no-key-source", []string{"--catalog", path, "--sub", "dev", "--workspace", "acme"}, "one of --secret-env or --key is required"},
		{"two-key-sources", []string{"--catalog", path, "--sub", "dev", "--workspace", "acme", "--secret-env", "GATEWAY_JWT_SECRET", "--key", key}, "--secret-env and --key cannot both be given"},
		{"unset-secret", []string{"--catalog", path, "--sub", "dev", "--workspace", "acme", "--secret-env", "NOPE"}, "NOPE is not set"},
		{"workspace-refused-by-default-pattern", []string{"--catalog", path, "--sub", "dev", "--workspace", "a/b", "--secret-env", "GATEWAY_JWT_SECRET"}, `--workspace "a/b" does not match the catalog's auth.principal.workspace_pattern`},
		{"workspace-refused-by-catalog-pattern", []string{"--catalog", strict, "--sub", "dev", "--workspace", "acme", "--secret-env", "GATEWAY_JWT_SECRET"}, `--workspace "acme" does not match the catalog's auth.principal.workspace_pattern ^team-[a-z]+$`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), append([]string{"token"}, tc.args...), nil, &out, &errb, testEnv(nil))
			if err == nil {
				t.Fatalf("token %v printed %q, want an error", tc.args, out.String())
			}
			if out.Len() != 0 {
				t.Errorf("token printed %q despite the error", out.String())
			}
			msg := err.Error() + "\n" + errb.String()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("token %v = %v\nstderr: %s\nwant %q", tc.args, err, errb.String(), tc.want)
			}
			if strings.Contains(msg, "exit status") && !strings.Contains(errb.String(), tc.want) {
				t.Errorf("the message must reach stderr before the exit status: %q", errb.String())
			}
		})
	}
	// A workspace the catalog's pattern accepts signs.
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"token", "--catalog", strict, "--sub", "dev", "--workspace", "team-a", "--secret-env", "GATEWAY_JWT_SECRET"}, nil, &out, &errb, testEnv(nil)); err != nil || out.Len() == 0 {
		t.Errorf("token for team-a = %v %s", err, errb.String())
	}
}

// A tenantless catalog (every upstream workspace: none) needs no
// --workspace, and the token gateway token mints is one serve accepts.
func TestTokenForATenantlessCatalog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	os.WriteFile(path, []byte(`version: 1
server: { name: mon }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  prom: { base_url: "http://127.0.0.1:1", workspace: none }
tools:
  - name: up
    description: Up.
    request: { upstream: prom, path: /api/v1/query }
`), 0o600)
	env := testEnv(nil)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"token", "--catalog", path, "--sub", "dev", "--scopes", "x", "--secret-env", "GATEWAY_JWT_SECRET"}, nil, &out, &errb, env); err != nil {
		t.Fatalf("token without --workspace for a tenantless catalog: %v\n%s", err, errb.String())
	}
	tok := strings.TrimSpace(out.String())
	tok = tok[strings.LastIndex(tok, "\n")+1:]
	cat, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	v, err := authz.NewVerifier(cat.Auth, &authz.VerifierOptions{Getenv: env.get})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), tok)
	if err != nil || p.Subject != "dev" || p.Workspace != "" {
		t.Fatalf("Verify = %+v, %v; want subject dev and no workspace", p, err)
	}
}

// TestTokenNeedsOnlyAuthVariables: `gateway token --catalog` reads the
// catalog's auth section and the upstreams' workspace bindings, so the
// variables the upstreams need (credentials, base URLs) need not be set
// where tokens are minted; a variable auth itself needs still is.
func TestTokenNeedsOnlyAuthVariables(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "frag"), 0o755)
	os.WriteFile(filepath.Join(dir, "frag", "pets.yaml"), []byte(`upstreams:
  pets:
    base_url: ${PETS_URL}
    headers: { X-Api-Key: "${PETS_API_KEY}" }
    workspace: none
tools:
  - { name: list_pets, description: "${NOT_EXPANDED_ANYWAY}", request: { upstream: pets, path: /pets } }
`), 0o600)
	path := filepath.Join(dir, "catalog.yaml")
	os.WriteFile(path, []byte(`version: 1
server: { name: pets, listen: "${LISTEN}" }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: "${ISSUER}", audience: aud }
  principal: { workspace: tenant.id }
include: [frag/*.yaml]
upstreams:
  pets: { headers: { Authorization: "Bearer ${PETS_TOKEN}" }, timeout: "${PETS_TIMEOUT}" }
audit: { path: "${AUDIT_PATH}" }
`), 0o600)
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"token", "--catalog", path, "--sub", "dev", "--secret-env", "GATEWAY_JWT_SECRET"},
		nil, &out, &errb, testEnv(map[string]string{"ISSUER": "https://idp.example.com/"}))
	if err != nil {
		t.Fatalf("token = %v\n%s", err, errb.String())
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(strings.TrimSpace(out.String()), claims); err != nil {
		t.Fatal(err)
	}
	if claims["iss"] != "https://idp.example.com/" || claims["aud"] != "aud" || claims["sub"] != "dev" {
		t.Errorf("claims = %v, want the catalog's issuer and audience", claims)
	}
	if _, has := claims["tenant"]; has {
		t.Errorf("claims = %v: a tenantless catalog (workspace: none in the fragment) needs no workspace", claims)
	}

	out.Reset()
	errb.Reset()
	err = run(context.Background(), []string{"token", "--catalog", path, "--sub", "dev", "--secret-env", "GATEWAY_JWT_SECRET"}, nil, &out, &errb, testEnv(nil))
	if err == nil || !strings.Contains(errb.String(), "environment variable ISSUER is not set") || strings.Contains(errb.String(), "PETS_") {
		t.Errorf("token without ISSUER = %v\n%s; want the missing auth variable named, and no upstream one", err, errb.String())
	}
}
