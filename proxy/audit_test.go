package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

func TestAuditOneRecordPerWriteOutcome(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/broken/") {
			w.WriteHeader(500)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	})
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := proxy.OpenFileAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	cat, err := catalog.Parse("test.yaml", []byte(testCatalog), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		return map[string]string{"UP": rec.srv.URL, "SECRET": strings.Repeat("k", 32)}[k], true
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := proxy.New(cat, &proxy.Options{Audit: sink})
	if err != nil {
		t.Fatal(err)
	}
	// Verifiers never build a principal without a subject; this one stands
	// for a token whose identity could not be resolved.
	noActor := authz.NewPrincipal("", "acme", "", []string{"read", "write"}, nil)
	steps := []struct {
		p       *authz.Principal
		args    string
		outcome string
		status  int
	}{
		{writer, `{"id":"q1","limit":4,"approval_code":"s3cr3t-code"}`, "ok", 200},
		{reader, `{"id":"q1","limit":4}`, "denied", 0},
		{writer, `{"id":"q1","limit":0}`, "tool_error", 0},
		{writer, `{"id":"broken"}`, "tool_error", 500},
		{noActor, `{"id":"q1"}`, "refused", 0},
	}
	ctx := proxy.WithRequestID(context.Background(), "req-1")
	for _, s := range steps {
		if _, err := c.Call(ctx, s.p, "set_limit", []byte(s.args)); err != nil {
			t.Fatal(err)
		}
	}
	// Reads are not audited.
	c.Call(ctx, writer, "get_item", []byte(`{"id":"x"}`))

	f, _ := os.Open(path)
	defer f.Close()
	var got []proxy.AuditRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r proxy.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	if len(got) != len(steps) {
		t.Fatalf("%d audit records, want %d: %+v", len(got), len(steps), got)
	}
	for i, s := range steps {
		r := got[i]
		if r.Outcome != s.outcome || r.UpstreamStatus != s.status || r.Tool != "set_limit" || r.RequestID != "req-1" {
			t.Errorf("record %d = %+v, want outcome %s status %d", i, r, s.outcome, s.status)
		}
		if s.p != nil && (r.Actor != s.p.Actor || r.Subject != s.p.Subject || r.Workspace != "acme") {
			t.Errorf("record %d identity = %s/%s/%s", i, r.Actor, r.Subject, r.Workspace)
		}
		if strings.Contains(string(r.Arguments), "s3cr3t-code") {
			t.Errorf("record %d keeps a writeOnly argument: %s", i, r.Arguments)
		}
		if i == 0 && !strings.Contains(string(r.Arguments), `"approval_code":"[redacted]"`) {
			t.Errorf("record 0 arguments = %s, want approval_code redacted", r.Arguments)
		}
		if !json.Valid(r.Arguments) {
			t.Errorf("record %d arguments %s", i, r.Arguments)
		}
	}
	// The upstream saw the actor from the token on the two writes it received.
	for _, r := range rec.all() {
		if r.Method == "POST" && r.Header.Get("X-Actor") != "bob@example.com" {
			t.Errorf("write reached the upstream with X-Actor %q", r.Header.Get("X-Actor"))
		}
	}
}
