package catalog

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.golden from the current output")

// testEnv is the environment every testdata catalog is loaded with.
var testEnv = map[string]string{
	"MONITOR_TOKEN": "tok",
	"EMPTY":         "",
}

func testOptions() *LoadOptions {
	return &LoadOptions{Getenv: func(k string) (string, bool) { v, ok := testEnv[k]; return v, ok }}
}

// checkGolden compares got with the golden file beside yamlPath, or
// rewrites it under -update.
func checkGolden(t *testing.T, yamlPath, got string) {
	t.Helper()
	golden := strings.TrimSuffix(yamlPath, ".yaml") + ".golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./catalog -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("Load(%q) =\n%s\nwant\n%s", yamlPath, got, want)
	}
}

// TestLoadBadCatalogs loads each testdata/bad catalog and compares the
// error text, line for line, with its golden file.
func TestLoadBadCatalogs(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	if len(files) < 15 {
		t.Fatalf("found %d bad catalogs, want at least 15", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			c, err := Load(f, testOptions())
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load(%q) = %v, %v; want a *LoadError", f, c, err)
			}
			data, _ := os.ReadFile(f)
			checkPositions(t, le, data)
			checkGolden(t, f, err.Error()+"\n")
		})
	}
}

// checkPositions holds every problem to the file: its own name, a line
// that exists, and file order.
func checkPositions(t *testing.T, le *LoadError, data []byte) {
	t.Helper()
	lines := lineCount(data)
	if len(le.Problems) == 0 {
		t.Fatal("LoadError with no problems")
	}
	var prev Pos
	for _, p := range le.Problems {
		if p.Pos.Line < 0 || p.Pos.Line > lines || p.Pos.Column < 0 {
			t.Errorf("problem %q at %v is outside the file's %d lines", p.Msg, p.Pos, lines)
		}
		if p.Pos.Line < prev.Line || p.Pos.Line == prev.Line && p.Pos.Column < prev.Column {
			t.Errorf("problem %q at %v comes after one at %v: want file order", p.Msg, p.Pos, prev)
		}
		prev = p.Pos
	}
}

// TestLoadGoodCatalogs loads each testdata/good catalog and compares a
// summary of the result with its golden file.
func TestLoadGoodCatalogs(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.yaml")
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			c, err := Load(f, testOptions())
			if err != nil {
				t.Fatalf("Load(%q) = %v", f, err)
			}
			checkGolden(t, f, summary(c))
		})
	}
}

