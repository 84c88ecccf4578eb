package test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/mcpgw/gateway/test/redistest"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/gateway/approval"
)

// Approval end to end: the built gateway on the bundled catalog, where
// pause_queue asks for confirmation and cancel_workflow for four-eyes
// approval, driven by the official Go SDK in both eras.

var approverScopes = []string{"jobs:read", "workflows:approve"}

func approvalKeys() string {
	return "GATEWAY_APPROVAL_KEYS=" + base64.StdEncoding.EncodeToString(approval.RandomKey())
}

// sdkClient connects with an elicitation handler (nil: the client
// declares no elicitation) and automatic multi round-trip handling unless
// manual.
func sdkClient(t *testing.T, endpoint, tok string, opts *mcp.ClientSessionOptions, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), manual bool) *mcp.ClientSession {
	t.Helper()
	co := &mcp.ClientOptions{ElicitationHandler: elicit}
	if manual {
		co.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-approval", Version: "1.0.0"}, co)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: httpClient(tok), DisableStandaloneSSE: true, MaxRetries: -1,
	}, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", params.Name, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return res, text
}

// sent returns the upstream requests to path.
func sent(up *upstream, path string) []seenRequest {
	var out []seenRequest
	for _, r := range up.requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func accept(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
}

func TestConfirmThroughTheClientRunsOnceAndRefusesEverythingElse(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "", approvalKeys())
	op := token(t, "operator", "acme", operatorScopes...)
	pause := "/v1/queues/billing/pause"
	args := map[string]any{"queue": "billing", "reason": "e2e"}

	t.Run("accepted-runs-once-with-an-idempotency-key", func(t *testing.T) {
		var prompt string
		cs := sdkClient(t, g.MCP, op, nil, func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			prompt = req.Params.Message
			return accept(ctx, req)
		}, false)
		res, text := callText(t, cs, &mcp.CallToolParams{Name: "pause_queue", Arguments: args})
		if res.IsError {
			t.Fatalf("confirmed call: isError %q", text)
		}
		for _, want := range []string{"pause_queue", `"acme"`, `"queue":"billing"`} {
			if !strings.Contains(prompt, want) {
				t.Errorf("prompt %q does not say %s", prompt, want)
			}
		}
		got := sent(up, pause)
		if len(got) != 1 || !strings.HasPrefix(got[0].Header.Get("Idempotency-Key"), "mcpgw-cfm_") {
			t.Fatalf("upstream saw %d pause requests (%v), want one with an Idempotency-Key", len(got), got)
		}
	})

	for _, c := range []struct{ action, want string }{{"decline", "the user declined"}, {"cancel", "the user cancelled"}} {
		t.Run(c.action+"d-sends-nothing", func(t *testing.T) {
			before := len(sent(up, pause))
			cs := sdkClient(t, g.MCP, op, nil, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: c.action}, nil
			}, false)
			res, text := callText(t, cs, &mcp.CallToolParams{Name: "pause_queue", Arguments: args})
			if !res.IsError || !strings.Contains(text, c.want) || !strings.Contains(text, "nothing was sent upstream") {
				t.Errorf("%s: isError %v %q, want a refusal saying %q", c.action, res.IsError, text, c.want)
			}
			if n := len(sent(up, pause)); n != before {
				t.Errorf("%s: upstream saw %d more pause requests", c.action, n-before)
			}
		})
	}

	// The manual multi round-trip: take the sealed state and misuse it.
	manual := sdkClient(t, g.MCP, op, nil, accept, true)
	first, _ := callText(t, manual, &mcp.CallToolParams{Name: "pause_queue", Arguments: args})
	if !first.NeedsInput() || first.RequestState == "" || first.InputRequests["confirm"] == nil {
		t.Fatalf("first call: NeedsInput %v, requestState %q, inputRequests %v; want an input_required confirmation", first.NeedsInput(), first.RequestState, first.InputRequests)
	}
	ok := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	mallory := sdkClient(t, g.MCP, token(t, "mallory", "acme", operatorScopes...), nil, accept, true)
	tampered := []byte(first.RequestState)
	tampered[len(tampered)/2] ^= 2
	refusals := []struct {
		name string
		cs   *mcp.ClientSession
		p    *mcp.CallToolParams
		want string
	}{
		{"tampered", manual, &mcp.CallToolParams{Name: "pause_queue", Arguments: args, RequestState: string(tampered), InputResponses: ok}, "tampered"},
		{"replayed-by-another-principal", mallory, &mcp.CallToolParams{Name: "pause_queue", Arguments: args, RequestState: first.RequestState, InputResponses: ok}, "another principal"},
		{"changed-arguments", manual, &mcp.CallToolParams{Name: "pause_queue", Arguments: map[string]any{"queue": "email", "reason": "e2e"}, RequestState: first.RequestState, InputResponses: ok}, "changed arguments"},
		{"not-ticked", manual, &mcp.CallToolParams{Name: "pause_queue", Arguments: args, RequestState: first.RequestState, InputResponses: mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}}}, "declined"},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			before := len(up.requests())
			res, text := callText(t, r.cs, r.p)
			if !res.IsError || !strings.Contains(text, r.want) || !strings.Contains(text, "nothing was sent upstream") {
				t.Errorf("isError %v %q, want a refusal saying %q", res.IsError, text, r.want)
			}
			if n := len(up.requests()); n != before {
				t.Errorf("upstream saw %d more requests", n-before)
			}
		})
	}
	t.Run("replayed-after-use", func(t *testing.T) {
		p := &mcp.CallToolParams{Name: "pause_queue", Arguments: args, RequestState: first.RequestState, InputResponses: ok}
		before := len(sent(up, pause))
		if res, text := callText(t, manual, p); res.IsError {
			t.Fatalf("first use: isError %q", text)
		}
		res, text := callText(t, manual, p)
		if !res.IsError || !strings.Contains(text, "already used") {
			t.Errorf("second use: isError %v %q, want already used", res.IsError, text)
		}
		if n := len(sent(up, pause)) - before; n != 1 {
			t.Errorf("upstream saw %d pause requests for one confirmation, want 1", n)
		}
	})
	t.Run("arguments-cannot-carry-a-confirmation", func(t *testing.T) {
		cs := sdkClient(t, g.MCP, op, nil, nil, false)
		res, text := callText(t, cs, &mcp.CallToolParams{Name: "pause_queue", Arguments: map[string]any{"queue": "billing", "confirm": true}})
		if !res.IsError || !strings.Contains(text, "invalid arguments") {
			t.Errorf("isError %v %q, want the schema to refuse confirm", res.IsError, text)
		}
	})

	t.Run("clients-that-cannot-ask-are-refused", func(t *testing.T) {
		before := len(sent(up, pause))
		for name, cs := range map[string]*mcp.ClientSession{
			"modern-without-elicitation": sdkClient(t, g.MCP, op, nil, nil, false),
			"legacy-with-elicitation":    sdkClient(t, g.MCP, op, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, accept, false),
			"legacy-without":             sdkClient(t, g.MCP, op, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, nil, false),
		} {
			res, text := callText(t, cs, &mcp.CallToolParams{Name: "pause_queue", Arguments: args})
			if !res.IsError || !strings.Contains(text, "cannot ask its user") {
				t.Errorf("%s: isError %v %q, want a clear refusal", name, res.IsError, text)
			}
		}
		if n := len(sent(up, pause)); n != before {
			t.Errorf("upstream saw %d pause requests from clients that cannot ask", n-before)
		}
	})
}

