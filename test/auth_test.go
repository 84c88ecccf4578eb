package test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestUnauthorizedPointsAtProtectedResourceMetadata(t *testing.T) {
	up := startUpstream(t)
	path := copyCatalog(t, func(s string) string {
		return strings.Replace(s, "  principal:\n", `  resource_metadata:
    resource: http://gateway.test/mcp
    authorization_servers: [https://login.example.com/]
    scopes_supported: [jobs:read]
  principal:
`, 1)
	})
	g := launch(t, launchConfig{upstreamURL: up.URL, catalog: path})

	// The official Go client reports the refusal as an error.
	client := mcp.NewClient(&mcp.Implementation{Name: "anon", Version: "1"}, nil)
	_, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.MCP, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unauthorized") && !strings.Contains(err.Error(), "401") {
		t.Fatalf("Connect without a token = %v, want an authorization error", err)
	}

	for _, tok := range []string{"", "expired.or.garbage"} {
		resp, body := post(t, g.MCP, tok, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, nil)
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != 401 || !strings.HasPrefix(challenge, "Bearer ") || !json.Valid([]byte(body)) {
			t.Fatalf("token %q: %d %q %s", tok, resp.StatusCode, challenge, body)
		}
		if tok != "" && !strings.Contains(challenge, `error="invalid_token"`) {
			t.Errorf("a bad token's challenge lacks error=\"invalid_token\": %s", challenge)
		}
		m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(challenge)
		if m == nil {
			t.Fatalf("challenge %q has no resource_metadata", challenge)
		}
		// The advertised URL names the canonical resource's host; fetch the
		// same path from this gateway.
		u := m[1][strings.Index(m[1], "/.well-known/"):]
		mresp, err := http.Get(g.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		json.NewDecoder(mresp.Body).Decode(&doc)
		mresp.Body.Close()
		if mresp.StatusCode != 200 || doc.Resource != "http://gateway.test/mcp" || len(doc.AuthorizationServers) != 1 {
			t.Errorf("metadata at %s = %d %+v", u, mresp.StatusCode, doc)
		}
	}
	if _, err := http.Get(g.URL + "/.well-known/oauth-protected-resource"); err != nil {
		t.Fatal(err)
	}
}