// summary renders what a loaded catalog says, after defaults and
// compilation, in a stable order.
func summary(c *Catalog) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	s := c.Server
	p("server %q title=%q version=%q listen=%s mcp=%s admin=%q enabled=%t origins=%q", s.Name, s.Title, s.Version, s.Listen, s.MCPPath, s.AdminPath, s.Enabled, s.AllowedOrigins)
	a := c.Auth
	if j := a.JWT; j != nil {
		p("auth jwt jwks=%q key=%q hmac=%q algs=%q iss=%q aud=%q leeway=%s", j.JWKSURL, j.PublicKeyFile, j.HMACSecretEnv, j.Algorithms, j.Issuer, j.Audience, j.Leeway)
	}
	if a.APIKeysFile != "" {
		p("auth api_keys_file=%q", a.APIKeysFile)
	}
	pr := a.Principal
	p("principal sub=%s ws=%s scopes=%s actor=%q pattern=%s", pr.Subject, pr.Workspace, pr.Scopes, pr.Actor, pr.WorkspacePattern)
	if pr.WorkspaceOptional {
		p("  workspace optional: every upstream declares workspace: none")
	}
	if rm := a.ResourceMetadata; rm != nil {
		p("resource_metadata %s servers=%q", rm.Resource, rm.AuthorizationServers)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Gates)) {
		p("gate %s scopes=%q on_deny=%q", name, c.Gates[name].Scopes, c.Gates[name].OnDeny)
	}
	sd := c.SensitiveData
	p("sensitive_data gate=%q expose=%t kill_switch_env=%s", sd.Gate, sd.Expose, sd.KillSwitchEnv)
	for _, name := range slices.Sorted(maps.Keys(c.Upstreams)) {
		u := c.Upstreams[name]
		p("upstream %s base=%s timeout=%s max=%s headers=%v actor=%q", u.Name, u.BaseURL, u.Timeout, u.MaxResponseBytes, u.Headers, u.ActorHeader)
		if w := u.Workspace; w != nil && w.None {
			p("  workspace none")
		} else if w != nil {
			p("  workspace header=%q query=%q", w.Header, w.Query)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Prerequisites)) {
		pq := c.Prerequisites[name]
		if pr := pq.Probe; pr != nil {
			p("prerequisite %s probe %s %s %s true_when=%q cache=%s", pq.Name, pr.Upstream, pr.Method, pr.Path, pr.TrueWhen, pr.Cache)
		} else {
			p("prerequisite %s claim %q", pq.Name, pq.Claim)
		}
	}
	l := c.Limits
	p("limits structured=%s text=%s inline=%s request=%s page=%d/%d in_flight=%d", l.StructuredBytes, l.TextBytes, l.InlineBytes, l.RequestBytes, l.PageSize.Default, l.PageSize.Max, l.MaxInFlight)
	if r := l.Rate; r != nil {
		if pp := r.PerPrincipal; pp != nil {
			p("  rate per_principal rps=%g burst=%d", pp.RPS, pp.Burst)
		}
		for _, name := range slices.Sorted(maps.Keys(r.PerTool)) {
			p("  rate %s rps=%g burst=%d", name, r.PerTool[name].RPS, r.PerTool[name].Burst)
		}
	}
	p("audit path=%q", c.Audit.Path)
	for _, t := range c.Tools {
		r := t.Request
		p("tool %s kind=%s gate=%s sensitive=%t requires=%q: %s %s %s", t.Name, t.Kind, t.Gate, t.Sensitive, t.Requires, r.Method, r.Upstream, r.PathTemplate.Raw)
		p("  input %s required=%q", t.InputJSON, t.Required)
		for _, q := range r.QueryParams {
			p("  query %s=%s", q.Name, q.Template.Raw)
		}
		for _, h := range r.HeaderParams {
			p("  header %s: %s", h.Name, h.Template.Raw)
		}
		if len(t.Defaults) > 0 {
			defs, _ := marshalJSON(t.Defaults)
			p("  defaults %s", defs)
		}
		if r.Body != nil {
			body, _ := marshalJSON(r.Body)
			p("  body %s", body)
			if r.BodyFormat != BodyJSON {
				p("  body_format %s", r.BodyFormat)
			}
		}
		for _, tr := range r.Times {
			p("  time {%s} sign=%d arg=%q unix=%t", tr.Name, tr.Sign, tr.Arg, tr.Unix)
		}
		if pg := t.Paging; pg != nil {
			p("  paging size=%q cursor=%q", pg.PageSizeArgument, pg.CursorArgument)
		}
		rs := t.Response
		var fields []string
		for _, f := range rs.Fields {
			fields = append(fields, f.Name+"="+f.Path)
		}
		p("  response render=%s select=%q fields=%q list=%q untrusted=%q sensitive=%q note=%s", rs.Render, rs.Select, fields, rs.List, rs.Untrusted, rs.Sensitive, rs.SensitiveNoteField)
		if nf := rs.NotFound; nf != nil {
			res, _ := marshalJSON(nf.Result)
			p("  not_found %v %s", nf.Status, res)
		}
		if a := t.Approval; a != nil {
			p("  approval %s approvers=%q ttl=%s allow_self=%t", a.Mode(), a.Approvers, a.TTL, a.AllowSelf)
		}
		if t.OutputSchema != nil {
			p("  output_schema %s", t.OutputJSON)
		}
	}
	for _, w := range c.Warnings {
		p("warning %s", w)
	}
	return b.String()
}

func TestLoadMissingFileIsNotExist(t *testing.T) {
	_, err := Load("testdata/no-such-catalog.yaml", nil)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing) = %v, want a *LoadError wrapping fs.ErrNotExist", err)
	}
	if want := "testdata/no-such-catalog.yaml: cannot read catalog: no such file or directory"; err.Error() != want {
		t.Errorf("Load(missing) = %q, want %q", err, want)
	}
}

