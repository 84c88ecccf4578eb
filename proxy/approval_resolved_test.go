package proxy_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Approval settings are resolved once, when the Core is built: the
// request path reads only what was resolved, so changing the catalog the
// Core was built from afterwards (as a reload's new catalog or a stray
// write would) changes nothing a caller or an approver sees.
func TestApprovalRequestPathsReadOnlyResolvedConfig(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	cat := rig.core.Catalog()
	cat.Server.PublicURL = "https://evil.example"
	cat.Server.AdminPath = "/elsewhere"
	for _, tl := range cat.Tools {
		if a := tl.Approval; a != nil {
			a.Approvers, a.AllowSelf, a.TTL, a.Confirm = "op", true, 1, !a.Confirm
		}
		tl.Title = "evil"
	}
	for _, u := range cat.Upstreams {
		u.IdempotencyHeader = "X-Evil"
	}

	res := rig.call(t, []byte(`{"q":"x"}`))
	id := idOf(t, res)
	if !strings.Contains(res.Text, " at /admin/mcp/approvals/"+id+".") {
		t.Errorf("approval URL read the changed catalog: %s", res.Text)
	}
	r, err := rig.core.GetApproval(ctx, approver, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Approvers != "approver" || r.AllowSelf || !r.Expires.Equal(rig.now.Add(10*time.Minute)) {
		t.Errorf("approval made from the changed catalog: approvers %q allow_self %v expires %v", r.Approvers, r.AllowSelf, r.Expires)
	}
	if _, err := rig.core.DecideApproval(ctx, requester, id, true); err == nil {
		t.Error("the requester approved their own call: allow_self was read from the changed catalog")
	}
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
		t.Fatal(err)
	}
	if res := rig.call(t, []byte(`{"q":"x"}`)); res.IsError {
		t.Fatalf("approved retry: %s", res.Text)
	}
	if len(rig.keys) != 1 || rig.keys[0] != "mcpgw-"+id {
		t.Errorf("Idempotency-Key %q, want mcpgw-%s in the resolved header", rig.keys, id)
	}
}
