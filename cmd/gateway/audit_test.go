package main

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	gateway "github.com/mcpgw/gateway"
	"github.com/mcpgw/gateway/demo"
)

// auditGateway serves the bundled catalog (plus extra YAML) over the demo
// upstream and returns the runtime, its base URL and an operator token.
func auditGateway(t *testing.T, extra string, auditLog *slog.Logger) (*runtime, string, string) {
	t.Helper()
	up := httptest.NewServer(demo.New(demo.Options{ServiceToken: "svc"}))
	t.Cleanup(up.Close)
	env := testEnv(map[string]string{"MONITOR_URL": up.URL, "OPERATOR_URL": up.URL, "KB_URL": up.URL, "GATEWAY_AUDIENCE": "aud", "GATEWAY_ISSUER": "iss"})
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	os.WriteFile(path, append(append([]byte{}, gateway.DefaultCatalog...), extra...), 0o600)
	rt := installedRuntime(t, env, path, auditLog)
	srv := httptest.NewServer(rt.routes())
	t.Cleanup(srv.Close)
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": "op", "email": "op@acme.example", "ws": "acme", "scope": "jobs:read jobs:cancel",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(env.get("GATEWAY_JWT_SECRET")))
	if err != nil {
		t.Fatal(err)
	}
	return rt, srv.URL, tok
}

// callTool calls a tool over MCP and returns the result's text and isError.
func callTool(t *testing.T, base, tok, name, args string) (string, bool) {
	t.Helper()
	code, body := post(t, base, tok, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`)
	var out struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Result.Content) == 0 {
		t.Fatalf("tools/call %s: %d %s", name, code, body)
	}
	return out.Result.Content[0].Text, out.Result.IsError
}

func metricsText(t *testing.T, rt *runtime) string {
	t.Helper()
	rec := httptest.NewRecorder()
	rt.metrics.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("audit line %q is not JSON", sc.Text())
		}
	}
	return n
}

// Records are counted in metrics, and SIGHUP's reload reopens the audit
// file so a rotated file is let go.
func TestAuditFileMetricsAndRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	rt, url, tok := auditGateway(t, "\naudit:\n  path: "+path+"\n  fsync: true\n", nil)
	if text, isErr := callTool(t, url, tok, "cancel_job", `{"job_id":"job-acme-0001","reason":"test"}`); isErr && !strings.Contains(text, "conflict") && !strings.Contains(text, "409") {
		t.Fatalf("cancel_job: %s", text)
	}
	m := metricsText(t, rt)
	for _, want := range []string{`gateway_audit_records_total{outcome="started"} 1`, `gateway_audit_healthy 1`, `gateway_audit_failures_total 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if n := countLines(t, path); n != 2 {
		t.Fatalf("%d audit lines, want 2", n)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := rt.reload("SIGHUP", true); err != nil {
		t.Fatal(err)
	}
	callTool(t, url, tok, "cancel_job", `{"job_id":"job-acme-0002"}`)
	if old, cur := countLines(t, path+".1"), countLines(t, path); old != 2 || cur != 2 {
		t.Fatalf("after rotation: old file %d lines, new file %d; want 2 and 2", old, cur)
	}
}

// switchWriter stands for stderr: its destination can be swapped, so a
// stream that fails (a full disk) can recover.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) { s.mu.Lock(); s.w = w; s.mu.Unlock() }

// On the log stream (no audit.path) a failed write refuses writes until the
// stream works again, and then records and logs flow as before: one failed
// write must not stop the log for the life of the process.
func TestAuditOnTheLogStreamRecovers(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("this test needs /dev/full to stand for a full disk: %v", err)
	}
	defer full.Close()
	out, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	sw := &switchWriter{w: full}
	logger, auditLog, closeLogs := newLogs(sw, testEnv(nil))
	defer closeLogs()
	_ = logger
	rt, url, tok := auditGateway(t, "", auditLog)

	text, isErr := callTool(t, url, tok, "cancel_job", `{"job_id":"job-acme-0001"}`)
	if !isErr || !strings.Contains(text, "auditing is unavailable") {
		t.Fatalf("write while the log stream fails = %q (isError %v), want refused", text, isErr)
	}
	if _, isErr := callTool(t, url, tok, "get_job", `{"job_id":"job-acme-0001"}`); isErr {
		t.Fatal("a read failed while auditing is unavailable")
	}
	if m := metricsText(t, rt); !strings.Contains(m, "gateway_audit_healthy 0") || strings.Contains(m, "gateway_audit_failures_total 0") {
		t.Errorf("metrics while failing:\n%s", grepLines(m, "gateway_audit"))
	}

	sw.set(out)
	if text, isErr := callTool(t, url, tok, "cancel_job", `{"job_id":"job-acme-0002"}`); isErr && strings.Contains(text, "auditing") {
		t.Fatalf("write after the stream recovered: %s", text)
	}
	logger.Info("after recovery")
	closeLogs()
	b, _ := os.ReadFile(out.Name())
	if strings.Count(string(b), `"stage":"started"`) != 1 || strings.Count(string(b), `"stage":"completed"`) != 1 || !strings.Contains(string(b), "after recovery") {
		t.Errorf("log stream after recovery:\n%s", b)
	}
	if m := metricsText(t, rt); !strings.Contains(m, "gateway_audit_healthy 1") {
		t.Errorf("metrics after recovery:\n%s", grepLines(m, "gateway_audit"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
