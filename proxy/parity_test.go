package proxy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// randomCatalog writes a catalog with random gates, tools, sensitive marks
// and claim prerequisites over one upstream.
func randomCatalog(r *rand.Rand, upURL string) string {
	scopes := []string{"a", "b", "c", "d", "e"}
	pick := func() []string {
		var out []string
		for _, s := range scopes {
			if r.IntN(3) == 0 {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			out = []string{scopes[r.IntN(len(scopes))]}
		}
		return out
	}
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nserver: { name: prop }\nauth:\n  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }\n")
	gates := []string{}
	b.WriteString("gates:\n")
	if r.IntN(2) == 0 {
		fmt.Fprintf(&b, "  view: { scopes: [%s] }\n", strings.Join(pick(), ", "))
	}
	for i := 0; i < 1+r.IntN(3); i++ {
		g := fmt.Sprintf("g%d", i)
		gates = append(gates, g)
		fmt.Fprintf(&b, "  %s: { scopes: [%s] }\n", g, strings.Join(pick(), ", "))
	}
	if r.IntN(2) == 0 {
		fmt.Fprintf(&b, "sensitive_data: { gate: %s, expose: %v }\n", gates[r.IntN(len(gates))], r.IntN(4) != 0)
	}
	b.WriteString("prerequisites:\n  p0: { claim: features.kb }\n  p1: { claim: tier }\n")
	fmt.Fprintf(&b, "upstreams:\n  up: { base_url: %q }\ntools:\n", upURL)
	for i := 0; i < 3+r.IntN(8); i++ {
		kind, gate := "read", "view"
		if r.IntN(3) == 0 {
			kind, gate = "write", gates[r.IntN(len(gates))]
		} else if r.IntN(2) == 0 {
			gate = gates[r.IntN(len(gates))]
		}
		fmt.Fprintf(&b, "  - name: t%d\n    description: tool %d\n    kind: %s\n    gate: %s\n    sensitive: %v\n", i, i, kind, gate, r.IntN(4) == 0)
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "    requires: [p%d]\n", r.IntN(2))
		}
		b.WriteString("    request: { upstream: up, path: /x }\n")
	}
	return b.String()
}

func randomPrincipal(r *rand.Rand) *authz.Principal {
	if r.IntN(6) == 0 {
		return nil
	}
	var sc []string
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		if r.IntN(2) == 0 {
			sc = append(sc, s)
		}
	}
	claims := fmt.Sprintf(`{"features":{"kb":%v},"tier":%q}`, r.IntN(2) == 0, []string{"", "gold"}[r.IntN(2)])
	return authz.NewPrincipal("u", "ws", "u@example.com", sc, []byte(claims))
}

// TestListCallParity: over random catalogs and principals, a tool is in the
// list exactly when a call to it is not denied, and a denied call sends
// nothing upstream.
func TestListCallParity(t *testing.T) {
	rec := newRecorder(t, nil)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		src := randomCatalog(r, rec.srv.URL)
		cat, err := catalog.Parse("prop.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatalf("catalog %d does not load: %v\n%s", i, err, src)
		}
		c, err := proxy.New(cat, &proxy.Options{Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 10; j++ {
			p := randomPrincipal(r)
			visible := map[string]bool{}
			for _, l := range c.List(context.Background(), p) {
				visible[l.Tool.Name] = true
			}
			for _, tool := range cat.Tools {
				before := rec.count()
				res, err := c.Call(context.Background(), p, tool.Name, nil)
				if err != nil {
					t.Fatalf("Call: %v", err)
				}
				denied := res.Outcome == proxy.OutcomeDenied
				if denied == visible[tool.Name] {
					t.Fatalf("catalog %d, principal %+v, tool %s: listed=%v but call denied=%v (%s)\n%s", i, p, tool.Name, visible[tool.Name], denied, res.Text, src)
				}
				if denied && rec.count() != before {
					t.Fatalf("a denied call reached the upstream")
				}
			}
		}
	}
}
