package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The client programs docs/clients.md shows whole: each test checks the
// page still holds the file verbatim, then runs it against a gateway.

// docHolds fails unless docs/clients.md holds the file's content verbatim.
func docHolds(t *testing.T, file string) {
	t.Helper()
	doc, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), string(src)) {
		t.Errorf("docs/clients.md does not hold test/%s verbatim: copy the file into the page again", file)
	}
}

// clientRun runs a client program and returns its stdout and stderr.
func clientRun(t *testing.T, env []string, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// checkClient runs one client program through the page's promises: it
// lists the caller's tools, prints a call's structuredContent, and exits 1
// with the reason on a tool error.
func checkClient(t *testing.T, g *gateway, run func(env []string, tool, args string) (string, string, error)) {
	t.Helper()
	env := []string{"GATEWAY_MCP_URL=" + g.MCP, "GATEWAY_TOKEN=" + token(t, "viewer", "acme", viewerScopes...)}
	out, errOut, err := run(env, "search_jobs", `{"page_size":2}`)
	if err != nil {
		t.Fatalf("search_jobs: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, "tool: search_jobs\n") || !strings.Contains(out, "tool: get_job\n") {
		t.Errorf("output lists no tools:\n%s", out)
	}
	_, result, found := strings.Cut(out, "result: ")
	var structured struct {
		Jobs []struct {
			ID string `json:"jobId"`
		} `json:"jobs"`
	}
	if !found || json.Unmarshal([]byte(result), &structured) != nil || len(structured.Jobs) != 2 || !strings.HasPrefix(structured.Jobs[0].ID, "job-acme-") {
		t.Errorf("result line = %q, want two acme jobs", result)
	}
	out, errOut, err = run(env, "cancel_job", `{"job_id":"job-acme-0001"}`)
	if err == nil || !strings.Contains(errOut, "tool error:") || !strings.Contains(errOut, "gate") {
		t.Errorf("a viewer's cancel_job = %v\n%s%s, want exit 1 with the tool error naming the gate", err, out, errOut)
	}
	env[1] = "GATEWAY_TOKEN=not-a-token"
	_, errOut, err = run(env, "search_jobs", `{}`)
	if err == nil || !(strings.Contains(errOut, "Unauthorized") || strings.Contains(errOut, "invalid or expired")) {
		t.Errorf("a bad token = %v\n%s, want a failed connect saying the token was refused", err, errOut)
	}
}

func TestDocsGoClient(t *testing.T) {
	docHolds(t, "goclient/main.go")
	bin := filepath.Join(t.TempDir(), "goclient")
	if out, err := exec.Command("go", "build", "-o", bin, "./goclient").CombinedOutput(); err != nil {
		t.Fatalf("go build ./test/goclient: %v\n%s", err, out)
	}
	g := startGateway(t, startUpstream(t), "")
	checkClient(t, g, func(env []string, tool, args string) (string, string, error) {
		return clientRun(t, env, bin, tool, args)
	})
}

func TestDocsTypeScriptClient(t *testing.T) {
	docHolds(t, "ts/connect.mjs")
	if _, err := os.Stat("ts/node_modules/@modelcontextprotocol/sdk"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the TypeScript SDK is not installed in test/ts (run npm ci there): %v", err)
		}
		t.Skip("test/ts/node_modules missing; run `npm ci --prefix test/ts`")
	}
	g := startGateway(t, startUpstream(t), "")
	checkClient(t, g, func(env []string, tool, args string) (string, string, error) {
		return clientRun(t, env, "node", "ts/connect.mjs", tool, args)
	})
}

// TestOutputSizeAtDefaultBounds measures what docs/clients.md quotes: the
// demo's search_jobs with page_size 100 under the default bounds (64 KiB
// structured, 80 KiB text), then under the bundled catalog's own.
func TestOutputSizeAtDefaultBounds(t *testing.T) {
	up := startUpstream(t)
	defaults := launch(t, launchConfig{upstreamURL: up.URL, catalog: copyCatalog(t, func(s string) string {
		out := strings.Replace(s, "  structured_bytes: 32KiB\n", "", 1)
		out = strings.Replace(out, "  text_bytes: 40KiB\n", "", 1)
		if out == s {
			t.Fatal("the bundled catalog no longer sets structured_bytes and text_bytes")
		}
		return out
	})})
	bundled := startGateway(t, up, "")
	tok := token(t, "operator", "acme", operatorScopes...)
	for _, c := range []struct {
		name                string
		g                   *gateway
		pageSize            int
		maxStructured, text int
	}{
		{"defaults/page_size-100", defaults, 100, 64 << 10, 80 << 10},
		{"bundled/page_size-100", bundled, 100, 32 << 10, 40 << 10},
		{"bundled/page_size-5", bundled, 5, 32 << 10, 40 << 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := post(t, c.g.MCP, tok,
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_jobs","arguments":{"page_size":`+itoa(c.pageSize)+`}}}`,
				map[string]string{"MCP-Protocol-Version": "2025-11-25"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			var msg struct {
				Result struct {
					Content []struct{ Text string }
					// RawMessage keeps the bytes as sent.
					StructuredContent json.RawMessage
				}
			}
			if err := json.Unmarshal([]byte(body), &msg); err != nil || len(msg.Result.Content) != 1 {
				t.Fatalf("result %.300s: %v", body, err)
			}
			var jobs struct {
				Jobs               []json.RawMessage
				TransportTruncated *struct{ Dropped int }
			}
			json.Unmarshal(msg.Result.StructuredContent, &jobs)
			s, x := len(msg.Result.StructuredContent), len(msg.Result.Content[0].Text)
			dropped := 0
			if jobs.TransportTruncated != nil {
				dropped = jobs.TransportTruncated.Dropped
			}
			t.Logf("%s: %d jobs (%d dropped); structuredContent %d bytes, text %d bytes, HTTP body %d bytes ≈ %d tokens at 4 bytes a token",
				c.name, len(jobs.Jobs), dropped, s, x, len(body), len(body)/4)
			if s > c.maxStructured || x > c.text {
				t.Errorf("structuredContent %d bytes, text %d bytes: over the bounds %d and %d", s, x, c.maxStructured, c.text)
			}
			// docs/clients.md's worst case: the two bounds, plus at most a
			// tenth for the JSON-RPC envelope and the text's escaping.
			if ceiling := (c.maxStructured + c.text) * 11 / 10; len(body) > ceiling {
				t.Errorf("HTTP body %d bytes, over the bounds plus a tenth (%d)", len(body), ceiling)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The confirmation client of docs/clients.md: answered y, the write runs
// once; answered n, nothing reaches the upstream and the tool error says
// the user declined.
func TestDocsGoConfirmationClient(t *testing.T) {
	docHolds(t, "confirmclient/main.go")
	bin := filepath.Join(t.TempDir(), "confirmclient")
	if out, err := exec.Command("go", "build", "-o", bin, "./confirmclient").CombinedOutput(); err != nil {
		t.Fatalf("go build ./test/confirmclient: %v\n%s", err, out)
	}
	up := startUpstream(t)
	g := startGateway(t, up, "", approvalKeys())
	env := []string{"GATEWAY_MCP_URL=" + g.MCP, "GATEWAY_TOKEN=" + token(t, "operator", "acme", operatorScopes...)}
	pause := "/v1/queues/billing/pause"
	answer := func(reply string) (string, string, error) {
		cmd := exec.Command(bin, "pause_queue", `{"queue":"billing","reason":"docs"}`)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(reply + "\n")
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}

	out, errOut, err := answer("n")
	if err == nil || !strings.Contains(errOut, "the user declined") || !strings.Contains(errOut, "confirm? [y/N]") {
		t.Errorf("answered n: %v\n%s%s, want the question, then exit 1 saying the user declined", err, out, errOut)
	}
	if n := len(sent(up, pause)); n != 0 {
		t.Fatalf("answered n, yet the upstream saw %d pause requests", n)
	}
	out, errOut, err = answer("y")
	if err != nil || !strings.HasPrefix(out, "result: ") {
		t.Fatalf("answered y: %v\n%s%s, want the result", err, out, errOut)
	}
	if !strings.Contains(errOut, "pause_queue") || !strings.Contains(errOut, `"queue":"billing"`) {
		t.Errorf("the question shown was %q; it should say what will run and with which arguments", errOut)
	}
	if n := len(sent(up, pause)); n != 1 {
		t.Errorf("answered y: the upstream saw %d pause requests, want exactly 1", n)
	}
}
