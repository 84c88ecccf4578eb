package proxy_test

import (
	"context"
	"errors"
	"testing"

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
