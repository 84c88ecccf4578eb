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
	"slices"
	"strings"
	"sync"
	"testing"
)

// runsDoc describes an orchestrator whose queries are POSTs and whose
// small answers are bare JSON values.
const runsDoc = `openapi: 3.1.0
info: { title: runs, version: "1" }
paths:
  /runs/count:
    post:
      requestBody: { content: { application/json: { schema: { type: object, properties: { state: { type: string } } } } } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: integer } } } } }
  /runs/filter:
    post:
      requestBody: { content: { application/json: { schema: { type: object } } } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: array, items: { type: object, properties: { id: { type: string } } } } } } } }
  /runs/{id}:
    parameters: [ { name: id, in: path, required: true, schema: { type: string } } ]
    get:
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object, properties: { id: { type: string } } } } } } }
    delete:
      responses: { "204": { description: gone } }
  /health:
    get:
      responses: { "200": { description: ok, content: { application/json: { schema: { type: boolean } } } } }
  /version:
    get:
      responses: { "200": { description: ok, content: { application/json: { schema: { type: string } } } } }
`

const runsFragment = `upstreams:
  runs: { base_url: "${RUNS_URL}", workspace: none }
tools:
  - name: count_runs
    description: Count runs in a state.
    kind: read
    input: { type: object, properties: { state: { type: string } }, required: [state], additionalProperties: false }
    request: { upstream: runs, method: POST, path: /runs/count, body: { state: "{state}" } }
  - name: filter_runs
    description: Runs matching a filter.
    kind: read
    input: { type: object, properties: {} }
    request: { upstream: runs, method: POST, path: /runs/filter, body: {} }
  - name: get_run
    description: One run.
    kind: read
    input: { type: object, properties: { id: { type: string } }, required: [id], additionalProperties: false }
    request: { upstream: runs, path: "/runs/{id}" }
    probe: { args: { id: r1 } }
  - name: healthy
    description: Whether the service is up.
    request: { upstream: runs, path: /health }
  - name: version
    description: The service's version.
    request: { upstream: runs, path: /version }
  - name: delete_run
    description: Delete a run.
    kind: write
    gate: operate
    input: { type: object, properties: { id: { type: string } }, required: [id] }
    request: { upstream: runs, method: DELETE, path: "/runs/{id}" }
`

const runsCatalog = `version: 1
server: { name: runs }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: i, audience: a }
gates: { operate: { scopes: [runs:operate] } }
include: [runs.fragment.yaml]
overrides:
  count_runs:
    probe: { args: { state: FAILED } }
`

// runsUpstream answers like the document says, and records every request.
type runsUpstream struct {
	mu   sync.Mutex
	seen []string
	// answers maps "METHOD /path" to a JSON body.
	answers map[string]string
}

func (u *runsUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.Method + " " + r.URL.Path
	u.mu.Lock()
	u.seen = append(u.seen, strings.TrimSpace(key+" "+string(body)))
	answer, ok := u.answers[key]
	u.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, answer)
}

func (u *runsUpstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Sorted(slices.Values(u.seen))
}

