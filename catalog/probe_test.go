package catalog

import (
	"reflect"
	"testing"
)

// TestToolProbeRules: probe.args are arguments a client could send, so
// `gateway check --probe` never calls a tool with what a real call would
// be refused for; only reads carry a probe.
func TestToolProbeRules(t *testing.T) {
	q := `name: q, description: Q., kind: read, input: { type: object, properties: { state: { type: string, enum: [ok, failed] }, limit: { type: integer, minimum: 1 } }, required: [state], additionalProperties: false }, request: { upstream: svc, method: POST, path: /runs/filter, body: { state: "{state}", limit: "{limit}" } }, `
	runProblems(t, []problemCase{
		{"args-fit", tool(q + `probe: { args: { state: failed, limit: 5 } }`), nil},
		{"args-empty-on-argumentless-read", tool(`name: r, description: R., request: { upstream: svc, path: /r }, probe: { args: {} }`), nil},
		{"args-missing-required", tool(q + `probe: { args: { limit: 5 } }`),
			one(`tool "q": probe.args: argument "state": missing required argument (the probe's arguments must fit the tool's input schema)`)},
		{"args-outside-enum", tool(q + `probe: { args: { state: lost } }`),
			one(`tool "q": probe.args: argument "state": value must be one of "ok", "failed" (the probe's arguments must fit the tool's input schema)`)},
		{"args-unknown", tool(q + `probe: { args: { state: ok, tenant: globex } }`),
			one(`tool "q": probe.args: unexpected argument "tenant" (the probe's arguments must fit the tool's input schema)`)},
		{"args-wrong-type", tool(q + `probe: { args: { state: ok, limit: "5" } }`),
			one(`tool "q": probe.args: argument "limit": want integer, got string (the probe's arguments must fit the tool's input schema)`)},
		{"args-absent", tool(q + `probe: {}`),
			one(`tool "q": probe: args is required (the arguments gateway check --probe calls the tool with; {} for none)`)},
		{"write-is-never-probed", tool(w(`request: { upstream: svc, path: /w }, probe: { args: {} }`)),
			one(`tool "w": probe: a write tool is never probed (gateway check --probe calls reads only); remove probe`)},
		{"unknown-field", tool(q + `probe: { args: { state: ok }, method: GET }`),
			one(`field "method" not found in tools[0].probe of tool "q"`)},
	})
}

// TestToolProbeArgsAreVerbatim: probe arguments are sent upstream, like a
// request body, so ${VAR} in them is text, never the environment.
func TestToolProbeArgsAreVerbatim(t *testing.T) {
	c, problems := tool(`name: r, description: R., input: { type: object, properties: { q: { type: string } } }, request: { upstream: svc, path: /r, query: { q: "{q}" } }, probe: { args: { q: "${GATEWAY_JWT_SECRET}" } }`).load(t)
	if problems != nil {
		t.Fatal(problems)
	}
	if got, want := c.Tools[0].Probe.Args, map[string]any{"q": "${GATEWAY_JWT_SECRET}"}; !reflect.DeepEqual(got, want) {
		t.Errorf("probe.args = %v, want %v", got, want)
	}
}

// TestOverrideSetsProbe: an imported fragment is rewritten on every
// import, so a probe's arguments can live in the catalog's overrides; they
// are checked against the tool as overridden (a hidden argument is gone).
func TestOverrideSetsProbe(t *testing.T) {
	base := `version: 1
server: { name: t }
auth: { jwt: { jwks_url: "https://idp.example.com/jwks", algorithms: [RS256], issuer: i, audience: a } }
upstreams: { svc: { base_url: "http://127.0.0.1:1", workspace: none } }
tools:
  - name: count_runs
    description: Count runs.
    kind: read
    input: { type: object, properties: { state: { type: string }, tenant: { type: string } }, additionalProperties: false }
    request: { upstream: svc, method: POST, path: /runs/count, body: { state: "{state}", tenant: "{tenant}" } }
overrides:
  count_runs:
    arguments: { tenant: { hide: true, value: acme } }
`
	lookup := func(string) (string, bool) { return "", false }
	c, err := Parse("c.yaml", []byte(base+"    probe: { args: { state: failed } }\n"), &LoadOptions{Getenv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tool("count_runs").Probe; got == nil || !reflect.DeepEqual(got.Args, map[string]any{"state": "failed"}) {
		t.Errorf("probe after override = %+v, want args {state: failed}", got)
	}
	_, err = Parse("c.yaml", []byte(base+"    probe: { args: { tenant: globex } }\n"), &LoadOptions{Getenv: lookup})
	if want := `c.yaml:14:20: tool "count_runs": probe.args: unexpected argument "tenant" (the probe's arguments must fit the tool's input schema)`; err == nil || err.Error() != want {
		t.Errorf("Parse with a probe naming a hidden argument = %v, want %s", err, want)
	}
}
