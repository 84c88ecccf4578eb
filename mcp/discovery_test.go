package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/gateway/mcp"
	"github.com/mcpgw/gateway/proxy"
)

// discoveryCatalog: six reads and a write; auto discovery above three
// visible tools; one tool always listed; a toolset with discovery on; a
// per-tool rate limit on get_item.
const discoveryCatalog = `
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
discovery: { mode: auto, threshold: 3, always: [list_items] }
limits:
  rate:
    per_tool:
      get_item: { rps: 0.001, burst: 2 }
tools:
  - name: get_item
    title: Get item
    description: Get one item by its id.
    input: { type: object, properties: { id: { type: string, description: The item's id. } }, required: [id], additionalProperties: false }
    request: { upstream: up, path: "/v1/items/{id}" }
  - name: list_items
    description: List every item.
    tags: [items]
    request: { upstream: up, path: /v1/items }
  - name: count_widgets
    description: Count the widgets in stock.
    tags: [widgets]
    request: { upstream: up, path: /v1/items/widgets }
  - name: read_journal
    description: Read the journal of past changes.
    tags: [audit]
    request: { upstream: up, path: /v1/items/journal }
  - name: reveal_vault
    description: Reveal the vault's combination.
    gate: secret
    request: { upstream: up, path: /v1/items/vault }
  - name: cancel_item
    description: Cancel an item that is stuck.
    kind: write
    gate: write
    input: { type: object, properties: { id: { type: string } }, required: [id], additionalProperties: false }
    request: { upstream: up, method: POST, path: "/v1/items/{id}/cancel" }
toolsets:
  few:
    tools: [get_item, list_items]
    discovery: { mode: on }
`

