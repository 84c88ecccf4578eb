package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// --probe sends only GET and HEAD: a read tool bound to another method is
// exactly the drift the static check reports ("may change state"), so the
// probe skips it instead of sending it to the live upstream.
func TestProbeNeverSendsAMutatingMethod(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"a"}`))
	}))
	defer up.Close()
	dir := t.TempDir()
	cat := `version: 1
server: { name: t }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: i, audience: a }
upstreams:
  things: { base_url: "` + up.URL + `", workspace: none }
tools:
  - name: get_thing
    description: Get a thing.
    kind: read
    input: { type: object, properties: {} }
    request: { upstream: things, path: /things/a }
  - name: purge_thing
    description: Mislabelled.
    kind: read
    input: { type: object, properties: {} }
    request: { upstream: things, method: DELETE, path: /things/a }
`
	spec := `openapi: 3.0.3
info: { title: t, version: "1" }
paths:
  /things/a:
    get: { responses: { "200": { description: ok } } }
    delete: { responses: { "204": { description: gone } } }
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(cat), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.yaml"), []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"check", "--catalog", filepath.Join(dir, "catalog.yaml"), "--openapi", filepath.Join(dir, "openapi.yaml"),
		"--probe", "--format", "json"}, nil, &stdout, &stderr, testEnv(nil))
	var out struct {
		Probe []struct{ Tool, Outcome, Detail string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range methods {
		if !strings.HasPrefix(m, "GET ") && !strings.HasPrefix(m, "HEAD ") {
			t.Errorf("the probe sent %s to the live upstream", m)
		}
	}
	got := map[string]string{}
	for _, r := range out.Probe {
		got[r.Tool] = r.Outcome + ": " + r.Detail
	}
	if !strings.HasPrefix(got["get_thing"], "ok") || !strings.HasPrefix(got["purge_thing"], "skipped") || !strings.Contains(got["purge_thing"], "DELETE") {
		t.Errorf("probe = %v, want get_thing ok and purge_thing skipped naming DELETE", got)
	}
}
