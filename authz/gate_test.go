package authz_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// The decisions below are written from the contract (design/catalog.md,
// "gates", "sensitive_data — the triple lock" and "prerequisites"), one row
// per rule, never by asking Policy.Decide what it thinks. A tool
// is listed exactly when it is allowed (proxy's List keeps the tools whose
// decision is Allowed), so "allowed" below is also "shown in tools/list".

// gateCatalogYAML declares a view gate with a scope, a plain gate, a gate
// of two scopes that asks for a step-up, the sensitive gate, and a custom
// kill switch variable, and one tool for each rule.
const gateCatalogYAML = `
version: 1
server: { name: gates }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: "https://idp/", audience: "https://gw/mcp" }
gates:
  view:      { scopes: [jobs:read] }
  operate:   { scopes: [jobs:operate] }
  admin:     { scopes: [jobs:operate, jobs:admin], on_deny: challenge }
  sensitive: { scopes: [jobs:sensitive] }
sensitive_data:
  gate: sensitive
  expose: %s
  kill_switch_env: MY_KILL
upstreams:
  a: { base_url: "http://127.0.0.1:1", workspace: { header: X-Ws } }
prerequisites:
  kb:     { claim: features.kb }
  probed: { probe: { upstream: a, path: "/kb/{workspace}", cache: 60s } }
tools:
  - { name: list_jobs,   description: L., request: { upstream: a, path: /jobs } }
  - { name: cancel_job,  description: C., gate: operate, request: { upstream: a, path: /cancel } }
  - { name: purge,       description: P., gate: admin, request: { upstream: a, path: /purge } }
  - { name: history,     description: H., sensitive: true, request: { upstream: a, path: /history } }
  - { name: op_history,  description: O., sensitive: true, gate: operate, request: { upstream: a, path: /oph } }
  - { name: kb_search,   description: K., requires: [kb], request: { upstream: a, path: /kb } }
  - { name: kb_probed,   description: Q., requires: [probed], request: { upstream: a, path: /kbp } }
  - { name: kb_both,     description: B., requires: [kb, probed], request: { upstream: a, path: /kbb } }
`

// gateCatalog parses the catalog above with sensitive_data.expose set to
// expose; viewless drops the view gate's declaration.
func gateCatalog(t *testing.T, expose bool, viewless bool) *catalog.Catalog {
	t.Helper()
	src := fmt.Sprintf(gateCatalogYAML, fmt.Sprint(expose))
	if viewless {
		src = strings.Replace(src, "  view:      { scopes: [jobs:read] }\n", "", 1)
	}
	cat, err := catalog.Parse("gates.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("Parse(gate catalog) = %v", err)
	}
	if _, ok := cat.Gates[catalog.ViewGate]; ok == viewless {
		t.Fatalf("gate catalog: view declared = %v, want %v", ok, !viewless)
	}
	return cat
}

// probeByWorkspace answers the "probed" prerequisite per workspace: met in
// kb-on, not met in kb-off, and an error (the upstream is down) in
// kb-down. Any other workspace is a test bug.
func probeByWorkspace(_ context.Context, pr *catalog.Prerequisite, ws string) (bool, error) {
	if pr.Name != "probed" {
		return false, fmt.Errorf("probe for unexpected prerequisite %q", pr.Name)
	}
	switch ws {
	case "kb-on":
		return true, nil
	case "kb-off":
		return false, nil
	case "kb-down":
		return true, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	}
	return false, fmt.Errorf("probe for unexpected workspace %q", ws)
}

func toolNamed(t *testing.T, cat *catalog.Catalog, name string) *catalog.Tool {
	t.Helper()
	for _, tl := range cat.Tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q in the catalog", name)
	return nil
}

// who is a principal for a row: its scopes, its workspace (which decides
// the probe's answer) and its claims (which decide the claim prerequisite).
func who(ws string, claims string, scopes ...string) *authz.Principal {
	return authz.NewPrincipal("alice", ws, "", scopes, []byte(claims))
}

const (
	kbClaims   = `{"sub":"alice","features":{"kb":true}}`
	noKBClaims = `{"sub":"alice","features":{"kb":false}}`
)