func TestProblemString(t *testing.T) {
	for _, tt := range []struct {
		p    Problem
		want string
	}{
		{Problem{"c.yaml", Pos{41, 13}, "tool \"x\": bad"}, `c.yaml:41:13: tool "x": bad`},
		{Problem{"c.yaml", Pos{7, 0}, "invalid YAML"}, "c.yaml:7: invalid YAML"},
		{Problem{"c.yaml", Pos{}, "empty catalog"}, "c.yaml: empty catalog"},
		{Problem{"", Pos{3, 1}, "m"}, "3:1: m"},
		{Problem{"", Pos{}, "m"}, "m"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestParseFillsFileHashAndLookup(t *testing.T) {
	data, err := os.ReadFile("testdata/good/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("minimal.yaml", data, nil)
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	if c.File != "minimal.yaml" {
		t.Errorf("File = %q, want minimal.yaml", c.File)
	}
	if len(c.Hash) != 64 {
		t.Errorf("Hash = %q, want 64 hex digits", c.Hash)
	}
	c2, _ := Parse("minimal.yaml", append(data, '\n'), nil)
	if c2.Hash == c.Hash {
		t.Error("Hash did not change with the bytes")
	}
	if tool := c.Tool("ping"); tool == nil || tool.Name != "ping" {
		t.Errorf("Tool(ping) = %v", tool)
	}
	if tool := c.Tool("pong"); tool != nil {
		t.Errorf("Tool(pong) = %v, want nil", tool)
	}
}

// base is a valid catalog that the table tests extend with tools.
const base = `version: 1
server: { name: t }
auth: { api_keys_file: keys.yaml }
gates: { operate: { scopes: [op] } }
upstreams: { svc: { base_url: "http://127.0.0.1:1" } }
tools:
`

func mustParse(t *testing.T, src string, env map[string]string) *Catalog {
	t.Helper()
	c, err := Parse("c.yaml", []byte(src), &LoadOptions{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatalf("Parse(%q) = %v", src, err)
	}
	return c
}

func TestDisabledToolsVanish(t *testing.T) {
	src := base + `
  - { name: a, description: A., request: { upstream: svc, path: /a } }
  - { name: b, description: B., enabled: "${B_ENABLED:-false}", request: { upstream: svc, path: /b } }
  - { name: c, description: C., enabled: false, gate: operate, kind: write, request: { upstream: svc, path: /c } }
  - { name: d, description: D., enabled: "${D_ENABLED}", request: { upstream: svc, path: /d } }
`
	for _, tt := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"flags-off", map[string]string{"D_ENABLED": "0"}, []string{"a"}},
		{"flags-on", map[string]string{"B_ENABLED": "true", "D_ENABLED": "yes"}, []string{"a", "b", "d"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, src, tt.env)
			var got []string
			for _, tool := range c.Tools {
				got = append(got, tool.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Tools = %q, want %q", got, tt.want)
			}
			for _, name := range []string{"a", "b", "c", "d"} {
				if found := c.Tool(name) != nil; found != slices.Contains(tt.want, name) {
					t.Errorf("Tool(%q) found = %t, want %t", name, found, !found)
				}
			}
		})
	}
}

func TestDisabledToolsAreStillValidated(t *testing.T) {
	src := base + `
  - { name: a, description: A., enabled: false, request: { upstream: nowhere, path: /a } }
`
	_, err := Parse("c.yaml", []byte(src), nil)
	if err == nil || !strings.Contains(err.Error(), `upstream "nowhere" is not declared`) {
		t.Errorf("Parse(disabled tool with unknown upstream) = %v, want the unknown upstream reported", err)
	}
}

func TestToolNameRules(t *testing.T) {
	for _, tt := range []struct {
		name    string
		warning string // substring of the one warning, "" for none
		err     string // substring of the error, "" for none
	}{
		{"search_jobs", "", ""},
		{"Search-Jobs-2", "", ""},
		{"knowledge.search", `c.yaml:7:13: tool "knowledge.search": name is outside [A-Za-z0-9_-]{1,64}`, ""},
		{strings.Repeat("a", 65), "name is outside", ""},
		{strings.Repeat("a", 129), "", "name must match [A-Za-z0-9_.-]{1,128}"},
		{"jobs/search", "", "name must match"},
		{"ünïcode", "", "name must match"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := base + fmt.Sprintf("  - { name: %q, description: D., request: { upstream: svc, path: /a } }\n", tt.name)
			c, err := Parse("c.yaml", []byte(src), nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Parse(name %q) = %v, want error containing %q", tt.name, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(name %q) = %v", tt.name, err)
			}
			switch {
			case tt.warning == "" && len(c.Warnings) > 0:
				t.Errorf("Warnings = %q, want none", c.Warnings)
			case tt.warning != "" && (len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], tt.warning)):
				t.Errorf("Warnings = %q, want one containing %q", c.Warnings, tt.warning)
			}
		})
	}
}

