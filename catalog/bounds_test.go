package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// doc is a catalog written section by section: each table case replaces
// the top-level keys it is about in docBase ("" removes a key), so that
// everything else stays valid and the case's problems are its own.
type doc map[string]string

var docOrder = []string{"version", "server", "auth", "gates", "sensitive_data", "upstreams", "prerequisites", "limits", "audit", "tools"}

var docBase = doc{
	"version":   "1",
	"server":    "{ name: t }",
	"auth":      `{ jwt: { jwks_url: "https://idp.example.com/jwks", algorithms: [RS256], issuer: i, audience: a } }`,
	"gates":     "{ operate: { scopes: [op] } }",
	"upstreams": `{ svc: { base_url: "http://127.0.0.1:1" } }`,
	"tools":     "[ { name: r, description: R., request: { upstream: svc, path: /r } } ]",
}

// yaml writes the catalog: docBase with d's sections in their place.
func (d doc) yaml() string {
	var b strings.Builder
	for _, key := range docOrder {
		v, ok := d[key]
		if !ok {
			v = docBase[key]
		}
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", key, v)
		}
	}
	return b.String()
}

// tool is a docBase with one tool written as the flow mapping body t
// (without braces) and extra sections.
func tool(t string, sections ...string) doc {
	d := doc{"tools": "[ { " + t + " } ]"}
	for i := 0; i+1 < len(sections); i += 2 {
		d[sections[i]] = sections[i+1]
	}
	return d
}

// load parses d and returns the catalog (nil on error) and the message of
// each problem, position left out, in file order.
func (d doc) load(t *testing.T) (*Catalog, []string) {
	t.Helper()
	src := d.yaml()
	c, err := Parse("c.yaml", []byte(src), &LoadOptions{Getenv: func(string) (string, bool) { return "", false }})
	if err == nil {
		return c, nil
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Parse(\n%s) = %v, want a *LoadError", src, err)
	}
	var msgs []string
	for _, p := range le.Problems {
		msgs = append(msgs, p.Msg)
	}
	return nil, msgs
}

// problemCase is one catalog and the exact problems it must load with
// (none: it loads).
type problemCase struct {
	name string
	d    doc
	want []string
}

