package catalog

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Approval modes and defaults.
const (
	// ApprovalConfirm, written as "approval: confirm", asks the requesting
	// person to confirm the call in their own client.
	ApprovalConfirm = "confirm"
	// DefaultApprovalTTL is how long a pending approval (or a confirmation
	// prompt) stays valid when the tool does not say.
	DefaultApprovalTTL = Duration(15 * 60e9)
	// DefaultIdempotencyHeader carries the key derived from an approval
	// on the upstream request of an approved write.
	DefaultIdempotencyHeader = "Idempotency-Key"
)

// Approval says that a write tool's calls need a human's yes before they
// are sent. Written as the scalar "confirm", Confirm is set: the
// requester confirms in their own client. Written as a mapping, another
// person who passes the Approvers gate, in the requester's workspace,
// approves (four-eyes).
type Approval struct {
	Meta      `yaml:"-"`
	Approvers string   `yaml:"approvers"` // a gate; required in the mapping form
	TTL       Duration `yaml:"ttl"`       // default DefaultApprovalTTL
	// AllowSelf lets the requester approve their own request.
	AllowSelf bool `yaml:"allow_self"`
	Confirm   bool `yaml:"-"`

	none bool // "approval: none" in an override: remove the tool's
}

// Mode is ApprovalConfirm or "four_eyes".
func (a *Approval) Mode() string {
	if a.Confirm {
		return ApprovalConfirm
	}
	return "four_eyes"
}

var approvalType = reflect.TypeFor[Approval]()

// decodeApprovalScalar decodes "approval: confirm"; the mapping form is
// decoded as any struct.
func (d *decoder) decodeApprovalScalar(n *yaml.Node, v reflect.Value, path string) {
	const want = "confirm, or a mapping {approvers: GATE, ttl: DURATION, allow_self: BOOL}"
	s, ok := d.scalar(n, path, want)
	if !ok {
		return
	}
	if s == WorkspaceNone && strings.HasPrefix(path, "overrides") {
		a := v.Addr().Interface().(*Approval)
		a.Meta = Meta{Pos: nodePos(n), Keys: map[string]Pos{}}
		a.none = true
		return
	}
	if s != ApprovalConfirm {
		d.p.add(nodePos(n), "%s: want %s, got %s", d.where(path), want, d.shown(n, s))
		return
	}
	a := v.Addr().Interface().(*Approval)
	a.Meta = Meta{Pos: nodePos(n), Keys: map[string]Pos{}}
	a.Confirm = true
}

// approvalDefaults fills an approval's TTL and tells the agent, in the
// tool's description, what happens when it calls the tool: the description
// is what the model reads before it decides to call.
func approvalDefaults(t *Tool) {
	a := t.Approval
	if a == nil {
		return
	}
	if !a.Has("ttl") {
		a.TTL = DefaultApprovalTTL
	}
	if t.Description == "" {
		return // validation reports it
	}
	var note string
	if a.Confirm {
		note = "Needs confirmation: the gateway asks the user to confirm this exact call in their client before anything is sent; without a client that can ask, the call is refused."
	} else {
		self := "someone other than the requester"
		if a.AllowSelf {
			self = "a person (the requester may approve their own call)"
		}
		note = fmt.Sprintf("Needs approval: the first call sends nothing; it creates a pending approval (valid %s) that %s who passes the %q gate in the same workspace must approve. The answer names the approval; once it is approved, call the tool again with the same arguments and it runs once.", a.TTL, self, a.Approvers)
	}
	t.Description += "\n\n" + note
}

// approval checks a tool's approval: only on writes, approvers naming a
// declared gate, a positive TTL, and for four-eyes an admin path to
// decide at.
func (tc *toolCheck) approval() {
	a := tc.t.Approval
	if a == nil {
		return
	}
	p := first(tc.t.At("approval"), a.Pos)
	if tc.t.Kind != KindWrite {
		tc.add(p, tc.subj, "approval applies to write tools only (this tool is kind %s)", tc.t.Kind)
	}
	if a.Confirm {
		return
	}
	switch _, declared := tc.c.Gates[a.Approvers]; {
	case a.Approvers == "":
		tc.add(p, tc.subj, "approval needs approvers: the gate an approver must pass (or write approval: confirm)")
	case a.Approvers == ViewGate && !declared:
		// Undeclared, the view gate lets every caller pass: anyone in the
		// workspace, holding no scope at all, could approve.
		tc.add(a.At("approvers"), tc.subj+" approval", "approvers must name a gate declared under gates: %q is not declared, and undeclared it lets every caller pass", a.Approvers)
	default:
		tc.gateRef(a.Approvers, a.At("approvers"), tc.subj+" approval")
	}
	if tc.c.Server.AdminPath == "" {
		// Approvers decide at {admin_path}/approvals: without it the
		// approval's URL leads nowhere and nobody can ever approve.
		tc.add(p, tc.subj, "four-eyes approval needs server.admin_path: approvers decide at {admin_path}/approvals, and admin_path is \"\" (write approval: confirm, or set admin_path)")
	}
	if a.TTL <= 0 {
		tc.add(a.At("ttl"), tc.subj, "approval ttl must be greater than 0")
	}
}
