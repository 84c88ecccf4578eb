package test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Confirmation in legacy eras: a 2025-11-25 client that declares elicitation in
// the call's params._meta is asked on the POST's response stream, and its
// answer (a separate POST) decides the call.

// legacyCaps declares form elicitation the way a stateless gateway can
// see it in a legacy era: in the call itself.
var legacyCaps = mcp.Meta{"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}

func TestLegacyConfirmOverTheResponseStream(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "", approvalKeys())
	op := token(t, "operator", "acme", operatorScopes...)
	pause := "/v1/queues/billing/pause"
	args := map[string]any{"queue": "billing", "reason": "legacy e2e"}
	legacy := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

	t.Run("accepted-runs-once-and-is-audited", func(t *testing.T) {
		var asked atomic.Int32
		var prompt string
		cs := sdkClient(t, g.MCP, op, legacy, func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			prompt = req.Params.Message
			return accept(ctx, req)
		}, false)
		if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
			t.Fatalf("negotiated %q, want the legacy 2025-11-25", v)
		}
		res, text := callText(t, cs, &mcp.CallToolParams{Meta: legacyCaps, Name: "pause_queue", Arguments: args})
		if res.IsError {
			t.Fatalf("confirmed legacy call: isError %q", text)
		}
		if asked.Load() != 1 || !strings.Contains(prompt, "pause_queue") || !strings.Contains(prompt, `"acme"`) {
			t.Errorf("asked %d times, prompt %q; want once, naming the tool and workspace", asked.Load(), prompt)
		}
		got := sent(up, pause)
		if len(got) != 1 || !strings.HasPrefix(got[0].Header.Get("Idempotency-Key"), "mcpgw-cfm_") {
			t.Fatalf("upstream saw %d pause requests (%v), want one with an Idempotency-Key", len(got), got)
		}
		if !g.logHas(regexp.MustCompile(`"approval_id":"cfm_[^"]+","approver":"operator"`)) {
			t.Errorf("audit trail lacks the confirmed call with its approval id and approver")
		}
	})

	for _, c := range []struct{ action, want string }{{"decline", "the user declined"}, {"cancel", "the user cancelled"}} {
		t.Run(c.action+"-sends-nothing", func(t *testing.T) {
			before := len(sent(up, pause))
			cs := sdkClient(t, g.MCP, op, legacy, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: c.action}, nil
			}, false)
			res, text := callText(t, cs, &mcp.CallToolParams{Meta: legacyCaps, Name: "pause_queue", Arguments: args})
			if !res.IsError || !strings.Contains(text, c.want) || !strings.Contains(text, "nothing was sent upstream") {
				t.Errorf("%s: isError %v %q, want a refusal saying %q", c.action, res.IsError, text, c.want)
			}
			if n := len(sent(up, pause)); n != before {
				t.Errorf("%s: upstream saw %d pause requests", c.action, n-before)
			}
		})
	}

	t.Run("accepted-without-ticking-confirm-sends-nothing", func(t *testing.T) {
		before := len(sent(up, pause))
		cs := sdkClient(t, g.MCP, op, legacy, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}, nil
		}, false)
		res, text := callText(t, cs, &mcp.CallToolParams{Meta: legacyCaps, Name: "pause_queue", Arguments: args})
		if !res.IsError || !strings.Contains(text, "without ticking confirm") {
			t.Errorf("isError %v %q, want a refusal", res.IsError, text)
		}
		if n := len(sent(up, pause)); n != before {
			t.Errorf("upstream saw %d pause requests", n-before)
		}
	})
}

// sseEvents reads the data of each SSE event of r into a channel, closed
// at the end of the stream.
func sseEvents(resp *http.Response) <-chan string {
	out := make(chan string, 4)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			case line == "" && data != nil:
				out <- strings.Join(data, "\n")
				data = nil
			}
		}
	}()
	return out
}

