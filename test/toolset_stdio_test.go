package test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// `gateway stdio --toolset NAME` serves only that toolset, and refuses to
// start on a toolset the catalog does not declare.
func TestStdioToolsetFlag(t *testing.T) {
	requireStdio(t)
	up := startUpstream(t)
	base, err := os.ReadFile("../catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, append(base, "\ntoolsets:\n  one: { tools: [get_job, requeue_job] }\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := token(t, "vera", "acme", viewerScopes...)

	cmd := stdioCommand(up, path, tok)
	cmd.Args = append(cmd.Args, "--toolset", "nope")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `--toolset "nope": the catalog declares no such toolset`) {
		t.Fatalf("stdio --toolset nope = %v\n%s", err, out)
	}

	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cmd := stdioCommand(up, path, tok)
			cmd.Args = append(cmd.Args, "--toolset", "one")
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e-stdio", Version: "1.0.0"}, nil)
			cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, era.opts)
			if err != nil {
				t.Fatalf("Connect: %v\n%s", err, stderr.String())
			}
			defer cs.Close()
			// requeue_job is in the set but gated away from a viewer.
			if names, _ := toolNames(t, cs); strings.Join(names, ",") != "get_job" {
				t.Fatalf("stdio --toolset one lists %v, want [get_job]", names)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_job", Arguments: map[string]any{"job_id": "job-acme-0007"}})
			if err != nil || res.IsError {
				t.Fatalf("get_job = %+v, %v", res, err)
			}
			_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "knowledge_search", Arguments: map[string]any{"query": "x"}})
			if werr, ok := errors.AsType[*jsonrpc.Error](err); !ok || werr.Code != -32602 {
				t.Fatalf("knowledge_search outside the set = %v, want -32602", err)
			}
		})
	}
}
