package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTypeScriptSDKClient runs the official TypeScript MCP client
// (@modelcontextprotocol/sdk, installed by .ci/run into test/ts) against
// the gateway. It is skipped only when node_modules is absent outside CI.
func TestTypeScriptSDKClient(t *testing.T) {
	if _, err := os.Stat("ts/node_modules/@modelcontextprotocol/sdk"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the TypeScript SDK is not installed in test/ts (run npm ci there): %v", err)
		}
		t.Skip("test/ts/node_modules missing; run `npm ci --prefix test/ts`")
	}
	up := startUpstream(t)
	g := startGateway(t, up, "")
	small := launch(t, launchConfig{upstreamURL: up.URL, catalog: copyCatalog(t, func(s string) string {
		return strings.Replace(s, "  text_bytes: 40KiB\n", "  text_bytes: 4KiB\n", 1)
	})})
	cmd := exec.Command("node", "ts/client.mjs")
	cmd.Env = append(os.Environ(),
		"GATEWAY_MCP_URL="+g.MCP,
		"SMALL_MCP_URL="+small.MCP,
		"VIEWER_TOKEN="+token(t, "viewer", "globex", viewerScopes...),
		"OPERATOR_TOKEN="+token(t, "operator", "acme", operatorScopes...),
	)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var rep struct {
		Fatal  string
		Viewer struct {
			Names       []string
			Annotations map[string]struct{ ReadOnlyHint, IdempotentHint bool }
		}
		Operator struct{ Names []string }
		Search   struct {
			IsError    bool
			Structured map[string]any
			Text       string
		}
		Truncated struct {
			IsError bool
			Marker  *struct {
				List    string
				Dropped int
			}
			Jobs int
		}
		TooLarge struct {
			Error *string
			Code  *int
		}
		Denied struct {
			IsError bool
			Text    string
		}
		Unknown struct {
			Error *string
			Code  *int
		}
		NoToken struct {
			Error *string
			Code  *int
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %s: %v", out, err)
	}
	if rep.Fatal != "" {
		t.Fatalf("TypeScript client failed: %s", rep.Fatal)
	}
	if want := sorted(readTools); !slices.Equal(rep.Viewer.Names, want) {
		t.Errorf("viewer tools = %v, want %v", rep.Viewer.Names, want)
	}
	for n, a := range rep.Viewer.Annotations {
		if !a.ReadOnlyHint || !a.IdempotentHint {
			t.Errorf("viewer tool %s annotations = %+v", n, a)
		}
	}
	if want := sorted(readTools, writeTools, sensitiveTools, []string{"knowledge_search"}); !slices.Equal(rep.Operator.Names, want) {
		t.Errorf("operator tools = %v, want %v", rep.Operator.Names, want)
	}
	if rep.Search.IsError || !strings.Contains(rep.Search.Text, "globex") || rep.Search.Structured["jobs"] == nil {
		t.Errorf("search_jobs = %+v", rep.Search)
	}
	if m := rep.Truncated.Marker; rep.Truncated.IsError || m == nil || m.List != "jobs" || m.Dropped == 0 || rep.Truncated.Jobs+m.Dropped != 60 {
		t.Errorf("search_jobs page_size 100 = %+v, want a truncated page with its marker", rep.Truncated)
	}
	if rep.TooLarge.Error == nil || !strings.Contains(*rep.TooLarge.Error, "output too large") {
		t.Errorf("a read over its bounds = %v, want a clear 'output too large' error", deref(rep.TooLarge.Error))
	}
	if !rep.Denied.IsError || !strings.Contains(rep.Denied.Text, "gate") {
		t.Errorf("cancel_job by a viewer = %+v, want a tool error naming the gate", rep.Denied)
	}
	if rep.Unknown.Error == nil || !strings.Contains(*rep.Unknown.Error, "no_such_tool") {
		t.Errorf("unknown tool = %+v, want a protocol error naming it", rep.Unknown)
	}
	if rep.NoToken.Code == nil || *rep.NoToken.Code != 401 || !strings.Contains(deref(rep.NoToken.Error), "bearer token") {
		t.Errorf("connecting without a token = %v, want a 401 error", deref(rep.NoToken.Error))
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
