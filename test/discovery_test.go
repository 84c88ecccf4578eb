package test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// discoveryCatalog is the bundled catalog with discovery on for every
// caller, search_jobs always listed.
func discoveryCatalog(t *testing.T) string {
	return copyCatalog(t, func(s string) string {
		return strings.Replace(s, "\ntools:\n", "\ndiscovery: { mode: on, always: [search_jobs] }\ntools:\n", 1)
	})
}

func listedNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func searchFor(t *testing.T, cs *mcp.ClientSession, query string) []string {
	t.Helper()
	res, text := callText(t, cs, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": query, "limit": 20}})
	if res.IsError {
		t.Fatalf("search_tools(%q): %s", query, text)
	}
	var a struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("search_tools answer %q: %v", text, err)
	}
	var names []string
	for _, tool := range a.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestDiscoveryEndToEnd runs the built gateway on the bundled catalog with
// discovery on and drives it with the official Go SDK in both eras: the
// listing is the always-listed tool and the meta tools; search finds the
// tool for a task; call_tool runs a confirm-approval write once through
// the client's elicitation, audited under the real tool's name; a caller
// finds, and can call, nothing their gates hide.
func TestDiscoveryEndToEnd(t *testing.T) {
	up := startUpstream(t)
	g := launch(t, launchConfig{upstreamURL: up.URL, catalog: discoveryCatalog(t), env: []string{approvalKeys()}})
	op := token(t, "operator", "acme", operatorScopes...)
	viewer := token(t, "viewer", "globex", viewerScopes...)
	eras := []struct {
		name string
		opts *mcp.ClientSessionOptions
	}{{"modern", nil}, {"legacy", &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}}}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := sdkClient(t, g.MCP, op, era.opts, accept, false)
			if got, want := listedNames(t, cs), []string{"search_jobs", "search_tools", "call_tool"}; !slices.Equal(got, want) {
				t.Fatalf("tools/list = %v, want %v", got, want)
			}
			if got := searchFor(t, cs, "pause a queue so that no new jobs start"); len(got) == 0 || got[0] != "pause_queue" {
				t.Errorf("search for pausing a queue = %v, want pause_queue first", got)
			}
			vs := sdkClient(t, g.MCP, viewer, era.opts, nil, false)
			if got := searchFor(t, vs, "cancel a workflow, pause a queue"); slices.Contains(got, "cancel_workflow") || slices.Contains(got, "pause_queue") {
				t.Errorf("a viewer's search found writes their gates hide: %v", got)
			}
			hidden, hiddenText := callText(t, vs, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "pause_queue", "arguments": map[string]any{"queue": "billing", "reason": "x"}}})
			direct, directText := callText(t, vs, &mcp.CallToolParams{Name: "pause_queue", Arguments: map[string]any{"queue": "billing", "reason": "x"}})
			if !hidden.IsError || hiddenText != directText || !direct.IsError {
				t.Errorf("a viewer's call_tool(pause_queue) = %q, direct call = %q: want the same refusal", hiddenText, directText)
			}
		})
	}
	// The confirmation round trip through call_tool (modern era: the SDK
	// answers input_required with its elicitation handler).
	pause := "/v1/queues/billing/pause"
	before := len(sent(up, pause))
	cs := sdkClient(t, g.MCP, op, nil, accept, false)
	res, text := callText(t, cs, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "pause_queue", "arguments": map[string]any{"queue": "billing", "reason": "discovery"}}})
	if res.IsError {
		t.Fatalf("confirmed call through call_tool: %s", text)
	}
	if n := len(sent(up, pause)) - before; n != 1 {
		t.Fatalf("upstream saw %d pauses, want 1", n)
	}
	// The audit record is written before the answer (stage started) and
	// right after it; the pipe may deliver it a moment later.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(g.stderr.String(), `"tool":"pause_queue","arguments":{"queue":"billing","reason":"discovery"}`) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(g.stderr.String(), `"reason":"discovery"`) {
		t.Errorf("no audit record of pause_queue with the call's arguments")
	}
	if strings.Contains(g.stderr.String(), `"tool":"call_tool"`) {
		t.Errorf("an audit or log line names call_tool instead of the real tool")
	}
}

