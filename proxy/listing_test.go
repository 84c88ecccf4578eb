package proxy_test

import (
	"context"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

const listingCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  up: { base_url: "http://127.0.0.1:1" }
tools:
  - name: plain
    description: A read.
    request: { upstream: up, path: /a }
  - name: titled
    title: Titled read
    description: "A read with a title.  \n"
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, path: /b }
    response: { untrusted: [text] }
  - name: fenced
    description: Says untrusted-document-text itself.
    request: { upstream: up, path: /c }
    response: { untrusted: [text] }
  - name: write
    description: A write.
    kind: write
    gate: write
    request: { upstream: up, method: POST, path: /e }
  - name: gentle_write
    title: Tool title
    description: A write the operator describes.
    kind: write
    gate: write
    annotations: { title: Annotated, destructive: false, idempotent: true, open_world: true }
    request: { upstream: up, method: PUT, path: /f }
`

// Tools are published as encoded once at load: title, description (with
// the fence notice where untrusted text is fenced, unless it speaks of the
// fences already), input schema and the hints, from the catalog's
// annotations or the defaults for reads and writes.
func TestListedToolEncodings(t *testing.T) {
	c := parseCore(t, listingCatalog, "http://127.0.0.1:1", nil)
	p := authz.NewPrincipal("alice", "acme", "", []string{"write"}, nil)
	const closed = `{"additionalProperties":false,"type":"object"}` // the catalog's, keys sorted
	want := map[string]struct{ mcp, rest string }{
		"plain": {
			`{"name":"plain","description":"A read.","inputSchema":` + closed + `,"annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}}`,
			`{"name":"plain","description":"A read.","input_schema":` + closed + `}`,
		},
		"titled": {
			`{"name":"titled","title":"Titled read","description":"A read with a title. ` + proxy.FenceNotice + `","inputSchema":{"properties":{"q":{"type":"string"}},"type":"object"},"annotations":{"title":"Titled read","readOnlyHint":true,"idempotentHint":true,"openWorldHint":false},"_meta":{"anthropic/searchHint":"Titled read"}}`,
			`{"name":"titled","description":"A read with a title. ` + proxy.FenceNotice + `","input_schema":{"properties":{"q":{"type":"string"}},"type":"object"}}`,
		},
		"fenced": {
			`{"name":"fenced","description":"Says untrusted-document-text itself.","inputSchema":` + closed + `,"annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}}`,
			`{"name":"fenced","description":"Says untrusted-document-text itself.","input_schema":` + closed + `}`,
		},
		"write": {
			`{"name":"write","description":"A write.","inputSchema":` + closed + `,"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false}}`,
			`{"name":"write","description":"A write.","input_schema":` + closed + `}`,
		},
		"gentle_write": {
			`{"name":"gentle_write","title":"Tool title","description":"A write the operator describes.","inputSchema":` + closed + `,"annotations":{"title":"Annotated","readOnlyHint":false,"destructiveHint":false,"idempotentHint":true,"openWorldHint":true},"_meta":{"anthropic/searchHint":"Tool title"}}`,
			`{"name":"gentle_write","description":"A write the operator describes.","input_schema":` + closed + `}`,
		},
	}
	listed := c.List(context.Background(), p)
	if len(listed) != len(want) {
		t.Fatalf("%d tools listed, want %d", len(listed), len(want))
	}
	for _, l := range listed {
		w := want[l.Tool.Name]
		if string(l.MCP) != w.mcp {
			t.Errorf("%s MCP =\n%s\nwant\n%s", l.Tool.Name, l.MCP, w.mcp)
		}
		if string(l.REST) != w.rest {
			t.Errorf("%s REST =\n%s\nwant\n%s", l.Tool.Name, l.REST, w.rest)
		}
	}
}
