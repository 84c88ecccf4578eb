package authz

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/mcpgw/gateway/catalog"
)

// Policy decides, for a principal, which tools exist and which may be
// called. The list and the call ask the same question through [Policy.Decide],
// so they cannot disagree. A Policy is immutable and safe for concurrent use.
type Policy struct {
	gateNames   []string // sorted; the bit order of a Signature
	prereqNames []string
	gates       map[string]*catalog.Gate
	sensitive   catalog.SensitiveData
	killSwitch  bool // lock 3 engaged, read once when the policy is built
	prereqs     *Prerequisites
}

// PolicyOptions configures [NewPolicy]. The zero value is usable.
type PolicyOptions struct {
	// Getenv reads the kill switch. Nil: os.Getenv.
	Getenv func(string) string
	// Prerequisites decides per-workspace conditions. Nil: every
	// prerequisite is unmet (fail closed).
	Prerequisites *Prerequisites
}

// NewPolicy builds the policy for cat. The kill switch is read now: a
// reload builds a new policy and so reads it again.
func NewPolicy(cat *catalog.Catalog, opts *PolicyOptions) *Policy {
	if opts == nil {
		opts = &PolicyOptions{}
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env := cat.SensitiveData.KillSwitchEnv
	if env == "" {
		env = catalog.DefaultKillSwitchEnv
	}
	sd := cat.SensitiveData
	sd.KillSwitchEnv = env
	pol := &Policy{
		gates:      cat.Gates,
		sensitive:  sd,
		killSwitch: Truthy(getenv(env)),
		prereqs:    opts.Prerequisites,
	}
	for name := range cat.Gates {
		pol.gateNames = append(pol.gateNames, name)
	}
	for name := range cat.Prerequisites {
		pol.prereqNames = append(pol.prereqNames, name)
	}
	slices.Sort(pol.gateNames)
	slices.Sort(pol.prereqNames)
	return pol
}

// Signature is everything [Policy.Decide] reads from a principal: which
// gates it passes, whether the sensitive lock is open for it and which
// prerequisites its workspace meets. Principals with equal signatures get
// equal decisions for every tool, so a surface may compute a filtered list
// once per signature.
type Signature struct {
	Gates, Prereqs uint64
	Sensitive      bool
	Anonymous      bool
}

// Signature returns p's signature; ok is false when the catalog has too
// many gates or prerequisites (over 64) to fit one.
func (pol *Policy) Signature(ctx context.Context, p *Principal) (sig Signature, ok bool) {
	if len(pol.gateNames) > 64 || len(pol.prereqNames) > 64 {
		return Signature{}, false
	}
	if p == nil {
		return Signature{Anonymous: true}, true
	}
	for i, g := range pol.gateNames {
		if pol.Passes(p, g) {
			sig.Gates |= 1 << i
		}
	}
	for i, n := range pol.prereqNames {
		if pol.prereqs.Met(ctx, p, n) {
			sig.Prereqs |= 1 << i
		}
	}
	sig.Sensitive = pol.Sensitive(p).Open()
	return sig, true
}

// Truthy reports whether an environment value engages a switch: 1, true,
// yes or on, trimmed, in any case.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Passes reports whether p passes the named gate. There is no implicit
// allow: a nil principal passes nothing, and an undeclared gate denies,
// except the view gate, which allows every authenticated caller when the
// catalog does not declare it.
func (pol *Policy) Passes(p *Principal, gate string) bool {
	if p == nil {
		return false
	}
	g, ok := pol.gates[gate]
	if !ok {
		return gate == catalog.ViewGate
	}
	for _, s := range g.Scopes {
		if !p.HasScope(s) {
			return false
		}
	}
	return true
}

// Locks is the state of the sensitive-data triple lock for one principal.
type Locks struct {
	GateName   string // sensitive_data.gate; "" when none is named
	Gate       bool   // lock 1 open: the principal passes the gate
	Expose     bool   // lock 2 open: sensitive_data.expose
	KillEnv    string // the kill switch variable's name
	KillSwitch bool   // lock 3 open: the kill switch is NOT engaged
}

// Open reports whether all three locks are open.
func (l Locks) Open() bool { return l.Gate && l.Expose && l.KillSwitch }

func openClosed(b bool) string {
	if b {
		return "open"
	}
	return "closed"
}

// Explain names each lock and whether it is open, for a tool error.
func (l Locks) Explain() string {
	gate := "sensitive_data.gate (none named)"
	if l.GateName != "" {
		gate = fmt.Sprintf("sensitive_data.gate %q", l.GateName)
	}
	return fmt.Sprintf("sensitive data is locked: %s is %s; sensitive_data.expose is %s; kill switch %s is %s",
		gate, openClosed(l.Gate), openClosed(l.Expose), l.KillEnv, map[bool]string{true: "not engaged (open)", false: "engaged (closed)"}[l.KillSwitch])
}

// Sensitive returns the triple lock's state for p.
func (pol *Policy) Sensitive(p *Principal) Locks {
	return Locks{
		GateName:   pol.sensitive.Gate,
		Gate:       pol.sensitive.Gate != "" && pol.Passes(p, pol.sensitive.Gate),
		Expose:     pol.sensitive.Expose,
		KillEnv:    pol.sensitive.KillSwitchEnv,
		KillSwitch: !pol.killSwitch,
	}
}

// Decision is the answer for one principal and one tool.
type Decision struct {
	Allowed bool
	// Reason says why a tool is denied, for the tool error; empty when
	// allowed.
	Reason string
	// Challenge is set when the denying gate asks for a step-up 403.
	Challenge *catalog.Gate
	// ChallengeGate names that gate.
	ChallengeGate string
}

// Decide answers whether p may see and call t. It never calls an upstream
// except through the prerequisites' probe, whose answers are cached.
func (pol *Policy) Decide(ctx context.Context, p *Principal, t *catalog.Tool) Decision {
	if p == nil {
		return Decision{Reason: "no authenticated principal"}
	}
	if !pol.Passes(p, catalog.ViewGate) {
		return pol.deny(catalog.ViewGate, fmt.Sprintf("tool %q is not available: the %q gate denies this caller", t.Name, catalog.ViewGate))
	}
	// A sensitive tool answers with the whole lock's state, whichever lock
	// is closed, so the caller sees exactly why.
	if t.Sensitive {
		if l := pol.Sensitive(p); !l.Open() {
			return Decision{Reason: fmt.Sprintf("tool %q is not available: %s", t.Name, l.Explain())}
		}
	}
	gate := t.Gate
	if gate == "" {
		gate = catalog.ViewGate
	}
	if gate != catalog.ViewGate && !pol.Passes(p, gate) {
		return pol.deny(gate, fmt.Sprintf("tool %q is not available: the %q gate denies this caller", t.Name, gate))
	}
	for _, name := range t.Requires {
		if !pol.prereqs.Met(ctx, p, name) {
			return Decision{Reason: fmt.Sprintf("tool %q is not available: workspace %q lacks prerequisite %q", t.Name, p.Workspace, name)}
		}
	}
	return Decision{Allowed: true}
}

func (pol *Policy) deny(gate, reason string) Decision {
	d := Decision{Reason: reason}
	if g := pol.gates[gate]; g != nil && g.OnDeny == "challenge" {
		d.Challenge, d.ChallengeGate = g, gate
	}
	return d
}
