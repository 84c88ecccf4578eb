package proxy_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// A spent confirmation stays spent when the approval store's file is
// lost: the store is made anew with a new epoch, and a confirmation
// issued against the lost file (whose record of spent confirmations went
// with it) is refused, saying why; nothing is sent again. A new prompt
// then works. An executed four-eyes approval lost with the file is not
// run again either: the retry opens a new request.
func TestSpentConfirmationSurvivesALostStore(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	args := []byte(`{"q":"x"}`)
	ask := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true})
	p, err := rig.core.Call(ask, requester, "pause", args)
	if err != nil || p.InputRequired == nil {
		t.Fatalf("confirm prompt = %+v, %v", p, err)
	}
	confirmed := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true, RequestState: p.InputRequired.State,
		Responses: json.RawMessage(`{"confirm":{"action":"accept","content":{"confirm":true}}}`)})
	if res, err := rig.core.Call(confirmed, requester, "pause", args); err != nil || res.IsError {
		t.Fatalf("confirmed call = %+v, %v", res, err)
	}
	id := idOf(t, rig.call(t, args))
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
		t.Fatal(err)
	}
	if res := rig.call(t, args); res.IsError {
		t.Fatalf("approved call = %+v", res)
	}
	if n := rig.sent.Load(); n != 2 {
		t.Fatalf("upstream received %d requests, want the confirmed and the approved write", n)
	}

	if err := os.Remove(rig.storePath); err != nil {
		t.Fatal(err)
	}
	res, err := rig.core.Call(confirmed, requester, "pause", args)
	if err != nil || !res.IsError || !strings.Contains(res.Text, "approval store was lost or recreated") || !strings.Contains(res.Text, "nothing was sent") {
		t.Errorf("replayed confirmation after the store was lost = %+v, %v; want refused, saying the store was lost", res, err)
	}
	if res := rig.call(t, args); !res.IsError || !strings.Contains(res.Text, "awaits approval") || strings.Contains(res.Text, id) {
		t.Errorf("four-eyes retry after the store was lost = %+v; want a new pending approval", res)
	}
	if n := rig.sent.Load(); n != 2 {
		t.Errorf("upstream received %d requests after the store was lost, want still 2", n)
	}

	// Asked anew, the user's confirmation runs.
	p, err = rig.core.Call(ask, requester, "pause", args)
	if err != nil || p.InputRequired == nil {
		t.Fatalf("confirm prompt after the store was lost = %+v, %v", p, err)
	}
	again := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true, RequestState: p.InputRequired.State,
		Responses: json.RawMessage(`{"confirm":{"action":"accept","content":{"confirm":true}}}`)})
	if res, err := rig.core.Call(again, requester, "pause", args); err != nil || res.IsError || rig.sent.Load() != 3 {
		t.Errorf("new confirmation = %+v, %v, sent %d; want it to run once", res, err, rig.sent.Load())
	}
}
