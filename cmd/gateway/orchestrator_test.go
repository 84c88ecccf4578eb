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
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// received is one request the test upstream saw.
type received struct {
	method, path, contentType string
	body                      any
}

// runID is the flow run the orchestrator upstream knows.
const runID = "0f8fad5b-d9cb-469f-a165-70867728950e"

// orchestrator is a test upstream shaped like Prefect's API under /api,
// recording what it receives.
type orchestrator struct {
	*httptest.Server
	mu  sync.Mutex
	got []received
}

func startOrchestrator(t *testing.T) *orchestrator {
	o := &orchestrator{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				body = "not JSON: " + string(raw)
			}
		}
		o.mu.Lock()
		o.got = append(o.got, received{r.Method, r.URL.Path, r.Header.Get("Content-Type"), body})
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "POST /api/flow_runs/filter":
			// Prefect answers null for a run that has not ended, and the
			// document says neither nullable nor what else a run holds.
			io.WriteString(w, `[{"id":"`+runID+`","name":"nightly","state_type":"FAILED","end_time":null,"created_by":"","tags":null,"work_pool":"default"}]`)
		case "POST /api/logs/filter":
			io.WriteString(w, `[{"message":"boom","level":40,"flow_run_id":null,"timestamp":"2026-12-01T00:00:00"}]`)
		case "POST /api/deployments/count":
			io.WriteString(w, `3`)
		case "POST /api/flow_runs/history":
			io.WriteString(w, `[]`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"detail":"Not found"}`)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// take returns what the upstream received since the last take.
func (o *orchestrator) take() []received {
	o.mu.Lock()
	defer o.mu.Unlock()
	got := o.got
	o.got = nil
	return got
}

// importOrchestrator imports openapi/testdata/orchestrator.yaml as
// upstream orch into a temporary directory's orch.yaml, with extra flags.
func importOrchestrator(t *testing.T, extra ...string) (dir, spec, stderr string) {
	t.Helper()
	dir = t.TempDir()
	spec = filepath.Join("..", "..", "openapi", "testdata", "orchestrator.yaml")
	var out, errs bytes.Buffer
	args := append([]string{"import", "openapi", spec, "--upstream", "orch", "-o", filepath.Join(dir, "orch.yaml")}, extra...)
	if err := run(context.Background(), args, nil, &out, &errs, os.LookupEnv); err != nil {
		t.Fatalf("import = %v\n%s", err, errs.String())
	}
	return dir, spec, errs.String()
}

// TestOrchestratorQueriesThroughTheCore imports a workflow orchestrator's
// document shaped like Prefect's (queries as POSTs, a relative server URL
// /api, optional members answered null), includes the fragment in a
// catalog, and calls its tools through the proxy core as a caller holding
// no scope: the POST queries are reads, their bodies arrive, every path
// carries /api, and answers the document under-declares are results.
func TestOrchestratorQueriesThroughTheCore(t *testing.T) {
	up := startOrchestrator(t)

	dir, _, stderr := importOrchestrator(t)
	for _, want := range []string{
		"read (no write gate) POST /flow_runs/filter: guess: a query (its path ends in filter)",
		"read (no write gate) POST /deployments/count: guess: a query (its path ends in count)",
		"read (no write gate) POST /flow_runs/history: from x-mcp-kind",
		"skipped POST /flow_runs/{id}/set_state: write operation",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	catPath := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(catPath, []byte("version: 1\nserver: { name: orch }\nauth:\n  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: dev, audience: orch }\ninclude: [orch.yaml]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testEnv(map[string]string{"ORCH_URL": up.URL})
	cat, err := catalog.Load(catPath, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatalf("the imported fragment does not load: %v", err)
	}
	core, err := proxy.New(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	// No scope at all: reads need none.
	p := authz.NewPrincipal("agent", "acme", "", nil, nil)
	var listed []string
	for _, l := range core.List(context.Background(), p) {
		listed = append(listed, l.Tool.Name)
	}
	for _, name := range []string{"read_flow_runs_flow_runs_filter_post", "read_logs_logs_filter_post", "count_deployments_deployments_count_post"} {
		if !slices.Contains(listed, name) {
			t.Errorf("a caller without scopes does not see %s (sees %v)", name, listed)
		}
	}

	for _, tc := range []struct {
		name, tool, args string
		want             received
		result           string // a substring of the structured result
	}{
		{
			name: "flow-runs-filter", tool: "read_flow_runs_flow_runs_filter_post",
			args:   `{"flow_runs":{"state":{"type":{"any_":["FAILED"]}}},"limit":5}`,
			want:   received{"POST", "/api/flow_runs/filter", "application/json", map[string]any{"flow_runs": map[string]any{"state": map[string]any{"type": map[string]any{"any_": []any{"FAILED"}}}}, "limit": 5.0}},
			result: `"end_time":null`,
		},
		{
			// Absent optional arguments leave nothing behind: the import
			// writes one whole-argument placeholder per top-level member,
			// never a structure around an argument that could be left empty
			// (an empty any_ list filters everything out).
			name: "flow-runs-filter-without-arguments", tool: "read_flow_runs_flow_runs_filter_post",
			args:   `{}`,
			want:   received{"POST", "/api/flow_runs/filter", "application/json", map[string]any{}},
			result: `"items":[`,
		},
		{
			name: "logs-filter", tool: "read_logs_logs_filter_post",
			args:   `{"logs":{"flow_run_id":{"any_":["` + runID + `"]}}}`,
			want:   received{"POST", "/api/logs/filter", "application/json", map[string]any{"logs": map[string]any{"flow_run_id": map[string]any{"any_": []any{runID}}}}},
			result: `"message":"boom"`,
		},
		{
			name: "deployments-count", tool: "count_deployments_deployments_count_post",
			args: `{"deployments":{}}`,
			want: received{"POST", "/api/deployments/count", "application/json", map[string]any{"deployments": map[string]any{}}},
		},
		{
			name: "missing-flow-run-is-not-found", tool: "read_flow_run_flow_runs_id_get",
			args:   `{"id":"` + runID + `"}`,
			want:   received{"GET", "/api/flow_runs/" + runID, "", nil},
			result: `"found":false`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.take()
			res, err := core.Call(context.Background(), p, tc.tool, []byte(tc.args))
			if err != nil {
				t.Fatalf("Call(%s) = %v", tc.tool, err)
			}
			if res.IsError {
				t.Fatalf("Call(%s) is an error: %s", tc.tool, res.Text)
			}
			if got := up.take(); len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("the upstream received %+v, want %+v", got, tc.want)
			}
			if !strings.Contains(string(res.Structured), tc.result) {
				t.Errorf("result %s does not hold %s", res.Structured, tc.result)
			}
		})
	}
}

// --reads names reads by "METHOD /path" glob, repeated or comma-separated;
// a pattern that is not one is refused with its text.
func TestImportReadsFlag(t *testing.T) {
	spec := filepath.Join("..", "..", "openapi", "testdata", "orchestrator.yaml")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"import", "openapi", spec, "--upstream", "orch",
		"--reads", "POST /flow_runs/*/set_state, post /deployments/*/create_flow_run", "--reads", "DELETE /flow_runs/*"}, nil, &stdout, &stderr, os.LookupEnv)
	if err != nil {
		t.Fatalf("import = %v\n%s", err, stderr.String())
	}
	for _, want := range []string{
		`read (no write gate) POST /flow_runs/{id}/set_state: from --reads "POST /flow_runs/*/set_state"`,
		`read (no write gate) POST /deployments/{id}/create_flow_run: from --reads "post /deployments/*/create_flow_run"`,
		`read (no write gate) DELETE /flow_runs/{id}: from --reads "DELETE /flow_runs/*"`,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stdout.String(), "gate:") {
		t.Errorf("a tool named by --reads carries a gate:\n%s", stdout.String())
	}
	stderr.Reset()
	err = run(context.Background(), []string{"import", "openapi", spec, "--upstream", "orch", "--reads", "/flow_runs/filter"}, nil, &stdout, &stderr, os.LookupEnv)
	if err != exitError(1) || !strings.Contains(stderr.String(), `--reads "/flow_runs/filter": want METHOD /path`) {
		t.Errorf("import with a pattern without a method = %v, stderr %q", err, stderr.String())
	}
}

// A document that yields no tool is an error saying why, and no catalog
// that would fail to load is written.
func TestImportWithNoToolFails(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "writes.yaml")
	os.WriteFile(spec, []byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /things/{id}:\n    delete:\n      parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n      responses: {'204': {description: gone}}\n"), 0o644)
	out := filepath.Join(dir, "out.yaml")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"import", "openapi", spec, "--upstream", "u", "-o", out}, nil, &stdout, &stderr, os.LookupEnv)
	if err != exitError(1) {
		t.Fatalf("import = %v, want exit status 1\n%s", err, stderr.String())
	}
	if want := "no tool imported, nothing written: all 1 operations were skipped (listed above); they are writes: pass --include-writes"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a catalog was written (stat: %v)", err)
	}
}

// orchestratorOverrides curate the orchestrator's import in a few lines:
// names an agent reads, a trimmed output schema, four-eyes approval on
// the delete, and probe arguments for the POST queries.
const orchestratorOverrides = `version: 1
server: { name: orch }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: dev, audience: orch }
gates:
  orch_write: { scopes: [orch:write] }
  orch_admin: { scopes: [orch:admin] }
