package proxy_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// One person, one approval: a second token of the requester, under another
// subject but naming the same person (the actor the principal mapper
// derives, an email say), may not approve their own call; someone else
// may, and the decision's audit record names the approver's actor as well
// as their subject.
func TestSelfApprovalIsCheckedOnThePerson(t *testing.T) {
	audit := &memAudit{}
	rig := newApprovalRigAudit(t, audit)
	ctx := context.Background()
	alice := authz.NewPrincipal("alice", "", "alice@example.com", []string{"op"}, nil)
	id := idOf(t, mustCall(t, rig.core, alice, "cancel", []byte(`{"q":"x"}`)))

	aliceAgain := authz.NewPrincipal("alice-laptop", "", "alice@example.com", []string{"approve"}, nil)
	_, err := rig.core.DecideApproval(ctx, aliceAgain, id, true)
	if ae, ok := errors.AsType[*proxy.ApprovalError](err); !ok || !errors.Is(err, proxy.ErrApprovalForbidden) {
		t.Fatalf("the requester's second subject approving = %v, want forbidden (the same person)", err)
	} else if ae.Reason == "" {
		t.Error("no reason given")
	}
	if res := mustCall(t, rig.core, alice, "cancel", []byte(`{"q":"x"}`)); !res.IsError || rig.sent.Load() != 0 {
		t.Fatalf("after the refused self-approval the call ran: %+v", res)
	}

	bob := authz.NewPrincipal("bob", "", "bob@example.com", []string{"approve"}, nil)
	if _, err := rig.core.DecideApproval(ctx, bob, id, true); err != nil {
		t.Fatalf("another person approving: %v", err)
	}
	var found bool
	for _, r := range audit.all() {
		if r.Stage == proxy.StageApproved {
			found = true
			if r.Approver != "bob" || r.ApproverActor != "bob@example.com" {
				t.Errorf("approved record names approver %q actor %q, want bob and bob@example.com", r.Approver, r.ApproverActor)
			}
		}
	}
	if !found {
		t.Error("no approved record")
	}
}

// Names are compared as people read them: the requester's email from
// another identity provider, cased otherwise, is still the requester.
func TestSelfApprovalIgnoresTheCaseOfNames(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	alice := authz.NewPrincipal("alice", "", "alice@example.com", []string{"op"}, nil)
	id := idOf(t, mustCall(t, rig.core, alice, "cancel", []byte(`{"q":"x"}`)))
	for _, p := range []*authz.Principal{
		authz.NewPrincipal("00u1okta", "", "Alice@Example.COM", []string{"approve"}, nil),
		authz.NewPrincipal("ALICE", "", "", []string{"approve"}, nil),
		authz.NewPrincipal("svc", "", "alice", []string{"approve"}, nil),
	} {
		if _, err := rig.core.DecideApproval(ctx, p, id, true); !errors.Is(err, proxy.ErrApprovalForbidden) {
			t.Errorf("subject %q actor %q approving alice@example.com's call = %v, want forbidden (the same person)", p.Subject, p.Actor, err)
		}
	}
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
		t.Fatalf("bob approving: %v", err)
	}
}

// A reload holds the approvals already pending to the catalog as it is
// now: a stricter approvers gate applies to them, turning allow_self off
// stops a requester approving their own, turning it on does not let one
// made without it, and a tool that no longer needs four-eyes approval
// leaves its requests undecidable.
func TestPendingApprovalsFollowTheReloadedCatalog(t *testing.T) {
	ctx := context.Background()
	const (
		gates = "  approver: { scopes: [approve] }"
		four  = "approval: { approvers: approver, ttl: 10m }"
	)
	boss := authz.NewPrincipal("carol", "", "carol", []string{"approve", "boss"}, nil)
	selfApprover := authz.NewPrincipal("alice", "", "alice", []string{"op", "approve"}, nil)

	t.Run("stricter-gate", func(t *testing.T) {
		rig := newApprovalRig(t)
		id := idOf(t, rig.call(t, []byte(`{"q":"a"}`)))
		core := rig.reload(t, gates, gates+"\n  boss: { scopes: [boss] }", four, "approval: { approvers: boss, ttl: 10m }")
		if _, err := core.DecideApproval(ctx, approver, id, true); err == nil {
			t.Fatal("bob, who passes the old approvers gate but not the new one, approved a request made before the reload")
		}
		if l, _ := core.PendingApprovals(ctx, approver); len(l) != 0 {
			t.Errorf("bob still lists %d approvals he may no longer decide", len(l))
		}
		if got, err := core.GetApproval(ctx, boss, id); err != nil || got.Approvers != "boss" {
			t.Fatalf("carol sees %+v, %v; want the request under the boss gate", got, err)
		}
		// The requester's retry names the gate that decides it now.
		if res := mustCall(t, core, requester, "cancel", []byte(`{"q":"a"}`)); !strings.Contains(res.Text, `passes the "boss" gate`) {
			t.Errorf("the retry while pending says %q; want the boss gate named", res.Text)
		}
		if _, err := core.DecideApproval(ctx, boss, id, true); err != nil {
			t.Fatalf("carol, who passes the new gate: %v", err)
		}
	})
	t.Run("allow-self-turned-off", func(t *testing.T) {
		rig := newApprovalRig(t)
		rig.yaml = strings.Replace(rig.yaml, four, "approval: { approvers: approver, ttl: 10m, allow_self: true }", 1)
		before := rig.reload(t)
		id := idOf(t, mustCall(t, before, selfApprover, "cancel", []byte(`{"q":"a"}`)))
		after := rig.reload(t, "allow_self: true", "allow_self: false")
		if _, err := after.DecideApproval(ctx, selfApprover, id, true); !errors.Is(err, proxy.ErrApprovalForbidden) {
			t.Fatalf("alice approving her own request after allow_self was turned off = %v, want forbidden", err)
		}
	})
	t.Run("allow-self-turned-on", func(t *testing.T) {
		rig := newApprovalRig(t)
		id := idOf(t, mustCall(t, rig.core, selfApprover, "cancel", []byte(`{"q":"a"}`)))
		after := rig.reload(t, four, "approval: { approvers: approver, ttl: 10m, allow_self: true }")
		if _, err := after.DecideApproval(ctx, selfApprover, id, true); !errors.Is(err, proxy.ErrApprovalForbidden) {
			t.Fatalf("alice approving her own request made without allow_self = %v, want forbidden", err)
		}
	})
	t.Run("no-longer-four-eyes", func(t *testing.T) {
		rig := newApprovalRig(t)
		id := idOf(t, rig.call(t, []byte(`{"q":"a"}`)))
		after := rig.reload(t, four, "approval: confirm")
		if _, err := after.DecideApproval(ctx, approver, id, true); !errors.Is(err, approval.ErrConflict) {
			t.Fatalf("deciding a request of a tool that no longer needs approval = %v, want a conflict", err)
		}
		if l, _ := after.PendingApprovals(ctx, approver); len(l) != 0 {
			t.Errorf("the approver still lists %d approvals no one can decide", len(l))
		}
	})
}