// TestGateDecisions is the table of decisions for the catalog above.
func TestGateDecisions(t *testing.T) {
	reader := []string{"jobs:read"}
	operator := []string{"jobs:read", "jobs:operate"}
	admin := []string{"jobs:read", "jobs:operate", "jobs:admin"}
	sensitive := []string{"jobs:read", "jobs:sensitive"}
	sensitiveOp := []string{"jobs:read", "jobs:sensitive", "jobs:operate"}

	type row struct {
		name     string
		expose   bool              // sensitive_data.expose
		viewless bool              // the catalog declares no view gate
		env      map[string]string // the process environment
		p        *authz.Principal
		tool     string
		allowed  bool   // listed and callable
		reason   string // the denial's text holds this ("" when allowed)
		chal     string // the gate a 403 step-up names; "" for none
	}
	rows := []row{
		// view: fronts everything.
		{name: "view-passes", expose: true, p: who("acme", "{}", reader...), tool: "list_jobs", allowed: true},
		{name: "view-denied-hides-a-view-tool", expose: true, p: who("acme", "{}"), tool: "list_jobs",
			reason: `tool "list_jobs" is not available: the "view" gate denies this caller`},
		{name: "view-denied-hides-a-gated-tool-whose-gate-passes", expose: true, p: who("acme", "{}", "jobs:operate"), tool: "cancel_job",
			reason: `the "view" gate denies this caller`},
		{name: "view-denied-comes-before-the-sensitive-lock", expose: true, p: who("acme", "{}", "jobs:sensitive"), tool: "history",
			reason: `the "view" gate denies this caller`},
		{name: "view-denied-comes-before-prerequisites", expose: true, p: who("kb-on", kbClaims), tool: "kb_search",
			reason: `the "view" gate denies this caller`},
		{name: "view-undeclared-allows-any-authenticated-caller", expose: true, viewless: true, p: who("acme", "{}"), tool: "list_jobs", allowed: true},
		{name: "view-undeclared-does-not-open-other-gates", expose: true, viewless: true, p: who("acme", "{}"), tool: "cancel_job",
			reason: `the "operate" gate denies this caller`},
		{name: "view-undeclared-other-gate-passes", expose: true, viewless: true, p: who("acme", "{}", "jobs:operate"), tool: "cancel_job", allowed: true},

		// each gate: every listed scope is required.
		{name: "operate-passes", expose: true, p: who("acme", "{}", operator...), tool: "cancel_job", allowed: true},
		{name: "operate-denied", expose: true, p: who("acme", "{}", reader...), tool: "cancel_job",
			reason: `tool "cancel_job" is not available: the "operate" gate denies this caller`},
		{name: "two-scope-gate-passes-with-both", expose: true, p: who("acme", "{}", admin...), tool: "purge", allowed: true},
		{name: "two-scope-gate-denies-with-one-and-asks-to-step-up", expose: true, p: who("acme", "{}", operator...), tool: "purge",
			reason: `the "admin" gate denies this caller`, chal: "admin"},
		{name: "two-scope-gate-denies-with-the-other-only", expose: true, p: who("acme", "{}", "jobs:read", "jobs:admin"), tool: "purge",
			reason: `the "admin" gate denies this caller`, chal: "admin"},
		{name: "a-scope-that-is-a-prefix-is-not-the-scope", expose: true, p: who("acme", "{}", "jobs:read", "jobs:op"), tool: "cancel_job",
			reason: `the "operate" gate denies this caller`},

		// the triple lock, with a custom kill switch variable MY_KILL.
		{name: "locks-all-open", expose: true, p: who("acme", "{}", sensitive...), tool: "history", allowed: true},
		{name: "lock1-gate-closed", expose: true, p: who("acme", "{}", reader...), tool: "history",
			reason: `tool "history" is not available: sensitive data is locked: sensitive_data.gate "sensitive" is closed; sensitive_data.expose is open; kill switch MY_KILL is not engaged (open)`},
		{name: "lock2-expose-false", expose: false, p: who("acme", "{}", sensitive...), tool: "history",
			reason: `sensitive_data.gate "sensitive" is open; sensitive_data.expose is closed; kill switch MY_KILL is not engaged (open)`},
		{name: "lock3-custom-kill-switch-engaged", expose: true, env: map[string]string{"MY_KILL": "1"}, p: who("acme", "{}", sensitive...), tool: "history",
			reason: `sensitive_data.gate "sensitive" is open; sensitive_data.expose is open; kill switch MY_KILL is engaged (closed)`},
		{name: "lock3-default-variable-does-not-close-a-custom-switch", expose: true,
			env: map[string]string{catalog.DefaultKillSwitchEnv: "1"}, p: who("acme", "{}", sensitive...), tool: "history", allowed: true},
		{name: "lock3-custom-engaged-default-not", expose: true,
			env: map[string]string{"MY_KILL": " TRUE ", catalog.DefaultKillSwitchEnv: "0"}, p: who("acme", "{}", sensitive...), tool: "history",
			reason: `kill switch MY_KILL is engaged (closed)`},
		{name: "all-three-locks-closed", expose: false, env: map[string]string{"MY_KILL": "yes"}, p: who("acme", "{}", reader...), tool: "history",
			reason: `sensitive_data.gate "sensitive" is closed; sensitive_data.expose is closed; kill switch MY_KILL is engaged (closed)`},
		{name: "locks-open-but-the-tool-gate-denies", expose: true, p: who("acme", "{}", sensitive...), tool: "op_history",
			reason: `tool "op_history" is not available: the "operate" gate denies this caller`},
		{name: "locks-open-and-the-tool-gate-passes", expose: true, p: who("acme", "{}", sensitiveOp...), tool: "op_history", allowed: true},
		{name: "tool-gate-passes-but-a-lock-is-closed", expose: true, p: who("acme", "{}", operator...), tool: "op_history",
			reason: `sensitive_data.gate "sensitive" is closed`},
		{name: "a-closed-lock-does-not-touch-other-tools", expose: false, env: map[string]string{"MY_KILL": "on"}, p: who("acme", "{}", reader...), tool: "list_jobs", allowed: true},

		// prerequisites: met, unmet, unknown (a failed probe is not met).
		{name: "claim-prerequisite-met", expose: true, p: who("acme", kbClaims, reader...), tool: "kb_search", allowed: true},
		{name: "claim-prerequisite-false", expose: true, p: who("acme", noKBClaims, reader...), tool: "kb_search",
			reason: `tool "kb_search" is not available: workspace "acme" lacks prerequisite "kb"`},
		{name: "claim-prerequisite-absent", expose: true, p: who("acme", `{"sub":"alice"}`, reader...), tool: "kb_search",
			reason: `workspace "acme" lacks prerequisite "kb"`},
		{name: "probe-prerequisite-met", expose: true, p: who("kb-on", "{}", reader...), tool: "kb_probed", allowed: true},
		{name: "probe-prerequisite-answered-no", expose: true, p: who("kb-off", "{}", reader...), tool: "kb_probed",
			reason: `workspace "kb-off" lacks prerequisite "probed"`},
		{name: "probe-failure-is-not-met", expose: true, p: who("kb-down", "{}", reader...), tool: "kb_probed",
			reason: `workspace "kb-down" lacks prerequisite "probed"`},
		{name: "every-prerequisite-is-required-first-unmet", expose: true, p: who("kb-on", noKBClaims, reader...), tool: "kb_both",
			reason: `lacks prerequisite "kb"`},
		{name: "every-prerequisite-is-required-second-unmet", expose: true, p: who("kb-off", kbClaims, reader...), tool: "kb_both",
			reason: `lacks prerequisite "probed"`},
		{name: "every-prerequisite-met", expose: true, p: who("kb-on", kbClaims, reader...), tool: "kb_both", allowed: true},
		{name: "prerequisites-do-not-open-a-gate", expose: true, p: who("kb-on", kbClaims), tool: "kb_search",
			reason: `the "view" gate denies this caller`},
	}
	// No principal: fail closed for every tool, whatever the catalog.
	for _, tool := range []string{"list_jobs", "cancel_job", "purge", "history", "op_history", "kb_search", "kb_probed", "kb_both"} {
		for _, viewless := range []bool{false, true} {
			rows = append(rows, row{name: fmt.Sprintf("no-principal/%s/viewless-%v", tool, viewless), expose: true, viewless: viewless, tool: tool,
				reason: "no authenticated principal"})
		}
	}

	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			cat := gateCatalog(t, r.expose, r.viewless)
			pol := authz.NewPolicy(cat, &authz.PolicyOptions{
				Getenv:        func(k string) string { return r.env[k] },
				Prerequisites: authz.NewPrerequisites(cat.Prerequisites, probeByWorkspace, nil),
			})
			d := pol.Decide(context.Background(), r.p, toolNamed(t, cat, r.tool))
			if d.Allowed != r.allowed {
				t.Fatalf("Decide(%s) allowed = %v (%q), want %v", r.tool, d.Allowed, d.Reason, r.allowed)
			}
			if r.allowed {
				if d.Reason != "" || d.Challenge != nil {
					t.Errorf("allowed Decide(%s) carries reason %q, challenge %v", r.tool, d.Reason, d.Challenge)
				}
				return
			}
			if !strings.Contains(d.Reason, r.reason) {
				t.Errorf("Decide(%s) reason = %q, want it to hold %q", r.tool, d.Reason, r.reason)
			}
			if d.ChallengeGate != r.chal {
				t.Errorf("Decide(%s) challenge gate = %q, want %q", r.tool, d.ChallengeGate, r.chal)
			}
			if (d.Challenge != nil) != (r.chal != "") || (d.Challenge != nil && d.Challenge != cat.Gates[r.chal]) {
				t.Errorf("Decide(%s) challenge = %+v, want the %q gate's", r.tool, d.Challenge, r.chal)
			}
		})
	}
}

