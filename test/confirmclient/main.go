// Command confirmclient calls a tool that asks its user to confirm
// (approval: confirm) with the official Go MCP SDK: the gateway's question
// is shown on the terminal and answered there.
//
//	GATEWAY_MCP_URL=http://127.0.0.1:8080/mcp GATEWAY_TOKEN=… go run ./test/confirmclient pause_queue '{"queue":"billing"}'
//
// docs/clients.md shows this file whole; test/clients_test.go checks that
// the two are the same and runs it against a gateway, answering y and n.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the gateway token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// ask shows the gateway's question (what will run, where, with which
// arguments) and reads the user's answer. Declining sends nothing upstream.
func ask(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	fmt.Fprintf(os.Stderr, "%s\nconfirm? [y/N] ", req.Params.Message)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if strings.TrimSpace(strings.ToLower(line)) != "y" {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	// The gateway's form has one boolean field, confirm.
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
}

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: confirmclient TOOL ARGUMENTS_JSON")
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(os.Args[2]), &args); err != nil {
		log.Fatalf("arguments: %v", err)
	}
	ctx := context.Background()
	// Declaring an elicitation handler is what lets the gateway ask.
	client := mcp.NewClient(&mcp.Implementation{Name: "my-agent", Version: "1.0.0"},
		&mcp.ClientOptions{ElicitationHandler: ask})
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             os.Getenv("GATEWAY_MCP_URL"),
		HTTPClient:           &http.Client{Transport: bearer{os.Getenv("GATEWAY_TOKEN")}},
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	// The SDK asks, then retries the call with the answer by itself.
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: os.Args[1], Arguments: args})
	if err != nil {
		log.Fatal(err)
	}
	if res.IsError { // declined, expired, or the upstream's own reason
		log.Fatalf("tool error: %s", res.Content[0].(*mcp.TextContent).Text)
	}
	out, _ := json.Marshal(res.StructuredContent)
	fmt.Printf("result: %s\n", out)
}
