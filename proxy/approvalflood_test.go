package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// Racing first calls of one call (same requester, tool and arguments),
// on two replicas sharing the store, make one pending approval: every
// caller is told to wait on the same id, and the approver's list holds
// one.
func TestRacingFirstCallsMakeOnePendingApproval(t *testing.T) {
	rig := newApprovalRigWith(t, discardAudit{}, "approval: { max_pending: { per_requester: 100, per_workspace: 100 } }\n")
	ctx := context.Background()
	const rounds, n = 40, 16
	for round := range rounds {
		args := []byte(fmt.Sprintf(`{"q":"%d"}`, round))
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				res, err := []*proxy.Core{rig.core, rig.replica}[i%2].Call(ctx, requester, "cancel", args)
				if err != nil {
					t.Error(err)
					return
				}
				if at := strings.Index(res.Text, "apr_"); res.IsError && at >= 0 {
					ids[i] = res.Text[at : at+36]
				}
			})
		}
		wg.Wait()
		for i, id := range ids {
			if id == "" || id != ids[0] {
				t.Fatalf("round %d: racing call %d waits on %q, call 0 on %q; want one approval for all: %q", round, i, id, ids[0], ids)
			}
		}
	}
	if l, _, err := rig.core.PendingApprovalsPage(ctx, approver, "", proxy.MaxApprovalPageSize); err != nil || len(l) != rounds {
		t.Errorf("pending approvals = %d, %v; want one per call, %d", len(l), err, rounds)
	}
	if rig.sent.Load() != 0 {
		t.Errorf("upstream received %d requests, want none", rig.sent.Load())
	}
}

// Pending approvals are capped per requester and per workspace
// (approval.max_pending): a call over a cap is an isError naming the cap,
// and nothing is stored or sent; arguments larger than an audit record
// keeps (audit.max_argument_bytes) are refused too, so a caller cannot
// fill the store.
func TestPendingApprovalsAreCappedAndBounded(t *testing.T) {
	rig := newApprovalRigWith(t, discardAudit{}, `approval:
  max_pending: { per_requester: 2, per_workspace: 3 }
audit:
  max_argument_bytes: 1KiB
`)
	ctx := context.Background()
	call := func(p *authz.Principal, args string) *proxy.Result {
		t.Helper()
		res, err := rig.core.Call(ctx, p, "cancel", []byte(args))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	bob := authz.NewPrincipal("bob", "", "bob", []string{"op"}, nil)
	carol := authz.NewPrincipal("carol", "", "carol", []string{"op"}, nil)
	idOf(t, call(requester, `{"q":"1"}`))
	idOf(t, call(requester, `{"q":"2"}`))
	if res := call(requester, `{"q":"3"}`); !res.IsError || !strings.Contains(res.Text, "you (alice) already have 2 approvals awaiting a decision") ||
		!strings.Contains(res.Text, "approval.max_pending.per_requester") || strings.Contains(res.Text, "apr_") {
		t.Errorf("alice's third pending call = %+v; want an isError naming the per_requester cap", res)
	}
	idOf(t, call(bob, `{"q":"1"}`))
	if res := call(carol, `{"q":"1"}`); !res.IsError || !strings.Contains(res.Text, `workspace "" already has 3 approvals awaiting a decision`) ||
		!strings.Contains(res.Text, "approval.max_pending.per_workspace") {
		t.Errorf("a fourth pending call in the workspace = %+v; want an isError naming the per_workspace cap", res)
	}
	// Another workspace has its own count.
	other := authz.NewPrincipal("dave", "globex", "dave", []string{"op"}, nil)
	idOf(t, call(other, `{"q":"1"}`))
	// Letting requests expire makes no room until the store drops them:
	// the message says when that is.
	rig.now = rig.now.Add(10*time.Minute + time.Second)
	if res := call(requester, `{"q":"3"}`); !res.IsError || !strings.Contains(res.Text, "until 10m0s after they expire") {
		t.Errorf("alice's third call once her two expired = %+v; want still refused, saying when they stop counting", res)
	}
	rig.now = rig.now.Add(approval.KeepUndecided)
	idOf(t, call(requester, `{"q":"3"}`))

	big := fmt.Sprintf(`{"q":%q}`, strings.Repeat("x", 2000))
	rig2 := newApprovalRigWith(t, discardAudit{}, "audit:\n  max_argument_bytes: 1KiB\n")
	res, err := rig2.core.Call(ctx, requester, "cancel", []byte(big))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "over the 1024 bytes an approval can hold") {
		t.Errorf("a call with 2 KB of arguments = %+v, %v; want refused, naming the bound", res, err)
	}
	if l, _ := rig2.core.PendingApprovals(ctx, approver); len(l) != 0 {
		t.Errorf("PendingApprovals after the refused call = %d, want none stored", len(l))
	}
	if rig.sent.Load()+rig2.sent.Load() != 0 {
		t.Errorf("upstream received requests, want none")
	}
}

