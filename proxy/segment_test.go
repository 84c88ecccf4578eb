package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// An Alertmanager-shaped catalog. Upstream am keeps the default
// (redirects not followed); amf opts in with follow_redirects: true.
const segmentCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  am: { base_url: "${UP}", timeout: 5s }
  amf: { base_url: "${UP}", timeout: 5s, follow_redirects: true }
tools:
  - name: get_silence
    description: One silence.
    input: { type: object, properties: { silence_id: { type: string } }, required: [silence_id] }
    request: { upstream: am, path: "/api/v2/silence/{silence_id}" }
  - name: expire_silence
    description: Expire a silence.
    kind: write
    gate: write
    input: { type: object, properties: { silence_id: { type: string } }, required: [silence_id] }
    request: { upstream: am, method: DELETE, path: "/api/v2/silence/{silence_id}" }
  - name: get_silence_follow
    description: One silence, following redirects.
    input: { type: object, properties: { silence_id: { type: string } }, required: [silence_id] }
    request: { upstream: amf, path: "/api/v2/silence/{silence_id}" }
  - name: expire_silence_follow
    description: Expire a silence on an upstream that follows redirects.
    kind: write
    gate: write
    input: { type: object, properties: { silence_id: { type: string } }, required: [silence_id] }
    request: { upstream: amf, method: DELETE, path: "/api/v2/silence/{silence_id}" }
  - name: get_file
    description: A file by its path.
    input: { type: object, properties: { path: { type: string } }, required: [path] }
    request: { upstream: am, path: "/api/v2/files/{path}", multi_segment: [path] }
  - name: get_alerts
    description: The alerts.
    request: { upstream: amf, path: /api/v2/alerts }
  - name: get_alert_groups
    description: The alert groups.
    request: { upstream: amf, path: /api/v2/alerts/groups }
