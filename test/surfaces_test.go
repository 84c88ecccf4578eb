package test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The surfaces (MCP over Streamable HTTP in both eras, the REST mirror and
// stdio) are thin adapters over one core: for the same caller they list
// the same tools and give the same answers, and they fail the same way,
// each in its own framing.

var callers = []struct {
	name, workspace string
	scopes          []string
}{
	{"viewer-acme", "acme", viewerScopes},
	{"viewer-globex", "globex", viewerScopes},
	{"operator-acme", "acme", operatorScopes},
	{"operator-globex", "globex", operatorScopes},
}

// restTools is GET {admin}/tools: the tool names, in order.
func restTools(t *testing.T, g *gateway, tok string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/admin/mcp/tools", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tools []struct{ Name string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &tools) != nil {
		t.Fatalf("GET /admin/mcp/tools = %d %s", resp.StatusCode, body)
	}
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
	}
	return names
}

// restCall is POST {admin}/call.
type restAnswer struct {
	Status  int
	IsError bool   `json:"is_error"`
	Content string `json:"content"`
	Error   string `json:"error"`
	Message string `json:"message"`
	raw     string
}

func restCall(t *testing.T, g *gateway, tok, name string, args map[string]any) restAnswer {
	t.Helper()
	in := map[string]any{"name": name}
	if args != nil {
		in["arguments"] = args
	}
	b, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/admin/mcp/call", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := restAnswer{Status: resp.StatusCode, raw: string(body)}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("POST /admin/mcp/call %s = %d %s: %v", name, resp.StatusCode, body, err)
	}
	return a
}

var fenceNonce = regexp.MustCompile(`untrusted-document-text-[0-9a-f]{32}`)

// unfenced replaces each response's fence nonce, which is random per
// response, so two renderings of one result compare equal.
func unfenced(s string) string {
	return fenceNonce.ReplaceAllString(s, "untrusted-document-text-NONCE")
}

func TestSurfacesListTheSameTools(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	withStdio := stdioAvailable()
	if !withStdio {
		t.Log("no `gateway stdio` subcommand: comparing MCP and REST only")
	}
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			tok := token(t, "user-"+c.name, c.workspace, c.scopes...)
			rest := restTools(t, g, tok)
			if len(rest) == 0 {
				t.Fatal("REST lists no tools")
			}
			want := slices.Sorted(slices.Values(rest))
			for _, era := range eras {
				names, _ := toolNames(t, connect(t, g.MCP, tok, era.opts))
				if !slices.Equal(names, want) {
					t.Errorf("MCP %s lists %v\nREST lists %v", era.name, names, want)
				}
				if withStdio {
					names, _ := toolNames(t, connectStdio(t, up, "", tok, era.opts))
					if !slices.Equal(names, want) {
						t.Errorf("stdio %s lists %v\nREST lists %v", era.name, names, want)
					}
				}
			}
		})
	}
}

func TestSurfacesAnswerTheSame(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	withStdio := stdioAvailable()
	calls := []struct {
		name string
		args map[string]any
	}{
		{"get_job", map[string]any{"job_id": "job-acme-0007"}},
		{"get_job", map[string]any{"job_id": "job-globex-0003"}},
		{"search_jobs", map[string]any{"state": "Failed", "page_size": 5}},
		{"list_queues", map[string]any{}},
		{"knowledge_search", map[string]any{"query": "instructions"}},
		{"get_job_history", map[string]any{"job_id": "job-acme-0007"}},
		{"get_job", map[string]any{}},                                      // schema failure: isError on both
		{"requeue_job", map[string]any{"job_id": "job-acme-0001", "x": 1}}, // hidden for viewers, bad args for operators: no write either way
	}
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			tok := token(t, "user-"+c.name, c.workspace, c.scopes...)
			cs := connect(t, g.MCP, tok, nil)
			var sc *mcp.ClientSession
			if withStdio {
				sc = connectStdio(t, up, "", tok, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			}
			for _, call := range calls {
				// Gates and prerequisites hide a tool (isError), they never
				// make it unknown: none of these calls is a protocol error.
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: call.name, Arguments: call.args})
				if err != nil {
					t.Fatalf("%s over MCP: %v", call.name, err)
				}
				rest := restCall(t, g, tok, call.name, call.args)
				if rest.Status != 200 || rest.IsError != res.IsError {
					t.Errorf("%s: MCP isError=%v, REST %d %s", call.name, res.IsError, rest.Status, rest.raw)
					continue
				}
				if a, b := unfenced(resultText(res)), unfenced(rest.Content); a != b {
					t.Errorf("%s(%v): MCP and REST differ\nMCP:  %.300s\nREST: %.300s", call.name, call.args, a, b)
				}
				if sc != nil {
					sres, err := sc.CallTool(context.Background(), &mcp.CallToolParams{Name: call.name, Arguments: call.args})
					if err != nil || sres.IsError != res.IsError || unfenced(resultText(sres)) != unfenced(resultText(res)) {
						t.Errorf("%s: stdio = %+v, %v; MCP said %.300s", call.name, sres, err, resultText(res))
					}
				}
			}
		})
	}
	for _, r := range up.requests() {
		if strings.Contains(r.Path, "requeue") {
			t.Errorf("a refused requeue reached the upstream: %s %s", r.Method, r.Path)
		}
	}
}