func TestTemplatesCompileAtLoad(t *testing.T) {
	src := base + `
  - name: cancel
    description: Cancel.
    kind: write
    gate: operate
    input:
      type: object
      properties: { id: { type: string }, why: { type: string }, n: { type: integer } }
      required: [id]
    request:
      upstream: svc
      path: /v1/{workspace}/jobs/{id}:cancel
      query: { z: "{why}", a: "lit", m: "{n}" }
      headers: { x-b: "{actor}", X-A: "v-{why}" }
      body: { why: "{why}", n: ["{n}", 1, true, null], nested: { s: "by {actor}" } }
`
	c := mustParse(t, src, nil)
	r := c.Tool("cancel").Request
	if got, want := r.PathTemplate.Names(), []string{"workspace", "id"}; !slices.Equal(got, want) {
		t.Errorf("PathTemplate.Names() = %q, want %q", got, want)
	}
	var q, h []string
	for _, p := range r.QueryParams {
		q = append(q, p.Name+"="+p.Template.Raw)
	}
	for _, p := range r.HeaderParams {
		h = append(h, p.Name+"="+p.Template.Raw)
	}
	if want := []string{"a=lit", "m={n}", "z={why}"}; !slices.Equal(q, want) {
		t.Errorf("QueryParams = %q, want %q", q, want)
	}
	if want := []string{"X-A=v-{why}", "X-B={actor}"}; !slices.Equal(h, want) {
		t.Errorf("HeaderParams = %q, want %q", h, want)
	}
	if r.Method != "POST" {
		t.Errorf("Method = %q, want the write default POST", r.Method)
	}
	body := r.BodyTemplate.(map[string]any)
	if name, ok := body["why"].(Template).Whole(); !ok || name != "why" {
		t.Errorf(`BodyTemplate["why"] = %#v, want the whole-argument template {why}`, body["why"])
	}
	n := body["n"].([]any)
	if _, ok := n[0].(Template); !ok || n[1] != 1 || n[2] != true || n[3] != nil {
		t.Errorf(`BodyTemplate["n"] = %#v, want [Template, 1, true, nil]`, n)
	}
	if s := body["nested"].(map[string]any)["s"].(Template); s.IsLiteral() {
		t.Errorf("nested body string %q was not compiled", s.Raw)
	}
}

func TestFieldsKeepTheirOrder(t *testing.T) {
	src := base + `
  - name: a
    description: A.
    request: { upstream: svc, path: /a }
    response:
      fields: { zeta: z, alpha: a, mid: m.n }
      list: alpha
`
	c := mustParse(t, src, nil)
	want := Fields{{"zeta", "z"}, {"alpha", "a"}, {"mid", "m.n"}}
	if got := c.Tool("a").Response.Fields; !slices.Equal(got, want) {
		t.Errorf("Fields = %v, want %v", got, want)
	}
}

func TestMetaRecordsValuePositions(t *testing.T) {
	c := mustParse(t, base+"  - { name: a, description: A., request: { upstream: svc, path: /a } }\n", nil)
	tool := c.Tool("a")
	if got, want := tool.At("description"), (Pos{7, 29}); got != want {
		t.Errorf("At(description) = %v, want %v", got, want)
	}
	if got, want := tool.Pos, (Pos{7, 5}); got != want {
		t.Errorf("Pos = %v, want %v", got, want)
	}
	if tool.Has("gate") {
		t.Error(`Has("gate") = true for a defaulted key`)
	}
	if c.Upstreams["svc"].Name != "svc" {
		t.Errorf("Upstream.Name = %q, want the key svc", c.Upstreams["svc"].Name)
	}
}