`

// goUpstream is a real Go server that cleans paths the way net/http.ServeMux
// did before Go 1.22 (and still does with GODEBUG=httpmuxgo121=1), as
// httprouter's RedirectFixedPath does (seen with a real
// Alertmanager and Prometheus): it decodes the path (%2F becomes "/"),
// cleans it and answers 301 to the cleaned path. Then a Go 1.22 ServeMux routes it. It
// records every request it receives, with the path as sent (escaped).
type goUpstream struct {
	mu   sync.Mutex
	reqs []seen
	srv  *httptest.Server
}

func newGoUpstream(t *testing.T) *goUpstream {
	t.Helper()
	g := &goUpstream{}
	mux := http.NewServeMux()
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}
	}
	mux.HandleFunc("GET /api/v2/silence/{id}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]string{"silence": r.PathValue("id")})
		w.Write(b)
	})
	mux.HandleFunc("DELETE /api/v2/silence/{id}", answer(`{"expired":true}`))
	mux.HandleFunc("GET /api/v2/status", answer(`{"config":"the whole configuration"}`))
	mux.HandleFunc("GET /api/v2/silences", answer(`[{"silence":"every silence"}]`))
	mux.HandleFunc("GET /api/v2/files/{path...}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]string{"file": r.PathValue("path")})
		w.Write(b)
	})
	// Redirects for the follow_redirects tests.
	mux.HandleFunc("GET /api/v2/silence/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/v2/silence/new", http.StatusFound)
	})
	mux.HandleFunc("GET /api/v2/silence/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/v2/status", http.StatusFound)
	})
	mux.HandleFunc("GET /api/v2/silence/sneaky", func(w http.ResponseWriter, r *http.Request) {
		// Raw Location: under the prefix as text, outside once decoded.
		w.Header().Set("Location", "/api/v2/silence/..%2Fstatus")
		w.WriteHeader(http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /api/v2/silence/sneakier", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/api/v2/silence/%252e%252e%252fstatus")
		w.WriteHeader(http.StatusMovedPermanently)
	})
	mux.HandleFunc("DELETE /api/v2/silence/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/v2/silence/new", http.StatusPermanentRedirect)
	})
	mux.HandleFunc("GET /api/v2/alerts/{$}", answer(`{"alerts":[]}`))
	mux.HandleFunc("GET /api/v2/alerts/groups", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/v2/alerts/groupsx", http.StatusFound)
	})
	mux.HandleFunc("GET /api/v2/alerts/groupsx", answer(`{"groups":"a sibling"}`))
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.reqs = append(g.reqs, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
		g.mu.Unlock()
		if p := cleanDecodedPath(r.URL.Path); p != r.URL.Path {
			u := *r.URL
			u.Path, u.RawPath = p, ""
			http.Redirect(w, r, u.String(), http.StatusMovedPermanently)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// cleanDecodedPath is the cleanPath of Go 1.21's net/http: path.Clean,
// keeping a trailing slash.
func cleanDecodedPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

func (g *goUpstream) all() []seen {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]seen(nil), g.reqs...)
}

func (g *goUpstream) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reqs = nil
}

// memAudit keeps every audit record in memory.
type memAudit struct {
	mu   sync.Mutex
	recs []proxy.AuditRecord
}

func (a *memAudit) Write(_ context.Context, r *proxy.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, *r)
	return nil
}

func (a *memAudit) all() []proxy.AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]proxy.AuditRecord(nil), a.recs...)
}

func newSegmentCore(t *testing.T, upURL string, audit proxy.AuditSink) *proxy.Core {
	t.Helper()
	return newSegmentCoreOf(t, segmentCatalog, upURL, audit)
}

func newSegmentCoreOf(t *testing.T, src, upURL string, audit proxy.AuditSink) *proxy.Core {
	t.Helper()
	vars := map[string]string{"UP": upURL, "SECRET": strings.Repeat("k", 32)}
	cat, err := catalog.Parse("test.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c, err := proxy.New(cat, &proxy.Options{Audit: audit})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func mustArgs(t *testing.T, m map[string]string) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The two path attacks, against a real Go upstream.
func TestPathArgumentCannotReachAnotherResource(t *testing.T) {
	g := newGoUpstream(t)
	audit := &memAudit{}
	c := newSegmentCore(t, g.srv.URL, audit)

	for _, tool := range []string{"get_silence", "get_silence_follow"} {
		g.reset()
		res := call(t, c, reader, tool, `{"silence_id":"../status"}`)
		if !res.IsError || strings.Contains(res.Text, "configuration") {
			t.Errorf("%s ../status = %+v, want a tool error", tool, res)
		}
		if reqs := g.all(); len(reqs) != 0 {
			t.Errorf("%s ../status: the upstream received %+v, want nothing", tool, reqs)
		}
	}

	for _, tool := range []string{"expire_silence", "expire_silence_follow"} {
		g.reset()
		res := call(t, c, writer, tool, `{"silence_id":"../silences"}`)
		if !res.IsError || strings.Contains(res.Text, "every silence") {
			t.Errorf("%s ../silences = %+v, want a tool error", tool, res)
		}
		for _, r := range g.all() {
			t.Errorf("%s ../silences: the upstream received %s %s", tool, r.Method, r.Path)
		}
	}
	recs := audit.all()
	if len(recs) == 0 {
		t.Fatalf("the refused writes left no audit record")
	}
	for _, r := range recs {
		if r.Outcome == proxy.OutcomeOK || r.UpstreamStatus != 0 {
			t.Errorf("audit record %+v, want a tool error with no upstream status", r)
		}
	}
}

func TestHostilePathEncodingsAreRefusedBeforeSending(t *testing.T) {
	g := newGoUpstream(t)
	c := newSegmentCore(t, g.srv.URL, nil)
	hostile := []string{
		"../x", "..", ".", "", "..%2Fx", "..%2fx", "%2e%2e%2fx", "%2E%2E%2Fx", "%2e%2e", "%2E", "%2e",
		".%2e", "%2e.", "%252e%252e%252f", "%252e%252e", "%25252e%25252e", "..%252Fx",
		"a/b", "a%2Fb", "a%2fb", "a%252Fb", `a\b`, "a%5Cb", "a%5cb", "a%255Cb", `..\x`, "..%5Cx",
		"..;", "..;x", ".;x", "%2e%2e;x", "%2e%2e%3Bx",
		"a\x00b", "a%00b", "a\rb", "a%0Db", "a\nb", "a%0ab", "a%250ab",
	}
	for _, v := range hostile {
		for _, tool := range []string{"get_silence", "expire_silence"} {
			g.reset()
			p := reader
			if tool == "expire_silence" {
				p = writer
			}
			res := call(t, c, p, tool, mustArgs(t, map[string]string{"silence_id": v}))
			if !res.IsError {
				t.Errorf("%s(%q) = %s, want a tool error", tool, v, res.Text)
			}
			if reqs := g.all(); len(reqs) != 0 {
				t.Errorf("%s(%q): the upstream received %s %s", tool, v, reqs[0].Method, reqs[0].Path)
			}
		}
	}
}

func TestOrdinaryPathValuesStillWork(t *testing.T) {
	g := newGoUpstream(t)
	c := newSegmentCore(t, g.srv.URL, nil)
	cases := []struct{ id, path, got string }{
		{"abc-123", "/api/v2/silence/abc-123", "abc-123"},
		{"a b", "/api/v2/silence/a%20b", "a b"},
		{"a?x=1#f", "/api/v2/silence/a%3Fx=1%23f", "a?x=1#f"},
		{"caf\u00e9", "/api/v2/silence/caf%C3%A9", "caf\u00e9"},
		{"50%", "/api/v2/silence/50%25", "50%"},
		{"%41", "/api/v2/silence/%2541", "%41"},
		{"...", "/api/v2/silence/...", "..."},
		{"..a", "/api/v2/silence/..a", "..a"},
		{"a..", "/api/v2/silence/a..", "a.."},
		{"a;b", "/api/v2/silence/a%3Bb", "a;b"},
		{"%c0%ae%c0%ae", "/api/v2/silence/%25c0%25ae%25c0%25ae", "%c0%ae%c0%ae"}, // overlong "..": literal bytes
	}
	for _, tc := range cases {
		g.reset()
		res := call(t, c, reader, "get_silence", mustArgs(t, map[string]string{"silence_id": tc.id}))
		if res.IsError {
			t.Errorf("get_silence(%q) = %s", tc.id, res.Text)
			continue
		}
		if reqs := g.all(); len(reqs) != 1 || reqs[0].Path != tc.path {
			t.Errorf("get_silence(%q) sent %+v, want one request to %s", tc.id, reqs, tc.path)
		}
		want, _ := json.Marshal(map[string]string{"silence": tc.got})
		if res.Text != string(want) {
			t.Errorf("get_silence(%q) = %s, want %s", tc.id, res.Text, want)
		}
	}
}

func TestMultiSegmentValues(t *testing.T) {
	g := newGoUpstream(t)
	c := newSegmentCore(t, g.srv.URL, nil)
	ok := []struct{ v, path string }{
		{"a/b", "/api/v2/files/a/b"},
		{"dir/a b/c?d.txt", "/api/v2/files/dir/a%20b/c%3Fd.txt"},
		{"x", "/api/v2/files/x"},
	}
	for _, tc := range ok {
		g.reset()
		res := call(t, c, reader, "get_file", mustArgs(t, map[string]string{"path": tc.v}))
		if res.IsError {
			t.Errorf("get_file(%q) = %s", tc.v, res.Text)
			continue
		}
		if reqs := g.all(); len(reqs) != 1 || reqs[0].Path != tc.path {
			t.Errorf("get_file(%q) sent %+v, want %s", tc.v, reqs, tc.path)
		}
	}
	for _, v := range []string{
		"a//b", "a/../b", "a/./b", "..", "../x", "/a", "a/", "", "a/%2e%2e/b", "a/b%2Fc", `a\b`, "a/%5C/b", "a/%252e%252e/b",
	} {
		g.reset()
		res := call(t, c, reader, "get_file", mustArgs(t, map[string]string{"path": v}))
		if !res.IsError {
			t.Errorf("get_file(%q) = %s, want a tool error", v, res.Text)
		}
		if reqs := g.all(); len(reqs) != 0 {
			t.Errorf("get_file(%q): the upstream received %s", v, reqs[0].Path)
		}
	}
}

func TestRedirectPolicy(t *testing.T) {
	g := newGoUpstream(t)
	audit := &memAudit{}
	c := newSegmentCore(t, g.srv.URL, audit)

	// follow_redirects off (the default): a read does not follow.
	g.reset()
	res := call(t, c, reader, "get_silence", `{"silence_id":"old"}`)
	if !res.IsError || !strings.Contains(res.Text, "answered 302 Found (a redirect, not followed)") {
		t.Errorf("get_silence old = %+v, want a tool error naming 302", res)
	}
	if n := len(g.all()); n != 1 {
		t.Errorf("the upstream received %d requests, want 1", n)
	}

	// follow_redirects on: a read follows a same-origin redirect under the
	// tool's prefix.
	g.reset()
	res = call(t, c, reader, "get_silence_follow", `{"silence_id":"old"}`)
	if res.IsError || res.Text != `{"silence":"new"}` {
		t.Errorf("get_silence_follow old = %+v, want the redirected silence", res)
	}
	// ServeMux's own trailing-slash redirect stays under a path without
	// placeholders; a redirect to a sibling does not.
	g.reset()
	res = call(t, c, reader, "get_alerts", `{}`)
	if res.IsError || res.Text != `{"alerts":[]}` {
		t.Errorf("get_alerts = %+v, want the alerts through ServeMux's redirect", res)
	}
	if reqs := g.all(); len(reqs) != 2 || reqs[1].Path != "/api/v2/alerts/" {
		t.Errorf("get_alerts sent %+v, want /api/v2/alerts then /api/v2/alerts/", reqs)
	}
	res = call(t, c, reader, "get_alert_groups", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "(a redirect, not followed): it leads outside the tool's path") {
		t.Errorf("get_alert_groups = %+v, want a tool error naming the redirect", res)
	}

	// ...but not one outside it, however it is spelled.
	for _, id := range []string{"away", "sneaky", "sneakier"} {
		g.reset()
		res = call(t, c, reader, "get_silence_follow", mustArgs(t, map[string]string{"silence_id": id}))
		if !res.IsError || strings.Contains(res.Text, "configuration") || !strings.Contains(res.Text, "(a redirect, not followed)") {
			t.Errorf("get_silence_follow %s = %+v, want a tool error naming the redirect", id, res)
		}
		for _, r := range g.all() {
			if !strings.HasPrefix(r.Path, "/api/v2/silence/") {
				t.Errorf("get_silence_follow %s reached %s", id, r.Path)
			}
		}
	}

	// A write never follows, even with follow_redirects: true.
	for _, tool := range []string{"expire_silence", "expire_silence_follow"} {
		g.reset()
		res = call(t, c, writer, tool, `{"silence_id":"old"}`)
		if !res.IsError || !strings.Contains(res.Text, "answered 308 Permanent Redirect (a redirect, not followed)") {
			t.Errorf("%s old = %+v, want a tool error naming 308", tool, res)
		}
		if reqs := g.all(); len(reqs) != 1 || reqs[0].Method != http.MethodDelete {
			t.Errorf("%s old: the upstream received %+v, want one DELETE", tool, reqs)
		}
	}
	// Each redirected write is audited as a tool error with the 308.
	for _, tool := range []string{"expire_silence", "expire_silence_follow"} {
		recorded := false
		for _, r := range audit.all() {
			if r.Tool != tool {
				continue
			}
			if r.Outcome == proxy.OutcomeOK {
				t.Errorf("a redirected write was audited as %+v", r)
			}
			recorded = recorded || r.Outcome == proxy.OutcomeToolError && r.UpstreamStatus == http.StatusPermanentRedirect
		}
		if !recorded {
			t.Errorf("%s: no audit record with outcome tool_error and status 308: %+v", tool, audit.all())
		}
	}
}

// A path value is decoded at most eight times when checked (maxDecodes):
// one whose escaped form decodes eight times over is sent, one that
// decodes a ninth time is refused, with a message saying so.
func TestPathValueDecodingDepthAtItsBound(t *testing.T) {
	g := newGoUpstream(t)
	c := newSegmentCore(t, g.srv.URL, nil)
	// "%" + "25"×m + "41" is escaped to "%25" + "25"×m + "41", which
	// decodes m+2 times before it stops changing ("A").
	nested := func(m int) string { return "%" + strings.Repeat("25", m) + "41" }
	for _, m := range []int{5, 6} { // 7 and 8 decodings
		g.reset()
		v := nested(m)
		res := call(t, c, reader, "get_silence", mustArgs(t, map[string]string{"silence_id": v}))
		if res.IsError {
			t.Errorf("get_silence(%q), %d decodings: %s", v, m+2, res.Text)
			continue
		}
		if reqs := g.all(); len(reqs) != 1 || reqs[0].Path != "/api/v2/silence/%25"+strings.Repeat("25", m)+"41" {
			t.Errorf("get_silence(%q) sent %+v", v, reqs)
		}
	}
	for _, m := range []int{7, 8} { // 9 and 10 decodings
		g.reset()
		v := nested(m)
		res := call(t, c, reader, "get_silence", mustArgs(t, map[string]string{"silence_id": v}))
		want := `path argument "silence_id" cannot be sent: the path segment "` + nested(m) + `" is percent-encoded more than 7 levels deep`
		if !res.IsError || res.Text != want {
			t.Errorf("get_silence(%q), %d decodings = %q, want %q", v, m+2, res.Text, want)
		}
		if n := len(g.all()); n != 0 {
			t.Errorf("get_silence(%q): the upstream received %d requests", v, n)
		}
	}
}

// What a refusal says: the segment as the template and values wrote it,
// and from the second decoding on, what it decodes to.
func TestPathRefusalMessages(t *testing.T) {
	g := newGoUpstream(t)
	c := newSegmentCore(t, g.srv.URL, nil)
	cases := map[string]string{
		"..":                          `path argument "silence_id" cannot be sent: the path segment ".." is a dot segment (a path value must stay in its own segment)`,
		"%2e%2e":                      `path argument "silence_id" cannot be sent: the path segment "%2e%2e" decodes to "..", which is a dot segment (a path value must stay in its own segment)`,
		"%252e%252e":                  `path argument "silence_id" cannot be sent: the path segment "%252e%252e" decodes to "..", which is a dot segment (a path value must stay in its own segment)`,
		"a%2Fb":                       `path argument "silence_id" cannot be sent: the path segment "a%2Fb" decodes to "a/b", which holds "/" or "\" (a path value must stay in its own segment)`,
		"..;x":                        `path argument "silence_id" cannot be sent: the path segment "..;x" is a dot segment once its ";" parameter is dropped (a path value must stay in its own segment)`,
		"a\nb":                        `path argument "silence_id" cannot be sent: the path segment "a\nb" holds NUL, CR or LF (a path value must stay in its own segment)`,
		"":                            `path argument "silence_id" cannot be sent: the path segment "" is empty (a path value must stay in its own segment)`,
		strings.Repeat("a", 79) + "/": `path argument "silence_id" cannot be sent: the path segment "` + strings.Repeat("a", 79) + `/" holds "/" or "\" (a path value must stay in its own segment)`,
		strings.Repeat("a", 80) + "/": `path argument "silence_id" cannot be sent: the path segment "` + strings.Repeat("a", 80) + `…" holds "/" or "\" (a path value must stay in its own segment)`,
		strings.Repeat("é", 41) + "/": `path argument "silence_id" cannot be sent: the path segment "` + strings.Repeat("é", 40) + `…" holds "/" or "\" (a path value must stay in its own segment)`,
	}
	for v, want := range cases {
		res := call(t, c, reader, "get_silence", mustArgs(t, map[string]string{"silence_id": v}))
		if !res.IsError || res.Text != want {
			t.Errorf("get_silence(%q) = %q\nwant %q", v, res.Text, want)
		}
	}
	if n := len(g.all()); n != 0 {
		t.Errorf("the upstream received %d requests", n)
	}
	// Values sharing a segment are all named.
	rec := newRecorder(t, nil)
	oc := parseCore(t, openCatalog, rec.srv.URL, nil)
	res := call(t, oc, reader, "get_file", `{"name":".","ext":"","a":"x","b":"y"}`)
	if want := `path arguments "name" and "ext" cannot be sent: the path segment ".." is a dot segment (a path value must stay in its own segment)`; res.Text != want {
		t.Errorf("get_file with name \".\" and ext \"\" = %q, want %q", res.Text, want)
	}
}