var approvalID = regexp.MustCompile(`apr_[0-9a-f]{32}`)

// rest calls the approver API and decodes its JSON answer.
func rest(t *testing.T, method, url, tok string) (int, map[string]any, []any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var obj map[string]any
	var list []any
	if json.Unmarshal(b, &obj) != nil {
		json.Unmarshal(b, &list)
	}
	return resp.StatusCode, obj, list
}

func fourEyesRequest(t *testing.T, cs *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	res, text := callText(t, cs, &mcp.CallToolParams{Name: "cancel_workflow", Arguments: args})
	id := approvalID.FindString(text)
	if !res.IsError || id == "" || !strings.Contains(text, "/admin/mcp/approvals/"+id) {
		t.Fatalf("first call: isError %v %q, want an isError naming the approval and its URL", res.IsError, text)
	}
	return id
}

func TestFourEyesApprovalInBothEras(t *testing.T) {
	up := startUpstream(t)
	store := filepath.Join(t.TempDir(), "approvals.json")
	g := startGateway(t, up, "", approvalKeys(), "GATEWAY_APPROVAL_STORE=file:"+store)
	op := token(t, "operator", "acme", operatorScopes...)
	approver := token(t, "approver", "acme", approverScopes...)
	outsider := token(t, "approver2", "globex", approverScopes...)
	viewer := token(t, "viewer", "acme", "jobs:read")
	api := g.URL + "/admin/mcp/approvals/"
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := sdkClient(t, g.MCP, op, era.opts, nil, false)
			wf := "wf-" + era.name
			args := map[string]any{"workflow_id": wf, "reason": "e2e"}
			path := "/v1/workflows/" + wf + "/cancel"
			id := fourEyesRequest(t, cs, args)
			if again := fourEyesRequest(t, cs, args); again != id {
				t.Errorf("retry before approval made a second request %s", again)
			}
			if code, _, list := rest(t, "GET", strings.TrimSuffix(api, "/"), approver); code != 200 || len(list) == 0 {
				t.Errorf("approver lists: %d %v", code, list)
			}
			if code, _, list := rest(t, "GET", strings.TrimSuffix(api, "/"), outsider); code != 200 || len(list) != 0 {
				t.Errorf("another workspace lists: %d %v, want nothing", code, list)
			}
			for name, c := range map[string]struct {
				tok  string
				want int
			}{"requester-self": {op, 403}, "other-workspace": {outsider, 404}, "no-gate": {viewer, 404}} {
				if code, body, _ := rest(t, "POST", api+id+"/approve", c.tok); code != c.want {
					t.Errorf("%s approves: %d %v, want %d", name, code, body, c.want)
				}
			}
			if n := len(sent(up, path)); n != 0 {
				t.Fatalf("upstream saw %d cancels before approval", n)
			}
			if code, body, _ := rest(t, "POST", api+id+"/approve", approver); code != 200 || body["status"] != "approved" || body["approver"] != "approver" {
				t.Fatalf("approve: %d %v", code, body)
			}
			if code, _, _ := rest(t, "POST", api+id+"/reject", approver); code != 409 {
				t.Errorf("reject after approve: %d, want 409", code)
			}
			// Changed arguments do not ride on the approval.
			other := fourEyesRequest(t, cs, map[string]any{"workflow_id": wf, "reason": "changed"})
			if other == id {
				t.Errorf("changed arguments released approval %s", id)
			}
			res, text := callText(t, cs, &mcp.CallToolParams{Name: "cancel_workflow", Arguments: args})
			if res.IsError && strings.Contains(text, "apr_") {
				t.Fatalf("approved retry: %q", text)
			}
			got := sent(up, path)
			if len(got) != 1 || got[0].Header.Get("Idempotency-Key") != approval.IdempotencyKey(id) {
				t.Fatalf("upstream saw %d cancels (%v), want one with Idempotency-Key %s", len(got), got, approval.IdempotencyKey(id))
			}
			// A second retry does not run again: it asks anew.
			if next := fourEyesRequest(t, cs, args); next == id {
				t.Errorf("second retry reused %s", id)
			} else if code, _, _ := rest(t, "POST", api+next+"/reject", approver); code != 200 {
				t.Errorf("reject: %d", code)
			}
			res, text = callText(t, cs, &mcp.CallToolParams{Name: "cancel_workflow", Arguments: args})
			if !res.IsError || !strings.Contains(text, "rejected by approver") {
				t.Errorf("after rejection: isError %v %q", res.IsError, text)
			}
			if n := len(sent(up, path)); n != 1 {
				t.Errorf("upstream saw %d cancels, want 1", n)
			}
		})
	}
	for _, want := range []string{`"stage":"approval_requested"`, `"stage":"approved"`, `"stage":"rejected"`, `"approver":"approver"`} {
		if !g.logHas(regexp.MustCompile(regexp.QuoteMeta(want))) {
			t.Errorf("audit trail lacks %s", want)
		}
	}
}

