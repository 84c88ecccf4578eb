package test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	readTools = []string{
		"search_jobs", "get_job", "get_job_history", "get_job_dependencies", "list_queues", "get_queue",
		"get_tag_facet", "list_schedules", "get_schedule", "list_audit_records", "list_observers",
		"list_workflows", "get_workflow", "list_workflow_jobs",
	}
	writeTools     = []string{"requeue_job", "cancel_job", "trigger_schedule", "set_concurrency_limit", "pause_queue", "resume_queue", "cancel_workflow"}
	sensitiveTools = []string{"get_job_payload", "get_job_output"}
)

// eras are the two ways the official Go client connects: the modern
// stateless era (server/discover) and the legacy initialize handshake.
var eras = []struct {
	name string
	opts *mcp.ClientSessionOptions
}{
	{"modern-2026-07-28", nil},
	{"legacy-2025-11-25", &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}},
}

func connect(t *testing.T, endpoint, tok string, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: httpClient(tok), DisableStandaloneSSE: true, MaxRetries: -1,
	}, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) ([]string, map[string]*mcp.Tool) {
	t.Helper()
	var names []string
	byName := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		names = append(names, tool.Name)
		byName[tool.Name] = tool
	}
	slices.Sort(names)
	return names, byName
}

func sorted(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return out
}

func TestGoSDKListsWhatEachCallerMaySee(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	cases := []struct {
		name      string
		workspace string
		scopes    []string
		want      []string
	}{
		{"viewer-without-knowledge-base", "globex", viewerScopes, sorted(readTools)},
		{"viewer-with-knowledge-base", "acme", viewerScopes, sorted(readTools, []string{"knowledge_search"})},
		{"operator-every-gate", "globex", operatorScopes, sorted(readTools, writeTools, sensitiveTools)},
		{"operator-with-knowledge-base", "acme", operatorScopes, sorted(readTools, writeTools, sensitiveTools, []string{"knowledge_search"})},
		{"no-view-scope", "acme", []string{"jobs:cancel"}, nil},
	}
	for _, era := range eras {
		for _, tc := range cases {
			t.Run(era.name+"/"+tc.name, func(t *testing.T) {
				cs := connect(t, g.MCP, token(t, "user-"+tc.name, tc.workspace, tc.scopes...), era.opts)
				names, byName := toolNames(t, cs)
				if !slices.Equal(names, tc.want) {
					t.Fatalf("tools = %v (%d)\nwant %v (%d)", names, len(names), tc.want, len(tc.want))
				}
				for _, n := range readTools {
					if tool := byName[n]; tool != nil {
						if a := tool.Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
							t.Errorf("read tool %s annotations = %+v, want readOnly and idempotent", n, a)
						}
					}
				}
				for _, n := range writeTools {
					if tool := byName[n]; tool != nil && (tool.Annotations == nil || tool.Annotations.ReadOnlyHint) {
						t.Errorf("write tool %s is marked read-only", n)
					}
				}
			})
		}
	}
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestGoSDKCallReturnsTheTokensWorkspaceData(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	for _, era := range eras {
		for _, ws := range []string{"acme", "globex"} {
			t.Run(era.name+"/"+ws, func(t *testing.T) {
				cs := connect(t, g.MCP, token(t, "viewer", ws, viewerScopes...), era.opts)
				res := callTool(t, cs, "search_jobs", map[string]any{"page_size": 5})
				if res.IsError {
					t.Fatalf("search_jobs error: %s", resultText(res))
				}
				text := resultText(res)
				var structured struct {
					Jobs []struct {
						ID string `json:"jobId"`
					} `json:"jobs"`
					HasMore bool `json:"hasMore"`
				}
				raw, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(raw, &structured); err != nil {
					t.Fatalf("structuredContent %s: %v", raw, err)
				}
				if len(structured.Jobs) != 5 {
					t.Fatalf("jobs = %d, want 5 (page_size): %s", len(structured.Jobs), raw)
				}
				for _, j := range structured.Jobs {
					if !strings.Contains(j.ID, ws) {
						t.Errorf("job %q is not workspace %s's", j.ID, ws)
					}
				}
				// The text block is the same result as compact JSON.
				var fromText any
				if err := json.Unmarshal([]byte(text), &fromText); err != nil {
					t.Errorf("text block is not JSON: %v: %.200s", err, text)
				}
			})
		}
	}
}