// TestGateDecisionsOutsideTheLoader covers what a loaded catalog cannot
// hold but a Policy must still refuse: a tool naming an undeclared gate,
// a tool whose gate was left empty, a gate of no scopes, a kill switch variable left empty (the
// default variable then rules), nil options, and a view gate that asks
// for a step-up.
func TestGateDecisionsOutsideTheLoader(t *testing.T) {
	cat := &catalog.Catalog{
		Gates: map[string]*catalog.Gate{
			"view":      {Scopes: []string{"r"}, OnDeny: "challenge"},
			"sensitive": {Scopes: []string{"s"}},
			"anyone":    {},
		},
		SensitiveData: catalog.SensitiveData{Gate: "sensitive", Expose: true}, // no kill_switch_env
		Prerequisites: map[string]*catalog.Prerequisite{"kb": {Name: "kb", Claim: "kb"}},
	}
	ghost := &catalog.Tool{Name: "ghost", Gate: "undeclared"}
	unnamed := &catalog.Tool{Name: "unnamed"} // Gate "": the view gate
	anyone := &catalog.Tool{Name: "anyone", Gate: "anyone"}
	secret := &catalog.Tool{Name: "secret", Sensitive: true}
	needsKB := &catalog.Tool{Name: "needs_kb", Requires: []string{"kb"}}
	unknownPrereq := &catalog.Tool{Name: "unknown_prereq", Requires: []string{"nowhere"}}
	all := authz.NewPrincipal("alice", "acme", "", []string{"r", "s", "undeclared"}, []byte(`{"kb":true}`))
	none := authz.NewPrincipal("bob", "acme", "", nil, []byte(`{"kb":true}`))
	ctx := context.Background()

	rows := []struct {
		name    string
		env     map[string]string
		opts    bool // false: NewPolicy(cat, nil)
		p       *authz.Principal
		tool    *catalog.Tool
		allowed bool
		reason  string
		chal    string
	}{
		{name: "undeclared-tool-gate-denies-even-a-holder-of-its-name", opts: true, p: all, tool: ghost, reason: `the "undeclared" gate denies this caller`},
		{name: "empty-tool-gate-is-the-view-gate", opts: true, p: all, tool: unnamed, allowed: true},
		{name: "gate-of-no-scopes-passes-every-viewer", opts: true, p: authz.NewPrincipal("v", "acme", "", []string{"r"}, nil), tool: anyone, allowed: true},
		{name: "gate-of-no-scopes-is-still-behind-view", opts: true, p: none, tool: anyone, reason: `the "view" gate denies this caller`, chal: "view"},
		{name: "empty-tool-gate-denied-by-view-with-challenge", opts: true, p: none, tool: unnamed, reason: `the "view" gate denies this caller`, chal: "view"},
		{name: "default-kill-switch-engaged", opts: true, env: map[string]string{catalog.DefaultKillSwitchEnv: "1"}, p: all, tool: secret,
			reason: "kill switch " + catalog.DefaultKillSwitchEnv + " is engaged (closed)"},
		{name: "default-kill-switch-not-engaged", opts: true, env: map[string]string{catalog.DefaultKillSwitchEnv: "0"}, p: all, tool: secret, allowed: true},
		{name: "nil-options-meet-no-prerequisite", p: all, tool: needsKB, reason: `workspace "acme" lacks prerequisite "kb"`},
		{name: "nil-options-still-decide-gates", p: all, tool: unnamed, allowed: true},
		{name: "undeclared-prerequisite-is-unmet", opts: true, p: all, tool: unknownPrereq, reason: `lacks prerequisite "nowhere"`},
		{name: "declared-prerequisite-met", opts: true, p: all, tool: needsKB, allowed: true},
		{name: "no-principal", opts: true, p: nil, tool: unnamed, reason: "no authenticated principal"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var opts *authz.PolicyOptions
			if r.opts {
				opts = &authz.PolicyOptions{
					Getenv:        func(k string) string { return r.env[k] },
					Prerequisites: authz.NewPrerequisites(cat.Prerequisites, nil, nil),
				}
			} else {
				// Nil options read the real environment: make sure the
				// default switch is not engaged there.
				t.Setenv(catalog.DefaultKillSwitchEnv, "")
			}
			d := authz.NewPolicy(cat, opts).Decide(ctx, r.p, r.tool)
			if d.Allowed != r.allowed || !strings.Contains(d.Reason, r.reason) || (r.allowed && d.Reason != "") {
				t.Fatalf("Decide(%s) = allowed %v, reason %q; want allowed %v, reason holding %q", r.tool.Name, d.Allowed, d.Reason, r.allowed, r.reason)
			}
			if d.ChallengeGate != r.chal || (d.Challenge != nil) != (r.chal != "") {
				t.Errorf("Decide(%s) challenge = %q %v, want %q", r.tool.Name, d.ChallengeGate, d.Challenge, r.chal)
			}
		})
	}

	// Nil options read the process environment for the default switch.
	t.Run("nil-options-read-the-process-environment", func(t *testing.T) {
		t.Setenv(catalog.DefaultKillSwitchEnv, "true")
		if d := authz.NewPolicy(cat, nil).Decide(ctx, all, secret); d.Allowed || !strings.Contains(d.Reason, "is engaged (closed)") {
			t.Errorf("with %s=true in the environment: Decide(secret) = %+v, want the kill switch closed", catalog.DefaultKillSwitchEnv, d)
		}
	})
}