type searchAnswer struct {
	Tools []struct {
		Name        string         `json:"name"`
		Kind        string         `json:"kind"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
}

func searchNames(t *testing.T, cs *sdk.ClientSession, args map[string]any) ([]string, *sdk.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "search_tools", Arguments: args})
	if err != nil {
		t.Fatalf("search_tools(%v): %v", args, err)
	}
	if res.IsError {
		return nil, res
	}
	var a searchAnswer
	text := res.Content[0].(*sdk.TextContent).Text
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("search_tools answer %q: %v", text, err)
	}
	var names []string
	for _, tool := range a.Tools {
		if tool.InputSchema["type"] != "object" {
			t.Errorf("found %s without its inputSchema: %v", tool.Name, tool.InputSchema)
		}
		names = append(names, tool.Name)
	}
	return names, res
}

func TestDiscoveryThroughGoSDK(t *testing.T) {
	audit := &toolAudit{}
	e := newEnvWith(t, discoveryCatalog, envConfig{audit: audit})
	meta := []string{"search_tools", "call_tool"}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := context.Background()
			// Five visible tools is over the threshold: the always-listed
			// tool and the meta tools. Three visible is not: all three.
			reader := sdkSession(t, e.srv.URL+"/mcp", token(t, "read"), era.opts)
			if got, want := sdkNames(t, reader), append([]string{"list_items"}, meta...); !slices.Equal(got, want) {
				t.Fatalf("auto discovery lists %v, want %v", got, want)
			}
			few := sdkSession(t, e.srv.URL+"/mcp/few", token(t, "read"), era.opts)
			// The toolset's settings replace the catalog's, always-list too.
			if got, want := sdkNames(t, few), meta; !slices.Equal(got, want) {
				t.Fatalf("toolset with discovery on lists %v, want %v", got, want)
			}

			// Search ranks by meaning, within what the caller may see.
			if got, _ := searchNames(t, reader, map[string]any{"query": "how many widgets are there", "limit": 1}); !slices.Equal(got, []string{"count_widgets"}) {
				t.Errorf("search widgets = %v, want [count_widgets]", got)
			}
			if got, _ := searchNames(t, reader, map[string]any{"query": "who changed things, history"}); len(got) == 0 || got[0] != "read_journal" {
				t.Errorf("search history = %v, want read_journal first", got)
			}
			for _, q := range []string{"vault combination", "cancel the stuck item"} {
				if got, _ := searchNames(t, reader, map[string]any{"query": q}); slices.Contains(got, "reveal_vault") || slices.Contains(got, "cancel_item") {
					t.Errorf("search %q as a reader = %v: reveals a tool the caller cannot see", q, got)
				}
			}
			writer := sdkSession(t, e.srv.URL+"/mcp", token(t, "read write"), era.opts)
			if got, _ := searchNames(t, writer, map[string]any{"query": "cancel the stuck item"}); len(got) == 0 || got[0] != "cancel_item" {
				t.Errorf("search cancel as a writer = %v, want cancel_item first", got)
			}
			if got, _ := searchNames(t, writer, map[string]any{"query": "item", "kind": "write"}); !slices.Equal(got, []string{"cancel_item"}) {
				t.Errorf("search kind write = %v", got)
			}
			if got, _ := searchNames(t, reader, map[string]any{"query": "", "tags": []any{"AUDIT"}}); !slices.Equal(got, []string{"read_journal"}) {
				t.Errorf("search by tag = %v", got)
			}
			// The toolset searches only its own tools.
			if got, _ := searchNames(t, few, map[string]any{"query": "widgets journal item"}); slices.Contains(got, "count_widgets") || slices.Contains(got, "read_journal") {
				t.Errorf("search in toolset few = %v: found a tool outside the set", got)
			}

			// call_tool runs the real tool; so does a direct call of an
			// unlisted tool.
			via, err := reader.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "count_widgets"}})
			direct, err2 := reader.CallTool(ctx, &sdk.CallToolParams{Name: "count_widgets"})
			if err != nil || err2 != nil || via.IsError || direct.IsError {
				t.Fatalf("call_tool = %+v, %v; direct = %+v, %v", via, err, direct, err2)
			}
			if a, b := via.Content[0].(*sdk.TextContent).Text, direct.Content[0].(*sdk.TextContent).Text; a != b || !strings.Contains(a, `"widgets"`) {
				t.Errorf("call_tool answered %s, the direct call %s", a, b)
			}
			// A tool the caller may not see is refused through call_tool
			// exactly as directly.
			hidden, err := reader.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "reveal_vault"}})
			hiddenDirect, err2 := reader.CallTool(ctx, &sdk.CallToolParams{Name: "reveal_vault"})
			if (err == nil) != (err2 == nil) || err == nil && (!hidden.IsError || hidden.Content[0].(*sdk.TextContent).Text != hiddenDirect.Content[0].(*sdk.TextContent).Text) {
				t.Errorf("call_tool(reveal_vault) = %+v, %v; direct = %+v, %v", hidden, err, hiddenDirect, err2)
			}
			// Through call_tool, the write is audited under its own name.
			before := audit.count("cancel_item")
			res, err := writer.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "cancel_item", "arguments": map[string]any{"id": "k9"}}})
			if err != nil || res.IsError {
				t.Fatalf("call_tool(cancel_item) = %+v, %v", res, err)
			}
			if audit.count("cancel_item") <= before || audit.count("call_tool") != 0 {
				t.Errorf("audit records: %v, want cancel_item's, never call_tool's", audit.tools())
			}
			// Bad call_tool arguments are a tool error that says what to send.
			for _, args := range []map[string]any{{}, {"name": 7}, {"name": "get_item", "arguments": "x"}, {"name": "call_tool"}, {"name": "get_item", "extra": 1}} {
				res, err := reader.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: args})
				if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "call_tool") {
					t.Errorf("call_tool(%v) = %+v, %v, want a tool error about call_tool", args, res, err)
				}
			}
			// Search's bounds.
			for _, args := range []map[string]any{{"query": strings.Repeat("x", 2000)}, {"query": strings.Repeat("x", 1025)}, {"query": "item", "limit": 21}, {"query": "item", "limit": 0}, {"query": "\x01\x02\x7f"}, {"query": "item", "kind": "delete"}} {
				if _, res := searchNames(t, reader, args); res == nil || !res.IsError {
					t.Errorf("search_tools(%.40v) = %+v, want a tool error", args, res)
				}
			}
			// The bound is in characters, as the schema's maxLength counts.
			if _, res := searchNames(t, reader, map[string]any{"query": "item " + strings.Repeat("é", 1019)}); res == nil || res.IsError {
				t.Errorf("search_tools with 1,024 characters (2,043 bytes) = %+v, want an answer", res)
			}
		})
	}
}

// The per-tool rate limit counts calls through call_tool as calls of the
// tool, so call_tool is no way around it.
func TestCallToolCountsAgainstTheToolsRateLimit(t *testing.T) {
	e := newEnv(t, discoveryCatalog)
	cs := sdkSession(t, e.srv.URL+"/mcp", token(t, "read"), nil)
	ctx := context.Background()
	for i := range 3 {
		name, args := "get_item", map[string]any{"id": "a"}
		if i != 1 {
			name, args = "call_tool", map[string]any{"name": "get_item", "arguments": map[string]any{"id": "a"}}
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		limited := err != nil && strings.Contains(err.Error(), "Too Many Requests")
		if err != nil && !limited || err == nil && res.IsError {
			t.Fatalf("call %d (%s) = %+v, %v", i, name, res, err)
		}
		if limited != (i == 2) {
			t.Fatalf("call %d (%s) = %+v, %v; want only the third limited", i, name, res, err)
		}
	}
}

func TestDiscoveryOverREST(t *testing.T) {
	e := newEnv(t, discoveryCatalog)
	names := func(body []byte) []string {
		var tools []struct{ Name string }
		json.Unmarshal(body, &tools)
		var out []string
		for _, tool := range tools {
			out = append(out, tool.Name)
		}
		return out
	}
	r := e.do(req{method: "GET", path: "/admin/mcp/tools", header: auth(t, "read")})
	if got := names(r.body); r.status != 200 || !slices.Equal(got, []string{"list_items", "search_tools", "call_tool"}) {
		t.Fatalf("GET tools = %d %v", r.status, got)
	}
	r = e.do(req{method: "GET", path: "/admin/mcp/tools?q=count+widgets&limit=1", header: auth(t, "read")})
	if got := names(r.body); r.status != 200 || !slices.Equal(got, []string{"count_widgets"}) {
		t.Fatalf("GET tools?q= = %d %s", r.status, r.body)
	}
	// A filter alone is a search too, never the whole listing unfiltered.
	r = e.do(req{method: "GET", path: "/admin/mcp/tools?tag=widgets", header: auth(t, "read")})
	if got := names(r.body); r.status != 200 || !slices.Equal(got, []string{"count_widgets"}) {
		t.Fatalf("GET tools?tag=widgets = %d %s, want count_widgets alone", r.status, r.body)
	}
	r = e.do(req{method: "GET", path: "/admin/mcp/tools?q=vault", header: auth(t, "read")})
	if got := names(r.body); r.status != 200 || len(got) != 0 {
		t.Fatalf("GET tools?q=vault as a reader = %d %s, want nothing", r.status, r.body)
	}
	r = e.do(req{method: "GET", path: "/admin/mcp/tools?q=x&limit=99", header: auth(t, "read")})
	if r.status != 400 {
		t.Fatalf("GET tools?limit=99 = %d %s, want 400", r.status, r.body)
	}
	// A parameter that does not decode, or a single-valued one given
	// twice, is refused rather than dropped into the whole listing.
	for _, q := range []string{"?tag=widgets;x", "?tag=%zz", "?q=count%2widgets", "?q=count;widgets", "?kind=write;", "?q=count&q=vault", "?limit=1&limit=20"} {
		if r = e.do(req{method: "GET", path: "/admin/mcp/tools" + q, header: auth(t, "read")}); r.status != 400 {
			t.Errorf("GET tools%s = %d %s, want 400", q, r.status, r.body)
		}
	}
	r = e.do(req{path: "/admin/mcp/call", body: `{"name":"call_tool","arguments":{"name":"get_item","arguments":{"id":"r1"}}}`, header: auth(t, "read")})
	if r.status != 200 || !strings.Contains(string(r.body), `\"id\":\"r1\"`) {
		t.Fatalf("REST call_tool = %d %s", r.status, r.body)
	}
	r = e.do(req{path: "/admin/mcp/call", body: `{"name":"call_tool","arguments":{"name":"get_item","name":"reveal_vault"}}`, header: auth(t, "read")})
	if r.status != 400 {
		t.Fatalf("REST call_tool with a duplicate name = %d %s, want 400", r.status, r.body)
	}
}

