package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorded is one request an httptest upstream received.
type recorded struct {
	method, path string
	query        map[string][]string
	header       http.Header
	body         map[string]any
}

// recorder is an upstream that answers {} to everything and keeps what
// it received.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(data, &body)
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, recorded{r.Method, r.URL.EscapedPath(), r.URL.Query(), r.Header.Clone(), body})
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte("{}"))
}

func (rc *recorder) taken() []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.reqs
	rc.reqs = nil
	return out
}

// serveImport imports spec with args into a fragment included by a small
// catalog (HS256 tokens, gate up_write), serves it against upstream, and
// returns an MCP client session for a token of workspace ws with scopes.
func serveImport(t *testing.T, spec string, args []string, upstream string, env map[string]string, ws, scopes string) (*sdk.ClientSession, string) {
	t.Helper()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args = append([]string{"import", "openapi", spec, "--upstream", "up", "-o", filepath.Join(dir, "up.yaml")}, args...)
	if err := run(context.Background(), args, nil, &stdout, &stderr, os.LookupEnv); err != nil {
		t.Fatalf("gateway %s = %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	main := "version: 1\nserver: { name: s }\nauth:\n  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: iss, audience: aud }\n" +
		"gates:\n  up_write: { scopes: [up:write] }\ninclude: [up.yaml]\n"
	path := filepath.Join(dir, "catalog.yaml")
	os.WriteFile(path, []byte(main), 0o644)
	env["UP_URL"], env["UP_TOKEN"], env["UP_API_KEY"] = upstream, "svc", "svc"
	e := testEnv(env)
	rt := installedRuntime(t, e, path, nil)
	srv := httptest.NewServer(rt.routes())
	t.Cleanup(srv.Close)
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": "agent", "ws": ws, "scope": scopes,
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(e.get("GATEWAY_JWT_SECRET")))
	client := sdk.NewClient(&sdk.Implementation{Name: "import-safety", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{tok, http.DefaultTransport}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr.String()
}

// A document whose every text holds ${GATEWAY_JWT_SECRET} or
// ${GATEWAY_APPROVAL_KEYS}, imported and served by a gateway that holds
// both: a scope-less token's tools/list shows neither, and a call that
// sends the imported defaults sends neither upstream.
func TestHostileDocumentLeaksNoSecretThroughTheGateway(t *testing.T) {
	const jwtSecret = "388f7468567e91661e4bf959993bbcb3c5c260217e9965a18abd9fd5a29e0f1c" // testEnv's
	const approvalKeys = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="                  // 32 bytes, base64
	up := &recorder{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	spec := filepath.Join("..", "..", "openapi", "testdata", "hostile-expand.yaml")
	cs, _ := serveImport(t, spec, []string{"--include-writes"}, srv.URL, map[string]string{"GATEWAY_APPROVAL_KEYS": approvalKeys}, "acme", "")
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := json.Marshal(list)
	if len(list.Tools) != 1 || bytes.Contains(listed, []byte(jwtSecret)) || bytes.Contains(listed, []byte(approvalKeys)) {
		t.Fatalf("tools/list for a scope-less token (want the one read, no secret):\n%s", listed)
	}
	if !bytes.Contains(listed, []byte(`"default":"${GATEWAY_JWT_SECRET}"`)) {
		t.Errorf("tools/list does not show the document's default as written:\n%s", listed)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: list.Tools[0].Name, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("call with the defaults = %+v, %v", res, err)
	}
	reqs := up.taken()
	if len(reqs) != 1 {
		t.Fatalf("the upstream received %d requests, want 1", len(reqs))
	}
	q, _ := json.Marshal(reqs[0].query)
	h, _ := json.Marshal(reqs[0].header)
	b, _ := json.Marshal(reqs[0].body)
	sent := reqs[0].path + string(q) + string(h) + string(b)
	if strings.Contains(sent, jwtSecret) || strings.Contains(sent, approvalKeys) {
		t.Errorf("the upstream received a gateway secret: %s", sent)
	}
	if got := reqs[0].query["state"]; len(got) != 1 || got[0] != "${GATEWAY_JWT_SECRET}" {
		t.Errorf("state = %q, want the document's default as written", got)
	}
	if got := reqs[0].header.Get("X-Mode"); got != "${GATEWAY_JWT_SECRET}" {
		t.Errorf("X-Mode = %q, want the document's default as written", got)
	}
}

// The tenant escape, end to end: the Gitea-shaped document imported with
// --workspace-param owner,org,username and served with one shared
// upstream credential. An acme token calls every tool it is given with
// globex in every string argument; each request the upstream receives
// carries acme in every place the document puts a tenant (path segment,
// query, header, body), and never globex there.
func TestTenantEscapeThroughTheGateway(t *testing.T) {
	up := &recorder{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	spec := filepath.Join("..", "..", "openapi", "testdata", "tenants.yaml")
	cs, stderr := serveImport(t, spec, []string{"--include-writes", "--workspace-param", "owner,org,username"}, srv.URL, map[string]string{}, "acme", "up:write")
	for _, left := range []string{"skipped GET /repositories/{id}: not tenant-bound", "skipped POST /repos/{owner}/{repo}/transfer: not tenant-bound", "skipped POST /admin/hooks: not tenant-bound"} {
		if !strings.Contains(stderr, left) {
			t.Errorf("stderr does not say %q:\n%s", left, stderr)
		}
	}
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 10 {
		t.Errorf("listed %d tools, want the 10 bound operations", len(list.Tools))
	}
	for _, tool := range list.Tools {
		args := globexArguments(tool.InputSchema)
		// The answer ({}) may not fit an imported output schema; what
		// matters here is the request that was sent.
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool.Name, Arguments: args}); err != nil {
			t.Errorf("%s(%v) = %v", tool.Name, args, err)
		}
		reqs := up.taken()
		if len(reqs) != 1 {
			t.Errorf("%s: the upstream received %d requests", tool.Name, len(reqs))
			continue
		}
		checkTenant(t, tool.Name, reqs[0])
	}
	// An argument the schema does not have is refused, never sent.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "org_get", Arguments: map[string]any{"org": "globex"}})
	if err != nil || !res.IsError {
		t.Errorf("org_get with an org argument = %+v, %v; want a tool error", res, err)
	}
	if reqs := up.taken(); len(reqs) != 0 {
		t.Errorf("a refused call reached the upstream: %+v", reqs)
	}
}

// globexArguments fills every property of an input schema with a
// globex-looking value of its type.
func globexArguments(schema any) map[string]any {
	s, _ := schema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	args := map[string]any{}
	for name, p := range props {
		ps, _ := p.(map[string]any)
		switch ps["type"] {
		case "integer", "number":
			args[name] = 7
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{"owner": "globex"}
		default:
			args[name] = "globex"
		}
	}
	return args
}

// tenantSegment finds the tenant's segment of the forge's paths, by the
// document's own path templates.
var tenantSegment = []*regexp.Regexp{
	regexp.MustCompile(`^(?:/api/v1)?/orgs/([^/]+)`),
	regexp.MustCompile(`^(?:/api/v1)?/repos/([^/]+)/[^/]+`),
	regexp.MustCompile(`^(?:/api/v1)?/users/([^/]+)/`),
}

// checkTenant holds one request to the places tenants.yaml names a tenant.
func checkTenant(t *testing.T, tool string, r recorded) {
	t.Helper()
	seen := false
	for _, re := range tenantSegment {
		if m := re.FindStringSubmatch(r.path); m != nil && !strings.HasSuffix(r.path, "/repos/search") {
			seen = true
			if m[1] != "acme" {
				t.Errorf("%s: %s %s names tenant %q", tool, r.method, r.path, m[1])
			}
		}
	}
	for _, k := range []string{"Owner", "owner", "org", "username"} {
		if v, ok := r.query[k]; ok {
			seen = true
			if len(v) != 1 || v[0] != "acme" {
				t.Errorf("%s: query %s = %q", tool, k, v)
			}
		}
	}
	if v := r.header.Values("X-Org"); len(v) > 0 {
		seen = true
		if len(v) != 1 || v[0] != "acme" {
			t.Errorf("%s: X-Org = %q", tool, v)
		}
	}
	for _, k := range []string{"owner", "org", "username"} {
		if v, ok := r.body[k]; ok {
			seen = true
			if v != "acme" {
				t.Errorf("%s: body %s = %v", tool, k, v)
			}
		}
	}
	if !seen {
		t.Errorf("%s: %s %s carries no tenant at all", tool, r.method, r.path)
	}
	if strings.Contains(r.path, "/globex") && !strings.Contains(r.path, "/repos/acme/globex") {
		t.Errorf("%s: %s %s reaches globex", tool, r.method, r.path)
	}
}

// --allow-unbound brings the operations that are not tenant-bound back,
// each marked in the file and named on stderr, where an operator running
// the import sees it.
func TestImportAllowUnboundSaysWhatItLetIn(t *testing.T) {
	out := filepath.Join(t.TempDir(), "forge.yaml")
	spec := filepath.Join("..", "..", "openapi", "testdata", "tenants.yaml")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"import", "openapi", spec, "--upstream", "forge", "--include-writes", "--workspace-param", "owner,org,username", "--allow-unbound", "-o", out}, nil, &stdout, &stderr, os.LookupEnv)
	if err != nil {
		t.Fatalf("import = %v\n%s", err, stderr.String())
	}
	data, _ := os.ReadFile(out)
	for _, want := range []string{
		"guess GET /teams/{id} (tool org_get_team): not tenant-bound: no parameter or body property of the operation is one of --workspace-param owner,org,username",
		"guess POST /admin/hooks (tool admin_create_hook): not tenant-bound: an admin endpoint reaches every tenant",
		`guess POST /admin/hooks (tool admin_create_hook): sensitive: the path segment "admin" is the service's own administration or configuration`,
		`guess POST /repos/{owner}/{repo}/transfer (tool repo_transfer): not tenant-bound: argument "new_owner" looks like a tenant`,
		"skipped DELETE /orgs/{org}/members/{username}: path parameters \"org\" and \"username\" both read as --workspace-param owner,org,username",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if n := strings.Count(string(data), "# guess: not tenant-bound: "); n < 12 {
		t.Errorf("the file marks %d guesses as not tenant-bound, want one per operation let in (12 or more):\n%s", n, data)
	}
}
