package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"HOST": "db.internal", "PORT": "5432", "EMPTY": "", "DOLLAR": "${HOST}"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tt := range []struct {
		name, in, want string
		unset          []string
		err            string
	}{
		{name: "no-dollar", in: "plain text", want: "plain text"},
		{name: "variable", in: "${HOST}:${PORT}", want: "db.internal:5432"},
		{name: "default-unused", in: "${HOST:-localhost}", want: "db.internal"},
		{name: "default-when-unset", in: "${NOPE:-localhost}", want: "localhost"},
		{name: "default-when-empty", in: "${EMPTY:-fallback}", want: "fallback"},
		{name: "empty-default", in: "a${NOPE:-}b", want: "ab"},
		{name: "empty-without-default", in: "a${EMPTY}b", want: "ab"},
		{name: "default-with-colon-and-spaces", in: "${NOPE:-http://x:8080/a b}", want: "http://x:8080/a b"},
		{name: "nested-default", in: "${NOPE:-${HOST}}", want: "db.internal"},
		{name: "nested-default-twice", in: "${NOPE:-${NADA:-${PORT}}}", want: "5432"},
		{name: "unset-inside-unused-default", in: "${HOST:-${NOPE}}", want: "db.internal"},
		{name: "double-dollar", in: "cost: $$5", want: "cost: $5"},
		{name: "double-dollar-brace", in: "$${HOST}", want: "${HOST}"},
		{name: "lone-dollar-kept", in: "^[a-z]+$", want: "^[a-z]+$"},
		{name: "dollar-before-other", in: "$HOST $1", want: "$HOST $1"},
		{name: "values-not-reexpanded", in: "${DOLLAR}", want: "${HOST}"},
		{name: "unset", in: "Bearer ${TOKEN}", want: "Bearer ", unset: []string{"TOKEN"}},
		{name: "two-unset", in: "${A}${B:-${C}}", want: "", unset: []string{"A", "C"}},
		{name: "unclosed", in: "x ${HOST", err: `unclosed "${HOST"`},
		{name: "unclosed-nested", in: "${A:-${B}", err: "unclosed"},
		{name: "empty-name", in: "${}", err: "malformed"},
		{name: "bad-name", in: "${1ABC}", err: "malformed"},
		{name: "bad-operator", in: "${HOST:=x}", err: "malformed"},
		{name: "spaces-in-name", in: "${ HOST }", err: "malformed"},
		// Each end of each character class a name may use.
		{name: "name-edges", in: "${A}${Z}${a}${z}${_}${A0}${A9}", want: "", unset: []string{"A", "Z", "a", "z", "_", "A0", "A9"}},
		{name: "name-past-edges", in: "${A@}", err: `malformed "${A@}"`},
		{name: "name-past-Z", in: "${[}", err: `malformed "${[}"`},
		{name: "name-past-z", in: "${{}", err: `malformed "${{}"`},
		{name: "name-before-a", in: "${`}", err: "malformed \"${`}\""},
		{name: "name-past-digits", in: "${A/}${A:}", err: `malformed "${A/}"`},
		{name: "malformed-quotes-the-reference", in: "x ${A-B} y", err: `malformed "${A-B}": want ${NAME}`},
		// A reference is quoted whole up to 40 bytes, then clipped.
		{name: "quote-40", in: "${A-" + strings.Repeat("b", 35) + "}", err: `malformed "${A-` + strings.Repeat("b", 35) + `}"`},
		{name: "quote-41", in: "${A-" + strings.Repeat("b", 36) + "}", err: `malformed "${A-` + strings.Repeat("b", 36) + `…"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, unset, err := expand(tt.in, lookup)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("expand(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want || !slices.Equal(unset, tt.unset) {
				t.Errorf("expand(%q) = %q, %q, %v, want %q, %q, nil", tt.in, got, unset, err, tt.want, tt.unset)
			}
		})
	}
}

// TestExpansionCannotReshapeTheDocument: a variable holding YAML syntax
// stays one string value.
func TestExpansionCannotReshapeTheDocument(t *testing.T) {
	src := strings.Replace(base, "name: t", `name: "${NAME}"`, 1) + `  - { name: a, description: A., request: { upstream: svc, path: /a } }
`
	name := "x\n  kind: write\n  gate: operate\nenabled: false"
	c := mustParse(t, src, map[string]string{"NAME": name})
	a := c.Tool("a")
	if c.Server.Name != name || a == nil || a.Kind != KindRead {
		t.Fatalf("Server.Name = %q, Tool(a) = %+v, want the variable's text and a read tool", c.Server.Name, a)
	}
}

// TestTextAndSchemasAreNeverExpanded: what an agent reads and what the
// gateway sends in a body or path is taken as written, so a catalog
// imported from a hostile document cannot publish the gateway's secrets.
// Configuration beside it still expands.
func TestTextAndSchemasAreNeverExpanded(t *testing.T) {
	const ref = "${GATEWAY_JWT_SECRET}"
	src := `version: 1
server: { name: t }
auth: { api_keys_file: keys.yaml }
gates: { operate: { scopes: [op] } }
upstreams: { svc: { base_url: "${SVC_URL}", headers: { Authorization: "Bearer ${GATEWAY_JWT_SECRET}" } } }
overrides:
  b:
    description: "${GATEWAY_JWT_SECRET} via override"
    title: "$$ ${GATEWAY_JWT_SECRET}"
    search_hint: "${GATEWAY_JWT_SECRET} via override"
    arguments:
      q: { default: "${GATEWAY_JWT_SECRET}", description: "${GATEWAY_JWT_SECRET}" }
tools:
  - name: a
    title: "${GATEWAY_JWT_SECRET}"
    description: "${GATEWAY_JWT_SECRET}"
    tags: ["${GATEWAY_JWT_SECRET}"]
    search_hint: "${GATEWAY_JWT_SECRET}"
    enabled: "${A_ON:-true}"
    input:
      type: object
      properties:
        state: { type: string, enum: ["${GATEWAY_JWT_SECRET}", open], default: "${GATEWAY_JWT_SECRET}", examples: ["${GATEWAY_JWT_SECRET}"], description: "${GATEWAY_JWT_SECRET}" }
    output_schema: { type: object, description: "${GATEWAY_JWT_SECRET}" }
    kind: write
    gate: operate
    request: { upstream: svc, method: POST, path: "/a/$GATEWAY_JWT_SECRET", query: { state: "{state}", key: "${GATEWAY_JWT_SECRET}" }, body: { k: "$$GATEWAY_JWT_SECRET" } }
  - name: b
    description: B.
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: svc, path: /b, query: { q: "{q}" } }
`
	c := mustParse(t, src, map[string]string{"GATEWAY_JWT_SECRET": "s3cret", "SVC_URL": "http://127.0.0.1:1"})
	a, b := c.Tool("a"), c.Tool("b")
	if a == nil || b == nil {
		t.Fatalf("tools a and b must load")
	}
	for what, got := range map[string]string{
		"title": a.Title, "description": a.Description, "tag": a.Tags[0],
		"input": string(a.InputJSON), "override description": b.Description,
		"override title": b.Title, "override argument": string(b.InputJSON),
		"output_schema": fmt.Sprint(a.OutputSchema), "search_hint": a.SearchHint,
		"override search_hint": b.SearchHint,
	} {
		if strings.Contains(got, "s3cret") || !strings.Contains(got, ref) && what != "override title" {
			t.Errorf("%s = %q, want %s as written", what, got, ref)
		}
	}
	if a.Request.Path != "/a/$GATEWAY_JWT_SECRET" || fmt.Sprint(a.Request.Body) != "map[k:$$GATEWAY_JWT_SECRET]" {
		t.Errorf("path %q, body %v, want both as written", a.Request.Path, a.Request.Body)
	}
	if b.Title != "$$ "+ref {
		t.Errorf("override title = %q, want $$ kept as written", b.Title)
	}
	if got := c.Upstreams["svc"].Headers["Authorization"]; got != "Bearer s3cret" {
		t.Errorf("upstream header = %q, want the variable expanded", got)
	}
	if got := a.Request.Query["key"]; got != "s3cret" {
		t.Errorf("fixed query value = %q, want the variable expanded", got)
	}
	if !a.Enabled {
		t.Errorf("enabled: ${A_ON:-true} must still expand")
	}
}

func TestExpansionFeedsTypedFields(t *testing.T) {
	src := `version: ${VERSION:-1}
server: { name: "${NAME}", enabled: "${ON:-true}" }
auth: { api_keys_file: keys.yaml }
upstreams:
  svc: { base_url: "${URL:-http://127.0.0.1:1}", timeout: "${TIMEOUT:-3s}", max_response_bytes: "${MAX:-2MiB}" }
limits: { page_size: { default: "${PAGE}", max: 50 }, rate: { per_principal: { rps: "${RPS:-2.5}", burst: 3 } } }
tools:
  - { name: a, description: A., request: { upstream: svc, path: /a } }
`
	c := mustParse(t, src, map[string]string{"NAME": "gw", "ON": "off", "PAGE": "7"})
	u := c.Upstreams["svc"]
	if c.Version != 1 || c.Server.Name != "gw" || c.Server.Enabled || u.Timeout != Duration(3e9) ||
		u.MaxResponseBytes != 2<<20 || c.Limits.PageSize.Default != 7 || c.Limits.Rate.PerPrincipal.RPS != 2.5 {
		t.Errorf("expanded values: version=%d name=%q enabled=%t timeout=%s max=%s page=%d rps=%g",
			c.Version, c.Server.Name, c.Server.Enabled, u.Timeout, u.MaxResponseBytes, c.Limits.PageSize.Default, c.Limits.Rate.PerPrincipal.RPS)
	}
}

// A schema is checked at load by a compiler of its own, as it is compiled
// for use: a $ref into another tool's schema, which only a compiler kept
// between schemas could resolve, is a load error, never a tool that loads
// and then refuses every call.
func TestSchemaCannotReachAnotherToolsSchema(t *testing.T) {
	src := base + `  - { name: a, description: A., input: { type: object, $defs: { x: { type: string } } }, request: { upstream: svc, path: /a } }
  - { name: b, description: B., input: { $ref: "../0/input.json#/$defs/x" }, request: { upstream: svc, path: /b } }
`
	for range 2 { // the second load meets the digests of the first
		_, err := Parse("c.yaml", []byte(src), &LoadOptions{Getenv: func(string) (string, bool) { return "", false }})
		if err == nil || !strings.Contains(err.Error(), `tool "b"`) {
			t.Fatalf("Parse = %v, want tool b's input refused", err)
		}
	}
}

// The output schema a tool publishes and enforces adds the gateway's own
// members to the operator's: a write's nests it under anyOf, a sensitive
// member is widened to null under anyOf. A $ref that reaches through
// either would dangle in what clients are shown, so the tool is refused
// at load; a schema without one loads however many tools share it.
func TestOutputSchemaRefThatGatewayMembersBreak(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	for _, tt := range []struct {
		name, tool, want string
	}{
		{"write-nests-root-defs-under-anyOf",
			`{ name: w, description: W., kind: write, gate: operate, request: { upstream: svc, method: POST, path: /w },
      output_schema: { type: object, $defs: { x: { type: string } }, properties: { a: { $ref: "#/$defs/x" } } } }`,
			`tool "w": output_schema with the gateway's own members`},
		{"sensitive-member-widened-under-anyOf",
			`{ name: r, description: R., request: { upstream: svc, path: /r }, response: { sensitive: [a] },
      output_schema: { type: object, properties: { a: { type: object, properties: { b: { type: string } } }, c: { $ref: "#/properties/a/properties/b" } } } }`,
			`tool "r": output_schema with the gateway's own members`},
		{"write-without-refs-loads",
			`{ name: w, description: W., kind: write, gate: operate, request: { upstream: svc, method: POST, path: /w },
      output_schema: { type: object, properties: { a: { type: string } } } }`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 { // the second load meets the digests of the first
				_, err := Parse("c.yaml", []byte(base+"  - "+tt.tool+"\n"), &LoadOptions{Getenv: env})
				switch {
				case tt.want == "" && err != nil:
					t.Fatalf("Parse = %v, want it loaded", err)
				case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
					t.Fatalf("Parse = %v, want %q", err, tt.want)
				}
			}
		})
	}
}