// TestTypeScriptSDKDiscovery runs test/ts/discovery.mjs against a gateway
// with discovery on.
func TestTypeScriptSDKDiscovery(t *testing.T) {
	if _, err := os.Stat("ts/node_modules/@modelcontextprotocol/sdk"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the TypeScript SDK is not installed in test/ts (run npm ci there): %v", err)
		}
		t.Skip("test/ts/node_modules missing; run `npm ci --prefix test/ts`")
	}
	up := startUpstream(t)
	g := launch(t, launchConfig{upstreamURL: up.URL, catalog: discoveryCatalog(t)})
	cmd := exec.Command("node", "ts/discovery.mjs")
	cmd.Env = append(os.Environ(),
		"GATEWAY_MCP_URL="+g.MCP,
		"OPERATOR_TOKEN="+token(t, "operator", "acme", operatorScopes...),
		"VIEWER_TOKEN="+token(t, "viewer", "globex", viewerScopes...),
	)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node discovery: %v\n%s", err, out)
	}
	type called struct {
		IsError bool
		Text    string
	}
	var rep struct {
		Fatal            string
		Listed           []string
		ListedBytes      int
		Search           []string
		ViaCallTool      called
		Direct           called
		ViewerSearch     []string
		ViewerCallHidden called
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.Fatal != "" {
		t.Fatalf("report %s: %v", out, err)
	}
	if !slices.Equal(rep.Listed, []string{"search_jobs", "search_tools", "call_tool"}) || rep.ListedBytes > 4096 {
		t.Errorf("listed %v in %d bytes, want the always-listed tool and the meta tools in at most 4 KiB", rep.Listed, rep.ListedBytes)
	}
	if len(rep.Search) == 0 || rep.Search[0] != "pause_queue" {
		t.Errorf("search = %v, want pause_queue first", rep.Search)
	}
	if rep.ViaCallTool.IsError || rep.ViaCallTool.Text != rep.Direct.Text {
		t.Errorf("call_tool(list_queues) = %+v, direct = %+v", rep.ViaCallTool, rep.Direct)
	}
	if slices.Contains(rep.ViewerSearch, "cancel_workflow") || !rep.ViewerCallHidden.IsError {
		t.Errorf("viewer found %v, call_tool(cancel_workflow) = %+v", rep.ViewerSearch, rep.ViewerCallHidden)
	}
}

// TestClaudeCodeConnectsToADiscoveryEndpoint adds the gateway to Claude
// Code (the npm package test/ts pins) as a user would, with no network but
// loopback: `claude mcp list` must show it connected, and Claude Code's
// health check must have listed the tools (search_tools and call_tool on
// this endpoint) with a 200.
func TestClaudeCodeConnectsToADiscoveryEndpoint(t *testing.T) {
	claude, _ := filepath.Abs("ts/node_modules/.bin/claude")
	if _, err := os.Stat(claude); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Claude Code is not installed in test/ts (run npm ci there): %v", err)
		}
		t.Skip("test/ts/node_modules missing; run `npm ci --prefix test/ts`")
	}
	up := startUpstream(t)
	g := launch(t, launchConfig{upstreamURL: up.URL, catalog: discoveryCatalog(t)})
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, args...)
		cmd.Dir = home
		cmd.Env = append(os.Environ(), "HOME="+home, "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args[:2], " "), err, out)
		}
		return string(out)
	}
	run("mcp", "add", "--transport", "http", "gateway", g.MCP, "--header", "Authorization: Bearer "+token(t, "operator", "acme", operatorScopes...))
	out := run("mcp", "list")
	if !strings.Contains(out, "gateway: "+g.MCP) || !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list:\n%s", out)
	}
	// The access log line is written after the answer and reaches the
	// test through a pipe: wait for it, within a generous bound.
	listed := `"method":"tools/list","status":200`
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(g.stderr.String(), listed) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if log := g.stderr.String(); !strings.Contains(log, listed) {
		t.Errorf("Claude Code's health check listed no tools; gateway log:\n%.3000s", log)
	}
}