func writeRuns(t *testing.T, fragment, catalog string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	for name, body := range map[string]string{"openapi.yaml": runsDoc, "runs.fragment.yaml": fragment, "catalog.yaml": catalog} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCheckProbeCuratedQueries: a curated catalog of an orchestrator is
// green. Its POST query goes out with the probe.args an override gives it
// and nothing else; a POST without probe.args is never sent; a GET with
// probe.args is called with them; bare answers (42, true, "1.2.3") fit
// the integer, boolean and string the document promises; the summary
// counts what was checked and probed.
func TestCheckProbeCuratedQueries(t *testing.T) {
	up := &runsUpstream{answers: map[string]string{
		"POST /runs/count": `42`,
		"GET /runs/r1":     `{"id":"r1"}`,
		"GET /health":      `true`,
		"GET /version":     `"1.2.3"`,
	}}
	srv := httptest.NewServer(up)
	defer srv.Close()
	dir := writeRuns(t, runsFragment, runsCatalog)
	env := testEnv(map[string]string{"RUNS_URL": srv.URL})
	args := []string{"check", "--catalog", filepath.Join(dir, "catalog.yaml"), "--openapi", filepath.Join(dir, "openapi.yaml"), "--probe"}

	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, nil, &stdout, &stderr, env); err != nil {
		t.Fatalf("check --probe = %v, want success\n%s%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	want := []string{
		"probe: filter_runs: skipped: POST may change state: the probe sends it only with the tool's probe.args",
		filepath.Join(dir, "catalog.yaml") + ": checked 6 tools against 6 operations in " + filepath.Join(dir, "openapi.yaml") +
			": 0 problems; probed 4 of 5 read tools: 4 ok, 0 with problems, 1 skipped, 0 denied",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("check --probe printed\n  %s\nwant\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
	wantSent := []string{"GET /health", "GET /runs/r1", "GET /version", `POST /runs/count {"state":"FAILED"}`}
	if got := up.requests(); !slices.Equal(got, wantSent) {
		t.Errorf("the upstream received %q, want exactly %q", got, wantSent)
	}

	// The same as JSON: the summary's counts.
	stdout.Reset()
	if err := run(context.Background(), append(args, "--format", "json"), nil, &stdout, &stderr, env); err != nil {
		t.Fatalf("check --probe --format json = %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var out struct {
		OK      bool         `json:"ok"`
		Summary checkSummary `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	wantSum := checkSummary{Tools: 6, Operations: 6, Probe: &probeSummary{Reads: 5, Probed: 4, Ok: 4, Skipped: 1}}
	if !out.OK || out.Summary.Tools != wantSum.Tools || out.Summary.Operations != wantSum.Operations || out.Summary.Problems != 0 ||
		out.Summary.Probe == nil || *out.Summary.Probe != *wantSum.Probe {
		t.Errorf("json ok = %t, summary = %+v (probe %+v), want %+v (probe %+v)", out.OK, out.Summary, out.Summary.Probe, wantSum, wantSum.Probe)
	}
}

// TestCheckProbeScalarMismatchAndUnsafeMethods: a bare answer of the
// wrong type is a problem; a read bound to DELETE is never sent, even
// with probe.args; the summary counts the problems.
func TestCheckProbeScalarMismatchAndUnsafeMethods(t *testing.T) {
	up := &runsUpstream{answers: map[string]string{
		"POST /runs/count": `"many"`,
		"GET /runs/r1":     `{"id":"r1"}`,
		"GET /health":      `"yes"`,
		"GET /version":     `"1.2.3"`,
		"DELETE /runs/r1":  ``,
	}}
	srv := httptest.NewServer(up)
	defer srv.Close()
	fragment := strings.Replace(runsFragment, `  - name: delete_run
    description: Delete a run.
    kind: write
    gate: operate
`, `  - name: delete_run
    description: Delete a run.
    kind: read
    probe: { args: { id: r1 } }
`, 1)
	dir := writeRuns(t, fragment, runsCatalog)
	env := testEnv(map[string]string{"RUNS_URL": srv.URL})
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"check", "--catalog", filepath.Join(dir, "catalog.yaml"), "--openapi", filepath.Join(dir, "openapi.yaml"), "--probe"}, nil, &stdout, &stderr, env)
	if err != exitError(1) {
		t.Fatalf("check --probe = %v, want exit 1\n%s%s", err, stdout.String(), stderr.String())
	}
	text := stdout.String()
	for _, want := range []string{
		`tool "delete_run" (DELETE /runs/{id}): a read tool is bound to DELETE, which may change state: make it kind: write behind a gate`,
		`tool "count_runs" (POST /runs/count): probe: the answer does not fit the document's response schema`,
		`tool "healthy" (GET /health): probe: the answer does not fit the document's response schema`,
		"probe: delete_run: skipped: DELETE may change state: the probe sends only GET and HEAD, and POST with probe.args",
		": 3 problems; probed 4 of 6 read tools: 2 ok, 2 with problems, 2 skipped, 0 denied\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	for _, r := range up.requests() {
		if strings.HasPrefix(r, "DELETE ") {
			t.Errorf("the probe sent %s to the live upstream", r)
		}
	}
}
