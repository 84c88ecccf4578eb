package test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDemoCommand runs the README's first command as a user would and uses
// what it prints: the MCP URL, the two tokens and the claude line.
func TestDemoCommand(t *testing.T) {
	cmd := exec.Command(gatewayBin, "demo", "--listen", "127.0.0.1:0")
	cmd.Env = os.Environ()
	stdout, _ := cmd.StdoutPipe()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("demo did not stop cleanly on Ctrl-C: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("demo did not stop on Ctrl-C")
		}
	}()
	var endpoint, viewer, operator, other, claude string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	next := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "MCP endpoint:"):
			endpoint = strings.TrimSpace(strings.TrimPrefix(line, "MCP endpoint:"))
		case strings.HasPrefix(line, "viewer token of the other workspace"):
			next = "other"
		case strings.HasPrefix(line, "viewer token"):
			next = "viewer"
		case strings.HasPrefix(line, "operator token"):
			next = "operator"
		case strings.HasPrefix(line, "claude mcp add"):
			claude = line
		case next == "other" && line != "":
			other, next = line, ""
		case next == "viewer" && line != "":
			viewer, next = line, ""
		case next == "operator" && line != "":
			operator, next = line, ""
		}
		if strings.HasPrefix(line, "Ctrl-C") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
		done <- cmd.Wait()
	}()
	if endpoint == "" || viewer == "" || operator == "" || other == "" {
		t.Fatalf("demo output lacks the URL or tokens:\n%s", stderr.String())
	}
	if !strings.Contains(claude, "--transport http") || !strings.Contains(claude, endpoint) || !strings.Contains(claude, "Bearer "+operator) {
		t.Errorf("claude line = %q", claude)
	}
	count := func(tok string) int {
		status, body := rpc(t, endpoint, tok, "tools/list", "{}")
		if status != 200 {
			t.Errorf("tools/list = %d %.300s", status, body)
		}
		return strings.Count(body, `"inputSchema"`)
	}
	if n := count(viewer); n != 15 {
		t.Errorf("the demo viewer sees %d tools, want 15 (14 reads + knowledge_search)", n)
	}
	if n := count(operator); n != 24 {
		t.Errorf("the demo operator sees %d tools, want 24", n)
	}
	status, body := rpc(t, endpoint, viewer, "tools/call", `{"name":"search_jobs","arguments":{"page_size":3}}`)
	if status != 200 || !strings.Contains(body, "job-acme-") {
		t.Errorf("demo search_jobs = %d %.300s", status, body)
	}
	// The tour's isolation claims, with the other workspace's token: no
	// knowledge base, and acme's job is not found by id.
	if n := count(other); n != 14 {
		t.Errorf("the globex viewer sees %d tools, want the 14 reads (globex has no knowledge base)", n)
	}
	status, body = rpc(t, endpoint, other, "tools/call", `{"name":"get_job","arguments":{"job_id":"job-acme-0007"}}`)
	if status != 200 || !strings.Contains(body, `"structuredContent":{"found":false}`) {
		t.Errorf("globex reading acme's job = %d %.400s", status, body)
	}
	status, body = rpc(t, endpoint, other, "tools/call", `{"name":"search_jobs","arguments":{"page_size":3}}`)
	if status != 200 || strings.Contains(body, "job-acme-") {
		t.Errorf("globex search_jobs shows acme's jobs: %d %.300s", status, body)
	}
}
