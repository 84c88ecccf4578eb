package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/gateway/mcp"
)

// toolsetCatalog has three reads (one tagged jobs, one gated), a write,
// and toolsets selecting by name, tag and kind.
const toolsetCatalog = `
version: 1
server: { name: test-gw, version: 1.2.3 }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  view: { scopes: [read] }
  secret: { scopes: [secret] }
  write: { scopes: [write] }
upstreams:
  up: { base_url: "${UP}", timeout: 2s }
tools:
  - name: get_item
    description: Get an item by id.
    input: { type: object, properties: { id: { type: string } }, required: [id], additionalProperties: false }
    request: { upstream: up, path: "/v1/items/{id}" }
  - name: list_items
    description: List items.
    tags: [jobs]
    request: { upstream: up, path: /v1/items }
  - name: get_secret
    description: A gated read.
    gate: secret
    tags: [jobs]
    request: { upstream: up, path: /v1/items/secret }
  - name: set_limit
    description: Set a limit.
    kind: write
    gate: write
    input: { type: object, properties: { id: { type: string } }, required: [id], additionalProperties: false }
    request: { upstream: up, method: POST, path: "/v1/items/{id}/limit" }
toolsets:
  ops: { tools: [get_item], tags: [jobs] }
  writes: { kinds: [write] }
`

func sdkNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func TestToolsetsThroughGoSDK(t *testing.T) {
	e := newEnv(t, toolsetCatalog)
	cases := []struct {
		path, scope string
		want        []string
	}{
		{"/mcp", "read", []string{"get_item", "list_items"}},
		{"/mcp/ops", "read", []string{"get_item", "list_items"}},
		{"/mcp/ops", "read secret", []string{"get_item", "list_items", "get_secret"}},
		{"/mcp", "read secret write", []string{"get_item", "list_items", "get_secret", "set_limit"}},
		{"/mcp/writes", "read write", []string{"set_limit"}},
		{"/mcp/writes", "read", nil}, // intersected with the gates: nothing left
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			for _, tc := range cases {
				cs := sdkSession(t, e.srv.URL+tc.path, token(t, tc.scope), era.opts)
				if got := sdkNames(t, cs); !slices.Equal(got, tc.want) {
					t.Errorf("%s as %q lists %v, want %v", tc.path, tc.scope, got, tc.want)
				}
			}
			ctx := context.Background()
			cs := sdkSession(t, e.srv.URL+"/mcp/ops", token(t, "read write"), era.opts)
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_item", Arguments: map[string]any{"id": "k1"}})
			if err != nil || res.IsError {
				t.Fatalf("CallTool(get_item) in ops = %+v, %v", res, err)
			}
			// A tool outside the set is an unknown tool, exactly as a name
			// no tool has, even for a caller whose gates allow it.
			for _, name := range []string{"set_limit", "no_such_tool"} {
				_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"id": "k1"}})
				werr, ok := errors.AsType[*jsonrpc.Error](err)
				if !ok || werr.Code != -32602 || werr.Message != `unknown tool "`+name+`"` {
					t.Fatalf("CallTool(%s) in ops = %v, want -32602 unknown tool", name, err)
				}
			}
		})
	}
}