func TestWorkspaceFenceAndNoTokenForwarding(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	tok := token(t, "viewer", "acme", viewerScopes...)
	cs := connect(t, g.MCP, tok, nil)

	// globex's jobs are invisible to acme even when named exactly.
	gl := connect(t, g.MCP, token(t, "viewer", "globex", viewerScopes...), nil)
	res := callTool(t, gl, "search_jobs", map[string]any{"page_size": 1})
	var page struct {
		Jobs []struct {
			ID string `json:"jobId"`
		} `json:"jobs"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &page)
	if len(page.Jobs) == 0 {
		t.Fatalf("globex has no jobs: %s", raw)
	}
	res = callTool(t, cs, "get_job", map[string]any{"job_id": page.Jobs[0].ID})
	if got := resultText(res); res.IsError || !strings.Contains(got, `"found":false`) {
		t.Errorf("acme reading globex's job = %s, want found:false", got)
	}

	before := len(up.requests())
	for _, args := range []map[string]any{
		{"job_id": page.Jobs[0].ID, "workspace": "globex"},
		{"job_id": page.Jobs[0].ID, "X-Workspace-Id": "globex"},
		{"job_id": page.Jobs[0].ID, "ws": "globex"},
	} {
		res := callTool(t, cs, "get_job", args)
		if !res.IsError {
			t.Errorf("get_job(%v) = %s, want a tool error for the extra argument", args, resultText(res))
		}
	}
	reqs := up.requests()
	if len(reqs) != before {
		t.Errorf("forged-workspace calls reached the upstream: %+v", reqs[before:])
	}
	for _, r := range reqs {
		if ws := r.Header.Get("X-Workspace-Id"); ws != "acme" && ws != "globex" {
			t.Errorf("upstream saw workspace %q", ws)
		}
		if r.Header.Get("Authorization") != "Bearer "+serviceToken {
			t.Errorf("upstream saw Authorization %q, want the service token", r.Header.Get("Authorization"))
		}
		for k, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, tok) {
					t.Errorf("the caller's token reached the upstream in %s", k)
				}
			}
		}
		if strings.Contains(r.Body, tok) || strings.Contains(r.Query, tok) {
			t.Errorf("the caller's token reached the upstream in a body or query")
		}
	}
}

func TestGoSDKTruncationAndRefusal(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	small := copyCatalog(t, func(s string) string {
		return strings.Replace(s, "  text_bytes: 40KiB\n", "  text_bytes: 4KiB\n", 1)
	})
	g413 := launch(t, launchConfig{upstreamURL: up.URL, catalog: small})
	tok := token(t, "viewer", "acme", viewerScopes...)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := connect(t, g.MCP, tok, era.opts)
			res := callTool(t, cs, "search_jobs", map[string]any{"page_size": 100})
			if res.IsError {
				t.Fatalf("search_jobs: %s", resultText(res))
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var page struct {
				Jobs               []json.RawMessage `json:"jobs"`
				TransportTruncated *struct {
					List    string `json:"list"`
					Dropped int    `json:"dropped"`
				} `json:"transportTruncated"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				t.Fatal(err)
			}
			if page.TransportTruncated == nil || page.TransportTruncated.List != "jobs" || page.TransportTruncated.Dropped == 0 ||
				len(page.Jobs)+page.TransportTruncated.Dropped != 60 || len(raw) > 32<<10 {
				t.Errorf("truncated page: %d jobs, marker %+v, %d bytes", len(page.Jobs), page.TransportTruncated, len(raw))
			}
			if !strings.Contains(resultText(res), `"transportTruncated":{"list":"jobs"`) {
				t.Errorf("the text block lacks the marker")
			}

			cs413 := connect(t, g413.MCP, tok, era.opts)
			_, err := cs413.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_job", Arguments: map[string]any{"job_id": "job-acme-0031"}})
			if err == nil || !strings.Contains(err.Error(), "output too large") {
				t.Errorf("a read over its bounds = %v, want a clear 'output too large' error", err)
			}
		})
	}
}