func TestSurfacesFailTheSameWay(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	viewer := token(t, "vera", "acme", viewerScopes...)
	cs := connect(t, g.MCP, viewer, nil)

	t.Run("unknown-tool", func(t *testing.T) {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"})
		if werr, ok := errors.AsType[*jsonrpc.Error](err); !ok || werr.Code != -32602 {
			t.Errorf("MCP = %v, want -32602", err)
		}
		if a := restCall(t, g, viewer, "no_such_tool", nil); a.Status != 404 || a.Error != "McpToolNotFoundError" || a.Message != `unknown tool "no_such_tool"` {
			t.Errorf("REST = %d %s, want 404 McpToolNotFoundError", a.Status, a.raw)
		}
	})
	t.Run("hidden-tool", func(t *testing.T) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "cancel_job", Arguments: map[string]any{"job_id": "job-acme-0002"}})
		if err != nil || !res.IsError {
			t.Errorf("MCP = %+v, %v; want isError", res, err)
		}
		if a := restCall(t, g, viewer, "cancel_job", map[string]any{"job_id": "job-acme-0002"}); a.Status != 200 || !a.IsError {
			t.Errorf("REST = %d %s, want 200 is_error", a.Status, a.raw)
		}
	})

	t.Run("output-too-large", func(t *testing.T) {
		// job-acme-0031 carries a ~10 KiB note; get_job has no list to
		// trim, so a 4 KiB text bound refuses it.
		small := catalogWithLimits(t, "limits:\n  text_bytes: 4KiB\n")
		g := startGateway(t, up, small)
		cs := connect(t, g.MCP, viewer, nil)
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_job", Arguments: map[string]any{"job_id": "job-acme-0031"}})
		werr, ok := errors.AsType[*jsonrpc.Error](err)
		if !ok || werr.Code != -31413 || !strings.Contains(string(werr.Data), "AGENT_OUTPUT_TOO_LARGE") {
			t.Errorf("MCP = %v, want -31413 AGENT_OUTPUT_TOO_LARGE", err)
		}
		resp, body := post(t, g.MCP, viewer, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_job","arguments":{"job_id":"job-acme-0031"}}}`, nil)
		if resp.StatusCode != 413 {
			t.Errorf("MCP HTTP status = %d %s, want 413", resp.StatusCode, body)
		}
		if a := restCall(t, g, viewer, "get_job", map[string]any{"job_id": "job-acme-0031"}); a.Status != 413 || a.Error != "AGENT_OUTPUT_TOO_LARGE" {
			t.Errorf("REST = %d %s, want 413 AGENT_OUTPUT_TOO_LARGE", a.Status, a.raw)
		}
		// A smaller job still fits.
		if a := restCall(t, g, viewer, "get_job", map[string]any{"job_id": "job-acme-0007"}); a.Status != 200 || a.IsError {
			t.Errorf("REST small job = %d %s", a.Status, a.raw)
		}
	})

	t.Run("rate-limited", func(t *testing.T) {
		limited := catalogWithLimits(t, "limits:\n  rate:\n    per_principal: { rps: 0.01, burst: 2 }\n")
		g := startGateway(t, up, limited)
		for range 2 {
			if a := restCall(t, g, viewer, "list_queues", nil); a.Status != 200 {
				t.Fatalf("REST = %d %s", a.Status, a.raw)
			}
		}
		resp, body := post(t, g.MCP, viewer, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_queues","arguments":{}}}`, nil)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, `"code":-31429`) {
			t.Errorf("MCP = %d (Retry-After %q) %s, want 429 -31429", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if a := restCall(t, g, viewer, "list_queues", nil); a.Status != 429 || a.Error != "rate_limited" {
			t.Errorf("REST = %d %s, want 429 rate_limited", a.Status, a.raw)
		}
		// Another principal is not affected.
		if a := restCall(t, g, token(t, "other", "acme", viewerScopes...), "list_queues", nil); a.Status != 200 {
			t.Errorf("another principal = %d %s", a.Status, a.raw)
		}
	})
}

// catalogWithLimits copies the bundled catalog into a temporary file with
// its limits section replaced by limits.
func catalogWithLimits(t *testing.T, limits string) string {
	t.Helper()
	return copyCatalog(t, func(s string) string {
		out := limitsSection.ReplaceAllString(s, limits)
		if out == s {
			t.Fatal("the bundled catalog has no limits section to replace")
		}
		return out
	})
}

var limitsSection = regexp.MustCompile(`(?m)^limits:\n(?:[ \t]+.*\n)*`)
