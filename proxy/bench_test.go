package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// bigCatalog has n tools spread over five gates.
func bigCatalog(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nserver: { name: big }\nauth:\n  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }\n")
	b.WriteString("gates:\n  view: { scopes: [read] }\n")
	for g := 0; g < 5; g++ {
		fmt.Fprintf(&b, "  g%d: { scopes: [s%d] }\n", g, g)
	}
	b.WriteString("upstreams:\n  up: { base_url: \"http://127.0.0.1:1\" }\ntools:\n")
	for i := 0; i < n; i++ {
		gate := "view"
		if i%3 != 0 {
			gate = fmt.Sprintf("g%d", i%5)
		}
		fmt.Fprintf(&b, "  - name: tool_%05d\n    description: Tool number %d, which reads thing %d.\n    gate: %s\n", i, i, i, gate)
		b.WriteString("    input: { type: object, properties: { id: { type: string }, n: { type: integer, minimum: 1 } }, required: [id], additionalProperties: false }\n")
		b.WriteString("    request: { upstream: up, path: \"/things/{id}\", query: { n: \"{n}\" } }\n")
	}
	return b.String()
}

func BenchmarkList5000(b *testing.B) {
	cat, err := catalog.Parse("big.yaml", []byte(bigCatalog(5000)), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		b.Fatal(err)
	}
	c, err := proxy.New(cat, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := authz.NewPrincipal("u", "w", "", []string{"read", "s1", "s3"}, nil)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n = len(c.List(context.Background(), p))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tool")
}

// BenchmarkCallSmallRead is the core's whole cost of one small read:
// validation, request building, the upstream exchange on loopback, shaping
// and rendering.
func BenchmarkCallSmallRead(b *testing.B) {
	body := `{"id":"j1","state":"Running","queue":"default","tags":["a","b"],"attempt":1,"createdAt":"2025-03-14T09:00:00Z","note":"a short note about this job"}`
	srv := newBenchUpstream(b, body)
	cat, err := catalog.Parse("test.yaml", []byte(testCatalog), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		return map[string]string{"UP": srv, "SECRET": strings.Repeat("k", 32)}[k], true
	}})
	if err != nil {
		b.Fatal(err)
	}
	c, _ := proxy.New(cat, nil)
	args := []byte(`{"id":"job-0001","q":"state=Running","tags":["x","y"]}`)
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Call(context.Background(), reader, "get_item", args)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func newBenchUpstream(b *testing.B, body string) string {
	b.Helper()
	srv := newTestServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	return srv
}