// toolAudit keeps the tool name of each audit record.
type toolAudit struct {
	mu    sync.Mutex
	names []string
}

func (a *toolAudit) Write(_ context.Context, rec *proxy.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.names = append(a.names, rec.Tool)
	return nil
}

func (a *toolAudit) tools() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.names)
}

func (a *toolAudit) count(name string) int {
	n := 0
	for _, x := range a.tools() {
		if x == name {
			n++
		}
	}
	return n
}

// A tools/list page ends at mcp.ListPageBytes of tool objects as well as
// at mcp.ListPageSize tools: forty tools of 20 KB each come in pages of
// at most 256 KiB, and every tool arrives exactly once across them.
func TestToolsListPagesAreBoundedInBytes(t *testing.T) {
	var b strings.Builder
	b.WriteString(`
version: 1
server: { name: test-gw, version: 1.2.3 }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  view: { scopes: [read] }
upstreams:
  up: { base_url: "${UP}", timeout: 2s }
tools:
`)
	long := strings.Repeat("word ", 4000)
	for i := range 40 {
		fmt.Fprintf(&b, "  - { name: tool_%02d, description: %q, request: { upstream: up, path: /v1/items } }\n", i, long)
	}
	e := newEnv(t, b.String())
	seen := map[string]int{}
	cursor, pages := "", 0
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + strconv.Quote(cursor) + `}`
		}
		r := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + params + `}`, header: auth(t, "read")})
		var out struct {
			Result struct {
				Tools      []struct{ Name string }
				NextCursor string
			}
		}
		if err := json.Unmarshal(r.body, &out); err != nil || r.status != 200 {
			t.Fatalf("tools/list = %d %.300s", r.status, r.body)
		}
		if len(r.body) > mcp.ListPageBytes+4096 {
			t.Errorf("page %d is %d bytes, want at most about %d", pages, len(r.body), mcp.ListPageBytes)
		}
		for _, tool := range out.Result.Tools {
			seen[tool.Name]++
		}
		pages++
		if cursor = out.Result.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 40 || pages < 3 {
		t.Fatalf("listed %d distinct tools in %d pages, want 40 in several", len(seen), pages)
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", name, n)
		}
	}
}

