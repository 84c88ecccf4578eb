package catalog

import (
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
	src := base + `  - { name: a, description: "${DESC}", request: { upstream: svc, path: /a } }
`
	desc := "x\n  kind: write\n  gate: operate\nenabled: false"
	c := mustParse(t, src, map[string]string{"DESC": desc})
	a := c.Tool("a")
	if a == nil || a.Description != desc || a.Kind != KindRead {
		t.Fatalf("Tool(a) = %+v, want a read tool whose description is the variable's text", a)
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
