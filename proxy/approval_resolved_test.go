package proxy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
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

// A Core is never built with an approval that cannot end or cannot be
// decided, even from a catalog changed after it was loaded: a ttl that
// is not positive, approvers naming no gate, or a four-eyes tool without
// the admin path where approvers decide are refused, naming the tool. A
// confirmation needs neither approvers nor the admin path.
func TestCoreRefusesAnApprovalThatCannotEndOrBeDecided(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(cat *catalog.Catalog, fourEyes, confirm *catalog.Approval)
		want   string // "": the Core is built
	}{
		{"four-eyes ttl of zero", func(_ *catalog.Catalog, a, _ *catalog.Approval) { a.TTL = 0 }, `tool "cancel": approval ttl must be greater than 0`},
		{"confirmation ttl below zero", func(_ *catalog.Catalog, _, c *catalog.Approval) { c.TTL = -1 }, `tool "pause": approval ttl must be greater than 0`},
		{"four-eyes ttl of one nanosecond", func(_ *catalog.Catalog, a, _ *catalog.Approval) { a.TTL = 1 }, ""},
		{"approvers naming no gate", func(_ *catalog.Catalog, a, _ *catalog.Approval) { a.Approvers = "nobody" }, `tool "cancel": approvers names "nobody", which is not a declared gate`},
		{"four-eyes without admin_path", func(cat *catalog.Catalog, _, _ *catalog.Approval) { cat.Server.AdminPath = "" }, `tool "cancel": four-eyes approval needs server.admin_path`},
		{"confirmation alone without admin_path", func(cat *catalog.Catalog, a, _ *catalog.Approval) {
			cat.Server.AdminPath = ""
			for _, tl := range cat.Tools {
				if tl.Approval == a {
					tl.Approval = nil
				}
			}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := newApprovalRig(t).core.Catalog()
			var fourEyes, confirm *catalog.Approval
			for _, tl := range cat.Tools {
				switch tl.Name {
				case "cancel":
					fourEyes = tl.Approval
				case "pause":
					confirm = tl.Approval
				}
			}
			tc.change(cat, fourEyes, confirm)
			c, err := proxy.New(cat, &proxy.Options{Audit: discardAudit{}})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("New = %v; want the Core built", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("New = %v, %v; want an error saying %s", c, err, tc.want)
			}
		})
	}
}
