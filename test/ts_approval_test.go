package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/approval"
)

// TestTypeScriptSDKApprovals runs the approval flows with the official
// TypeScript MCP client (test/ts/approval.mjs). The SDK speaks MCP up to
// 2025-11-25 and has no multi round-trip support, so this is the legacy
// era: a confirmation is refused even though the client declares
// elicitation (nothing runs, the client is never prompted), and four-eyes
// works through the isError, an approval over the REST API, and the retry.
func TestTypeScriptSDKApprovals(t *testing.T) {
	if _, err := os.Stat("ts/node_modules/@modelcontextprotocol/sdk"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the TypeScript SDK is not installed in test/ts (run npm ci there): %v", err)
		}
		t.Skip("test/ts/node_modules missing; run `npm ci --prefix test/ts`")
	}
	up := startUpstream(t)
	g := startGateway(t, up, "", approvalKeys())
	cmd := exec.Command("node", "ts/approval.mjs")
	cmd.Env = append(os.Environ(),
		"GATEWAY_MCP_URL="+g.MCP,
		"APPROVALS_URL="+g.URL+"/admin/mcp/approvals",
		"OPERATOR_TOKEN="+token(t, "operator", "acme", operatorScopes...),
		"APPROVER_TOKEN="+token(t, "approver", "acme", approverScopes...),
	)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	type res struct {
		IsError bool
		Text    string
	}
	type restRes struct {
		Status int
		Body   map[string]any
	}
	var rep struct {
		Fatal                                              string
		Elicitations                                       int
		Confirm, First, BeforeApproval, ChangedArgs, Retry res
		Again, AfterReject                                 res
		ID                                                 string
		SelfApprove, Approve, Reject                       restRes
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %s: %v", out, err)
	}
	if rep.Fatal != "" {
		t.Fatalf("TypeScript client failed: %s", rep.Fatal)
	}
	if !rep.Confirm.IsError || !strings.Contains(rep.Confirm.Text, "cannot ask its user") || rep.Elicitations != 0 {
		t.Errorf("confirm from a legacy-era client: %+v, %d elicitations; want a refusal and no prompt", rep.Confirm, rep.Elicitations)
	}
	if n := len(sent(up, "/v1/queues/billing/pause")); n != 0 {
		t.Errorf("upstream saw %d pauses from a client that cannot confirm", n)
	}
	if !rep.First.IsError || rep.ID == "" || !strings.Contains(rep.First.Text, "/admin/mcp/approvals/"+rep.ID) {
		t.Fatalf("first call: %+v, want an isError naming the approval and its URL", rep.First)
	}
	if !rep.BeforeApproval.IsError || !strings.Contains(rep.BeforeApproval.Text, "still awaits approval") || !strings.Contains(rep.BeforeApproval.Text, rep.ID) {
		t.Errorf("retry before approval: %+v", rep.BeforeApproval)
	}
	if rep.SelfApprove.Status != 403 {
		t.Errorf("the requester approving their own: %+v, want 403", rep.SelfApprove)
	}
	if rep.Approve.Status != 200 || rep.Approve.Body["approver"] != "approver" {
		t.Errorf("approve: %+v", rep.Approve)
	}
	if !rep.ChangedArgs.IsError || strings.Contains(rep.ChangedArgs.Text, rep.ID) {
		t.Errorf("changed arguments: %+v, want a new approval, not %s", rep.ChangedArgs, rep.ID)
	}
	if rep.Retry.IsError {
		t.Errorf("approved retry: %+v", rep.Retry)
	}
	if !rep.Again.IsError || strings.Contains(rep.Again.Text, rep.ID) {
		t.Errorf("second retry: %+v, want a new approval", rep.Again)
	}
	if rep.Reject.Status != 200 || !rep.AfterReject.IsError || !strings.Contains(rep.AfterReject.Text, "rejected by approver") {
		t.Errorf("reject %+v then %+v", rep.Reject, rep.AfterReject)
	}
	got := sent(up, "/v1/workflows/wf-acme-0011/cancel")
	if len(got) != 1 || got[0].Header.Get("Idempotency-Key") != approval.IdempotencyKey(rep.ID) {
		t.Errorf("upstream saw %d cancels (%v), want one with Idempotency-Key %s", len(got), got, approval.IdempotencyKey(rep.ID))
	}
}