// The approver's list comes in pages: each page at most limit long,
// oldest first, every approval once across the pages even when one is
// decided between pages; the last page has no cursor; a cursor the
// gateway did not issue, or a limit out of range, is refused.
func TestPendingApprovalsComeInPages(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	var want []string
	for i := range 5 {
		want = append(want, idOf(t, rig.call(t, []byte(fmt.Sprintf(`{"q":"%d"}`, i)))))
		rig.now = rig.now.Add(time.Second)
	}
	var got []string
	cursor := ""
	for page := 0; ; page++ {
		l, next, err := rig.core.PendingApprovalsPage(ctx, approver, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(l) > 2 || page > 3 {
			t.Fatalf("page %d has %d approvals, want at most 2 (and 3 pages)", page, len(l))
		}
		for _, r := range l {
			got = append(got, r.ID)
		}
		if page == 0 {
			// Deciding one already listed shifts nothing on later pages.
			if _, err := rig.core.DecideApproval(ctx, approver, l[0].ID, false); err != nil {
				t.Fatal(err)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pages listed %v, want %v", got, want)
	}
	if l, next, err := rig.core.PendingApprovalsPage(ctx, approver, "", 0); err != nil || len(l) != 4 || next != "" {
		t.Errorf("default page = %d approvals, next %q, %v; want the 4 still pending and no cursor", len(l), next, err)
	}
	for _, c := range []struct {
		cursor string
		limit  int
	}{{"bm90LWEtY3Vyc29y", 2}, {"a1.1.apr_x", 2}, {"", -1}, {"", proxy.MaxApprovalPageSize + 1}} {
		if _, _, err := rig.core.PendingApprovalsPage(ctx, approver, c.cursor, c.limit); !errors.Is(err, proxy.ErrApprovalCursor) {
			t.Errorf("PendingApprovalsPage(%q, %d) = %v, want ErrApprovalCursor", c.cursor, c.limit, err)
		}
	}
}

// Racing decisions on one approval: one is made; the trail may hold a
// record of a losing decision only beside a second record saying it was
// refused, so the trail's decisions, less the refused ones, are exactly
// the one the store took.
func TestRacingDecisionsLeaveOneDecisionInTheTrail(t *testing.T) {
	audit := &memAudit{}
	rig := newApprovalRigWith(t, audit, "")
	ctx := context.Background()
	for round := range 20 {
		id := idOf(t, rig.call(t, []byte(fmt.Sprintf(`{"q":"%d"}`, round))))
		var wg sync.WaitGroup
		var made atomic.Int64
		for i := range 6 {
			wg.Go(func() {
				approver := authz.NewPrincipal(fmt.Sprintf("approver%d", i), "", "", []string{"approve"}, nil)
				if _, err := []*proxy.Core{rig.core, rig.replica}[i%2].DecideApproval(ctx, approver, id, i%3 != 0); err == nil {
					made.Add(1)
				}
			})
		}
		wg.Wait()
		net := 0
		for _, r := range audit.all() {
			if r.ApprovalID != id || (r.Stage != proxy.StageApproved && r.Stage != proxy.StageRejected) {
				continue
			}
			if r.Outcome == proxy.OutcomeRefused {
				net--
			} else {
				net++
			}
		}
		if made.Load() != 1 || net != 1 {
			t.Fatalf("round %d: %d decisions made, %d in the trail net of refused ones; want 1 and 1", round, made.Load(), net)
		}
	}
}

// The bound on arguments held for approval is audit.max_argument_bytes
// itself: arguments of exactly that many bytes (as sent, canonical) are
// held for approval, one byte more is refused.
func TestApprovalHoldsArgumentsUpToTheAuditBound(t *testing.T) {
	rig := newApprovalRigWith(t, discardAudit{}, "audit:\n  max_argument_bytes: 1KiB\n")
	ctx := context.Background()
	// {"q":"…"} is 8 bytes around the value.
	at := fmt.Sprintf(`{"q":%q}`, strings.Repeat("x", 1024-8))
	over := fmt.Sprintf(`{"q":%q}`, strings.Repeat("y", 1024-7))
	res, err := rig.core.Call(ctx, requester, "cancel", []byte(at))
	if err != nil {
		t.Fatal(err)
	}
	id := idOf(t, res)
	if r, err := rig.core.GetApproval(ctx, approver, id); err != nil || len(r.Arguments) != 1024 {
		t.Errorf("approval of 1024 bytes of arguments = %+v, %v; want it held whole", r, err)
	}
	res, err = rig.core.Call(ctx, requester, "cancel", []byte(over))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "arguments (1025 bytes) are over the 1024 bytes an approval can hold") {
		t.Errorf("a call with 1025 bytes of arguments = %+v, %v; want refused, naming the bound", res, err)
	}
	if rig.sent.Load() != 0 {
		t.Errorf("upstream received requests, want none")
	}
}

// A page's bounds: limits of 1 and MaxApprovalPageSize are served; a
// page that takes the last approvals exactly has no cursor after it; and
// a cursor whose later approvals were all decided meanwhile gives an
// empty last page.
func TestApprovalPagesAtTheirBounds(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	var ids []string
	for i := range 3 {
		ids = append(ids, idOf(t, rig.call(t, []byte(fmt.Sprintf(`{"q":"%d"}`, i)))))
		rig.now = rig.now.Add(time.Second)
	}
	l, next, err := rig.core.PendingApprovalsPage(ctx, approver, "", 1)
	if err != nil || len(l) != 1 || l[0].ID != ids[0] || next == "" {
		t.Fatalf("page of 1 = %d approvals, next %q, %v; want the oldest and a cursor", len(l), next, err)
	}
	if l, last, err := rig.core.PendingApprovalsPage(ctx, approver, next, 2); err != nil || len(l) != 2 || last != "" {
		t.Errorf("page of 2 holding the last 2 = %d approvals, next %q, %v; want both and no cursor", len(l), last, err)
	}
	if l, last, err := rig.core.PendingApprovalsPage(ctx, approver, "", proxy.MaxApprovalPageSize); err != nil || len(l) != 3 || last != "" {
		t.Errorf("page of %d = %d approvals, next %q, %v; want all 3 and no cursor", proxy.MaxApprovalPageSize, len(l), last, err)
	}
	for _, id := range ids {
		if _, err := rig.core.DecideApproval(ctx, approver, id, false); err != nil {
			t.Fatal(err)
		}
	}
	if l, last, err := rig.core.PendingApprovalsPage(ctx, approver, next, 2); err != nil || len(l) != 0 || last != "" {
		t.Errorf("page after a cursor whose later approvals were decided = %d approvals, next %q, %v; want an empty last page", len(l), last, err)
	}
}