// A template may end in "/" or hold literal segments only: segments no
// value helped make are the catalog's, and sent as written.
func TestTemplateSegmentsAreNotJudged(t *testing.T) {
	rec := newRecorder(t, nil)
	src := strings.Replace(segmentCatalog, "tools:\n", `tools:
  - name: get_silence_slash
    description: One silence, at a path ending in a slash.
    input: { type: object, properties: { silence_id: { type: string } }, required: [silence_id] }
    request: { upstream: am, path: "/api/v2/silence/{silence_id}/" }
  - name: get_root_slash
    description: A directory listing.
    request: { upstream: am, path: "/api/v2/" }
`, 1)
	c := parseCore(t, src, rec.srv.URL, nil)
	if res := call(t, c, reader, "get_silence_slash", `{"silence_id":"abc"}`); res.IsError {
		t.Errorf("get_silence_slash: %s", res.Text)
	}
	if res := call(t, c, reader, "get_root_slash", `{}`); res.IsError {
		t.Errorf("get_root_slash: %s", res.Text)
	}
	var paths []string
	for _, r := range rec.all() {
		paths = append(paths, r.Path)
	}
	if strings.Join(paths, " ") != "/api/v2/silence/abc/ /api/v2/" {
		t.Errorf("sent %q, want /api/v2/silence/abc/ and /api/v2/", paths)
	}
}

