package proxy_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// A second review's attacks: ones a first round of guards let through.

// A write whose upstream acted and answered, but whose answer could not
// be used (over max_response_bytes), must be recorded with the status the
// upstream gave: upstream_status 0 means nothing was sent.
func TestWriteAnsweredOverCapIsAuditedWithItsStatus(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"x":"` + strings.Repeat("a", 100<<10) + `"}`))
	})
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := auditCore(t, rec.srv.URL, "", openAudit(t, path, nil))
	res := call(t, c, writer, "set_limit", `{"id":"q1","limit":4}`)
	if !res.IsError || !strings.Contains(res.Text, "max_response_bytes") {
		t.Fatalf("result = %q, want the over-cap tool error", res.Text)
	}
	if n := rec.count(); n != 1 {
		t.Fatalf("upstream received %d requests, want 1", n)
	}
	recs := readAudit(t, path)
	if len(recs) != 2 {
		t.Fatalf("%d audit records, want started and completed: %+v", len(recs), recs)
	}
	if got := recs[1]; got.Stage != proxy.StageCompleted || got.UpstreamStatus != http.StatusCreated {
		t.Errorf("completed record: stage %q upstream_status %d, want %q and %d (the upstream acted and answered)",
			got.Stage, got.UpstreamStatus, proxy.StageCompleted, http.StatusCreated)
	}
}

// A redirect the upstream opted into following is still a request the
// gateway sends for the caller: it carries the token's workspace binding,
// whatever the Location's query says.
func TestFollowedRedirectKeepsTheWorkspaceQuery(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/items/old": // http.Redirect drops the query
			http.Redirect(w, r, "/v1/items/new", http.StatusFound)
			return
		case "/v1/items/other": // a Location naming another workspace
			http.Redirect(w, r, "/v1/items/new?ws=globex", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ws":"` + r.URL.Query().Get("ws") + `"}`))
	})
	src := strings.Replace(testCatalog, "    workspace: { header: X-Workspace-Id }\n", "    workspace: { query: ws }\n    follow_redirects: true\n", 1)
	c := parseCore(t, src, rec.srv.URL, nil)
	for _, id := range []string{"old", "other"} {
		res := call(t, c, reader, "get_item", `{"id":"`+id+`"}`)
		if res.IsError {
			t.Fatalf("get_item %s: %s", id, res.Text)
		}
		if !strings.Contains(res.Text, `"ws":"acme"`) {
			t.Errorf("get_item %s answered %s: the followed hop was sent without workspace acme", id, res.Text)
		}
	}
	for _, s := range rec.all() {
		if s.Query != "ws=acme" {
			t.Errorf("%s %s?%s: want the query ws=acme on every hop", s.Method, s.Path, s.Query)
		}
	}
}

// The same when the answer breaks off after its status line: the upstream
// acted, and the record says what it answered.
func TestWriteAnswerBrokenOffIsAuditedWithItsStatus(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"ok":`))
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := auditCore(t, rec.srv.URL, "", openAudit(t, path, nil))
	res := call(t, c, writer, "set_limit", `{"id":"q1","limit":4}`)
	if !res.IsError {
		t.Fatalf("result = %q, want a tool error", res.Text)
	}
	recs := readAudit(t, path)
	if len(recs) != 2 || recs[1].UpstreamStatus != http.StatusAccepted {
		t.Fatalf("audit records %+v, want started, then completed with upstream_status 202", recs)
	}
}

// A writeOnly argument is redacted from the record however long the
// arguments are: past audit.max_argument_bytes the digest is of the
// redacted arguments, so a guessable secret (a six-digit approval code)
// cannot be recovered by hashing candidates.
func TestOverCapAuditDigestDoesNotDependOnWriteOnlyValues(t *testing.T) {
	rec := newRecorder(t, nil)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := auditCore(t, rec.srv.URL, "", openAudit(t, path, nil))
	reason := strings.Repeat("r", 9<<10) // over the 8 KiB default
	for _, code := range []string{"123456", "654321"} {
		call(t, c, writer, "set_limit", `{"id":"q1","limit":4,"reason":"`+reason+`","approval_code":"`+code+`"}`)
	}
	recs := readAudit(t, path)
	if len(recs) != 4 {
		t.Fatalf("%d audit records, want 4", len(recs))
	}
	for _, r := range recs {
		if !strings.Contains(string(r.Arguments), `"sha256"`) {
			t.Fatalf("arguments %s, want a digest", r.Arguments)
		}
	}
	if a, b := string(recs[1].Arguments), string(recs[3].Arguments); a != b {
		t.Errorf("records of calls differing only in approval_code differ: %s and %s; the digest reveals the writeOnly value", a, b)
	}
}
