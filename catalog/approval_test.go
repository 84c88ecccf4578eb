package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

const approvalCatalog = `version: 1
server: { name: t }
auth:
  jwt: { jwks_url: "https://idp.example.com/jwks", algorithms: [RS256], issuer: "https://idp.example.com/", audience: mcp }
gates:
  operate: { scopes: [jobs.operate] }
  approve: { scopes: [jobs.approve] }
upstreams:
  monitor: { base_url: "http://127.0.0.1:9090" }
  operator: { base_url: "http://127.0.0.1:9091", idempotency_header: X-Request-Once }
tools:
  - name: pause
    description: Pause a queue.
    kind: write
    gate: operate
    approval: confirm
    request: { upstream: monitor, path: /v1/pause }
  - name: cancel
    description: Cancel a workflow.
    kind: write
    gate: operate
    approval: { approvers: approve }
    request: { upstream: operator, path: /v1/cancel }
  - name: purge
    description: Purge.
    kind: write
    gate: operate
    approval: { approvers: approve, ttl: 2m, allow_self: true }
    request: { upstream: operator, path: /v1/purge }
`

func TestApprovalLoadsWithDefaultsAndTellsTheAgent(t *testing.T) {
	cat, err := catalog.Parse("catalog.yaml", []byte(approvalCatalog), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	pause, cancel, purge := cat.Tool("pause"), cat.Tool("cancel"), cat.Tool("purge")
	if a := pause.Approval; a == nil || !a.Confirm || a.Mode() != catalog.ApprovalConfirm {
		t.Fatalf("pause approval = %+v, want confirm", a)
	}
	if !strings.Contains(pause.Description, "asks the user to confirm this exact call") {
		t.Errorf("pause description = %q, want the confirmation note", pause.Description)
	}
	if a := cancel.Approval; a.Confirm || a.Approvers != "approve" || time.Duration(a.TTL) != 15*time.Minute || a.AllowSelf {
		t.Errorf("cancel approval = %+v, want approvers approve, ttl 15m, no self approval", a)
	}
	if !strings.Contains(cancel.Description, `someone other than the requester who passes the "approve" gate`) || !strings.Contains(cancel.Description, "valid 15m0s") {
		t.Errorf("cancel description = %q, want the four-eyes note", cancel.Description)
	}
	if a := purge.Approval; time.Duration(a.TTL) != 2*time.Minute || !a.AllowSelf {
		t.Errorf("purge approval = %+v, want ttl 2m and allow_self", a)
	}
	if !strings.Contains(purge.Description, "the requester may approve their own call") {
		t.Errorf("purge description = %q, want the self-approval note", purge.Description)
	}
	if h := cat.Upstreams["monitor"].IdempotencyHeader; h != catalog.DefaultIdempotencyHeader {
		t.Errorf("monitor idempotency_header = %q, want %q", h, catalog.DefaultIdempotencyHeader)
	}
	if h := cat.Upstreams["operator"].IdempotencyHeader; h != "X-Request-Once" {
		t.Errorf("operator idempotency_header = %q, want X-Request-Once", h)
	}
}