// An upstream that takes the workspace in its query gets no "?" or "#"
// in a path value, at any decoding: a hop that decodes the path before
// routing would read "1?workspace_id=globex&x=" as choosing the
// workspace, and "1#" as dropping the gateway's. Elsewhere such a value
// is ordinary, sent escaped (TestOrdinaryPathValuesStillWork).
func TestQueryBoundWorkspaceKeepsQueryMarksOutOfPaths(t *testing.T) {
	g := newGoUpstream(t)
	src := strings.Replace(segmentCatalog, `am: { base_url: "${UP}", timeout: 5s }`, `am: { base_url: "${UP}", timeout: 5s, workspace: { query: workspace_id } }`, 1)
	c := newSegmentCoreOf(t, src, g.srv.URL, nil)
	for _, v := range []string{"job-1?workspace_id=globex&x=", "job-1#", "a?x=1#f", "a%3Fb", "a%253Fworkspace_id=globex", "a%23"} {
		g.reset()
		res := call(t, c, reader, "get_silence", mustArgs(t, map[string]string{"silence_id": v}))
		if !res.IsError || !strings.Contains(res.Text, `holds "?" or "#"`) {
			t.Errorf("get_silence(%q) = %s, want refused", v, res.Text)
		}
		if reqs := g.all(); len(reqs) != 0 {
			t.Errorf("get_silence(%q): the upstream received %s %s", v, reqs[0].Method, reqs[0].Path)
		}
	}
	g.reset()
	if res := call(t, c, reader, "get_silence", mustArgs(t, map[string]string{"silence_id": "job-1"})); res.IsError {
		t.Errorf("an ordinary id: %s", res.Text)
	}
}
