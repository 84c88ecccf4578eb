package test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioAvailable reports whether the built binary has the stdio
// subcommand (cmd/gateway wires mcp.ServeStdio as `gateway stdio`).
var stdioAvailable = sync.OnceValue(func() bool {
	out, _ := exec.Command(gatewayBin, "stdio", "--help").CombinedOutput()
	return strings.Contains(string(out), "-catalog") && !strings.Contains(string(out), "unknown command")
})

// requireStdio fails the test when the binary has no stdio subcommand:
// stdio is a shipped surface, so its absence is a defect, never a skip.
func requireStdio(t *testing.T) {
	t.Helper()
	if !stdioAvailable() {
		t.Fatal("the gateway binary has no working `stdio` subcommand (`gateway stdio --help` does not list -catalog)")
	}
}

// stdioCommand is `gateway stdio` on catalogPath (the bundled one when
// "") in front of up, with the environment startGateway uses plus
// GATEWAY_TOKEN.
func stdioCommand(up *upstream, catalogPath, tok string, extraEnv ...string) *exec.Cmd {
	if catalogPath == "" {
		catalogPath = "../catalog.yaml"
	}
	cmd := exec.Command(gatewayBin, "stdio", "--catalog", catalogPath)
	cmd.Env = append(os.Environ(),
		"GATEWAY_JWT_SECRET="+testSecret,
		"DEMO_SERVICE_TOKEN="+serviceToken,
		"MONITOR_URL="+up.URL, "OPERATOR_URL="+up.URL, "KB_URL="+up.URL,
		"GATEWAY_AUDIENCE="+testAudience, "GATEWAY_ISSUER="+testIssuer,
		"GATEWAY_TOKEN="+tok,
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// connectStdio runs `gateway stdio` under the official Go SDK's command
// transport. The process's stderr (its logs) is kept for failure reports.
func connectStdio(t *testing.T, up *upstream, catalogPath, tok string, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	cmd := stdioCommand(up, catalogPath, tok)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-stdio", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, opts)
	if err != nil {
		t.Fatalf("Connect over stdio: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("gateway stdio stderr:\n%s", stderr.String())
		}
	})
	return cs
}

func TestStdioGoSDKBothEras(t *testing.T) {
	requireStdio(t)
	up := startUpstream(t)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := connectStdio(t, up, "", token(t, "vera", "acme", viewerScopes...), era.opts)
			want := "2026-07-28"
			if era.opts != nil {
				want = era.opts.ProtocolVersion
			}
			if got := cs.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("protocol version = %s, want %s", got, want)
			}
			names, _ := toolNames(t, cs)
			if w := sorted(readTools, []string{"knowledge_search"}); strings.Join(names, ",") != strings.Join(w, ",") {
				t.Fatalf("stdio tools = %v, want %v", names, w)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_job", Arguments: map[string]any{"job_id": "job-acme-0007"}})
			if err != nil || res.IsError {
				t.Fatalf("get_job = %+v, %v", res, err)
			}
			if m, ok := res.StructuredContent.(map[string]any); !ok || m["jobId"] != "job-acme-0007" {
				t.Fatalf("structuredContent = %#v", res.StructuredContent)
			}
			// A write the viewer may not see: a tool error, never an action.
			res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "requeue_job", Arguments: map[string]any{"job_id": "job-acme-0007"}})
			if err != nil || !res.IsError {
				t.Fatalf("requeue_job as viewer = %+v, %v; want isError", res, err)
			}
			_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"})
			if werr, ok := errors.AsType[*jsonrpc.Error](err); !ok || werr.Code != -32602 {
				t.Fatalf("unknown tool = %v, want -32602", err)
			}
		})
	}
	for _, r := range up.requests() {
		if strings.Contains(r.Path, "requeue") {
			t.Errorf("the viewer's requeue reached the upstream: %+v", r)
		}
		if got := r.Header.Get("Authorization"); got != "" && got != "Bearer "+serviceToken {
			t.Errorf("upstream saw Authorization %q, want the service token only", got)
		}
	}
}

// stdioRaw runs `gateway stdio` with raw pipes: lines in, lines out.
type stdioRaw struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedBuffer
	cmd    *exec.Cmd
}

func startStdioRaw(t *testing.T, up *upstream, tok string) *stdioRaw {
	t.Helper()
	cmd := stdioCommand(up, "", tok)
	s := &stdioRaw{t: t, stderr: &lockedBuffer{}, cmd: cmd}
	cmd.Stderr = s.stderr
	var err error
	if s.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewScanner(out)
	s.out.Buffer(make([]byte, 1<<20), 4<<20)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("gateway stdio stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

func (s *stdioRaw) roundTrip(line string) map[string]json.RawMessage {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing to gateway stdio: %v", err)
	}
	if !s.out.Scan() {
		s.t.Fatalf("no answer to %s: %v", line, s.out.Err())
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
		s.t.Fatalf("stdout line %q is not a JSON-RPC response: %v", s.out.Text(), err)
	}
	return m
}

func errorCode(t *testing.T, m map[string]json.RawMessage) int {
	t.Helper()
	var e struct{ Code int }
	if m["error"] == nil || json.Unmarshal(m["error"], &e) != nil {
		t.Fatalf("answer has no error: %v", m)
	}
	return e.Code
}

func TestStdioFramingAndAuth(t *testing.T) {
	requireStdio(t)
	up := startUpstream(t)
	tok := token(t, "vera", "acme", viewerScopes...)
	s := startStdioRaw(t, up, tok)
	if m := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); m["result"] == nil {
		t.Fatalf("ping = %v", m)
	}
	if code := errorCode(t, s.roundTrip(`{"jsonrpc":"2.0","id":2,`)); code != -32700 {
		t.Fatalf("malformed = %d, want -32700", code)
	}
	// Over the bundled catalog's limits.request_bytes (1 MiB default).
	big := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1<<20+10) + `"}}`
	if code := errorCode(t, s.roundTrip(big)); code != -32600 {
		t.Fatalf("oversize = %d, want -32600", code)
	}
	// A notification gets nothing: the next line out is the ping's.
	io.WriteString(s.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	if m := s.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"ping"}`); string(m["id"]) != "4" {
		t.Fatalf("after a notification = %v", m)
	}
	s.in.Close()
	if s.out.Scan() {
		t.Fatalf("output after EOF: %s", s.out.Text())
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("gateway stdio exit at EOF = %v, want 0", err)
	}
	logs := s.stderr.String()
	if !strings.Contains(logs, `"msg":"request"`) || !strings.Contains(logs, `"surface":"stdio"`) {
		t.Errorf("stderr lacks the access log:\n%s", logs)
	}
	if strings.Contains(logs, tok) {
		t.Error("the token reached the log")
	}

	t.Run("bad-token-is-31401", func(t *testing.T) {
		s := startStdioRaw(t, up, tok+"x")
		if code := errorCode(t, s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); code != -31401 {
			t.Fatalf("= %d, want -31401", code)
		}
	})
	t.Run("missing-token-is-31401", func(t *testing.T) {
		s := startStdioRaw(t, up, "")
		if code := errorCode(t, s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); code != -31401 {
			t.Fatalf("= %d, want -31401", code)
		}
	})
}
