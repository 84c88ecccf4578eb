package proxy_test

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// What a catalog can express: defaults, computed
// times, form and text bodies, services without tenants.

const requestCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  up:
    base_url: ${UP}
    timeout: 2s
    workspace: { query: tenant }
    actor_header: X-Actor
  none:
    base_url: ${UP}/none
    timeout: 2s
    workspace: none
    max_concurrent_per_workspace: 2
    actor_header: X-Actor
prerequisites:
  ready:
    probe: { upstream: none, path: /ready }
tools:
  - name: alerts
    description: Alerts in one state.
    input:
      type: object
      properties:
        state: { type: string, enum: [active, suppressed], default: active }
        limit: { type: integer, default: 20 }
        note: { type: [string, "null"], default: dflt }
      additionalProperties: false
    request:
      upstream: up
      path: /alerts
      query: { filter: "state={state}", limit: "{limit}", note: "{note}" }
  - name: silence
    description: Silence for a while.
    kind: write
    gate: write
    input:
      type: object
      properties:
        matcher: { type: string }
        duration: { type: string, default: 2h }
        back: { type: string }
        note: { type: [string, "null"], default: dflt }
      required: [matcher]
      additionalProperties: false
    request:
      upstream: up
      path: /silences
      query: { from: "{now-back}" }
      headers: { X-Now: "{now.unix}" }
      body:
        matcher: "{matcher}"
        startsAt: "{now}"
        endsAt: "{now+duration}"
        endsAtUnix: "{now+duration.unix}"
        epoch: "{now.unix}"
        label: "at {now.unix}"
        note: "{note}"
  - name: open_now
    description: An open schema that lets an argument called now through.
    input:
      type: object
      properties:
        window: { type: string }
    request: { upstream: up, path: /open, query: { at: "{now}", start: "{now-window}" } }
  - name: query
    description: A form-encoded PromQL query.
    kind: write
    gate: write
    input:
      type: object
      properties:
        query: { type: string }
        labels: { type: array, items: { type: string } }
        limit: { type: integer }
        ago: { type: string, default: 5m }
      required: [query]
      additionalProperties: false
    request:
      upstream: up
      method: POST
      path: /api/v1/query
      body_format: form
      body:
        query: "{query}"
        time: "{now-ago.unix}"
        match: "{labels}"
        limit: "{limit}"
        fixed: [a b, 2, true]
        tenant: "{query}"
  - name: order
    description: A form with objects in brackets.
    kind: write
    gate: write
    input:
      type: object
      properties:
        address: { type: object }
        where: { type: [object, string] }
        created: { type: object }
        tags: { type: array, items: { type: string } }
      additionalProperties: false
    request:
      upstream: up
      method: POST
      path: /orders
      query: { created: "{created}", tags: "{tags}", tenant: "{where}" }
      body_format: form
      brackets: [address, tenant, created]
      body: { address: "{address}", tenant: "{where}" }
  - name: note
    description: A plain-text note.
    kind: write
    gate: write
    input:
      type: object
      properties:
        text: { type: string }
      required: [text]
      additionalProperties: false
    request:
      upstream: up
      method: PUT
      path: /notes
      body_format: text
      body: "{text} (by {actor} at {now})"
  - name: status
    description: A service without tenants.
    requires: [ready]
    request: { upstream: none, path: /status, headers: { X-Who: "{actor}" } }
  - name: expire
    description: A write to a service without tenants.
    kind: write
    gate: write
    request: { upstream: none, method: DELETE, path: /silence }
