package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gateway "github.com/mcpgw/gateway"
	"github.com/mcpgw/gateway/catalog"
)

func testEnv(extra map[string]string) lookupEnv {
	vars := map[string]string{
		"GATEWAY_JWT_SECRET": "388f7468567e91661e4bf959993bbcb3c5c260217e9965a18abd9fd5a29e0f1c", // openssl rand -hex 32
		"DEMO_SERVICE_TOKEN": "svc",
		"MONITOR_URL":        "http://127.0.0.1:1",
	}
	for k, v := range extra {
		vars[k] = v
	}
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestNotReadyUntilTheCatalogIsInstalled(t *testing.T) {
	rt := newRuntime(testEnv(nil), slog.New(slog.DiscardHandler), newMetrics())
	srv := httptest.NewServer(rt.routes())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if path == "/readyz" || path == "/healthz" {
			resp, err = http.Get(srv.URL + path)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz = %d before ready, want 200 (alive)", code)
	}
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("/readyz = %d before ready, want 503", code)
	}
	if code, body := get("/mcp"); code != 503 || !strings.Contains(body, "mcp server not initialised") {
		t.Errorf("/mcp before ready = %d %s", code, body)
	}
	cat, err := catalog.Parse("catalog.yaml", gateway.DefaultCatalog, &catalog.LoadOptions{Getenv: testEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.install(cat); err != nil {
		t.Fatal(err)
	}
	if code, body := get("/readyz"); code != 200 || body != `{"status":"ready"}` {
		t.Errorf("/readyz after install = %d %s", code, body)
	}
	if code, _ := get("/mcp"); code != 401 {
		t.Errorf("/mcp without a token after install = %d, want 401", code)
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, gateway.DefaultCatalog, 0o600)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nserver: { name: x, mcp_path: / }\nauth: { jwt: { hmac_secret_env: S, algorithms: [none], issuer: i, audience: a } }\nupstreams: {}\ntools: []\n"), 0o600)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"validate", "--catalog", good}, nil, &out, &errb, testEnv(nil)); err != nil {
		t.Fatalf("validate good: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "ok: 24 tools (17 reads, 7 writes), 3 upstreams, 8 gates") { // the approve gate is the eighth
		t.Errorf("validate summary = %q", out.String())
	}
	out.Reset()
	errb.Reset()
	err := run(context.Background(), []string{"validate", "--catalog", bad}, nil, &out, &errb, testEnv(nil))
	if code, ok := err.(exitError); !ok || code != 1 {
		t.Fatalf("validate bad = %v, want exit 1", err)
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("validate bad listed %d problems, want every one:\n%s", len(lines), errb.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, bad+":") {
			t.Errorf("problem line %q does not start with FILE:LINE:COL", l)
		}
	}
}

func TestTokenIsAcceptedByTheGateway(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.yaml")
	os.WriteFile(path, gateway.DefaultCatalog, 0o600)
	env := testEnv(nil)
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"token", "--catalog", path, "--sub", "dev", "--workspace", "acme", "--scopes", "jobs:read", "--secret-env", "GATEWAY_JWT_SECRET"}, nil, &out, &errb, env)
	if err != nil {
		t.Fatalf("token: %v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	tok := lines[len(lines)-1]
	cat, _ := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
	st := newRuntime(env, slog.New(slog.DiscardHandler), newMetrics())
	if err := st.install(cat); err != nil {
		t.Fatal(err)
	}
	_, v := st.snapshot()
	p, err := v.Verify(context.Background(), tok)
	if err != nil || p.Subject != "dev" || p.Workspace != "acme" || !p.HasScope("jobs:read") {
		t.Errorf("the gateway rejects the token it printed: %v %+v", err, p)
	}
}

func TestSplitPathHonoursEscapes(t *testing.T) {
	for path, want := range map[string]string{
		"ws":                        "ws",
		"ext.ws":                    "ext|ws",
		`https://example\.com/ws`:   "https://example.com/ws",
		`app.https://a\.b/tenant.x`: "app|https://a.b/tenant|x",
	} {
		if got := strings.Join(splitPath(path), "|"); got != want {
			t.Errorf("splitPath(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestTokenSignedWithAPrivateKeyFile(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"ecdsa", "rsa", "ed25519"} {
		t.Run(kind, func(t *testing.T) {
			var (
				priv any
				pub  any
				alg  string
			)
			switch kind {
			case "ecdsa":
				k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
				priv, pub, alg = k, &k.PublicKey, "ES256"
			case "rsa":
				k, _ := rsa.GenerateKey(rand.Reader, 2048)
				priv, pub, alg = k, &k.PublicKey, "RS256"
			case "ed25519":
				p, k, _ := ed25519.GenerateKey(rand.Reader)
				priv, pub, alg = k, p, "EdDSA"
			}
			privDER, err := x509.MarshalPKCS8PrivateKey(priv)
			if err != nil {
				t.Fatal(err)
			}
			pubDER, _ := x509.MarshalPKIXPublicKey(pub)
			keyPath := filepath.Join(dir, kind+".key")
			pubPath := filepath.Join(dir, kind+".pub")
			os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), 0o600)
			os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o600)
			src := strings.Replace(string(gateway.DefaultCatalog), "    hmac_secret_env: GATEWAY_JWT_SECRET\n    algorithms: [HS256]\n",
				"    public_key_file: "+pubPath+"\n    algorithms: ["+alg+"]\n", 1)
			catPath := filepath.Join(dir, kind+".yaml")
			os.WriteFile(catPath, []byte(src), 0o600)
			env := testEnv(nil)
			var out, errb bytes.Buffer
			if err := run(context.Background(), []string{"token", "--catalog", catPath, "--sub", "dev", "--workspace", "acme", "--scopes", "jobs:read", "--key", keyPath}, nil, &out, &errb, env); err != nil {
				t.Fatalf("token: %v\n%s", err, errb.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			cat, err := catalog.Load(catPath, &catalog.LoadOptions{Getenv: env})
			if err != nil {
				t.Fatal(err)
			}
			rt := newRuntime(env, slog.New(slog.DiscardHandler), newMetrics())
			if err := rt.install(cat); err != nil {
				t.Fatal(err)
			}
			_, v := rt.snapshot()
			if p, err := v.Verify(context.Background(), lines[len(lines)-1]); err != nil || p.Subject != "dev" {
				t.Errorf("%s token rejected: %v", alg, err)
			}
		})
	}
}

// The command table is the one list of commands: help prints each, an
// unknown name prints the same list, and every command has a page of
// the docs that shows it being run.
func TestEveryCommandIsListedAndDocumented(t *testing.T) {
	var docs strings.Builder
	for _, f := range []string{"../../README.md", "../../docs/catalog.md", "../../docs/identity.md", "../../docs/clients.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	var out, errOut strings.Builder
	if err := run(context.Background(), []string{"help"}, strings.NewReader(""), &out, &errOut, os.LookupEnv); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"no-such-command"}, strings.NewReader(""), io.Discard, &errOut, os.LookupEnv)
	if code, ok := err.(exitError); !ok || code != 2 {
		t.Fatalf("an unknown command = %v, want exit status 2", err)
	}
	for _, c := range commands {
		if !strings.Contains(out.String(), "\n  "+c.name+" ") {
			t.Errorf("gateway help does not list %s:\n%s", c.name, out.String())
		}
		if !strings.Contains(errOut.String(), "\n  "+c.name+" ") {
			t.Errorf("the unknown-command answer does not list %s", c.name)
		}
		if !strings.Contains(docs.String(), "gateway "+c.name) {
			t.Errorf("no page of the docs shows `gateway %s`", c.name)
		}
	}
}

// docs/reference/cli.md lists every flag of every command, as the
// command's own -h prints them.
func TestCLIReferenceListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../docs/reference/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	for _, c := range commands {
		heading := "## gateway " + strings.TrimSpace(c.name+" "+c.sub)
		start := strings.Index(doc, heading+"\n")
		if start < 0 {
			t.Errorf("docs/reference/cli.md has no section %q", heading)
			continue
		}
		section := doc[start+len(heading):]
		if end := strings.Index(section, "\n## "); end >= 0 {
			section = section[:end]
		}
		args := []string{c.name}
		if c.sub != "" {
			args = append(args, c.sub)
		}
		var errOut strings.Builder
		run(context.Background(), append(args, "-h"), strings.NewReader(""), io.Discard, &errOut, func(string) (string, bool) { return "", false })
		flags := flagLine.FindAllStringSubmatch(errOut.String(), -1)
		if len(flags) == 0 && c.name != "schema" {
			t.Errorf("gateway %s -h printed no flags:\n%s", strings.Join(args, " "), errOut.String())
		}
		for _, f := range flags {
			if !strings.Contains(section, "`--"+f[1]) {
				t.Errorf("docs/reference/cli.md, %s: flag --%s is not listed", heading, f[1])
			}
		}
	}
}
