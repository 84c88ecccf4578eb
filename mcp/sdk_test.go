package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/gateway/mcp"
)

// bearer adds a token to every request the SDK client sends.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestGoSDKClient drives the handler with the official Go SDK client in
// both eras: the default Connect probes server/discover (modern,
// 2026-07-28); ProtocolVersion 2025-11-25 forces the initialize handshake.
// The standalone SSE GET is left on, so the legacy client meets our 405.
func TestGoSDKClient(t *testing.T) {
	e := newEnv(t, manyTools(mcp.ListPageSize+20)+`  - name: get_item
    description: Get an item by id.
    input:
      type: object
      properties: { id: { type: string } }
      required: [id]
      additionalProperties: false
    request: { upstream: up, path: "/v1/items/{id}" }
  - name: set_limit
    description: Set a limit.
    kind: write
    gate: write
    request: { upstream: up, method: POST, path: "/v1/limit" }
`)
	for _, era := range []struct {
		name string
		opts *sdk.ClientSessionOptions
		want string
	}{
		{"modern", nil, "2026-07-28"},
		{"legacy", &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, "2025-11-25"},
	} {
		t.Run(era.name, func(t *testing.T) {
			ctx := context.Background()
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint:   e.srv.URL + "/mcp",
				HTTPClient: &http.Client{Transport: bearer{token(t, "read"), http.DefaultTransport}},
				MaxRetries: -1,
			}, era.opts)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cs.Close()
			init := cs.InitializeResult()
			if init.ProtocolVersion != era.want || init.ServerInfo == nil || init.ServerInfo.Name != "test-gw" || init.Capabilities.Tools == nil {
				t.Fatalf("session = %+v, want %s with serverInfo", init, era.want)
			}

			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatalf("Tools: %v", err)
				}
				names = append(names, tool.Name)
			}
			// ListPageSize+21 visible (set_limit is gated), across two pages.
			if n := mcp.ListPageSize + 21; len(names) != n || names[0] != "t0000" || names[n-1] != "get_item" {
				t.Fatalf("listed %d tools: first %q, last %q", len(names), names[0], names[len(names)-1])
			}

			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_item", Arguments: map[string]any{"id": "k9"}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			text, _ := res.Content[0].(*sdk.TextContent)
			if res.IsError || text == nil || text.Text != `{"id":"k9","ok":true}` {
				t.Fatalf("CallTool = %+v", res)
			}
			if m, ok := res.StructuredContent.(map[string]any); !ok || m["id"] != "k9" {
				t.Fatalf("structuredContent = %#v", res.StructuredContent)
			}

			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_item", Arguments: map[string]any{}})
			if err != nil || !res.IsError {
				t.Fatalf("CallTool(bad arguments) = %+v, %v; want an isError result", res, err)
			}

			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "nope"})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32602 {
				t.Fatalf("CallTool(unknown) error = %v, want JSON-RPC -32602", err)
			}
			// The session still works after a protocol error.
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("ListTools after an error: %v", err)
			}
		})
	}
}