`

// fixedNow is the clock of these tests: 2026-12-01T12:00:00Z and a bit.
var fixedNow = time.Date(2026, 12, 1, 12, 0, 0, 250_000_000, time.UTC)

func requestCore(t *testing.T, upURL string, sink proxy.AuditSink) *proxy.Core {
	t.Helper()
	vars := map[string]string{"UP": upURL, "SECRET": strings.Repeat("k", 32)}
	cat, err := catalog.Parse("test.yaml", []byte(requestCatalog), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c, err := proxy.New(cat, &proxy.Options{Audit: sink, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestDefaultsFillAbsentArguments(t *testing.T) {
	up := newRecorder(t, nil)
	c := requestCore(t, up.srv.URL, nil)
	for _, tt := range []struct{ name, args, query string }{
		{"absent-takes-the-default", `{}`, "filter=state%3Dactive&limit=20&note=dflt&tenant=acme"},
		{"present-keeps-the-callers-value", `{"state":"suppressed","limit":5,"note":"mine"}`, "filter=state%3Dsuppressed&limit=5&note=mine&tenant=acme"},
		{"explicit-null-is-not-absent", `{"note":null}`, "filter=state%3Dactive&limit=20&tenant=acme"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := up.count()
			if res := call(t, c, reader, "alerts", tt.args); res.IsError {
				t.Fatalf("alerts %s = %q", tt.args, res.Text)
			}
			got := up.all()[n]
			if got.Query != tt.query {
				t.Errorf("alerts %s sent query %q, want %q", tt.args, got.Query, tt.query)
			}
		})
	}
	// A default never hides a caller's mistake: the caller's value is
	// validated as sent.
	n := up.count()
	if res := call(t, c, reader, "alerts", `{"state":"firing"}`); !res.IsError || !strings.Contains(res.Text, `argument "state"`) {
		t.Errorf("alerts state=firing = %+v, want an invalid-arguments error", res)
	}
	if up.count() != n {
		t.Error("an invalid call reached the upstream")
	}
}

func TestDefaultsAndTimesInABodyAuditTheCallersArguments(t *testing.T) {
	up := newRecorder(t, nil)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := requestCore(t, up.srv.URL, openAudit(t, path, nil))
	args := `{"matcher":"alertname=Down","note":null}`
	if res := call(t, c, writer, "silence", args); res.IsError {
		t.Fatalf("silence = %q", res.Text)
	}
	got := up.all()[0]
	var body map[string]any
	if err := json.Unmarshal([]byte(got.Body), &body); err != nil {
		t.Fatalf("body %q: %v", got.Body, err)
	}
	want := `{"endsAt":"2026-12-01T14:00:00Z","endsAtUnix":1796133600,"epoch":1796126400,"label":"at 1796126400","matcher":"alertname=Down","note":null,"startsAt":"2026-12-01T12:00:00Z"}`
	if got.Body != want {
		t.Errorf("silence body = %s, want %s", got.Body, want)
	}
	if got.Query != "tenant=acme" {
		t.Errorf("silence query = %q, want only the binding (back is absent, so from is dropped)", got.Query)
	}
	if h := got.Header.Get("X-Now"); h != "1796126400" {
		t.Errorf("X-Now = %q, want 1796126400", h)
	}
	recs := readAudit(t, path)
	if len(recs) != 2 {
		t.Fatalf("%d audit records, want 2", len(recs))
	}
	for _, r := range recs {
		if string(r.Arguments) != args {
			t.Errorf("audit %s arguments = %s, want the caller's %s (no defaults, no times)", r.Stage, r.Arguments, args)
		}
	}
}

func TestComputedTimes(t *testing.T) {
	up := newRecorder(t, nil)
	c := requestCore(t, up.srv.URL, nil)
	for _, tt := range []struct{ name, args, query, endsAt string }{
		{"hours", `{"matcher":"m","duration":"90m","back":"1d12h"}`, "from=2026-11-30T00%3A00%3A00Z&tenant=acme", "2026-12-01T13:30:00Z"},
		{"days", `{"matcher":"m","duration":"7d","back":"1s"}`, "from=2026-12-01T11%3A59%3A59Z&tenant=acme", "2026-12-08T12:00:00Z"},
		{"the-cap", `{"matcher":"m","duration":"366d"}`, "tenant=acme", "2027-12-02T12:00:00Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := up.count()
			if res := call(t, c, writer, "silence", tt.args); res.IsError {
				t.Fatalf("silence %s = %q", tt.args, res.Text)
			}
			got := up.all()[n]
			if got.Query != tt.query {
				t.Errorf("query = %q, want %q", got.Query, tt.query)
			}
			if !strings.Contains(got.Body, `"endsAt":"`+tt.endsAt+`"`) {
				t.Errorf("body = %s, want endsAt %s", got.Body, tt.endsAt)
			}
		})
	}
	for _, tt := range []struct{ args, want string }{
		{`{"matcher":"m","duration":"soon"}`, `argument "duration": "soon" is not a duration like 90m, 2h, 1d or 1d12h`},
		{`{"matcher":"m","duration":"-2h"}`, `argument "duration": "-2h" is not a duration`},
		{`{"matcher":"m","duration":"0s"}`, `greater than zero`},
		{`{"matcher":"m","duration":"367d"}`, `of at most 366d`},
		{`{"matcher":"m","back":"1y"}`, `argument "back": "1y" is not a duration`},
	} {
		n := up.count()
		res := call(t, c, writer, "silence", tt.args)
		if !res.IsError || !strings.Contains(res.Text, tt.want) || !strings.HasPrefix(res.Text, "invalid arguments: ") {
			t.Errorf("silence %s = %q, want an invalid-arguments error containing %q", tt.args, res.Text, tt.want)
		}
		if up.count() != n {
			t.Errorf("silence %s reached the upstream", tt.args)
		}
	}
}

// An argument a permissive schema lets through can never stand for a
// computed time, even when the time's own argument is absent.
func TestArgumentsNamedLikeTimesAreIgnored(t *testing.T) {
	up := newRecorder(t, nil)
	c := requestCore(t, up.srv.URL, nil)
	if res := call(t, c, reader, "open_now", `{"now":"1999-01-01T00:00:00Z","now-window":"evil"}`); res.IsError {
		t.Fatalf("open_now = %q", res.Text)
	}
	if got, want := up.all()[0].Query, "at=2026-12-01T12%3A00%3A00Z&tenant=acme"; got != want {
		t.Errorf("open_now sent %q, want %q", got, want)
	}
}

func TestFormBody(t *testing.T) {
	up := newRecorder(t, nil)
	c := requestCore(t, up.srv.URL, nil)
	for _, tt := range []struct{ name, args, body string }{
		{"arrays-repeat-absent-drops", `{"query":"up{job=\"node\"} == 0","labels":["a","b c"]}`,
			"fixed=a+b&fixed=2&fixed=true&match=a&match=b+c&query=up%7Bjob%3D%22node%22%7D+%3D%3D+0&tenant=acme&time=1796126100"},
		{"number-and-default-override", `{"query":"x","limit":3,"ago":"1h"}`,
			"fixed=a+b&fixed=2&fixed=true&limit=3&query=x&tenant=acme&time=1796122800"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := up.count()
			if res := call(t, c, writer, "query", tt.args); res.IsError {
				t.Fatalf("query %s = %q", tt.args, res.Text)
			}
			got := up.all()[n]
			if ct := got.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
				t.Errorf("Content-Type = %q, want application/x-www-form-urlencoded", ct)
			}
			if got.Body != tt.body {
				t.Errorf("body = %q, want %q", got.Body, tt.body)
			}
			// The workspace binding wins in the form too: servers that merge
			// the form with the query (Go's FormValue, PHP, Rails) must not
			// read a tenant from the arguments.
			form, _ := url.ParseQuery(got.Body)
			if ws := form["tenant"]; len(ws) != 1 || ws[0] != "acme" {
				t.Errorf("form tenant = %q, want the token's [acme]", ws)
			}
			if got.Query != "tenant=acme" {
				t.Errorf("query = %q, want tenant=acme", got.Query)
			}
		})
	}
}

// A query parameter or form field listed under brackets spreads an
// object or list argument over bracketed fields (created[gte]=1), one
// not listed repeats a list as before (tags=a&tags=b); the workspace
// binding still wins over a field of its name, bracketed or not (PHP and
// Rails read tenant[x] into tenant), in the query and in the form.
func TestBracketedQueryAndForm(t *testing.T) {
	up := newRecorder(t, nil)
	c := requestCore(t, up.srv.URL, nil)
	for _, args := range []string{
		`{"address":{"city":"Paris","zip":"75001"},"created":{"gte":1,"lt":9},"tags":["a","b"],"where":{"x":"globex"}}`,
		`{"address":{"city":"Paris","zip":"75001"},"created":{"gte":1,"lt":9},"tags":["a","b"],"where":"globex"}`,
	} {
		n := up.count()
		if res := call(t, c, writer, "order", args); res.IsError {
			t.Fatalf("order %s = %q", args, res.Text)
		}
		got := up.all()[n]
		if want := "address%5Bcity%5D=Paris&address%5Bzip%5D=75001&tenant=acme"; got.Body != want {
			t.Errorf("order %s: body = %q, want %q", args, got.Body, want)
		}
		if want := "created%5Bgte%5D=1&created%5Blt%5D=9&tags=a&tags=b&tenant=acme"; got.Query != want {
			t.Errorf("order %s: query = %q, want %q", args, got.Query, want)
		}
	}
	// A member name a form parser would read as another field (PHP cuts
	// a name at a NUL: tenant[x\x00] becomes tenant_x), and an argument
	// whose long names, repeated in every field, would make a request far
	// larger than itself, are the caller's errors; nothing is sent.
	long := strings.Repeat("a", 20000)
	items := func(n int) string { return "[" + strings.Repeat("1,", n-1) + "1]" }
	for _, c2 := range []struct{ args, why string }{
		{`{"address":{"id\u0000":"evil"}}`, "bracketed field"},
		{`{"created":{"x]":1}}`, "bracketed field"},
		{`{"address":{"":1}}`, "bracketed field"},
		{`{"address":{"` + long + `":` + items(2000) + `}}`, "bracketed fields"},
		// The budget is the request's, not each argument's.
		{`{"address":{"a":` + items(300) + `},"created":{"b":` + items(300) + `}}`, "bracketed fields"},
		// However the fields are made, a query or a form never holds so
		// many that a server reading the first 1,000 (PHP, qs) would
		// miss the workspace binding.
		{`{"tags":[` + strings.Repeat(`"t",`, 999) + `"t"]}`, "query parameters"},
	} {
		args := c2.args
		n := up.count()
		res := call(t, c, writer, "order", args)
		if !res.IsError || !strings.Contains(res.Text, c2.why) {
			t.Errorf("order %.60s… = %.200q, want an error about %s", args, res.Text, c2.why)
		}
		if up.count() != n {
			t.Errorf("order %.60s… reached the upstream", args)
		}
	}
}

func TestTextBody(t *testing.T) {
	up := newRecorder(t, nil)
	c := requestCore(t, up.srv.URL, nil)
	if res := call(t, c, writer, "note", `{"text":"disk {full} é\n"}`); res.IsError {
		t.Fatalf("note = %q", res.Text)
	}
	got := up.all()[0]
	if ct := got.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/plain; charset=utf-8", ct)
	}
	if want := "disk {full} é\n (by bob@example.com at 2026-12-01T12:00:00Z)"; got.Body != want {
		t.Errorf("body = %q, want %q", got.Body, want)
	}
	if got.Method != "PUT" {
		t.Errorf("method = %s, want PUT", got.Method)
	}
}

// A principal without a workspace (a tenantless catalog's token) reaches
// an upstream without tenants: its prerequisite probe, its per-workspace
// share and its audit record work with the workspace "", and nothing of a
// workspace is bound, whatever the token says.
func TestWorkspaceNoneBindsNothing(t *testing.T) {
	up := newRecorder(t, nil)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := requestCore(t, up.srv.URL, openAudit(t, path, nil))
	noWS := authz.NewPrincipal("carol", "", "", []string{"read", "write"}, nil)
	for _, p := range []*authz.Principal{noWS, writer} {
		n := up.count()
		if res := call(t, c, p, "status", `{}`); res.IsError {
			t.Fatalf("status for %q = %q", p.Workspace, res.Text)
		}
		if res := call(t, c, p, "expire", `{}`); res.IsError {
			t.Fatalf("expire for %q = %q", p.Workspace, res.Text)
		}
		sent := map[string]bool{}
		for _, got := range up.all()[n:] {
			sent[got.Method+" "+got.Path] = true
			if got.Query != "" {
				t.Errorf("%s for %q sent query %q, want none", got.Path, p.Workspace, got.Query)
			}
			for name := range got.Header {
				if strings.Contains(strings.ToLower(name), "workspace") || strings.Contains(strings.ToLower(name), "tenant") {
					t.Errorf("%s for %q sent header %s", got.Path, p.Workspace, name)
				}
			}
			if got.Path == "/none/status" && got.Header.Get("X-Who") != p.Actor {
				t.Errorf("X-Who = %q, want %q", got.Header.Get("X-Who"), p.Actor)
			}
		}
		if !sent["GET /none/status"] || !sent["DELETE /none/silence"] {
			t.Errorf("for %q the upstream saw %v, want the status read and the delete", p.Workspace, sent)
		}
	}
	recs := readAudit(t, path)
	if len(recs) != 4 || recs[0].Workspace != "" || recs[0].Subject != "carol" || recs[0].Actor != "carol" || recs[3].Workspace != "acme" {
		t.Errorf("audit = %+v, want carol's records with workspace \"\", then bob's with acme", recs)
	}
}

// The Prometheus example of docs/catalog.md, byte for byte, and a time in
// a path.
func TestDocumentedPrometheusFormQuery(t *testing.T) {
	up := newRecorder(t, nil)
	src := `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  prometheus: { base_url: "${UP}", workspace: none }
