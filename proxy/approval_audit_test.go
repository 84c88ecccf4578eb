package proxy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// An approval's audit records redact writeOnly arguments as a write's
// records do: the request and the decision name the call, never its
// secret.
func TestApprovalRecordsRedactWriteOnlyArguments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	// The extra YAML continues the rig's tool list.
	rig := newApprovalRigWith(t, proxy.NewAuditTrail(openAudit(t, path, nil), nil, nil), `  - name: rotate
    description: Rotate a key.
    kind: write
    gate: op
    approval: { approvers: approver }
    input: { type: object, properties: { user: { type: string }, secret: { type: string, writeOnly: true } } }
    request: { upstream: up, method: POST, path: /rotate, body: { user: "{user}", secret: "{secret}" } }
`)
	ctx := context.Background()
	args := []byte(`{"user":"ann","secret":"hunter2"}`)
	res, err := rig.core.Call(ctx, requester, "rotate", args)
	if err != nil {
		t.Fatal(err)
	}
	id := idOf(t, res)
	// The approver is shown the call with its secret redacted, and the
	// store never holds it.
	shown, err := rig.core.GetApproval(ctx, approver, id)
	if err != nil {
		t.Fatal(err)
	}
	if string(shown.Arguments) != `{"secret":"[redacted]","user":"ann"}` {
		t.Errorf("the approver is shown %s; want user shown and secret redacted", shown.Arguments)
	}
	if b, _ := os.ReadFile(rig.storePath); strings.Contains(string(b), "hunter2") {
		t.Error("the approval store holds the writeOnly value")
	}
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
		t.Fatal(err)
	}
	// The retry with the same secret runs, and the upstream gets it.
	if res, err := rig.core.Call(ctx, requester, "rotate", args); err != nil || res.IsError {
		t.Fatalf("approved call = %+v, %v", res, err)
	}
	if len(rig.bodies) == 0 || !strings.Contains(rig.bodies[len(rig.bodies)-1], "hunter2") {
		t.Errorf("the upstream received %q; want the secret sent", rig.bodies)
	}
	recs := readAudit(t, path)
	var stages []string
	for _, r := range recs {
		stages = append(stages, r.Stage)
		if strings.Contains(string(r.Arguments), "hunter2") || !strings.Contains(string(r.Arguments), `"secret":"[redacted]"`) ||
			!strings.Contains(string(r.Arguments), `"user":"ann"`) {
			t.Errorf("%s record: arguments %s; want user shown and secret redacted", r.Stage, r.Arguments)
		}
		if r.Stage != proxy.StageCompleted && r.ApprovalID != id {
			t.Errorf("%s record names approval %q, want %s", r.Stage, r.ApprovalID, id)
		}
	}
	// The held call's own record, then the request, the decision, and
	// the run it released.
	if want := []string{proxy.StageApprovalRequested, proxy.StageCompleted, proxy.StageApproved, proxy.StageStarted, proxy.StageCompleted}; strings.Join(stages, ",") != strings.Join(want, ",") {
		t.Errorf("records %v, want %v", stages, want)
	}
}

// "[redacted]" may make the arguments longer than they were sent: up to
// the bound as sent, the approver still reads them, never a digest.
func TestRedactedArgumentsNearTheBoundStayReadable(t *testing.T) {
	rig := newApprovalRigWith(t, discardAudit{}, `  - name: rotate
    description: Rotate a key.
    kind: write
    gate: op
    approval: { approvers: approver }
    input: { type: object, properties: { user: { type: string }, pin: { type: string, writeOnly: true } } }
    request: { upstream: up, method: POST, path: /rotate, body: { user: "{user}", pin: "{pin}" } }
audit:
  max_argument_bytes: 64
`)
	ctx := context.Background()
	args := []byte(`{"pin":"1","user":"` + strings.Repeat("a", 40) + `"}`) // 55 bytes, 64 allowed
	res, err := rig.core.Call(ctx, requester, "rotate", args)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := rig.core.GetApproval(ctx, approver, idOf(t, res))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"pin":"[redacted]","user":"` + strings.Repeat("a", 40) + `"}`; string(shown.Arguments) != want {
		t.Errorf("the approver is shown %s, want %s", shown.Arguments, want)
	}
}
