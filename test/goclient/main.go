// Command goclient connects to the gateway with the official Go MCP SDK and
// a bearer token, lists the tools and calls one:
//
//	GATEWAY_MCP_URL=http://127.0.0.1:8080/mcp GATEWAY_TOKEN=… go run ./test/goclient list_firing_alerts '{}'
//
// docs/clients.md shows this file whole; test/clients_test.go checks that
// the two are the same and runs it against a gateway.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the gateway token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: goclient TOOL ARGUMENTS_JSON")
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(os.Args[2]), &args); err != nil {
		log.Fatalf("arguments: %v", err)
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "my-agent", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   os.Getenv("GATEWAY_MCP_URL"),
		HTTPClient: &http.Client{Transport: bearer{os.Getenv("GATEWAY_TOKEN")}},
		// The gateway answers with JSON, never a stream: no GET stream to open.
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		log.Fatal(err) // a bad token fails here: 401 Unauthorized
	}
	defer session.Close()

	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("tool:", tool.Name)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: os.Args[1], Arguments: args})
	if err != nil {
		log.Fatal(err) // a protocol error: unknown tool, rate limited, output too large
	}
	if res.IsError { // a tool error: denied, bad arguments, the upstream's reason
		log.Fatalf("tool error: %s", res.Content[0].(*mcp.TextContent).Text)
	}
	out, _ := json.Marshal(res.StructuredContent)
	fmt.Printf("result: %s\n", out)
}