tools:
  - name: prom_query
    description: Evaluate an instant PromQL query.
    input:
      type: object
      properties:
        query: { type: string }
        ago: { type: string, default: 1s }
      required: [query]
      additionalProperties: false
    request:
      upstream: prometheus
      method: POST
      path: /api/v1/query
      body_format: form
      body: { query: "{query}", time: "{now-ago.unix}" }
  - name: report
    description: A report as of a time.
    request: { upstream: prometheus, path: "/reports/{now}/{now.unix}" }
`
	cat, err := catalog.Parse("doc.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		return map[string]string{"UP": up.srv.URL, "SECRET": strings.Repeat("k", 32)}[k], true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !cat.Auth.Principal.WorkspaceOptional {
		t.Error("a catalog whose only upstream is workspace: none is not tenantless")
	}
	c, err := proxy.New(cat, &proxy.Options{Now: func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	noWS := authz.NewPrincipal("carol", "", "", nil, nil)
	if res := call(t, c, noWS, "prom_query", `{"query":"up == 0"}`); res.IsError {
		t.Fatalf("prom_query = %q", res.Text)
	}
	if res := call(t, c, noWS, "report", `{}`); res.IsError {
		t.Fatalf("report = %q", res.Text)
	}
	got := up.all()
	if got[0].Header.Get("Content-Type") != "application/x-www-form-urlencoded" || got[0].Body != "query=up+%3D%3D+0&time=1796126399" {
		t.Errorf("prom_query sent %q %q, want the documented form", got[0].Header.Get("Content-Type"), got[0].Body)
	}
	if got[1].Path != "/reports/2026-12-01T12:00:00Z/1796126400" {
		t.Errorf("report path = %q", got[1].Path)
	}
}

// A text body whose placeholder has no value (a required argument sent as
// null) is the caller's error, naming the argument, and nothing is sent.
func TestTextBodyNamesTheMissingArgument(t *testing.T) {
	up := newRecorder(t, nil)
	src := strings.Replace(requestCatalog, "tools:\n", `tools:
  - name: note_until
    description: A plain-text note whose text may be null.
    kind: write
    gate: write
    input:
      type: object
      properties: { text: { type: [string, "null"] }, ttl: { type: string } }
      required: [text, ttl]
      additionalProperties: false
    request: { upstream: up, method: PUT, path: /notes, body_format: text, body: "{text} until {now+ttl}" }
`, 1)
	vars := map[string]string{"UP": up.srv.URL, "SECRET": strings.Repeat("k", 32)}
	cat, err := catalog.Parse("test.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c, err := proxy.New(cat, &proxy.Options{Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for args, want := range map[string]string{
		`{"text":null,"ttl":"1h"}`: `argument "text" is required: the request body needs it`,
		`{"text":"x"}`:             `invalid arguments`,
	} {
		if res := call(t, c, writer, "note_until", args); !res.IsError || !strings.Contains(res.Text, want) {
			t.Errorf("note_until(%s) = %q, want a tool error containing %q", args, res.Text, want)
		}
	}
	if n := up.count(); n != 0 {
		t.Errorf("the upstream received %d requests", n)
	}
	if res := call(t, c, writer, "note_until", `{"text":"x","ttl":"1h"}`); res.IsError || up.all()[0].Body != "x until 2026-12-01T13:00:00Z" {
		t.Errorf("note_until with both = %q, body %q", res.Text, up.all()[0].Body)
	}
}
