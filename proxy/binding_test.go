package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// The workspace binding (each guard of it checked): the token's
// workspace and actor reach the upstream through templates and bindings,
// win over any argument, and a value from the token that cannot be a
// header is refused before anything is sent.

const bindingCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  up: { base_url: "${UP}", workspace: { query: ws }, actor_header: X-Actor }
tools:
  - name: read
    description: A read whose templates name the workspace and actor.
    input: { type: object, properties: { q: { type: string } } }
    request:
      upstream: up
      path: /items
      query: { q: "{q}", tenant: "{workspace}" }
      headers: { X-Tenant: "ws={workspace}", X-Who: "{actor}", X-Q: "{q}" }
  - name: write
    description: A write.
    kind: write
    gate: write
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, method: POST, path: /items, body: { q: "{q}" } }
`

func TestTokenValuesInTemplatesAndBindings(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, bindingCatalog, rec.srv.URL, nil)
	p := authz.NewPrincipal("alice", "acme", "alice@example.com", []string{"write"}, nil)
	if res := call(t, c, p, "read", `{"q":"x"}`); res.IsError {
		t.Fatalf("read: %s", res.Text)
	}
	got := rec.all()[0]
	if got.Query != "q=x&tenant=acme&ws=acme" {
		t.Errorf("query = %q, want q=x&tenant=acme&ws=acme", got.Query)
	}
	for h, want := range map[string]string{"X-Tenant": "ws=acme", "X-Who": "alice@example.com", "X-Q": "x", "X-Actor": ""} {
		if v := got.Header.Get(h); v != want {
			t.Errorf("%s = %q, want %q (reads carry no actor header)", h, v, want)
		}
	}
	if res := call(t, c, p, "write", `{"q":"x"}`); res.IsError {
		t.Fatalf("write: %s", res.Text)
	}
	if got := rec.all()[1]; got.Query != "ws=acme" || got.Header.Get("X-Actor") != "alice@example.com" {
		t.Errorf("write: query %q, X-Actor %q; want ws=acme and the token's actor", got.Query, got.Header.Get("X-Actor"))
	}

	// A control character in the token's workspace or actor, used by a
	// header template, is the token's fault: refused, naming it, and
	// nothing is sent. The caller's own bad header value is its error.
	before := rec.count()
	for _, tc := range []struct {
		p        *authz.Principal
		tool     string
		args     string
		want     string
		outcome  string
		nameless string
	}{
		{authz.NewPrincipal("m", "acme\n", "m@example.com", []string{"write"}, nil), "read", `{}`, "the token's workspace contains a control character", proxy.OutcomeRefused, "acme\n"},
		{authz.NewPrincipal("m", "acme", "m\x7f@example.com", []string{"write"}, nil), "read", `{}`, "the token's actor contains a control character", proxy.OutcomeRefused, "m\x7f"},
		{authz.NewPrincipal("m", "acme", "m\r@example.com", []string{"write"}, nil), "write", `{}`, "the token's actor contains a control character", proxy.OutcomeRefused, "m\r"},
		{p, "read", `{"q":"a\u0001b"}`, "header X-Q: the value from the arguments contains a control character", proxy.OutcomeToolError, "a\x01b"},
	} {
		res := call(t, c, tc.p, tc.tool, tc.args)
		if !res.IsError || res.Outcome != tc.outcome || !strings.Contains(res.Text, tc.want) || strings.Contains(res.Text, tc.nameless) {
			t.Errorf("%s(%s) by %q/%q = %+v, want outcome %s naming %q", tc.tool, tc.args, tc.p.Workspace, tc.p.Actor, res, tc.outcome, tc.want)
		}
	}
	if n := rec.count() - before; n != 0 {
		t.Errorf("the upstream received %d requests with a bad token value", n)
	}
}

// A request with no query parameter is sent without a "?": the target is
// the path alone.
func TestNoQueryMeansNoQuestionMark(t *testing.T) {
	uris := make(chan string, 2)
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		uris <- r.RequestURI
		io.WriteString(w, `{}`)
	})
	c := newCore(t, rec.srv.URL, nil)
	call(t, c, reader, "get_item", `{"id":"a"}`)
	call(t, c, reader, "get_item", `{"id":"a","q":"x"}`)
	if got := <-uris; got != "/v1/items/a" {
		t.Errorf("request URI = %q, want /v1/items/a", got)
	}
	if got := <-uris; got != "/v1/items/a?q=x" {
		t.Errorf("request URI = %q, want /v1/items/a?q=x", got)
	}
}