func TestTwoGatewaysShareApprovalsThroughRedis(t *testing.T) {
	up := startUpstream(t)
	env := []string{approvalKeys(), "GATEWAY_APPROVAL_STORE=" + redistest.Start(t)}
	g1, g2 := startGateway(t, up, "", env...), startGateway(t, up, "", env...)
	op := token(t, "operator", "acme", operatorScopes...)
	approver := token(t, "approver", "acme", approverScopes...)
	args := map[string]any{"workflow_id": "wf-acme-0011", "reason": "e2e"}
	id := fourEyesRequest(t, sdkClient(t, g1.MCP, op, nil, nil, false), args)
	if code, body, _ := rest(t, "POST", g1.URL+"/admin/mcp/approvals/"+id+"/approve", approver); code != 200 {
		t.Fatalf("approve on node 1: %d %v", code, body)
	}
	on2 := sdkClient(t, g2.MCP, op, nil, nil, false)
	if res, text := callText(t, on2, &mcp.CallToolParams{Name: "cancel_workflow", Arguments: args}); res.IsError {
		t.Fatalf("retry on node 2: %q", text)
	}
	if n := len(sent(up, "/v1/workflows/wf-acme-0011/cancel")); n != 1 {
		t.Fatalf("upstream saw %d cancels, want 1", n)
	}
	// The confirmation sealed by node 1 is redeemed on node 2, once.
	manual := sdkClient(t, g1.MCP, op, nil, accept, true)
	pargs := map[string]any{"queue": "billing"}
	first, _ := callText(t, manual, &mcp.CallToolParams{Name: "pause_queue", Arguments: pargs})
	ok := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	p := &mcp.CallToolParams{Name: "pause_queue", Arguments: pargs, RequestState: first.RequestState, InputResponses: ok}
	m2 := sdkClient(t, g2.MCP, op, nil, accept, true)
	if res, text := callText(t, m2, p); res.IsError {
		t.Fatalf("confirmation redeemed on node 2: %q", text)
	}
	if res, text := callText(t, manual, p); !res.IsError || !strings.Contains(text, "already used") {
		t.Errorf("the same confirmation on node 1 again: isError %v %q", res.IsError, text)
	}
}