include: [orch.yaml]
overrides:
  read_flow_runs_flow_runs_filter_post:
    rename: list_flow_runs
    description: Flow runs matching a filter, newest first.
    probe: { args: { limit: 5 } }
  read_flow_run_flow_runs_id_get:
    rename: get_flow_run
    output_schema: { keep: [id, name, state_type] }
  read_logs_logs_filter_post: { rename: list_logs, probe: { args: {} } }
  count_deployments_deployments_count_post: { rename: count_deployments, probe: { args: {} } }
  delete_flow_run_flow_runs_id_delete:
    rename: delete_flow_run
    approval: { approvers: orch_admin, ttl: 15m }
`

// TestOrchestratorCuratedCheckIsGreen is the platform engineer's
// afternoon: import the orchestrator-shaped document with its writes,
// curate it with a short overrides block, and `gateway check --probe`
// against the running service is green: every tool agrees with the
// document, and every read (the POST queries too, with their probe
// arguments) answers in the shape the document and the catalog promise.
func TestOrchestratorCuratedCheckIsGreen(t *testing.T) {
	up := startOrchestrator(t)
	dir, spec, _ := importOrchestrator(t, "--include-writes")
	catPath := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(catPath, []byte(orchestratorOverrides), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testEnv(map[string]string{"ORCH_URL": up.URL})
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"check", "--catalog", catPath, "--openapi", spec, "--probe", "--workspace", "acme"}, nil, &stdout, &stderr, env)
	if err != nil {
		t.Fatalf("gateway check --probe = %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String() + stderr.String()
	if !strings.Contains(out, "0 problems") || !strings.Contains(out, "0 with problems") {
		t.Errorf("check is not green:\n%s", out)
	}
	var paths []string
	for _, r := range up.take() {
		paths = append(paths, r.method+" "+r.path)
	}
	for _, want := range []string{"POST /api/flow_runs/filter", "POST /api/logs/filter", "POST /api/deployments/count"} {
		if !slices.Contains(paths, want) {
			t.Errorf("the probe never sent %s (sent %v)", want, paths)
		}
	}
	for _, p := range paths {
		if strings.HasPrefix(p, "DELETE") || strings.Contains(p, "set_state") || strings.Contains(p, "create_flow_run") {
			t.Errorf("the probe sent a write: %s", p)
		}
	}
}
