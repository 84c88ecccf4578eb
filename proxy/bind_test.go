package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
)

// TestCallsAndProbesCarryTheSameBinding: a tool call and a prerequisite
// probe to one upstream carry the token's workspace the same way (its
// header, over what a template fills from an argument), and only a write
// carries the actor (one function binds both; prereq_test.go
// covers a query binding through redirects).
func TestCallsAndProbesCarryTheSameBinding(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ready":true}`)
	})
	src := `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [w] }
upstreams:
  up:
    base_url: "${UP}"
    workspace: { header: X-Workspace-Id }
    actor_header: X-Actor
prerequisites:
  ready: { probe: { upstream: up, path: /ready, true_when: ready } }
tools:
  - name: read_item
    description: Read one item.
    requires: [ready]
    input: { type: object, properties: { ws: { type: string } } }
    request:
      upstream: up
      path: /items
      headers: { X-Workspace-Id: "{ws}" }
  - name: write_item
    description: Write one item.
    kind: write
    gate: write
    request: { upstream: up, method: POST, path: /items }
`
	c := parseCore(t, src, rec.srv.URL, nil)
	p := authz.NewPrincipal("alice", "acme", "alice@example.com", []string{"w"}, nil)
	if res := call(t, c, p, "read_item", `{"ws":"globex"}`); res.IsError {
		t.Fatalf("read_item = %s", res.Text)
	}
	if res := call(t, c, p, "write_item", `{}`); res.IsError {
		t.Fatalf("write_item = %s", res.Text)
	}
	got := rec.all()
	if len(got) != 3 {
		t.Fatalf("upstream saw %d requests, want the probe, the read and the write", len(got))
	}
	for i, want := range []struct{ method, path, actor string }{
		{"GET", "/ready", ""}, {"GET", "/items", ""}, {"POST", "/items", "alice@example.com"},
	} {
		r := got[i]
		if r.Method != want.method || r.Path != want.path {
			t.Fatalf("request %d = %s %s, want %s %s", i, r.Method, r.Path, want.method, want.path)
		}
		if ws := strings.Join(r.Header.Values("X-Workspace-Id"), ","); ws != "acme" {
			t.Errorf("%s %s: X-Workspace-Id %q; want the token's workspace acme, once", r.Method, r.Path, ws)
		}
		if a := r.Header.Get("X-Actor"); a != want.actor {
			t.Errorf("%s %s: X-Actor %q, want %q", r.Method, r.Path, a, want.actor)
		}
	}
}
