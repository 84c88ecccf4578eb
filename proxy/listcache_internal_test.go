package proxy

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// The per-signature list cache holds at most maxListSignatures entries:
// the last one is stored, a signature past it is answered but not kept.
func TestListCacheStopsAtItsCap(t *testing.T) {
	const src = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  view: { scopes: [read] }
  write: { scopes: [write] }
upstreams:
  up: { base_url: "http://127.0.0.1:1" }
tools:
  - name: get_item
    description: Read.
    request: { upstream: up, path: /items }
  - name: set_item
    description: Write.
    kind: write
    gate: write
    request: { upstream: up, method: POST, path: /items }
`
	cat, err := catalog.Parse("test.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		return strings.Repeat("k", 32), k == "SECRET"
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reader := authz.NewPrincipal("r", "acme", "", []string{"read"}, nil)
	writer := authz.NewPrincipal("w", "acme", "", []string{"read", "write"}, nil)
	nobody := authz.NewPrincipal("n", "acme", "", nil, nil)
	cached := func(p *authz.Principal) bool {
		sig, _ := c.policy.Signature(ctx, p)
		_, ok := c.lists.Load(listKey{sig: sig})
		return ok
	}

	first := c.List(ctx, reader)
	if n := c.listCount.Load(); n != 1 || !cached(reader) {
		t.Fatalf("after one list: %d cached, reader cached %v; want 1 and true", n, cached(reader))
	}
	if again := c.List(ctx, reader); len(again) != 1 || &again[0] != &first[0] {
		t.Errorf("a second list for the same signature was computed again")
	}

	c.listCount.Store(maxListSignatures - 1)
	if got := c.List(ctx, writer); len(got) != 2 {
		t.Fatalf("writer's list has %d tools, want 2", len(got))
	}
	if n := c.listCount.Load(); n != maxListSignatures || !cached(writer) {
		t.Errorf("at the cap's last place: %d cached, writer cached %v; want %d and true", n, cached(writer), maxListSignatures)
	}
	if got := c.List(ctx, nobody); len(got) != 0 {
		t.Fatalf("nobody's list has %d tools, want 0", len(got))
	}
	if n := c.listCount.Load(); n != maxListSignatures || cached(nobody) {
		t.Errorf("past the cap: %d cached, nobody cached %v; want %d and false", n, cached(nobody), maxListSignatures)
	}
}
