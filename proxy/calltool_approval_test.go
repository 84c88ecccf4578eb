package proxy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// TestCallToolApprovalsBindTheRealTool: a confirmation through call_tool binds the
// real tool and arguments; it cannot be replayed on another tool or other
// arguments; a four-eyes approval names the real tool.
func TestCallToolApprovalsBindTheRealTool(t *testing.T) {
	rig := newApprovalRigWith(t, discardAudit{}, "discovery: { mode: on }\n")
	ctx := context.Background()
	ask := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true})
	wrap := func(name, args string) []byte { return []byte(`{"name":"` + name + `","arguments":` + args + `}`) }
	p, err := rig.core.Call(ask, requester, "call_tool", wrap("pause", `{"q":"x"}`))
	if err != nil || p.InputRequired == nil || !strings.Contains(p.Text, "(pause)") {
		t.Fatalf("prompt = %+v %v", p, err)
	}
	accept := json.RawMessage(`{"confirm":{"action":"accept","content":{"confirm":true}}}`)
	retry := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true, RequestState: p.InputRequired.State, Responses: accept})
	for _, c := range []struct{ name, args string }{{"cancel", `{"q":"x"}`}, {"pause", `{"q":"y"}`}} {
		res, err := rig.core.Call(retry, requester, "call_tool", wrap(c.name, c.args))
		if err != nil || res.Outcome == proxy.OutcomeOK {
			t.Errorf("replay on %s %s = %+v %v", c.name, c.args, res, err)
		}
	}
	if n := rig.sent.Load(); n != 0 {
		t.Fatalf("sent %d", n)
	}
	res, err := rig.core.Call(retry, requester, "pause", []byte(`{"q":"x"}`))
	if err != nil || res.IsError || rig.sent.Load() != 1 {
		t.Fatalf("direct retry of the confirmed call = %+v %v", res, err)
	}
	res, err = rig.core.Call(retry, requester, "call_tool", wrap("pause", `{"q":"x"}`))
	if err != nil || !res.IsError || rig.sent.Load() != 1 {
		t.Fatalf("second use through call_tool = %+v %v", res, err)
	}
	res, err = rig.core.Call(ctx, requester, "call_tool", wrap("cancel", `{"q":"z"}`))
	if err != nil || !strings.HasPrefix(res.Text, "cancel awaits approval") {
		t.Fatalf("four-eyes through call_tool = %+v %v", res, err)
	}
}