func nextEvent(t *testing.T, ev <-chan string) string {
	t.Helper()
	select {
	case e, ok := <-ev:
		if !ok {
			t.Fatal("the stream ended early")
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return ""
}

func TestLegacyConfirmResponsePostsAreChecked(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "", approvalKeys())
	op := token(t, "operator", "acme", operatorScopes...)
	pause := "/v1/queues/billing/pause"
	legacyHdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}

	t.Run("unknown-id-is-refused-at-once", func(t *testing.T) {
		start := time.Now()
		resp, body := post(t, g.MCP, op, `{"jsonrpc":"2.0","id":"mcpgw-elicit-00000000000000000000000000000000","result":{"action":"accept","content":{"confirm":true}}}`, legacyHdr)
		if resp.StatusCode != 404 || !strings.Contains(body, "no call on this gateway node is waiting") || !strings.Contains(body, "sticky routing") {
			t.Errorf("unknown id: %d %s, want 404 saying no call waits here", resp.StatusCode, body)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("unknown id answered after %s", d)
		}
	})

	t.Run("a-json-client-is-refused-as-before", func(t *testing.T) {
		// Accept without text/event-stream: the gateway cannot ask, and
		// says so.
		resp, body := post(t, g.MCP, op, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pause_queue","arguments":{"queue":"billing"},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Accept": "application/json"})
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !strings.Contains(body, "cannot ask its user") {
			t.Errorf("JSON-only client: %s %s", ct, body)
		}
	})

	t.Run("another-principal-cannot-answer", func(t *testing.T) {
		before := len(sent(up, pause))
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pause_queue","arguments":{"queue":"billing","reason":"raw"},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`
		req, _ := http.NewRequest(http.MethodPost, g.MCP, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+op)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			resp.Body.Close()
			t.Fatalf("call answered %s, want text/event-stream", ct)
		}
		ev := sseEvents(resp)
		var ask struct {
			ID     string `json:"id"`
			Method string `json:"method"`
			Params struct {
				Mode            string          `json:"mode"`
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(nextEvent(t, ev)), &ask); err != nil {
			t.Fatal(err)
		}
		if ask.Method != "elicitation/create" || ask.Params.Mode != "form" || !regexp.MustCompile(`^mcpgw-elicit-[0-9a-f]{32}$`).MatchString(ask.ID) ||
			!strings.Contains(string(ask.Params.RequestedSchema), `"confirm"`) {
			t.Fatalf("first event %+v, want an elicitation/create form with an unguessable id", ask)
		}
		answer := func(tok, action string) (*http.Response, string) {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": ask.ID, "result": map[string]any{"action": action, "content": map[string]any{"confirm": true}}})
			return post(t, g.MCP, tok, string(b), legacyHdr)
		}
		for who, tok := range map[string]string{
			"another subject":   token(t, "mallory", "acme", operatorScopes...),
			"another workspace": token(t, "operator", "globex", operatorScopes...),
		} {
			if resp, b := answer(tok, "accept"); resp.StatusCode != 403 || !strings.Contains(b, "another principal") {
				t.Errorf("%s answering: %d %s, want 403", who, resp.StatusCode, b)
			}
		}
		if n := len(sent(up, pause)); n != before {
			t.Fatalf("upstream saw %d pause requests after others answered", n-before)
		}
		// The call still waits for its own caller, who declines.
		if resp, b := answer(op, "decline"); resp.StatusCode != 202 {
			t.Fatalf("the caller's answer: %d %s, want 202", resp.StatusCode, b)
		}
		var final struct {
			ID     int `json:"id"`
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(nextEvent(t, ev)), &final); err != nil {
			t.Fatal(err)
		}
		if final.ID != 7 || !final.Result.IsError || len(final.Result.Content) != 1 || !strings.Contains(final.Result.Content[0].Text, "the user declined") {
			t.Errorf("final event %+v, want the call's refusal", final)
		}
		if _, more := <-ev; more {
			t.Error("the stream went on after the call's answer")
		}
		if n := len(sent(up, pause)); n != before {
			t.Errorf("upstream saw %d pause requests", n-before)
		}
		// Answered once: the same id is unknown now.
		if resp, b := answer(op, "accept"); resp.StatusCode != 404 {
			t.Errorf("second answer: %d %s, want 404", resp.StatusCode, b)
		}
	})
}