// TestKillSwitchValues: the kill switch engages on 1, true, yes or on,
// trimmed, in any case, and on nothing else.
func TestKillSwitchValues(t *testing.T) {
	engaged := []string{"1", "true", "yes", "on", "TRUE", "Yes", "oN", " on ", "\ttrue\n"}
	open := []string{"", "0", "false", "no", "off", "2", "y", "t", "enabled", "1 1", "truee", "o n"}
	cat := gateCatalog(t, true, false)
	p := who("acme", "{}", "jobs:read", "jobs:sensitive")
	tool := toolNamed(t, cat, "history")
	for _, v := range append(engaged, open...) {
		isEngaged := contains(engaged, v)
		if got := authz.Truthy(v); got != isEngaged {
			t.Errorf("Truthy(%q) = %v, want %v", v, got, isEngaged)
		}
		want := !isEngaged // the sensitive tool is allowed
		pol := authz.NewPolicy(cat, &authz.PolicyOptions{Getenv: func(k string) string {
			if k == "MY_KILL" {
				return v
			}
			return ""
		}})
		if d := pol.Decide(context.Background(), p, tool); d.Allowed != want {
			t.Errorf("MY_KILL=%q: Decide(history) allowed = %v (%q), want %v", v, d.Allowed, d.Reason, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestPassesAndLocks checks the two questions Decide is built from, which
// the rendering of sensitive fields asks on its own.
func TestPassesAndLocks(t *testing.T) {
	cat := gateCatalog(t, true, false)
	pol := authz.NewPolicy(cat, &authz.PolicyOptions{Getenv: func(string) string { return "" }})
	p := who("acme", "{}", "jobs:read", "jobs:operate")
	for gate, want := range map[string]bool{"view": true, "operate": true, "admin": false, "sensitive": false, "undeclared": false} {
		if got := pol.Passes(p, gate); got != want {
			t.Errorf("Passes(operator, %q) = %v, want %v", gate, got, want)
		}
		if pol.Passes(nil, gate) {
			t.Errorf("Passes(nil, %q) = true, want false: no principal passes anything", gate)
		}
	}
	viewless := authz.NewPolicy(gateCatalog(t, true, true), nil)
	if !viewless.Passes(who("acme", "{}"), "view") || viewless.Passes(nil, "view") {
		t.Errorf("undeclared view: Passes(no scopes) must be true, Passes(nil) false")
	}

	l := pol.Sensitive(who("acme", "{}", "jobs:sensitive"))
	if want := (authz.Locks{GateName: "sensitive", Gate: true, Expose: true, KillEnv: "MY_KILL", KillSwitch: true}); l != want || !l.Open() {
		t.Errorf("Sensitive(holder) = %+v (open %v), want %+v, open", l, l.Open(), want)
	}
	if l := pol.Sensitive(nil); l.Gate || l.Open() {
		t.Errorf("Sensitive(nil) = %+v, want lock 1 closed", l)
	}
	// No gate named: lock 1 stays closed for every caller, even one holding
	// a scope called like the default gate, or a gate declared under the
	// empty name (which no loaded catalog holds).
	unnamed := authz.NewPolicy(&catalog.Catalog{
		Gates:         map[string]*catalog.Gate{"": {Scopes: []string{"sensitive"}}},
		SensitiveData: catalog.SensitiveData{Expose: true, KillSwitchEnv: "K"},
	}, &authz.PolicyOptions{Getenv: func(string) string { return "" }})
	l = unnamed.Sensitive(authz.NewPrincipal("a", "w", "", []string{"sensitive"}, nil))
	if l.Gate || l.Open() || l.GateName != "" {
		t.Errorf("no sensitive_data.gate: Sensitive = %+v, want lock 1 closed", l)
	}
	if got, want := l.Explain(), "sensitive data is locked: sensitive_data.gate (none named) is closed; sensitive_data.expose is open; kill switch K is not engaged (open)"; got != want {
		t.Errorf("Explain() = %q, want %q", got, want)
	}
}

// TestSignatureSeparatesDecisions: principals with equal signatures get
// equal decisions for every tool (proxy shares one list between them), so
// any two principals decided differently must have different signatures.
func TestSignatureSeparatesDecisions(t *testing.T) {
	cat := gateCatalog(t, true, false)
	pol := authz.NewPolicy(cat, &authz.PolicyOptions{
		Getenv:        func(string) string { return "" },
		Prerequisites: authz.NewPrerequisites(cat.Prerequisites, probeByWorkspace, nil),
	})
	ctx := context.Background()
	principals := map[string]*authz.Principal{
		"nobody":        who("acme", "{}"),
		"reader":        who("acme", "{}", "jobs:read"),
		"reader-2":      authz.NewPrincipal("bob", "other", "", []string{"jobs:read"}, []byte("{}")),
		"operator":      who("acme", "{}", "jobs:read", "jobs:operate"),
		"admin":         who("acme", "{}", "jobs:read", "jobs:operate", "jobs:admin"),
		"sensitive":     who("acme", "{}", "jobs:read", "jobs:sensitive"),
		"sensitive-nov": who("acme", "{}", "jobs:sensitive"),
		"kb-claim":      who("acme", kbClaims, "jobs:read"),
		"kb-probe":      who("kb-on", "{}", "jobs:read"),
		"kb-probe-off":  who("kb-off", "{}", "jobs:read"),
		"kb-both":       who("kb-on", kbClaims, "jobs:read"),
	}
	sigs := map[string]authz.Signature{}
	decisions := map[string]string{}
	for name, p := range principals {
		sig, ok := pol.Signature(ctx, p)
		if !ok {
			t.Fatalf("Signature(%s) not ok with %d gates", name, len(cat.Gates))
		}
		if sig.Anonymous {
			t.Errorf("Signature(%s) is anonymous", name)
		}
		sigs[name] = sig
		var b strings.Builder
		for _, tl := range cat.Tools {
			fmt.Fprintf(&b, "%s=%v ", tl.Name, pol.Decide(ctx, p, tl).Allowed)
		}
		decisions[name] = b.String()
	}
	if sigs["reader"] != sigs["reader-2"] {
		t.Errorf("two readers of different subjects and workspaces: signatures %+v and %+v, want equal", sigs["reader"], sigs["reader-2"])
	}
	for a := range principals {
		for b := range principals {
			if a < b && decisions[a] != decisions[b] && sigs[a] == sigs[b] {
				t.Errorf("%s and %s share signature %+v but are decided differently:\n%s\n%s", a, b, sigs[a], decisions[a], decisions[b])
			}
		}
	}
	if sig, ok := pol.Signature(ctx, nil); !ok || sig != (authz.Signature{Anonymous: true}) {
		t.Errorf("Signature(nil) = %+v, %v; want anonymous", sig, ok)
	}
}

// TestSignatureCapacity: a signature holds 64 gates and 64 prerequisites;
// one more of either and there is none (the list is then computed per
// call).
func TestSignatureCapacity(t *testing.T) {
	build := func(gates, prereqs int) *authz.Policy {
		cat := &catalog.Catalog{Gates: map[string]*catalog.Gate{}, Prerequisites: map[string]*catalog.Prerequisite{}}
		for i := range gates {
			cat.Gates[fmt.Sprintf("g%02d", i)] = &catalog.Gate{Scopes: []string{fmt.Sprintf("s%02d", i)}}
		}
		for i := range prereqs {
			name := fmt.Sprintf("p%02d", i)
			cat.Prerequisites[name] = &catalog.Prerequisite{Name: name, Claim: name}
		}
		return authz.NewPolicy(cat, &authz.PolicyOptions{Getenv: func(string) string { return "" },
			Prerequisites: authz.NewPrerequisites(cat.Prerequisites, nil, nil)})
	}
	// The principal passes every gate and meets every prerequisite, so a
	// full signature has all 64 bits of each set.
	var scopes []string
	claims := map[string]bool{}
	for i := range 65 {
		scopes = append(scopes, fmt.Sprintf("s%02d", i))
		claims[fmt.Sprintf("p%02d", i)] = true
	}
	p := authz.NewPrincipal("a", "w", "", scopes, []byte(mustJSON(claims)))
	for _, tc := range []struct {
		gates, prereqs int
		ok             bool
	}{
		{63, 63, true}, {64, 64, true}, {65, 0, false}, {0, 65, false}, {65, 64, false}, {64, 65, false},
	} {
		sig, ok := build(tc.gates, tc.prereqs).Signature(context.Background(), p)
		if ok != tc.ok {
			t.Errorf("%d gates, %d prerequisites: Signature ok = %v, want %v", tc.gates, tc.prereqs, ok, tc.ok)
			continue
		}
		if !ok {
			if sig != (authz.Signature{}) {
				t.Errorf("%d gates, %d prerequisites: Signature = %+v with ok false, want zero", tc.gates, tc.prereqs, sig)
			}
			continue
		}
		if want := ones(tc.gates); sig.Gates != want {
			t.Errorf("%d gates: Signature.Gates = %#x, want %#x", tc.gates, sig.Gates, want)
		}
		if want := ones(tc.prereqs); sig.Prereqs != want {
			t.Errorf("%d prerequisites: Signature.Prereqs = %#x, want %#x", tc.prereqs, sig.Prereqs, want)
		}
	}
}

func ones(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}
