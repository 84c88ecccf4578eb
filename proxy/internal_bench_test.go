package proxy

import (
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
)

const benchCatalog = `
version: 1
server: { name: bench }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
upstreams:
  up: { base_url: "http://127.0.0.1:1/api", workspace: { header: X-Workspace-Id }, headers: { Authorization: Bearer svc } }
tools:
  - name: search
    description: Search.
    input:
      type: object
      properties:
        state: { type: string, enum: [Enqueued, Running, Succeeded, Failed] }
        tags: { type: array, items: { type: string } }
        page_size: { type: integer, minimum: 1 }
        after_cursor: { type: string }
        job_id: { type: string }
      required: [job_id]
      additionalProperties: false
    request:
      upstream: up
      path: /v1/jobs/{job_id}/history
      query: { state: "{state}", tag: "{tags}", limit: "{page_size}", after: "{after_cursor}" }
`

func benchTool(b *testing.B) (*Core, *tool, []byte) {
	cat, err := catalog.Parse("bench.yaml", []byte(benchCatalog), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return strings.Repeat("s", 32), true }})
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(cat, nil)
	if err != nil {
		b.Fatal(err)
	}
	return c, c.tools["search"], []byte(`{"job_id":"job-acme-0001","state":"Failed","tags":["team=billing","urgent"],"page_size":20,"after_cursor":"b2Zmc2V0OjIw"}`)
}

// BenchmarkBuildRequest is request building from the compiled templates.
func BenchmarkBuildRequest(b *testing.B) {
	_, t, raw := benchTool(b)
	args, _ := decodeArgs(raw)
	bind := binding{workspace: "acme", actor: "a@example.com"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := t.up.buildRequest(t, args, bind); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateArguments is decoding and schema validation of a call's
// arguments.
func BenchmarkValidateArguments(b *testing.B) {
	_, t, raw := benchTool(b)
	b.ReportAllocs()
	for b.Loop() {
		args, err := decodeArgs(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := t.def.Schema.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}
