package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gateway "github.com/mcpgw/gateway"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/demo"
)

// The demo's imports, as demo/openapi/catalog.yaml documents them.
var demoImports = []struct {
	upstream string
	args     []string
}{
	{"monitor", []string{"--tags", "monitor", "--workspace-param", "X-Workspace-Id"}},
	{"operator", []string{"--tags", "operator", "--include-writes", "--workspace-param", "X-Workspace-Id", "--actor-header", "X-Actor"}},
	{"kb", []string{"--tags", "kb", "--workspace-param", "X-Workspace-Id"}},
}

// importDemo imports the document the demo serves into dir, as the three
// fragments demo/openapi/catalog.yaml includes, and copies that catalog
// beside them.
func importDemo(t *testing.T, dir string) string {
	t.Helper()
	up := httptest.NewServer(demo.New(demo.Options{ServiceToken: "svc"}))
	defer up.Close()
	resp, err := http.Get(up.URL + demo.OpenAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	doc.ReadFrom(resp.Body)
	resp.Body.Close()
	spec := filepath.Join(dir, "openapi.yaml")
	os.WriteFile(spec, doc.Bytes(), 0o644)
	for _, im := range demoImports {
		var stdout, stderr bytes.Buffer
		args := append([]string{"import", "openapi", spec, "--upstream", im.upstream, "-o", filepath.Join(dir, im.upstream+".yaml")}, im.args...)
		if err := run(context.Background(), args, nil, &stdout, &stderr, os.LookupEnv); err != nil {
			t.Fatalf("gateway %s = %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		if strings.HasPrefix(stderr.String(), "skipped ") || strings.Contains(stderr.String(), "\nskipped ") {
			t.Errorf("import %s skipped operations:\n%s", im.upstream, stderr.String())
		}
	}
	main, err := os.ReadFile(filepath.Join("..", "..", "demo", "openapi", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "catalog.yaml")
	os.WriteFile(path, main, 0o644)
	return path
}

// TestDemoImportReproducesBundledCatalog imports the demo's OpenAPI
// document, applies demo/openapi/catalog.yaml's overrides, and compares
// every tool with the bundled catalog.yaml: names, input schemas, kinds,
// gates, the sensitive lock, prerequisites, annotations, approvals and the upstream
// request each makes (method, path, query, headers, body, workspace and
// actor bindings). Response shaping (fields, list, untrusted, not_found
// results, render) is the catalog's own curation and is not compared.
func TestDemoImportReproducesBundledCatalog(t *testing.T) {
	dir := t.TempDir()
	path := importDemo(t, dir)
	// The committed fragments are exactly what the import writes.
	for _, im := range demoImports {
		got, _ := os.ReadFile(filepath.Join(dir, im.upstream+".yaml"))
		want, err := os.ReadFile(filepath.Join("..", "..", "demo", "openapi", im.upstream+".yaml"))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("demo/openapi/%s.yaml differs from a fresh import (regenerate it with the command in demo/openapi/catalog.yaml)", im.upstream)
		}
	}
	env := testEnv(map[string]string{"MONITOR_TOKEN": "svc", "OPERATOR_TOKEN": "svc", "KB_TOKEN": "svc"})
	got, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatalf("the imported catalog does not load:\n%v", err)
	}
	want, err := catalog.Parse("catalog.yaml", gateway.DefaultCatalog, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	names := func(c *catalog.Catalog) []string {
		var n []string
		for _, t := range c.Tools {
			n = append(n, t.Name)
		}
		slices.Sort(n)
		return n
	}
	if g, w := names(got), names(want); !slices.Equal(g, w) {
		t.Fatalf("tools = %v\nwant %v", g, w)
	}
	for _, w := range want.Tools {
		g := got.Tool(w.Name)
		check := func(what string, gv, wv any) {
			if !reflect.DeepEqual(gv, wv) {
				t.Errorf("tool %s: %s = %#v, want %#v", w.Name, what, gv, wv)
			}
		}
		var gin, win any
		json.Unmarshal(g.InputJSON, &gin)
		json.Unmarshal(w.InputJSON, &win)
		check("input schema", gin, win)
		check("kind", g.Kind, w.Kind)
		check("gate", g.Gate, w.Gate)
		check("sensitive", g.Sensitive, w.Sensitive)
		check("requires", g.Requires, w.Requires)
		check("annotations", annotations(g.Annotations), annotations(w.Annotations))
		check("approval", approvalOf(g.Approval), approvalOf(w.Approval))
		check("upstream", g.Request.Upstream, w.Request.Upstream)
		check("method", g.Request.Method, w.Request.Method)
		check("path", g.Request.Path, w.Request.Path)
		check("query", emptyNil(g.Request.Query), emptyNil(w.Request.Query))
		check("headers", emptyNil(g.Request.Headers), emptyNil(w.Request.Headers))
		check("body", g.Request.Body, w.Request.Body)
		gu, wu := got.Upstreams[g.Request.Upstream], want.Upstreams[w.Request.Upstream]
		check("workspace binding", [3]any{gu.Workspace.Header, gu.Workspace.Query, gu.Workspace.None}, [3]any{wu.Workspace.Header, wu.Workspace.Query, wu.Workspace.None})
		check("actor header", gu.ActorHeader, wu.ActorHeader)
	}
}

func annotations(a *catalog.Annotations) [3]string {
	s := func(b *bool) string {
		if b == nil {
			return "-"
		}
		if *b {
			return "true"
		}
		return "false"
	}
	if a == nil {
		return [3]string{"-", "-", "-"}
	}
	return [3]string{s(a.Destructive), s(a.Idempotent), s(a.OpenWorld)}
}

// approvalOf is what an approval asks: its mode, approvers gate, TTL
// and whether the requester may approve; "none" without one.
func approvalOf(a *catalog.Approval) string {
	if a == nil {
		return "none"
	}
	return fmt.Sprintf("%s approvers=%q ttl=%s allow_self=%t", a.Mode(), a.Approvers, a.TTL, a.AllowSelf)
}

func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// TestDemoImportServes serves the imported catalog in front of a running
// demo and calls its tools through the official Go SDK client.
func TestDemoImportServes(t *testing.T) {
	var actors []string
	up := httptest.NewServer(demo.New(demo.Options{ServiceToken: "svc", Record: func(r *http.Request, _ []byte) {
		if a := r.Header.Get("X-Actor"); a != "" {
			actors = append(actors, a)
		}
	}}))
	defer up.Close()
	path := importDemo(t, t.TempDir())
	env := testEnv(map[string]string{
		"MONITOR_TOKEN": "svc", "OPERATOR_TOKEN": "svc", "KB_TOKEN": "svc",
		"MONITOR_URL": up.URL, "OPERATOR_URL": up.URL, "KB_URL": up.URL,
		"GATEWAY_ISSUER": "iss", "GATEWAY_AUDIENCE": "aud",
	})
	rt := installedRuntime(t, env, path, nil)
	srv := httptest.NewServer(rt.routes())
	defer srv.Close()
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": "u1", "email": "ops@example.com", "ws": "acme", "scope": "jobs:read jobs:requeue",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(env.get("GATEWAY_JWT_SECRET")))

	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "import-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerRT{tok, http.DefaultTransport}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	var listed []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tool.Name)
	}
	// Reads, knowledge_search (acme has a knowledge base) and requeue_job;
	// no sensitive tool, no other write.
	for _, name := range []string{"search_jobs", "get_job", "knowledge_search", "requeue_job"} {
		if !slices.Contains(listed, name) {
			t.Errorf("tools/list lacks %s: %v", name, listed)
		}
	}
	for _, name := range []string{"get_job_payload", "cancel_job", "pause_queue"} {
		if slices.Contains(listed, name) {
			t.Errorf("tools/list shows %s to a caller without its gate", name)
		}
	}

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_jobs", Arguments: map[string]any{"state": "Failed", "page_size": 2}})
	if err != nil || res.IsError {
		t.Fatalf("search_jobs = %+v, %v", res, err)
	}
	page, _ := res.StructuredContent.(map[string]any)
	items, _ := page["items"].([]any)
	if len(items) != 2 || page["more"] != true {
		t.Fatalf("search_jobs structuredContent = %v, want 2 failed jobs and more", page)
	}
	job := items[0].(map[string]any)
	if job["state"] != "Failed" {
		t.Errorf("search_jobs returned a %v job", job["state"])
	}
	id := job["jobId"].(string)

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "requeue_job", Arguments: map[string]any{"job_id": id, "reason": "import test"}})
	if err != nil || res.IsError {
		t.Fatalf("requeue_job = %+v, %v", res, err)
	}
	if m, _ := res.StructuredContent.(map[string]any); m["state"] != "Enqueued" {
		t.Errorf("requeue_job result = %v, want the job Enqueued", res.StructuredContent)
	}
	if !slices.Contains(actors, "ops@example.com") {
		t.Errorf("the demo saw actors %v, want the caller's email through actor_header", actors)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_job", Arguments: map[string]any{"job_id": "job-acme-9999"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := res.StructuredContent.(map[string]any); res.IsError || m["found"] != false {
		t.Errorf("get_job(unknown) = %+v, want {found: false} from the imported not_found", res)
	}
}