// TestApprovalIsBoundToTheActor: one subject's tokens may act for several
// agents (the actor claim differs). An approval granted to the call that
// one agent made does not release the same call made by another agent
// under the same subject: that call is a request of its own.
func TestApprovalIsBoundToTheActor(t *testing.T) {
	up := startUpstream(t)
	store := filepath.Join(t.TempDir(), "approvals.json")
	g := startGateway(t, up, "", approvalKeys(), "GATEWAY_APPROVAL_STORE=file:"+store)
	asActor := func(actor string) string {
		now := time.Now()
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"iss": testIssuer, "aud": testAudience, "sub": "operator", "ws": "acme",
			"scope": strings.Join(operatorScopes, " "), "email": actor,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		}).SignedString([]byte(testSecret))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	agent1 := sdkClient(t, g.MCP, asActor("agent-1@example.com"), nil, nil, false)
	agent2 := sdkClient(t, g.MCP, asActor("agent-2@example.com"), nil, nil, false)
	approver := token(t, "approver", "acme", approverScopes...)
	args := map[string]any{"workflow_id": "wf-acme-0011", "reason": "e2e"}
	path := "/v1/workflows/wf-acme-0011/cancel"

	id := fourEyesRequest(t, agent1, args)
	if code, body, _ := rest(t, "POST", g.URL+"/admin/mcp/approvals/"+id+"/approve", approver); code != 200 {
		t.Fatalf("approve: %d %v", code, body)
	}
	if other := fourEyesRequest(t, agent2, args); other == id {
		t.Errorf("agent-2's call released agent-1's approval %s", id)
	}
	if n := len(sent(up, path)); n != 0 {
		t.Fatalf("upstream saw %d cancels after agent-2's retry, want none", n)
	}
	res, text := callText(t, agent1, &mcp.CallToolParams{Name: "cancel_workflow", Arguments: args})
	if res.IsError {
		t.Fatalf("agent-1's approved retry: %q", text)
	}
	if got := sent(up, path); len(got) != 1 || got[0].Header.Get("X-Actor") != "agent-1@example.com" {
		t.Fatalf("upstream saw %v, want one cancel acted by agent-1", got)
	}
}