// The meta tools read their arguments as any tool's are read: call_tool's
// arguments null is refused as a direct call's is, search_tools' limit
// 5.0 is the integer 5 and its kind null is no kind; and search_tools is
// a call the view gate guards, not an empty answer for those it denies.
func TestMetaToolsReadArgumentsAsDirectCallsDo(t *testing.T) {
	e := newEnv(t, discoveryCatalog)
	call := func(tok, tool, args string) (bool, string) {
		t.Helper()
		r := e.do(req{path: "/mcp/few", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`,
			header: map[string]string{"Authorization": "Bearer " + tok}})
		var body struct {
			Result struct {
				IsError bool
				Content []struct{ Text string }
			}
			Error *struct{ Message string }
		}
		if err := json.Unmarshal(r.body, &body); err != nil || r.status != 200 {
			t.Fatalf("%s(%s) = %d %s", tool, args, r.status, r.body)
		}
		if body.Error != nil {
			return true, body.Error.Message
		}
		if len(body.Result.Content) == 0 {
			t.Fatalf("%s(%s) = %s", tool, args, r.body)
		}
		return body.Result.IsError, body.Result.Content[0].Text
	}
	reader := token(t, "read")
	for _, tc := range []struct {
		tool, args string
		refused    bool
		want       string
	}{
		{"call_tool", `{"name":"list_items","arguments":null}`, true, "arguments must be an object"},
		{"call_tool", `{"name":"list_items"}`, false, ""},
		{"search_tools", `{"query":"item","limit":2.0}`, false, `"get_item"`},
		{"search_tools", `{"query":"item","limit":2.5}`, true, "limit an integer"},
		{"search_tools", `{"query":"item","kind":null}`, true, "kind read or write"},
		{"search_tools", `{"query":"item","kind":"read"}`, false, `"get_item"`},
	} {
		refused, text := call(reader, tc.tool, tc.args)
		if refused != tc.refused || !strings.Contains(text, tc.want) {
			t.Errorf("%s(%s) = refused %v %q, want refused %v containing %q", tc.tool, tc.args, refused, text, tc.refused, tc.want)
		}
	}
	if refused, text := call(token(t, "other"), "search_tools", `{"query":"item"}`); !refused || !strings.Contains(text, `the "view" gate denies this caller`) {
		t.Errorf("search_tools for a caller the view gate denies = refused %v %q, want the gate's refusal", refused, text)
	}
}