func runProblems(t *testing.T, cases []problemCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, got := tt.d.load(t)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Parse(\n%s) problems:\n  %s\nwant:\n  %s", tt.d.yaml(), strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func one(msg string) []string { return []string{msg} }

// TestNumericBounds holds every number the catalog validates at its limit
// minus one, at the limit and one past it (the smallest step of its
// type: 1 for counts and bytes, 1ns for durations).
func TestNumericBounds(t *testing.T) {
	jwt := func(extra string) doc {
		return doc{"auth": `{ jwt: { jwks_url: "https://idp.example.com/jwks", algorithms: [RS256], issuer: i, audience: a, ` + extra + ` } }`}
	}
	up := func(extra string) doc {
		return doc{"upstreams": `{ svc: { base_url: "http://127.0.0.1:1", ` + extra + ` } }`}
	}
	lim := func(l string) doc { return doc{"limits": "{ " + l + " }"} }
	probe := func(extra string) doc {
		return doc{
			"upstreams":     `{ svc: { base_url: "http://127.0.0.1:1" } }`,
			"prerequisites": `{ kb: { probe: { upstream: svc, method: GET, path: /status, true_when: enabled, ` + extra + ` } } }`,
		}
	}
	runProblems(t, []problemCase{
		// auth.jwt.leeway: at most DefaultMaxLeeway (60s).
		{"leeway-59.999999999s", jwt("leeway: 59999999999ns"), nil},
		{"leeway-60s", jwt("leeway: 60s"), nil},
		{"leeway-60s+1ns", jwt("leeway: 60000000001ns"), one("auth.jwt: leeway 1m0.000000001s is over the 1m0s ceiling")},
		{"leeway-0", jwt("leeway: 0s"), nil},

		// auth.jwt.start_deadline: greater than 0.
		{"start_deadline-0", jwt("start_deadline: 0s"), one("auth.jwt: start_deadline must be greater than 0")},
		{"start_deadline-1ns", jwt("start_deadline: 1ns"), nil},

		// auth.max_token_lifetime: not negative (a negative duration is
		// refused by the parser already).
		{"max_token_lifetime-0", doc{"auth": `{ max_token_lifetime: 0s, jwt: { jwks_url: "https://idp.example.com/jwks", algorithms: [RS256], issuer: i, audience: a } }`}, nil},
		{"max_token_lifetime-negative", doc{"auth": `{ max_token_lifetime: -1ns, jwt: { jwks_url: "https://idp.example.com/jwks", algorithms: [RS256], issuer: i, audience: a } }`},
			one(`auth.max_token_lifetime: duration "-1ns" is negative`)},

		// prerequisites: a probe's cache is greater than 0 (a 0 could
		// read as "the default" or as "no cache"; it is refused).
		{"probe-cache-0", probe("cache: 0s"), one(`prerequisite "kb": probe cache must be greater than 0 (omit it for the default 1m0s)`)},
		{"probe-cache-1ns", probe("cache: 1ns"), nil},
		{"probe-cache-absent", probe(""), nil},

		// upstreams: timeout and max_response_bytes greater than 0.
		{"timeout-0", up("timeout: 0s"), one(`upstream "svc": timeout must be greater than 0`)},
		{"timeout-1ns", up("timeout: 1ns"), nil},
		{"max_response_bytes-0", up("max_response_bytes: 0"), one(`upstream "svc": max_response_bytes must be greater than 0`)},
		{"max_response_bytes-1", up("max_response_bytes: 1"), nil},

		// max_concurrent and max_concurrent_per_workspace: not negative
		// (0: no cap); the share of one workspace at most the whole.
		{"max_concurrent--1", up("max_concurrent: -1"), one(`upstream "svc": max_concurrent must not be negative (0: no cap)`)},
		{"max_concurrent-0", up("max_concurrent: 0"), nil},
		{"max_concurrent-1", up("max_concurrent: 1"), nil},
		{"per_workspace--1", up("max_concurrent_per_workspace: -1"), one(`upstream "svc": max_concurrent_per_workspace must not be negative (0: no cap)`)},
		{"per_workspace-0", up("max_concurrent: 4, max_concurrent_per_workspace: 0"), nil},
		{"per_workspace-max-1", up("max_concurrent: 4, max_concurrent_per_workspace: 3"), nil},
		{"per_workspace-max", up("max_concurrent: 4, max_concurrent_per_workspace: 4"), nil},
		{"per_workspace-max+1", up("max_concurrent: 4, max_concurrent_per_workspace: 5"), one(`upstream "svc": max_concurrent_per_workspace 5 is over max_concurrent 4`)},
		{"per_workspace-1-over-1", up("max_concurrent: 1, max_concurrent_per_workspace: 2"), one(`upstream "svc": max_concurrent_per_workspace 2 is over max_concurrent 1`)},
		{"per_workspace-no-total-cap", up("max_concurrent: 0, max_concurrent_per_workspace: 5"), nil},

		// limits: sizes greater than 0.
		{"structured_bytes-0", lim("structured_bytes: 0"), one("limits: structured_bytes must be greater than 0")},
		{"structured_bytes-1", lim("structured_bytes: 1"), nil},
		{"text_bytes-0", lim("text_bytes: 0"), one("limits: text_bytes must be greater than 0")},
		{"text_bytes-1", lim("text_bytes: 1"), nil},
		{"inline_bytes-0", lim("inline_bytes: 0"), one("limits: inline_bytes must be greater than 0")},
		{"inline_bytes-1", lim("inline_bytes: 1"), nil},
		{"request_bytes-0", lim("request_bytes: 0"), one("limits: request_bytes must be greater than 0")},
		{"request_bytes-1", lim("request_bytes: 1"), nil},
		{"size-1TiB", lim("request_bytes: 1099511627776"), nil},
		{"size-1TiB+1", lim("request_bytes: 1099511627777"), one(`limits.request_bytes: size "1099511627777" is over the 1TiB ceiling`)},

		// limits.page_size: max at least 1; default between 1 and max.
		{"page_size.max-0", lim("page_size: { max: 0 }"), one("limits: page_size.max must be at least 1")},
		{"page_size.max-1", lim("page_size: { max: 1 }"), nil},
		{"page_size.default-0", lim("page_size: { default: 0, max: 10 }"), one("limits: page_size.default 0 must be between 1 and page_size.max (10)")},
		{"page_size.default-1", lim("page_size: { default: 1, max: 10 }"), nil},
		{"page_size.default-max-1", lim("page_size: { default: 9, max: 10 }"), nil},
		{"page_size.default-max", lim("page_size: { default: 10, max: 10 }"), nil},
		{"page_size.default-max+1", lim("page_size: { default: 11, max: 10 }"), one("limits: page_size.default 11 must be between 1 and page_size.max (10)")},
		{"page_size.default-default-max", lim("page_size: { default: 100 }"), nil},
		{"page_size.default-default-max+1", lim("page_size: { default: 101 }"), one("limits: page_size.default 101 must be between 1 and page_size.max (100)")},

		// limits.max_in_flight: at least 1.
		{"max_in_flight-0", lim("max_in_flight: 0"), one("limits: max_in_flight must be at least 1")},
		{"max_in_flight-1", lim("max_in_flight: 1"), nil},

		// limits.rate buckets: rps greater than 0, burst at least 1.
		{"rps-0", lim("rate: { per_principal: { rps: 0, burst: 1 } }"), one("limits.rate.per_principal: rps must be greater than 0")},
		{"rps-tiny", lim("rate: { per_principal: { rps: 0.001, burst: 1 } }"), nil},
		{"burst-0", lim("rate: { per_principal: { rps: 1, burst: 0 } }"), one("limits.rate.per_principal: burst must be at least 1")},
		{"per_tool-burst-0", lim("rate: { per_tool: { r: { rps: 1, burst: 0 } } }"), one(`limits.rate.per_tool.r: burst must be at least 1`)},

		// limits.rules: named once, known dimensions and names, a rate or
		// a quota with numbers in range.
		{"rule-rate", lim("rules: [{ name: ws, per: [workspace, subject, tool, upstream], rate: { rps: 10, burst: 20 } }]"), nil},
		{"rule-burst-defaults-to-a-second", lim("rules: [{ name: ws, per: [workspace], rate: { rps: 2.5 } }]"), nil},
		{"rule-quota-and-match", lim("rules: [{ name: q, match: { workspace: [acme], subject: [bot], tool: [r], upstream: [svc] }, quota: { per_day: 1 } }]"), nil},
		{"rule-no-name", lim("rules: [{ rate: { rps: 1 } }]"), one(`limits.rules[0]: name is required`)},
		{"rule-bad-name", lim("rules: [{ name: 'a b', rate: { rps: 1 } }]"), one(`limits.rules[0]: name "a b" must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`)},
		{"rule-reserved-name", lim("rules: [{ name: principal, rate: { rps: 1 } }]"), one(`limits.rules[0]: name "principal" is taken by limits.rate's per_principal and per_tool; choose another`)},
		{"rule-twice", lim("rules: [{ name: a, rate: { rps: 1 } }, { name: a, rate: { rps: 1 } }]"), one(`limits.rules[1]: name "a" is used by another rule`)},
		{"rule-bad-dimension", lim("rules: [{ name: a, per: [tenant], rate: { rps: 1 } }]"), one(`limits rule "a": per names "tenant"; the dimensions are workspace, subject, tool and upstream`)},
		{"rule-dimension-twice", lim("rules: [{ name: a, per: [tool, tool], rate: { rps: 1 } }]"), one(`limits rule "a": per names "tool" twice`)},
		{"rule-unknown-tool", lim("rules: [{ name: a, match: { tool: [nope] }, rate: { rps: 1 } }]"), one(`limits rule "a": match.tool names tool "nope", which is not declared`)},
		{"rule-unknown-upstream", lim("rules: [{ name: a, match: { upstream: [nope] }, rate: { rps: 1 } }]"), one(`limits rule "a": match.upstream names upstream "nope", which is not declared`)},
		{"rule-empty-match", lim("rules: [{ name: a, match: { workspace: [] }, rate: { rps: 1 } }]"), one(`limits rule "a": match.workspace is empty, so the rule would match no call; leave it out to match every workspace`)},
		{"rule-limits-nothing", lim("rules: [{ name: a, per: [workspace] }]"), one(`limits rule "a": a rule needs rate or quota (or both)`)},
		{"rule-rps-0", lim("rules: [{ name: a, rate: { rps: 0 } }]"), one(`limits rule "a": rate.rps must be greater than 0`)},
		{"rule-burst-0", lim("rules: [{ name: a, rate: { rps: 1, burst: 0 } }]"), one(`limits rule "a": rate.burst must be at least 1`)},
		{"rule-quota-0", lim("rules: [{ name: a, quota: { per_day: 0 } }]"), one(`limits rule "a": quota.per_day must be at least 1`)},

		// audit.max_argument_bytes: greater than 0.
		{"max_argument_bytes-0", doc{"audit": "{ max_argument_bytes: 0 }"}, one("audit: max_argument_bytes must be greater than 0")},
		{"max_argument_bytes-1", doc{"audit": "{ max_argument_bytes: 1 }"}, nil},

		// tools[].paging.max: not negative (0: limits.page_size.max).
		{"paging.max--1", tool("name: r, description: R., request: { upstream: svc, path: /r }, paging: { max: -1 }"), one(`tool "r": paging.max must not be negative`)},
		{"paging.max-0", tool("name: r, description: R., request: { upstream: svc, path: /r }, paging: { max: 0 }"), nil},

		// response.not_found.status: a 4xx or 5xx status.
		{"not_found-399", tool("name: r, description: R., request: { upstream: svc, path: /r }, response: { not_found: { status: [399] } }"),
			one(`tool "r": response.not_found status 399 must be a 4xx or 5xx status`)},
		{"not_found-400", tool("name: r, description: R., request: { upstream: svc, path: /r }, response: { not_found: { status: [400] } }"), nil},
		{"not_found-599", tool("name: r, description: R., request: { upstream: svc, path: /r }, response: { not_found: { status: [599] } }"), nil},
		{"not_found-600", tool("name: r, description: R., request: { upstream: svc, path: /r }, response: { not_found: { status: [600] } }"),
			one(`tool "r": response.not_found status 600 must be a 4xx or 5xx status`)},

		// server.listen: a port between 0 and 65535.
		{"listen-65535", doc{"server": `{ name: t, listen: "127.0.0.1:65535" }`}, nil},
		{"listen-65536", doc{"server": `{ name: t, listen: "127.0.0.1:65536" }`}, one(`server: listen "127.0.0.1:65536" must be host:port, like 127.0.0.1:8080 or :8080`)},
		{"listen-0", doc{"server": `{ name: t, listen: ":0" }`}, nil},
		{"listen--1", doc{"server": `{ name: t, listen: ":-1" }`}, one(`server: listen ":-1" must be host:port, like 127.0.0.1:8080 or :8080`)},
	})
}

// TestNumericDefaults: what an absent number becomes, in particular the
// page size default that follows a smaller page_size.max.
func TestNumericDefaults(t *testing.T) {
	for _, tt := range []struct {
		limits      string
		def, maxPgs int
	}{
		{"", DefaultPageSize, DefaultMaxPageSize},
		{"{ page_size: { max: 1 } }", 1, 1},
		{"{ page_size: { max: 19 } }", 19, 19},
		{"{ page_size: { max: 20 } }", 20, 20},
		{"{ page_size: { max: 21 } }", 20, 21},
		{"{ page_size: { default: 5 } }", 5, DefaultMaxPageSize},
	} {
		c, problems := doc{"limits": tt.limits}.load(t)
		if problems != nil {
			t.Errorf("limits %q: %q", tt.limits, problems)
			continue
		}
		if ps := c.Limits.PageSize; ps.Default != tt.def || ps.Max != tt.maxPgs {
			t.Errorf("limits %q: page_size = {default: %d, max: %d}, want {default: %d, max: %d}", tt.limits, ps.Default, ps.Max, tt.def, tt.maxPgs)
		}
	}
	c, _ := doc{}.load(t)
	if c.Auth.JWT.StartDeadline != DefaultStartDeadline || c.Audit.MaxArgumentBytes != DefaultMaxArgumentBytes {
		t.Errorf("start_deadline = %s, max_argument_bytes = %s; want the defaults %s and %s",
			c.Auth.JWT.StartDeadline, c.Audit.MaxArgumentBytes, DefaultStartDeadline, DefaultMaxArgumentBytes)
	}
	if DefaultMaxLeeway != Duration(60*time.Second) {
		t.Errorf("DefaultMaxLeeway = %s, the contract says 60s", DefaultMaxLeeway)
	}
}

// TestTimeOffsetBounds holds {now+ARG} durations at 0, MaxTimeOffset
// (366d) and one nanosecond either side, written every way the parser
// reads them.
func TestTimeOffsetBounds(t *testing.T) {
	const over = `of at most 366d`
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string // exact error, "" when accepted
	}{
		{"1ns", time.Nanosecond, ""},
		{"0s", 0, `"0s" is not a duration like 90m, 2h, 1d or 1d12h greater than zero`},
		{"0d", 0, `"0d" is not a duration like 90m, 2h, 1d or 1d12h greater than zero`},
		{"0d0s", 0, `"0d0s" is not a duration like 90m, 2h, 1d or 1d12h greater than zero`},
		{"0d1ns", time.Nanosecond, ""},
		{"9d", 9 * 24 * time.Hour, ""},
		{"90d", 90 * 24 * time.Hour, ""},
		{"365d", 365 * 24 * time.Hour, ""},
		{"365d23h59m59.999999999s", MaxTimeOffset - time.Nanosecond, ""},
		{"366d", MaxTimeOffset, ""},
		{"8784h", MaxTimeOffset, ""},
		{"365d24h", MaxTimeOffset, ""},
		{"8783h59m59.999999999s", MaxTimeOffset - time.Nanosecond, ""},
		{"366d1ns", 0, `"366d1ns" is not a duration like 90m, 2h, 1d or 1d12h ` + over},
		{"8784h1ns", 0, `"8784h1ns" is not a duration like 90m, 2h, 1d or 1d12h ` + over},
		{"365d24h1ns", 0, `"365d24h1ns" is not a duration like 90m, 2h, 1d or 1d12h ` + over},
		{"367d", 0, `"367d" is not a duration like 90m, 2h, 1d or 1d12h ` + over},
		{"1d8784h", 0, `"1d8784h" is not a duration like 90m, 2h, 1d or 1d12h ` + over},
		// Days and hours that would overflow int64 once added are over the
		// ceiling, not "not greater than zero".
		{"1d2562047h", 0, `"1d2562047h" is not a duration like 90m, 2h, 1d or 1d12h ` + over},
		{"1d+1h", 0, `"1d+1h" is not a duration like 90m, 2h, 1d or 1d12h`},
		{"d1h", 0, `"d1h" is not a duration like 90m, 2h, 1d or 1d12h`},
		{"1x2d", 0, `"1x2d" is not a duration like 90m, 2h, 1d or 1d12h`},
		{strings.Repeat("0", 62) + "1h", time.Hour, ""}, // 64 bytes: the longest read
		{strings.Repeat("0", 63) + "1h", 0, `"` + clip(strings.Repeat("0", 63)+"1h") + `" is not a duration like 90m, 2h, 1d or 1d12h`},
	} {
		got, err := ParseTimeOffset(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseTimeOffset(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("ParseTimeOffset(%q) = %s, %v; want the error %q", tt.in, got, err, tt.err)
		}
		var toe *TimeOffsetError
		if err != nil && !errors.As(err, &toe) {
			t.Errorf("ParseTimeOffset(%q) error %T, want a *TimeOffsetError", tt.in, err)
		}
	}
}

// TestUnitTextBound: sizes and durations are read only up to maxUnitText
// bytes (32); one more is refused before any parsing.
func TestUnitTextBound(t *testing.T) {
	size := func(n int) string { return strings.Repeat("0", n-4) + "1KiB" }
	dur := func(n int) string { return strings.Repeat("0", n-2) + "1s" }
	if got, err := ParseSize(size(maxUnitText)); err != nil || got != 1024 {
		t.Errorf("ParseSize(%d bytes) = %d, %v; want 1024", maxUnitText, got, err)
	}
	if _, err := ParseSize(size(maxUnitText + 1)); err == nil || err.Error() != fmt.Sprintf("size %.32q… is too long", size(maxUnitText+1)) {
		t.Errorf("ParseSize(%d bytes) = %v, want it too long", maxUnitText+1, err)
	}
	if got, err := ParseDuration(dur(maxUnitText)); err != nil || got != Duration(time.Second) {
		t.Errorf("ParseDuration(%d bytes) = %s, %v; want 1s", maxUnitText, got, err)
	}
	if _, err := ParseDuration(dur(maxUnitText + 1)); err == nil || err.Error() != fmt.Sprintf("duration %.32q… is too long", dur(maxUnitText+1)) {
		t.Errorf("ParseDuration(%d bytes) = %v, want it too long", maxUnitText+1, err)
	}
}

// TestAliasBudgetGrowsWithTheCatalog: the alias budget is twice the
// written nodes plus aliasSlack, so a large catalog that aliases a large
// value once loads.
func TestAliasBudgetGrowsWithTheCatalog(t *testing.T) {
	var h strings.Builder
	h.WriteString("{ ")
	for i := range aliasSlack {
		fmt.Fprintf(&h, "X-H%d: v, ", i)
	}
	h.WriteString("}")
	headers := h.String()
	ups := `{ svc: { base_url: "http://127.0.0.1:1", headers: &h ` + headers + ` }, b: { base_url: "http://127.0.0.1:2", headers: *h } }`
	c, problems := doc{"upstreams": ups}.load(t)
	if problems != nil || len(c.Upstreams["b"].Headers) != aliasSlack {
		t.Errorf("%d headers written and aliased once: %.200q", aliasSlack, problems)
	}
}

// TestNestingBound: a value may nest maxDepth (64) levels below the
// document; a request body sits four below it (tools, the tool, request,
// body), so 60 nested lists load and 61 do not.
func TestNestingBound(t *testing.T) {
	body := func(n int) doc {
		return tool(w(`request: { upstream: svc, path: /w, body: ` + strings.Repeat("[", n) + "1" + strings.Repeat("]", n) + ` }`))
	}
	if _, problems := body(60).load(t); problems != nil {
		t.Errorf("60 nested lists: %q, want them loaded", problems)
	}
	_, problems := body(61).load(t)
	if len(problems) != 1 || !strings.HasPrefix(problems[0], "catalog nests too deeply or its aliases expand too far (limits: depth 64, ") {
		t.Errorf("61 nested lists: %q, want the depth refused", problems)
	}
	// not_found.result is one more level down (response, not_found, and
	// the pointer to it, each count): 57 lists under its key "a" load, 58
	// do not.
	result := func(n int) doc {
		return tool(`name: r, description: R., request: { upstream: svc, path: /r }, response: { not_found: { result: { a: ` + strings.Repeat("[", n) + "1" + strings.Repeat("]", n) + ` } } }`)
	}
	if _, problems := result(57).load(t); problems != nil {
		t.Errorf("57 nested lists in not_found.result: %q, want them loaded", problems)
	}
	if _, problems := result(58).load(t); len(problems) != 1 || !strings.HasPrefix(problems[0], "catalog nests too deeply") {
		t.Errorf("58 nested lists in not_found.result: %q, want the depth refused", problems)
	}
}
