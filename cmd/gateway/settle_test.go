package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/catalog"
)

// TestCatalogSettlesImportedUpstream: the fragment `gateway import openapi`
// writes declares the upstream; the catalog that includes it adds the
// base URL, an Authorization header and a timeout under its own upstreams:
// entry of that name. The catalog loads with them, a call carries them,
// and a re-import (which rewrites the fragment) leaves them alone.
func TestCatalogSettlesImportedUpstream(t *testing.T) {
	var seen http.Header
	var seenPath string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, seenPath = r.Header.Clone(), r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id": 7, "name": "Rex"}`))
	}))
	defer up.Close()

	dir := t.TempDir()
	spec := filepath.Join("..", "..", "openapi", "testdata", "petstore30.yaml")
	imp := func() {
		var stdout, stderr bytes.Buffer
		args := []string{"import", "openapi", spec, "--upstream", "pets", "--workspace-param", "tenant", "-o", filepath.Join(dir, "fragments", "pets.yaml")}
		os.MkdirAll(filepath.Join(dir, "fragments"), 0o755)
		if err := run(context.Background(), args, nil, &stdout, &stderr, os.LookupEnv); err != nil {
			t.Fatalf("import = %v\n%s", err, stderr.String())
		}
	}
	imp()
	path := filepath.Join(dir, "catalog.yaml")
	os.WriteFile(path, []byte(`version: 1
server: { name: pets-gateway }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: iss, audience: aud }
include: ["fragments/*.yaml"]
upstreams:
  pets:                                   # settles the fragment's upstream
    base_url: ${PETS_BASE}/v1
    timeout: 7s
    headers: { Authorization: "Bearer ${PETS_TOKEN}" }
`), 0o600)
	env := testEnv(map[string]string{"PETS_BASE": up.URL, "PETS_TOKEN": "pets-t0k", "PETS_API_KEY": "doc-key"})

	for round := range 2 {
		c, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
		if err != nil {
			t.Fatalf("round %d: Load = %v", round, err)
		}
		u := c.Upstreams["pets"]
		if u.BaseURL != up.URL+"/v1" || u.Timeout.D() != 7*time.Second || u.Headers["Authorization"] != "Bearer pets-t0k" {
			t.Errorf("round %d: upstream pets = base %q timeout %s headers %v, want the catalog's settings", round, u.BaseURL, u.Timeout, u.Headers)
		}
		if u.Headers["X-API-Key"] != "doc-key" || u.Workspace == nil || u.Workspace.Header != "tenant" {
			t.Errorf("round %d: the fragment's own header and workspace binding were lost: %v %+v", round, u.Headers, u.Workspace)
		}
		imp() // a re-import rewrites only the fragment
	}

	rt := installedRuntime(t, env, path, nil)
	srv := httptest.NewServer(rt.routes())
	defer srv.Close()
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": "u1", "ws": "acme", "scope": "",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(env.get("GATEWAY_JWT_SECRET")))
	text, isErr := callTool(t, srv.URL, tok, "get_pet_by_id", `{"pet_id": 7}`)
	if isErr {
		t.Fatalf("get_pet_by_id = %s", text)
	}
	if seenPath != "/v1/pets/7" || seen.Get("Authorization") != "Bearer pets-t0k" || seen.Get("X-API-Key") != "doc-key" || seen.Get("tenant") != "acme" {
		t.Errorf("upstream saw %s with Authorization %q, X-API-Key %q, tenant %q", seenPath, seen.Get("Authorization"), seen.Get("X-API-Key"), seen.Get("tenant"))
	}
	if strings.Contains(text, "pets-t0k") {
		t.Error("the credential reached the result")
	}
}
