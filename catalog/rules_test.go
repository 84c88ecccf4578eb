package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// w is a write tool on svc under the gate operate; rest holds its other
// keys (input, request) as flow YAML.
func w(rest string) string {
	return "name: w, description: W., kind: write, gate: operate, " + rest
}

// TestWorkspaceNoneRules: an upstream that declares workspace: none has no
// workspace to send, so nothing may send one to it; a catalog whose every
// upstream declares it needs no workspace claim.
func TestWorkspaceNoneRules(t *testing.T) {
	none := `{ svc: { base_url: "http://127.0.0.1:1", workspace: none } }`
	sendsNone := `tool "r": placeholder {workspace}: upstream "svc" declares workspace: none, so there is no workspace to send`
	runProblems(t, []problemCase{
		{"none-plain", doc{"upstreams": none}, nil},
		{"none-path", tool(`name: r, description: R., request: { upstream: svc, path: "/w/{workspace}" }`, "upstreams", none), one(sendsNone)},
		{"none-query", tool(`name: r, description: R., request: { upstream: svc, path: /r, query: { ws: "{workspace}" } }`, "upstreams", none), one(sendsNone)},
		{"none-header", tool(`name: r, description: R., request: { upstream: svc, path: /r, headers: { X-Ws: "ws={workspace}" } }`, "upstreams", none), one(sendsNone)},
		{"none-body", tool(`name: r, description: R., request: { upstream: svc, method: POST, path: /r, body: { a: ["{workspace}"] } }`, "upstreams", none), one(sendsNone)},
		{"none-text-body", tool(`name: r, description: R., request: { upstream: svc, method: POST, path: /r, body_format: text, body: "{workspace}" }`, "upstreams", none), one(sendsNone)},
		{"none-actor-ok", tool(`name: r, description: R., request: { upstream: svc, path: "/a/{actor}", headers: { X-A: "{actor}" } }`, "upstreams", none), nil},
		{"bound-workspace-ok", tool(`name: r, description: R., request: { upstream: svc, path: "/w/{workspace}" }`), nil},
		{"other-upstream-none", tool(`name: r, description: R., request: { upstream: svc, path: "/w/{workspace}" }`,
			"upstreams", `{ svc: { base_url: "http://127.0.0.1:1" }, prom: { base_url: "http://127.0.0.1:2", workspace: none } }`), nil},
		{"probe-none", doc{"upstreams": none, "prerequisites": `{ p: { probe: { upstream: svc, path: "/ws/{workspace}" } } }`},
			one(`prerequisite "p": probe path placeholder {workspace}: upstream "svc" declares workspace: none`)},
		{"probe-bound", doc{"prerequisites": `{ p: { probe: { upstream: svc, path: "/ws/{workspace}" } } }`}, nil},
		{"probe-other-placeholder", doc{"prerequisites": `{ p: { probe: { upstream: svc, path: "/ws/{actor}/{now}" } } }`}, []string{
			`prerequisite "p": probe path placeholder {actor}: a probe knows only {workspace}`,
			`prerequisite "p": probe path placeholder {now}: a probe knows only {workspace}`,
		}},
		{"none-scalar-other", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", workspace: None } }`},
			one(`upstreams.svc.workspace: want a mapping {header: NAME} or {query: NAME}, or none, got "None"`)},
		{"none-scalar-empty", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", workspace: "" } }`},
			one(`upstreams.svc.workspace: want a mapping {header: NAME} or {query: NAME}, or none, got ""`)},
		{"binding-both", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", workspace: { header: X-Ws, query: ws } } }`},
			one(`upstream "svc": workspace binding needs exactly one of header or query`)},
		{"binding-neither", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", workspace: {} } }`},
			one(`upstream "svc": workspace binding needs exactly one of header or query`)},
		{"binding-header", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", workspace: { header: X-Ws } } }`}, nil},
		{"binding-query", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", workspace: { query: ws } } }`}, nil},
		{"binding-bad-header", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", workspace: { header: "X Ws" } } }`},
			one(`upstream "svc": workspace header "X Ws" is not a valid header name`)},
		{"actor-header-bad", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", actor_header: "X:Actor" } }`},
			one(`upstream "svc": actor_header "X:Actor" is not a valid header name`)},
		{"actor-header-ok", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", actor_header: X-Actor } }`}, nil},
	})

	// Tenantless: only when every upstream declares workspace: none.
	for _, tt := range []struct {
		upstreams string
		optional  bool
	}{
		{none, true},
		{`{ svc: { base_url: "http://127.0.0.1:1", workspace: none }, b: { base_url: "http://127.0.0.1:2", workspace: none } }`, true},
		{`{ svc: { base_url: "http://127.0.0.1:1", workspace: none }, b: { base_url: "http://127.0.0.1:2" } }`, false},
		{`{ svc: { base_url: "http://127.0.0.1:1", workspace: none }, b: { base_url: "http://127.0.0.1:2", workspace: { header: X-Ws } } }`, false},
		{`{ svc: { base_url: "http://127.0.0.1:1" } }`, false},
	} {
		c, problems := doc{"upstreams": tt.upstreams}.load(t)
		if problems != nil {
			t.Errorf("upstreams %s: %q", tt.upstreams, problems)
			continue
		}
		if got := c.Auth.Principal.WorkspaceOptional; got != tt.optional {
			t.Errorf("upstreams %s: WorkspaceOptional = %t, want %t", tt.upstreams, got, tt.optional)
		}
	}
	// No upstream at all is not tenantless: the catalog is refused anyway,
	// but it must not have been marked.
	c := &Catalog{Upstreams: map[string]*Upstream{}}
	(&checker{c: c, p: &problems{}, pos: map[string]Pos{}}).tenantless()
	if c.Auth.Principal.WorkspaceOptional {
		t.Error("a catalog without upstreams was marked tenantless")
	}
}

// TestReservedNames: workspace and actor come from the token and now… are
// computed; none of them may be an argument, and only arguments may be
// multi_segment.
func TestReservedNames(t *testing.T) {
	reserved := func(n string) string {
		return fmt.Sprintf(`tool "r": argument name %q is reserved: {%s} comes from the caller's token, never from arguments`, n, n)
	}
	timeReserved := func(n string) string {
		return fmt.Sprintf(`tool "r": argument name %q is reserved: {now}, {now.unix} and {now+ARG} are computed times, never arguments`, n)
	}
	in := func(prop string) doc {
		return tool(`name: r, description: R., input: { type: object, properties: { "` + prop + `": { type: string } } }, request: { upstream: svc, path: /r }`)
	}
	runProblems(t, []problemCase{
		{"workspace", in("workspace"), one(reserved("workspace"))},
		{"actor", in("actor"), one(reserved("actor"))},
		{"now", in("now"), one(timeReserved("now"))},
		{"now.unix", in("now.unix"), one(timeReserved("now.unix"))},
		{"now+x", in("now+x"), one(timeReserved("now+x"))},
		{"now-x", in("now-x"), one(timeReserved("now-x"))},
		{"nowhere", in("nowhere"), nil},
		// x-mcp-header is refused wherever it hides in the schema.
		{"x-mcp-header-in-anyOf", tool(`name: r, description: R., input: { type: object, properties: { p: { anyOf: [{ type: integer }, { type: string, x-mcp-header: P }] } } }, request: { upstream: svc, path: /r }`),
			one(`tool "r": input: x-mcp-header is not supported by this gateway (clients would send Mcp-Param-* headers it does not check); remove it`)},
		{"Workspace", in("Workspace"), nil},
		{"workspaces", in("workspaces"), nil},
		{"multi_segment-actor", tool(`name: r, description: R., request: { upstream: svc, path: "/a/{actor}", multi_segment: [actor] }`),
			one(`tool "r": multi_segment "actor" names no argument placeholder of request.path`)},
		{"multi_segment-ok", tool(`name: r, description: R., input: { type: object, properties: { p: { type: string } }, required: [p] }, request: { upstream: svc, path: "/f/{p}", multi_segment: [p] }`), nil},
	})
}

// TestGateReferences: every gate a tool or sensitive_data names is
// declared, except view; a write tool never runs under view.
func TestGateReferences(t *testing.T) {
	runProblems(t, []problemCase{
		{"read-view-undeclared", tool("name: r, description: R., gate: view, request: { upstream: svc, path: /r }"), nil},
		{"read-declared", tool("name: r, description: R., gate: operate, request: { upstream: svc, path: /r }"), nil},
		{"read-undeclared", tool("name: r, description: R., gate: operat, request: { upstream: svc, path: /r }"),
			one(`tool "r": gate "operat" is not declared under gates (did you mean "operate"?)`)},
		// Suggestions are worked out for names up to 64 bytes, no longer
		// (the edit distance is quadratic in them).
		{"suggest-63", longGate(63), one(`tool "r": gate "` + strings.Repeat("g", 62) + `x" is not declared under gates (did you mean "` + strings.Repeat("g", 63) + `"?)`)},
		{"suggest-64", longGate(64), one(`tool "r": gate "` + strings.Repeat("g", 63) + `x" is not declared under gates (did you mean "` + strings.Repeat("g", 64) + `"?)`)},
		{"suggest-65", longGate(65), one(`tool "r": gate "` + strings.Repeat("g", 64) + `x" is not declared under gates`)},
		{"read-undeclared-far", tool("name: r, description: R., gate: admin, request: { upstream: svc, path: /r }"),
			one(`tool "r": gate "admin" is not declared under gates`)},
		{"write-default-gate", tool("name: w, description: W., kind: write, request: { upstream: svc, path: /w }"),
			one(`tool "w": a write tool must name a gate other than "view"`)},
		{"write-view", tool("name: w, description: W., kind: write, gate: view, request: { upstream: svc, path: /w }"),
			one(`tool "w": a write tool must name a gate other than "view"`)},
		{"write-declared", tool(w("request: { upstream: svc, path: /w }")), nil},
		{"write-view-declared", tool("name: w, description: W., kind: write, gate: view, request: { upstream: svc, path: /w }", "gates", "{ view: { scopes: [v] } }"),
			one(`tool "w": a write tool must name a gate other than "view"`)},
		{"kind-unknown", tool("name: r, description: R., kind: delete, request: { upstream: svc, path: /r }"),
			one(`tool "r": kind "delete" must be read or write`)},
		{"sensitive-gate-undeclared", doc{"sensitive_data": "{ gate: secrets }"}, one(`sensitive_data: gate "secrets" is not declared under gates`)},
		{"sensitive-gate-declared", doc{"sensitive_data": "{ gate: operate }"}, nil},
		{"sensitive-gate-view", doc{"sensitive_data": "{ gate: view }"}, nil},
		{"kill_switch_env-ok", doc{"sensitive_data": "{ kill_switch_env: MY_KILL_1 }"}, nil},
		{"kill_switch_env-bad", doc{"sensitive_data": `{ kill_switch_env: "1KILL" }`}, one(`sensitive_data: kill_switch_env "1KILL" must name an environment variable`)},
		{"kill_switch_env-dash", doc{"sensitive_data": `{ kill_switch_env: "KILL-IT" }`}, one(`sensitive_data: kill_switch_env "KILL-IT" must name an environment variable`)},
		{"gate-no-scopes", doc{"gates": "{ operate: { scopes: [] } }"}, one(`gate "operate": scopes must list at least one scope`)},
		{"gate-scope-space", doc{"gates": `{ operate: { scopes: ["a b", "", "c\td", ok] } }`}, []string{
			`gate "operate": scope "a b" must be a non-empty token without spaces`,
			`gate "operate": scope "" must be a non-empty token without spaces`,
			`gate "operate": scope "c\td" must be a non-empty token without spaces`,
		}},
		{"gate-on_deny", doc{"gates": "{ operate: { scopes: [op], on_deny: challenge } }"}, nil},
		{"gate-on_deny-bad", doc{"gates": "{ operate: { scopes: [op], on_deny: deny } }"}, one(`gate "operate": on_deny "deny" must be "challenge" or absent`)},
		{"requires-undeclared", tool("name: r, description: R., requires: [kb], request: { upstream: svc, path: /r }"),
			one(`tool "r": requires "kb", which is not declared under prerequisites`)},
		{"requires-declared", tool("name: r, description: R., requires: [kb], request: { upstream: svc, path: /r }", "prerequisites", "{ kb: { claim: kb } }"), nil},
		{"prerequisite-both", doc{"prerequisites": "{ kb: { claim: kb, probe: { upstream: svc, path: /kb } } }"}, one(`prerequisite "kb": set exactly one of probe or claim`)},
		{"prerequisite-neither", doc{"prerequisites": "{ kb: {} }"}, one(`prerequisite "kb": set exactly one of probe or claim`)},
	})
}

// TestHeaderRules: header names are RFC 9110 tokens, framing headers are
// the client's, a name repeats in no case, and no literal value carries a
// control character but tab.
func TestHeaderRules(t *testing.T) {
	up := func(h string) doc {
		return doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", headers: { ` + h + ` } } }`}
	}
	req := func(h string) doc {
		return tool(`name: r, description: R., input: { type: object, properties: { v: { type: string } } }, request: { upstream: svc, path: /r, headers: { ` + h + ` } }`)
	}
	const ctl = "value must not contain control characters (CR, LF, NUL and the others; tab is allowed)"
	runProblems(t, []problemCase{
		{"up-ok", up(`X-Key: "a\tb ~\u0080é", "!#$%&'*+-.^_|~09azAZ": v`), nil},
		{"up-host", up("host: h"), one(`upstream "svc": header Host is set by the gateway's HTTP client and cannot be configured`)},
		{"up-content-length", up("content-length: 1"), one(`upstream "svc": header Content-Length is set by the gateway's HTTP client and cannot be configured`)},
		{"up-transfer-encoding", up("Transfer-Encoding: chunked"), one(`upstream "svc": header Transfer-Encoding is set by the gateway's HTTP client and cannot be configured`)},
		{"up-connection", up("CONNECTION: close"), one(`upstream "svc": header Connection is set by the gateway's HTTP client and cannot be configured`)},
		{"up-repeat", up("X-Key: a, x-key: b"), one(`upstream "svc": header "x-key" repeats "X-Key" (header names are case-insensitive)`)},
		{"up-repeat-thrice", up("X-Key: a, x-key: b, X-KEY: c"), []string{
			`upstream "svc": header "x-key" repeats "X-Key" (header names are case-insensitive)`,
			`upstream "svc": header "X-KEY" repeats "X-Key" (header names are case-insensitive)`,
		}},
		// A key may be an alias of a key written before: it is that key.
		{"up-alias-key", doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", headers: { &hk X-Key: a } }, b: { base_url: "http://127.0.0.1:2", headers: { *hk : b, x-key: c } } }`},
			one(`upstream "b": header "x-key" repeats "X-Key" (header names are case-insensitive)`)},
		{"up-space", up(`"X Key": a`), one(`upstream "svc": header name "X Key" is not a valid token`)},
		{"up-colon", up(`"X:Key": a`), one(`upstream "svc": header name "X:Key" is not a valid token`)},
		{"up-empty", up(`"": a`), one(`upstream "svc": header name "" is not a valid token`)},
		{"up-non-ascii", up(`"X-Ké": a`), one(`upstream "svc": header name "X-Ké" is not a valid token`)},
		{"up-cr", up(`X-Key: "a\rb"`), one(`upstream "svc": header X-Key: ` + ctl)},
		{"up-lf", up(`X-Key: "a\nSet-Cookie: x"`), one(`upstream "svc": header X-Key: ` + ctl)},
		{"up-nul", up(`X-Key: "a\0b"`), one(`upstream "svc": header X-Key: ` + ctl)},
		{"up-0x1f", up(`X-Key: "a\x1fb"`), one(`upstream "svc": header X-Key: ` + ctl)},
		{"up-del", up(`X-Key: "a\x7fb"`), one(`upstream "svc": header X-Key: ` + ctl)},
		{"req-ok", req(`X-V: "v={v}\t!", X-A: "{actor}"`), nil},
		{"req-host", req(`Host: "{v}"`), one(`tool "r": header Host is set by the gateway's HTTP client and cannot be configured`)},
		{"req-repeat", req(`X-V: "{v}", X-v: "{v}"`), one(`tool "r": header "X-v" repeats "X-V" (header names are case-insensitive)`)},
		{"req-bad-name", req(`"X(V)": "{v}"`), one(`tool "r": header name "X(V)" is not a valid token`)},
		{"req-crlf-literal", req(`X-V: "{v}\r\nX-Evil: 1"`), one(`tool "r": header X-V: ` + ctl)},
		{"req-lf-first", req(`X-V: "\n{v}"`), one(`tool "r": header X-V: ` + ctl)},
		{"req-placeholder-unknown", req(`X-V: "{w}"`), one(`tool "r": placeholder {w} names no argument (did you mean "v"?)`)},
	})
}

// TestBodyFormatRules: form bodies are flat mappings, text bodies one
// template whose every placeholder always has a value.
func TestBodyFormatRules(t *testing.T) {
	in := `input: { type: object, properties: { req: { type: string }, opt: { type: string }, def: { type: string, default: "1h" } }, required: [req] }, `
	body := func(format, b string) doc {
		return tool(w(in + `request: { upstream: svc, path: /w, body_format: ` + format + `, body: ` + b + ` }`))
	}
	runProblems(t, []problemCase{
		{"json-default-any-shape", tool(w(in + `request: { upstream: svc, path: /w, body: [{ a: { b: "{opt}" } }] }`)), nil},
		{"json-no-body", tool(w(`request: { upstream: svc, path: /w, body_format: json }`)), nil},
		{"form-flat", body("form", `{ a: "{req}", b: 1, c: true, d: ["{opt}", 2, false], e: "{now+def}" }`), nil},
		{"form-empty-key", body("form", `{ "": "{req}" }`), one(`tool "w": request.body: form field names must not be empty`)},
		{"form-string", body("form", `"a={req}"`), one(`tool "w": request.body_format form needs request.body to be a mapping of field names to values, got a string`)},
		{"form-scalar", body("form", `1`), one(`tool "w": request.body_format form needs request.body to be a mapping of field names to values, got a scalar`)},
		{"form-list-of-list", body("form", `{ a: [[x]] }`), one(`tool "w": request.body a[0]: a form field's list holds strings, numbers or booleans, not a list`)},
		{"form-list-null", body("form", `{ a: [x, ~] }`), one(`tool "w": request.body a[1]: a form field's list holds strings, numbers or booleans, not null`)},
		{"form-no-body", tool(w(`request: { upstream: svc, path: /w, body_format: form }`)), one(`tool "w": request.body_format form needs a request.body`)},
		{"text-required", body("text", `"{req} at {now} by {actor} in {workspace}"`), nil},
		{"text-default", body("text", `"{def}"`), nil},
		{"text-optional", body("text", `"{opt}"`),
			one(`tool "w": text body placeholder {opt} names an optional argument without a default; list it under input.required or give it a default`)},
		{"text-time-required", tool(w(`input: { type: object, properties: { ttl: { type: string } }, required: [ttl] }, request: { upstream: svc, path: /w, body_format: text, body: "until {now+ttl}" }`)), nil},
		{"text-time-default", body("text", `"until {now+def.unix}"`), nil},
		{"text-time-optional", body("text", `"until {now-opt}"`),
			one(`tool "w": text body placeholder {now-opt} names an optional argument "opt" without a default; list it under input.required or give it a default`)},
		{"text-time-unknown", body("text", `"until {now+nope}"`), one(`tool "w": placeholder {now+nope}: "nope" names no argument`)},
		// An argument named actor is refused once; the text body's {actor}
		// is the token's, not an optional argument.
		{"text-actor-argument", tool(w(`input: { type: object, properties: { actor: { type: string } } }, request: { upstream: svc, path: /w, body_format: text, body: "{actor}" }`)),
			one(`tool "w": argument name "actor" is reserved: {actor} comes from the caller's token, never from arguments`)},
		{"text-list", body("text", `["{req}"]`), one(`tool "w": request.body_format text needs request.body to be one string template, got a list`)},
		{"text-null", body("text", `~`), one(`tool "w": request.body_format text needs a request.body`)},
		{"text-no-body", tool(w(`request: { upstream: svc, path: /w, body_format: text }`)), one(`tool "w": request.body_format text needs a request.body`)},
		{"unknown", body("yaml", `"x"`), one(`tool "w": request.body_format "yaml" must be json, form or text`)},
		{"unknown-case", body("JSON", `"x"`), one(`tool "w": request.body_format "JSON" must be json, form or text`)},
		{"get-body", tool(`name: r, description: R., request: { upstream: svc, path: /r, body: { a: 1 } }`), one(`tool "r": a GET request cannot carry a body`)},
		{"head-body", tool(`name: r, description: R., request: { upstream: svc, method: HEAD, path: /r, body: { a: 1 } }`), one(`tool "r": a HEAD request cannot carry a body`)},
		{"delete-body", tool(w(`request: { upstream: svc, method: DELETE, path: /w, body: { a: 1 } }`)), nil},
		{"method-unknown", tool(w(`request: { upstream: svc, method: TRACE, path: /w }`)), one(`tool "w": method "TRACE" must be one of GET HEAD POST PUT PATCH DELETE`)},
	})
}

// TestTimePlaceholders: {now…} placeholders take a declared string
// argument, are noted once each in Request.Times, and a path's argument
// is required.
func TestTimePlaceholders(t *testing.T) {
	in := `input: { type: object, properties: { ttl: { type: string }, n: { type: integer }, opt: { type: string } }, required: [ttl, n] }, `
	q := func(query string) doc {
		return tool(`name: r, description: R., ` + in + `request: { upstream: svc, path: /r, query: { ` + query + ` } }`)
	}
	runProblems(t, []problemCase{
		{"all-forms", q(`a: "{now}", b: "{now.unix}", c: "{now+ttl}", d: "{now-ttl}", e: "{now+ttl.unix}", f: "{now-opt.unix}"`), nil},
		{"integer-arg", q(`a: "{now+n}"`), one(`tool "r": placeholder {now+n}: argument "n" must have type: string (it holds a duration like 2h or 1d)`)},
		{"unknown-arg", q(`a: "{now+tl}"`), one(`tool "r": placeholder {now+tl}: "tl" names no argument (did you mean "ttl"?)`)},
		{"no-arg", q(`a: "{now+}"`), one(`tool "r": query a: placeholder {now+} is not a computed time: write {now}, {now.unix}, {now+ARG}, {now-ARG}, {now+ARG.unix} or {now-ARG.unix}, where ARG is an argument holding a duration`)},
		{"unix-twice", q(`a: "{now.unix.unix}"`), one(`tool "r": query a: placeholder {now.unix.unix} is not a computed time: write {now}, {now.unix}, {now+ARG}, {now-ARG}, {now+ARG.unix} or {now-ARG.unix}, where ARG is an argument holding a duration`)},
		{"not-a-time", q(`a: "{nowttl}"`), one(`tool "r": placeholder {nowttl} names no argument`)},
		{"path-required", tool(`name: r, description: R., ` + in + `request: { upstream: svc, path: "/r/{now+ttl}/{now}" }`), nil},
		{"path-optional", tool(`name: r, description: R., ` + in + `request: { upstream: svc, path: "/r/{now-opt.unix}" }`),
			one(`tool "r": path placeholder {now-opt.unix} names an optional argument "opt"; list it under input.required`)},
		{"path-integer", tool(`name: r, description: R., ` + in + `request: { upstream: svc, path: "/r/{now-n}" }`),
			one(`tool "r": placeholder {now-n}: argument "n" must have type: string (it holds a duration like 2h or 1d)`)},
		{"header", tool(`name: r, description: R., ` + in + `request: { upstream: svc, path: /r, headers: { X-Until: "{now+n.unix}" } }`),
			one(`tool "r": placeholder {now+n.unix}: argument "n" must have type: string (it holds a duration like 2h or 1d)`)},
	})
	c, problems := tool(`name: r, description: R., ` + in + `request: { upstream: svc, method: POST, path: "/r/{now}", query: { a: "{now}", b: "{now+ttl.unix}" }, body: { x: "{now+ttl.unix}", y: "{now-ttl}" } }`).load(t)
	if problems != nil {
		t.Fatalf("problems %q", problems)
	}
	var got []string
	for _, tr := range c.Tool("r").Request.Times {
		got = append(got, fmt.Sprintf("%s/%d/%s/%t", tr.Name, tr.Sign, tr.Arg, tr.Unix))
	}
	if want := []string{"now/0//false", "now+ttl.unix/1/ttl/true", "now-ttl/-1/ttl/false"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Request.Times = %q, want %q", got, want)
	}
}

// TestGJSONPathsAreChecked: every gjson path a tool holds is checked at
// load, with the key it sits under in the message.
func TestGJSONPathsAreChecked(t *testing.T) {
	resp := func(r string) doc {
		return tool(`name: r, description: R., request: { upstream: svc, path: /r }, response: { ` + r + ` }`)
	}
	runProblems(t, []problemCase{
		{"ok", resp(`select: data.alerts, error_message: error.msg, fields: { a: "x.#(y==1)#", b: "..0" }, list: a, untrusted: [a], sensitive: [b]`), nil},
		{"select", resp(`select: "data..alerts"`),
			one(`tool "r": response.select "data..alerts" is not a valid gjson path: it has an empty component at character 6 (two separators in a row)`)},
		{"error_message", resp(`error_message: "error."`),
			one(`tool "r": response.error_message "error." is not a valid gjson path: it ends with "." (an empty last component)`)},
		{"field", resp(`fields: { a: "#(x" }`),
			one(`tool "r": response.fields a "#(x" is not a valid gjson path: the query opened at character 1 is never closed`)},
		{"field-empty", resp(`fields: { a: "" }`), one(`tool "r": response.fields a: path must not be empty`)},
		{"untrusted-empty", resp(`untrusted: [""]`), one(`tool "r": response.untrusted: paths must not be empty`)},
		{"sensitive-empty", resp(`sensitive: [a, ""]`), one(`tool "r": response.sensitive: paths must not be empty`)},
		{"list-not-field", resp(`fields: { a: x }, list: b`), one(`tool "r": response.list "b" is not one of response.fields`)},
		{"list-no-fields", resp(`list: b`), nil},
		{"render", resp(`render: html`), one(`tool "r": response.render "html" must be json or payload`)},
		{"optional-select", resp(`optional: [select]`), one(`tool "r": response.optional names select, but the tool has no response.select`)},
		{"optional-list", resp(`optional: [list]`), one(`tool "r": response.optional names list, but the tool has no response.list`)},
		{"optional-ok", resp(`select: d, list: a, fields: { a: x }, optional: [select, list, a]`), nil},
		{"optional-unknown", resp(`fields: { alerts: x }, optional: [alert]`),
			one(`tool "r": response.optional "alert" is neither select, list nor one of response.fields (did you mean "alerts"?)`)},
	})
}

// TestRequestPathRules: a path's literal text holds no query, fragment,
// space or control character, so a placeholder stays inside its segment.
func TestRequestPathRules(t *testing.T) {
	path := func(p string) doc {
		return tool(`name: r, description: R., request: { upstream: svc, path: "` + p + `" }`)
	}
	const spaces = `tool "r": request.path must not contain spaces or control characters`
	runProblems(t, []problemCase{
		{"plain", path(`/a!b~c/d:e@f`), nil},
		{"space", path(`/a b`), one(spaces)},
		{"tab", path(`/a\tb`), one(spaces)},
		{"0x1f", path(`/a\x1fb`), one(spaces)},
		{"del", path(`/a\x7fb`), one(spaces)},
		{"query", path(`/a?b=1`), one(`tool "r": request.path must not hold a query or fragment (use request.query)`)},
		{"fragment", path(`/a#b`), one(`tool "r": request.path must not hold a query or fragment (use request.query)`)},
		{"relative", path(`a/b`), one(`tool "r": request.path "a/b" must start with /`)},
		{"dot-dot", path(`/../../globex/data`), one(`tool "r": request.path must not hold a "." or ".." segment`)},
		{"dot-dot-after-a-segment", path(`/x/y/../z`), one(`tool "r": request.path must not hold a "." or ".." segment`)},
		{"dot", path(`/a/./b`), one(`tool "r": request.path must not hold a "." or ".." segment`)},
		{"encoded-dot-dot", path(`/a/%2E%2e/b`), one(`tool "r": request.path must not hold a "." or ".." segment`)},
		{"trailing-dot-dot", path(`/a/..`), one(`tool "r": request.path must not hold a "." or ".." segment`)},
		{"dots-in-a-name", path(`/v1.2/a..b/.well-known/x..json`), nil},
		{"probe-space", doc{"prerequisites": `{ p: { probe: { upstream: svc, path: "/ws /x" } } }`}, one(`prerequisite "p": probe path must not contain spaces or control characters`)},
	})
}

// longGate declares a gate named n g's and has a tool name it with its
// last letter mistyped.
func longGate(n int) doc {
	name := strings.Repeat("g", n)
	return tool("name: r, description: R., gate: "+name[:n-1]+"x, request: { upstream: svc, path: /r }",
		"gates", "{ "+name+": { scopes: [op] } }")
}

// An argument never fills a header (or _method) that steers how the
// upstream or a proxy reads the request; a literal value may.
func TestSteeringHeadersTakeNoArgument(t *testing.T) {
	withHeader := func(h, v string) doc {
		return tool(`name: r, description: R., input: { type: object, properties: { v: { type: string } } }, request: { upstream: svc, path: /r, headers: { ` + h + `: "` + v + `" } }`)
	}
	refused := func(h string) []string {
		return one(`tool "r": header ` + h + `: an argument must not fill it: it steers how the upstream or a proxy reads the request (its method, client, host, path or connection); give it a literal value or leave it out`)
	}
	runProblems(t, []problemCase{
		{"method-override", withHeader("X-HTTP-Method-Override", "{v}"), refused("X-HTTP-Method-Override")},
		{"forwarded-for", withHeader("X-Forwarded-For", "10.0.0.{v}"), refused("X-Forwarded-For")},
		{"forwarded", withHeader("Forwarded", "for={v}"), refused("Forwarded")},
		{"original-url", withHeader("X-Original-URL", "{v}"), refused("X-Original-URL")},
		{"upgrade", withHeader("Upgrade", "{v}"), refused("Upgrade")},
		{"literal-is-the-operators", withHeader("X-Forwarded-Proto", "https"), nil},
		{"workspace-is-the-tokens", withHeader("X-Forwarded-Host", "{workspace}.example.com"), nil},
		{"ordinary-header", withHeader("X-Request-Source", "{v}"), nil},
		{"method-query", tool(`name: r, description: R., input: { type: object, properties: { v: { type: string } } }, request: { upstream: svc, path: /r, query: { _method: "{v}" } }`),
			one(`tool "r": query _method: an argument must not fill it: frameworks read it as the request's method; give it a literal value or leave it out`)},
	})
}
