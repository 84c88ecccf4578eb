package proxy_test

import (
	"context"
	"strings"
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

// A client older than 2025-06-18 knows no outputSchema: a tool that
// declares one is also encoded without it, the same otherwise; a tool
// without one has the one encoding.
func TestListedToolWithoutOutputSchemaForOlderClients(t *testing.T) {
	c := parseCore(t, writeAnswersCatalog, "http://127.0.0.1:1", nil)
	p := authz.NewPrincipal("alice", "acme", "alice", []string{"write"}, nil)
	seen := 0
	for _, l := range c.List(context.Background(), p) {
		switch l.Tool.Name {
		case "get_repo":
			seen++
			if !strings.Contains(string(l.MCP), `"outputSchema":`) || l.MCPBefore20250618 == nil || strings.Contains(string(l.MCPBefore20250618), "outputSchema") ||
				!strings.HasPrefix(string(l.MCPBefore20250618), `{"name":"get_repo","description":"Read a repository."`) {
				t.Errorf("get_repo MCP = %s, before 2025-06-18 = %s; want the second without outputSchema", l.MCP, l.MCPBefore20250618)
			}
		case "delete_repo":
			seen++
			if strings.Contains(string(l.MCP), "outputSchema") || l.MCPBefore20250618 != nil {
				t.Errorf("delete_repo MCP = %s, before 2025-06-18 = %s; want one encoding, no outputSchema", l.MCP, l.MCPBefore20250618)
			}
		}
	}
	if seen != 2 {
		t.Errorf("listed %d of get_repo and delete_repo, want both", seen)
	}
}
