package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/proxy"
)

// A held four-eyes call offers the approval page as a url elicitation
// only to a client that can open one: a 2026-07-28 client that declared
// url elicitation, on its first call (the retry of the offer is decided
// by the store alone). Every other client gets the held isError naming
// the approval and its URL, and nothing is sent either way.
func TestFourEyesOffersTheApprovalPageOnlyToAClientThatCanOpenIt(t *testing.T) {
	const page = `approval_page: { issuer: "https://idp.example.com", client_id: gateway }` + "\n"
	rig := newApprovalRigServer(t, discardAudit{}, `{ name: t, public_url: "https://mcp.example.com" }`, page)
	for _, tc := range []struct {
		name  string
		ask   *proxy.Asking // nil: the surface said nothing
		offer bool
	}{
		{"modern client with url elicitation", &proxy.Asking{Modern: true, URLElicitation: true}, true},
		{"modern client with form elicitation only", &proxy.Asking{Modern: true, Elicitation: true}, false},
		{"legacy client with url elicitation", &proxy.Asking{URLElicitation: true, Elicitation: true}, false},
		{"retry of the offer", &proxy.Asking{Modern: true, URLElicitation: true, RequestState: "v1.retry"}, false},
		{"surface that cannot ask", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ask != nil {
				ctx = proxy.WithAsking(ctx, tc.ask)
			}
			// Each row is its own call (its own arguments), so its own
			// first call.
			res, err := rig.core.Call(ctx, requester, "cancel", []byte(`{"q":"`+tc.name+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			id := idOf(t, res)
			url := "https://mcp.example.com/admin/mcp/approvals/" + id
			if !strings.Contains(res.Text, url) || !strings.Contains(res.Text, "Nothing was sent upstream") {
				t.Errorf("held answer = %s; want it to name %s and say nothing was sent", res.Text, url)
			}
			ir := res.InputRequired
			switch {
			case !tc.offer && ir != nil:
				t.Errorf("input required = %+v; want no url elicitation for this client", ir)
			case tc.offer && ir == nil:
				t.Fatalf("result = %+v; want a url elicitation of the approval page", res)
			case tc.offer:
				if ir.Key != proxy.ApprovalURLKey || ir.URL != url || ir.ElicitationID != id || ir.Message != res.Text || ir.Schema != nil {
					t.Errorf("url elicitation = %+v; want key %q, URL %s, elicitation id %s and the held message", ir, proxy.ApprovalURLKey, url, id)
				}
				plain, err := rig.core.ApprovalSealer().OpenData("four-eyes-url", ir.State)
				if err != nil || !strings.Contains(string(plain), id) {
					t.Errorf("sealed state opens to %s, %v; want the approval %s", plain, err, id)
				}
			}
		})
	}
	if n := rig.sent.Load(); n != 0 {
		t.Errorf("upstream received %d requests for held calls, want 0", n)
	}
}

// A client that cannot ask its user (no elicitation, or a legacy-era
// client whose surface cannot hold the call open to ask) is refused
// with a message saying what the client needs; nothing is sent.
func TestConfirmationIsRefusedToAClientThatCannotAsk(t *testing.T) {
	rig := newApprovalRig(t)
	for _, tc := range []struct {
		name string
		ask  *proxy.Asking
	}{
		{"surface that cannot ask", nil},
		{"modern client without elicitation", &proxy.Asking{Modern: true}},
		{"legacy client without a live connection", &proxy.Asking{Elicitation: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ask != nil {
				ctx = proxy.WithAsking(ctx, tc.ask)
			}
			res, err := rig.core.Call(ctx, requester, "pause", []byte(`{"q":"x"}`))
			if err != nil || !res.IsError || res.InputRequired != nil || res.Outcome != proxy.OutcomeRefused ||
				!strings.Contains(res.Text, "cannot ask its user") || !strings.Contains(res.Text, "Nothing was sent upstream") {
				t.Errorf("call = %+v, %v; want refused: the client cannot ask its user", res, err)
			}
		})
	}
	if n := rig.sent.Load(); n != 0 {
		t.Errorf("upstream received %d requests, want 0", n)
	}
}

// A legacy-era client that declared elicitation, on a surface that keeps
// the call's stream open, is asked there and then: the user sees the
// call, and only an accept with confirm ticked sends it, once, under a
// confirmation's idempotency key. Any other answer, or no answer, sends
// nothing and says why.
func TestConfirmationAsksALegacyClientOnTheLiveConnection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer *proxy.ElicitAnswer
		err    error
		want   string // "": the call runs
	}{
		{"accepted with confirm ticked", &proxy.ElicitAnswer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}, nil, ""},
		{"accepted without confirm ticked", &proxy.ElicitAnswer{Action: "accept", Content: json.RawMessage(`{"confirm":false}`)}, nil, "the user accepted the form without ticking confirm"},
		{"declined", &proxy.ElicitAnswer{Action: "decline"}, nil, "the user declined"},
		{"cancelled", &proxy.ElicitAnswer{Action: "cancel"}, nil, "the user cancelled"},
		{"unknown action", &proxy.ElicitAnswer{Action: "maybe"}, nil, `the elicitation action "maybe" is not accept`},
		{"client went away", nil, errors.New("the client went away"), "the client went away"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newApprovalRig(t)
			var asked []string
			var waited time.Duration
			ask := func(_ context.Context, msg string, schema json.RawMessage, wait time.Duration) (*proxy.ElicitAnswer, error) {
				asked = append(asked, msg)
				waited = wait
				if !strings.Contains(string(schema), `"confirm"`) {
					t.Errorf("form schema = %s, want the confirm box", schema)
				}
				return tc.answer, tc.err
			}
			ctx := proxy.WithAsking(context.Background(), &proxy.Asking{Elicitation: true, Ask: ask})
			res, err := rig.core.Call(ctx, requester, "pause", []byte(`{"q":"drop"}`))
			if err != nil {
				t.Fatal(err)
			}
			if len(asked) != 1 || !strings.Contains(asked[0], "Confirm: pause") || !strings.Contains(asked[0], `"drop"`) {
				t.Errorf("user was asked %q; want one question showing the call", asked)
			}
			// The tool's ttl is the default 15 minutes; a live wait is
			// capped at LiveConfirmWait.
			if waited != proxy.LiveConfirmWait {
				t.Errorf("the user was given %v to answer, want %v", waited, proxy.LiveConfirmWait)
			}
			if tc.want == "" {
				if res.IsError || rig.sent.Load() != 1 || !strings.HasPrefix(rig.keys[0], "mcpgw-cfm_") {
					t.Errorf("confirmed call = %+v, sent %d, keys %q; want it sent once under a confirmation's key", res, rig.sent.Load(), rig.keys)
				}
				return
			}
			if !res.IsError || res.Outcome != proxy.OutcomeRefused || !strings.Contains(res.Text, "confirmation refused: "+tc.want) ||
				!strings.Contains(res.Text, "nothing was sent upstream") || rig.sent.Load() != 0 {
				t.Errorf("call = %+v, sent %d; want refused: %s", res, rig.sent.Load(), tc.want)
			}
		})
	}
}

// A retry that brings the sealed state back without an answer to it is
// asked again (a new prompt), not refused and not run.
func TestConfirmationRetryWithoutAnAnswerAsksAgain(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	args := []byte(`{"q":"x"}`)
	p, err := rig.core.Call(proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true}), requester, "pause", args)
	if err != nil || p.InputRequired == nil {
		t.Fatalf("confirm prompt = %+v, %v", p, err)
	}
	for name, responses := range map[string]json.RawMessage{
		"no inputResponses":           nil,
		"an answer to something else": json.RawMessage(`{"other":{"action":"accept","content":{"confirm":true}}}`),
	} {
		retry := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true, RequestState: p.InputRequired.State, Responses: responses})
		res, err := rig.core.Call(retry, requester, "pause", args)
		if err != nil || res.IsError || res.InputRequired == nil || res.InputRequired.Key != proxy.ConfirmKey || res.Outcome != proxy.OutcomeAwaiting {
			t.Errorf("retry with %s = %+v, %v; want the confirmation asked again", name, res, err)
		}
	}
	if n := rig.sent.Load(); n != 0 {
		t.Errorf("upstream received %d requests, want 0", n)
	}
}