type bearerRT struct {
	token string
	next  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestCheckProbeAgainstDemo runs gateway check, statically and with
// --probe, on the imported demo catalog against the running demo: every
// read tool answers in the shape the document promises, no write is sent,
// and a document that promises another shape is caught.
func TestCheckProbeAgainstDemo(t *testing.T) {
	var writes int
	up := httptest.NewServer(demo.New(demo.Options{ServiceToken: "svc", Record: func(r *http.Request, _ []byte) {
		if r.Method != http.MethodGet {
			writes++
		}
	}}))
	defer up.Close()
	dir := t.TempDir()
	path := importDemo(t, dir)
	spec := filepath.Join(dir, "openapi.yaml")
	env := testEnv(map[string]string{
		"MONITOR_TOKEN": "svc", "OPERATOR_TOKEN": "svc", "KB_TOKEN": "svc",
		"MONITOR_URL": up.URL, "OPERATOR_URL": up.URL, "KB_URL": up.URL,
	})
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"check", "--catalog", path, "--openapi", spec, "--probe", "--workspace", "acme", "--format", "json"}, nil, &stdout, &stderr, env)
	if err != nil {
		t.Fatalf("check --probe = %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var out struct {
		OK    bool `json:"ok"`
		Probe []struct{ Tool, Outcome, Detail string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]string{}
	for _, r := range out.Probe {
		outcomes[r.Tool] = r.Outcome
	}
	// 17 reads: 15 answered, the two sensitive ones skipped without a token.
	if len(out.Probe) != 17 || outcomes["search_jobs"] != "ok" || outcomes["get_job"] != "ok" || outcomes["knowledge_search"] != "ok" ||
		outcomes["get_job_payload"] != "skipped" || outcomes["requeue_job"] != "" {
		t.Errorf("probe = %+v", out.Probe)
	}
	for tool, o := range outcomes {
		if o != "ok" && tool != "get_job_payload" && tool != "get_job_output" {
			t.Errorf("probe %s = %s", tool, o)
		}
	}
	if writes != 0 {
		t.Errorf("the probe sent %d non-GET requests to the upstream", writes)
	}

	// A document that says the queues' counts are strings: the live
	// answer breaks it.
	data, _ := os.ReadFile(spec)
	broken := strings.Replace(string(data), "        enqueued: { type: integer }", "        enqueued: { type: string }", 1)
	os.WriteFile(spec, []byte(broken), 0o644)
	stdout.Reset()
	err = run(context.Background(), []string{"check", "--catalog", path, "--openapi", spec, "--probe", "--workspace", "acme"}, nil, &stdout, &stderr, env)
	if err != exitError(1) {
		t.Fatalf("check --probe with a drifted document = %v, want exit 1\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), `tool "list_queues" (GET /v1/queues): probe: the answer does not fit the document's response schema`) {
		t.Errorf("output:\n%s", stdout.String())
	}
}
