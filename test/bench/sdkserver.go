package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkScenarios are the scenarios the sdk anchor serves: the plain reads.
// The gateway's huge (bounds) and write (audit) scenarios have no
// counterpart a hand-written server would be fair to compare.
var sdkScenarios = map[string]bool{"small": true, "list": true}

// runSDK is the hidden "sdk" subcommand: the MCP server a team would
// write by hand with the official Go SDK instead of running the gateway.
// Stateless Streamable HTTP answering JSON, behind the SDK's bearer
// middleware verifying the same HS256 tokens with golang-jwt (algorithm,
// issuer, audience, expiry required, 30 s leeway, the bench:read scope),
// with one tool per plain read scenario that GETs the same upstream path
// with the same upstream token and the caller's workspace, and returns
// the upstream's JSON object as structuredContent (the SDK adds the text
// content). It verifies every token (no cache) and has none of the
// gateway's bounds, fences, rate limits or audit: it is the floor of an
// MCP server that does the same work, not a peer.
func runSDK(args []string) error {
	fs := flag.NewFlagSet("sdk", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "listen address")
	target := fs.String("target", "", "upstream base URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, err := url.Parse(*target)
	if err != nil || base.Host == "" {
		return fmt.Errorf("sdk: -target %q is not an absolute URL", *target)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 256
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	server := mcp.NewServer(&mcp.Implementation{Name: "bench-sdk", Version: "1"}, nil)
	for name := range sdkScenarios {
		sc := scenarios[name]
		endpoint := base.JoinPath(sc.path).String()
		mcp.AddTool(server, &mcp.Tool{Name: sc.tool, Description: sc.what},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]any, error) {
				ws, _ := req.Extra.TokenInfo.Extra["ws"].(string)
				out, err := getJSON(ctx, client, endpoint, ws)
				return nil, out, err
			})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.RequireBearerToken(verifyJWT, &auth.RequireBearerTokenOptions{Scopes: []string{"bench:read"}})(h))
	return serveOn(*listen, mux)
}

// getJSON is one upstream read, bounded at 8 MiB.
func getJSON(ctx context.Context, client *http.Client, endpoint, workspace string) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+upstreamToken)
	req.Header.Set("X-Workspace-Id", workspace)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("upstream answered %s", resp.Status)
	}
	var out map[string]any
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("upstream answer: %w", err)
	}
	return out, nil
}

var jwtParser = jwt.NewParser(
	jwt.WithValidMethods([]string{"HS256"}),
	jwt.WithIssuer(issuer),
	jwt.WithAudience(audience),
	jwt.WithExpirationRequired(),
	jwt.WithLeeway(30*time.Second),
)

// verifyJWT is the SDK middleware's token check: an HS256 signature with
// the bench secret and the registered claims the gateway's catalog
// demands; the workspace claim rides along for the tool.
func verifyJWT(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	claims := jwt.MapClaims{}
	if _, err := jwtParser.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return []byte(secret), nil }); err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return nil, fmt.Errorf("%w: no expiry", auth.ErrInvalidToken)
	}
	sub, _ := claims.GetSubject()
	ws, _ := claims["ws"].(string)
	scope, _ := claims["scope"].(string)
	if sub == "" || ws == "" {
		return nil, fmt.Errorf("%w: no subject or workspace", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{
		Scopes:     strings.Fields(scope),
		Expiration: exp.Time,
		UserID:     sub,
		Extra:      map[string]any{"ws": ws},
	}, nil
}