func TestToolsetsOverHTTPAndREST(t *testing.T) {
	e := newEnv(t, toolsetCatalog)
	restNames := func(t *testing.T, path, scope string) (int, []string) {
		r := e.do(req{method: "GET", path: path, header: auth(t, scope)})
		var tools []struct{ Name string }
		json.Unmarshal(r.body, &tools)
		var names []string
		for _, tool := range tools {
			names = append(names, tool.Name)
		}
		return r.status, names
	}
	t.Run("rest-lists-the-set-within-the-gates", func(t *testing.T) {
		for _, tc := range []struct {
			path, scope string
			want        []string
		}{
			{"/admin/mcp/toolsets/ops/tools", "read", []string{"get_item", "list_items"}},
			{"/admin/mcp/toolsets/ops/tools", "read secret", []string{"get_item", "list_items", "get_secret"}},
			{"/admin/mcp/toolsets/writes/tools", "read write", []string{"set_limit"}},
			{"/admin/mcp/tools", "read write", []string{"get_item", "list_items", "set_limit"}},
		} {
			if status, got := restNames(t, tc.path, tc.scope); status != 200 || !slices.Equal(got, tc.want) {
				t.Errorf("GET %s as %q = %d %v, want %v", tc.path, tc.scope, status, got, tc.want)
			}
		}
	})
	t.Run("list-cache-keys-on-the-toolset", func(t *testing.T) {
		// Same signature, three sets, in an order that would reuse a
		// wrongly keyed entry.
		for range 2 {
			for _, tc := range []struct {
				path string
				n    int
			}{{"/admin/mcp/toolsets/writes/tools", 1}, {"/admin/mcp/tools", 3}, {"/admin/mcp/toolsets/ops/tools", 2}} {
				if _, got := restNames(t, tc.path, "read write"); len(got) != tc.n {
					t.Fatalf("GET %s = %v, want %d tools", tc.path, got, tc.n)
				}
			}
		}
	})
	cases := []struct {
		name   string
		r      req
		status int
		body   string
	}{
		{"rest-call-in-set", req{path: "/admin/mcp/toolsets/ops/call", body: `{"name":"get_item","arguments":{"id":"r1"}}`, header: auth(t, "read")}, 200, `"is_error":false`},
		{"rest-call-outside-set-is-unknown-tool", req{path: "/admin/mcp/toolsets/ops/call", body: `{"name":"set_limit","arguments":{"id":"r1"}}`, header: auth(t, "read write")}, 404, `{"error":"McpToolNotFoundError","message":"unknown tool \"set_limit\""}`},
		{"rest-unknown-toolset-is-404", req{method: "GET", path: "/admin/mcp/toolsets/nope/tools", header: auth(t, "read")}, 404, `unknown toolset \"nope\"`},
		{"rest-unknown-route-is-404", req{method: "GET", path: "/admin/mcp/toolsets/ops/other", header: auth(t, "read")}, 404, `no such endpoint`},
		{"mcp-unknown-toolset-is-404", req{path: "/mcp/nope", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: auth(t, "read")}, 404, `unknown toolset \"nope\"`},
		{"mcp-empty-toolset-is-404", req{path: "/mcp/", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: auth(t, "read")}, 404, `unknown toolset \"\"`},
		{"rest-empty-toolset-is-404", req{method: "GET", path: "/admin/mcp/toolsets//tools", header: auth(t, "read")}, 404, `unknown toolset \"\"`},
		{"mcp-nested-path-is-404", req{path: "/mcp/ops/x", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: auth(t, "read")}, 404, `no such endpoint`},
		{"mcp-toolset-needs-a-token", req{path: "/mcp/ops", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}, 401, `unauthorized`},
		{"rest-toolset-needs-a-token", req{method: "GET", path: "/admin/mcp/toolsets/ops/tools"}, 401, `unauthorized`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.r)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.body) {
				t.Fatalf("= %d %s, want %d containing %s", r.status, r.body, tc.status, tc.body)
			}
		})
	}
}

// A stdio session serves one toolset when asked, and says so when a
// reload removed it.
func TestToolsetsOverStdio(t *testing.T) {
	e := newEnv(t, toolsetCatalog)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- mcp.ServeStdio(context.Background(), inR, outW, &mcp.StdioOptions{State: e.current, Token: token(t, "read write"), Toolset: "ops"})
				outW.Close()
			}()
			ctx := context.Background()
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-stdio", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, era.opts)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if got := sdkNames(t, cs); !slices.Equal(got, []string{"get_item", "list_items"}) {
				t.Fatalf("stdio --toolset ops lists %v", got)
			}
			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "set_limit", Arguments: map[string]any{"id": "a"}})
			if werr, ok := errors.AsType[*jsonrpc.Error](err); !ok || werr.Code != -32602 {
				t.Fatalf("CallTool(set_limit) = %v, want -32602", err)
			}
			cs.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ServeStdio = %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ServeStdio did not end when the client closed")
			}
		})
	}
	t.Run("reloaded-away", func(t *testing.T) {
		e := newEnv(t, toolsetCatalog)
		s := startStdioWith(t, context.Background(), &mcp.StdioOptions{State: e.current, Token: token(t, "read"), Toolset: "ops"})
		e.load(strings.Split(toolsetCatalog, "toolsets:")[0])
		line := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
		if !strings.Contains(line, `unknown toolset \"ops\"`) || !strings.Contains(line, `"code":-32600`) {
			t.Fatalf("tools/list after the toolset was removed = %s", line)
		}
	})
}