func TestAliasProblemsPointAtTheAnchor(t *testing.T) {
	src := `version: 1
server: { name: t }
auth: { api_keys_file: keys.yaml }
upstreams:
  a: &up { base_url: "http://127.0.0.1:1", headers: { X-Key: "${KEY}" } }
  b: *up
tools:
  - { name: a, description: A., request: { upstream: a, path: /a } }
`
	_, err := Parse("c.yaml", []byte(src), nil)
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Parse(alias with unset var) = %v, want a *LoadError", err)
	}
	for _, p := range le.Problems {
		if p.Pos != (Pos{5, 62}) {
			t.Errorf("problem %q at %v, want at the anchored value 5:62", p.Msg, p.Pos)
		}
	}
}

func TestBillionLaughsIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(base + "  - name: a\n    description: A.\n    request: { upstream: svc, path: /a }\n")
	b.WriteString("    input:\n      type: object\n      $defs:\n        l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "        l%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			fmt.Fprintf(&b, "*a%d, ", i-1)
		}
		b.WriteString("]\n")
	}
	_, err := Parse("c.yaml", []byte(b.String()), nil)
	if err == nil || !strings.Contains(err.Error(), "expand too far") {
		t.Fatalf("Parse(billion laughs) = %v, want the alias budget reported", err)
	}
}

// TestBadCatalogGoldensNameNoGoType: a load error speaks of the YAML the
// operator wrote, never of the Go types behind it (
// `field "respone" not found in tools[0] (catalog.Tool)`).
func TestBadCatalogGoldensNameNoGoType(t *testing.T) {
	goType := regexp.MustCompile(`catalog\.[A-Z]|map\[|\[\]\*?[a-z]|\binterface ?\{|\bfloat64\b|\bint64\b|!!(int|float|bool|str|map|seq)\b`)
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	for _, f := range files {
		_, err := Load(f, testOptions())
		if err == nil {
			t.Errorf("Load(%q) succeeded", f)
			continue
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if m := goType.FindString(line); m != "" {
				t.Errorf("Load(%q) error names a Go type or YAML tag (%s):\n%s", f, m, line)
			}
		}
	}
}

// TestUnknownFieldNamesTheTool: an unknown field in a tool names the tool
// as well as its index, even when the name comes after the typo.
func TestUnknownFieldNamesTheTool(t *testing.T) {
	src := "version: 1\nserver: { name: t }\ntools:\n  - respone: {}\n    name: am_get_silence\n"
	_, err := Parse("catalog.yaml", []byte(src), testOptions())
	want := `catalog.yaml:4:5: field "respone" not found in tools[0] "am_get_silence"; did you mean "response"?`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse = %v, want a line %q", err, want)
	}
}

// TestAliasOfNullIsAbsent: a key whose value is an alias of a null node is
// as if it were not written, like a plain null: the default applies.
func TestAliasOfNullIsAbsent(t *testing.T) {
	src := `version: 1
server: { name: t, public_url: &none ~ }
auth: { api_keys_file: keys.yaml }
upstreams: { svc: { base_url: "http://127.0.0.1:1", timeout: *none, max_response_bytes: ~ } }
tools:
  - { name: a, description: A., request: { upstream: svc, path: /a } }
`
	u := mustParse(t, src, nil).Upstreams["svc"]
	if u.Timeout != DefaultTimeout || u.Has("timeout") {
		t.Errorf("timeout: *none = %v (written: %v), want the default %v, as if absent", u.Timeout.D(), u.Has("timeout"), DefaultTimeout.D())
	}
}

// The loader lets each tool's parsed nodes go once the tool is decoded;
// an alias from a later tool into an earlier one still reads what the
// earlier tool wrote.
func TestAliasesIntoEarlierTools(t *testing.T) {
	src := base + `  - { name: a, description: A., input: &in { type: object, properties: { q: { type: string } } }, request: &req { upstream: svc, path: /a } }
  - { name: b, description: B., input: *in, request: *req }
`
	c := mustParse(t, src, nil)
	for _, name := range []string{"a", "b"} {
		tool := c.Tool(name)
		if tool == nil {
			t.Fatalf("tool %q missing", name)
		}
		if got := string(tool.InputJSON); !strings.Contains(got, `"q":{"type":"string"}`) {
			t.Errorf("tool %q inputSchema = %s, want the aliased one with q", name, got)
		}
		if got := tool.Request.Path; got != "/a" {
			t.Errorf("tool %q path = %q, want /a", name, got)
		}
	}
}
