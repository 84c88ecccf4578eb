package test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpgw/gateway/test/redistest"
)

// The gateway as its MCP clients' authorization server, with sign-in at a
// real OpenID provider process: zitadel/oidc's example provider, built
// from the module cache (go.mod lists it as a tool), with static users.
// Dex was tried first; the module proxy refuses its current source and
// its newest module version is from 2018.

var (
	providerOnce sync.Once
	providerPath string
	providerErr  error
)

func providerBinary(t *testing.T) string {
	t.Helper()
	providerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "oidc-provider")
		if err != nil {
			providerErr = err
			return
		}
		providerPath = filepath.Join(dir, "provider")
		out, err := exec.Command("go", "build", "-o", providerPath, "github.com/zitadel/oidc/v3/example/server").CombinedOutput()
		if err != nil {
			providerErr = fmt.Errorf("building the example OpenID provider: %v\n%s", err, out)
		}
	})
	if providerErr != nil {
		t.Fatal(providerErr)
	}
	return providerPath
}

// The provider's people. Its ID tokens carry no claim of the person's
// but the subject, so the catalog maps the workspace from the subject.
const providerUsers = `{
 "acme":   {"ID": "acme",   "Username": "alice", "Password": "alice-pw", "FirstName": "Alice", "LastName": "A", "Email": "alice@acme.example", "EmailVerified": true, "PreferredLanguage": "en"},
 "globex": {"ID": "globex", "Username": "bob",   "Password": "bob-pw",   "FirstName": "Bob",   "LastName": "B", "Email": "bob@globex.example", "EmailVerified": true, "PreferredLanguage": "en"}
}`

// startProvider runs the provider on a free port; its client "web"
// (secret "secret") may come back to redirect. It returns the issuer.
func startProvider(t *testing.T, redirect string) string {
	t.Helper()
	bin := providerBinary(t)
	users := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(users, []byte(providerUsers), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(freeAddr(t))
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PORT="+port, "USERS_FILE="+users, "REDIRECT_URI="+redirect)
	out, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			logs.Write([]byte(sc.Text() + "\n"))
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("provider log:\n%.4000s", logs.String())
		}
	})
	issuer := "http://localhost:" + port + "/"
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(issuer + ".well-known/openid-configuration")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return issuer
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the OpenID provider did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// oauthCatalog is the bundled catalog with the gateway as the
// authorization server (beside its HMAC tokens), the workspace mapped
// from the subject, and no view gate (the provider's ID tokens carry no
// scopes, so people get the read-only surface).
func oauthCatalog(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "\nserver:\n", "\nserver:\n  public_url: ${GATEWAY_PUBLIC_URL}\n", 1)
	s = strings.Replace(s, "\nauth:\n", "\nauth:\n  oauth_server:\n    provider: { issuer: \"${OIDC_ISSUER}\", client_id: web, client_secret: secret }\n"+
		"    client_metadata: { allow_private_addresses: [\"127.0.0.0/8\"] }\n", 1)
	s = strings.Replace(s, "    workspace: ws\n", "    workspace: sub\n", 1)
	s = strings.Replace(s, "  view:      { scopes: [jobs:read] }\n", "", 1)
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// oauthGateway is a gateway binary serving oauthCatalog in front of the
// demo upstream and a provider process.
func oauthGateway(t *testing.T, env ...string) (*gateway, string) {
	t.Helper()
	addr := freeAddr(t)
	public := "http://" + addr
	issuer := startProvider(t, public+"/oauth/callback")
	up := startUpstream(t)
	g := launch(t, launchConfig{upstreamURL: up.URL, catalog: oauthCatalog(t), args: []string{"--listen", addr},
		env: append([]string{approvalKeys(), "GATEWAY_PUBLIC_URL=" + public, "OIDC_ISSUER=" + issuer}, env...)})
	return g, public
}

// signInBrowser is a person's browser without a rendering engine: it
// keeps cookies, follows each redirect itself, and fills in the consent
// and the provider's login form.
type signInBrowser struct{ c *http.Client }

func newSignInBrowser() *signInBrowser {
	jar, _ := cookiejar.New(nil)
	return &signInBrowser{&http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var formField = regexp.MustCompile(`name="(id|csrf)" value="([^"]*)"`)

// signIn follows authorize through consent and the provider's login as
// user and returns the URL the browser is finally sent to (the client's
// redirect URI with the code).
func (b *signInBrowser) signIn(t *testing.T, authorize, user, password string) *url.URL {
	t.Helper()
	next, _ := url.Parse(authorize)
	var form url.Values
	for range 20 {
		var resp *http.Response
		var err error
		if form != nil {
			resp, err = b.c.PostForm(next.String(), form)
			form = nil
		} else {
			resp, err = b.c.Get(next.String())
		}
		if err != nil {
			// The client's redirect URI: nobody listens there in this test.
			if strings.Contains(err.Error(), "connection refused") {
				return next
			}
			t.Fatalf("GET %s: %v", next, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode/100 == 3:
			loc, _ := next.Parse(resp.Header.Get("Location"))
			next = loc
		case resp.StatusCode == http.StatusOK && strings.Contains(string(body), `name="decision"`):
			form = url.Values{"decision": {"allow"}}
			for _, m := range formField.FindAllStringSubmatch(string(body), -1) {
				form.Set(m[1], m[2])
			}
			next, _ = next.Parse("/oauth/login")
		case resp.StatusCode == http.StatusOK && strings.Contains(string(body), `name="password"`):
			form = url.Values{"username": {user}, "password": {password}}
			for _, m := range formField.FindAllStringSubmatch(string(body), -1) {
				form.Set(m[1], m[2])
			}
			next, _ = next.Parse("/login/username")
		default:
			t.Fatalf("%s answered %d: %.500s", next, resp.StatusCode, body)
		}
		if next.Host == "127.0.0.1:1" {
			return next
		}
	}
	t.Fatalf("the sign-in did not end")
	return nil
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

type issuedTokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Error        string `json:"error"`
}

func postForm(t *testing.T, u string, form url.Values) (int, issuedTokens) {
	t.Helper()
	resp, err := http.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out issuedTokens
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestAnMCPClientWithoutATokenSignsInAtTheCompanysProvider walks what an
// MCP client does against the built gateway, with the Go SDK for the MCP
// calls: no token gets a 401 pointing at the resource metadata, which
// points at the gateway's authorization server; the client registers,
// the person signs in at the provider, and the token the gateway issues
// lists and calls the tools of that person's workspace only; it
// refreshes, and after revocation it is refused.
func TestAnMCPClientWithoutATokenSignsInAtTheCompanysProvider(t *testing.T) {
	g, public := oauthGateway(t)

	resp, _ := post(t, g.MCP, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	challenge := resp.Header.Get("WWW-Authenticate")
	m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(challenge)
	if resp.StatusCode != http.StatusUnauthorized || m == nil {
		t.Fatalf("no token: %d %q, want 401 with resource_metadata", resp.StatusCode, challenge)
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, m[1], &prm)
	if prm.Resource != g.MCP || len(prm.AuthorizationServers) == 0 || prm.AuthorizationServers[0] != public {
		t.Fatalf("protected resource metadata %+v, want resource %s served by %s", prm, g.MCP, public)
	}
	var as map[string]any
	getJSON(t, public+"/.well-known/oauth-authorization-server", &as)
	reg, _ := as["registration_endpoint"].(string)
	if as["issuer"] != public || reg == "" || fmt.Sprint(as["code_challenge_methods_supported"]) != "[S256]" {
		t.Fatalf("authorization server metadata %v", as)
	}

	redirect := "http://127.0.0.1:1/callback"
	rresp, err := http.Post(reg, "application/json", strings.NewReader(`{"client_name":"Go test","redirect_uris":["`+redirect+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var client struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(rresp.Body).Decode(&client)
	rresp.Body.Close()

	signIn := func(user, pw string) issuedTokens {
		t.Helper()
		verifier := strings.Repeat("k", 30) + user
		sum := sha256.Sum256([]byte(verifier))
		q := url.Values{"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {redirect}, "state": {"s"},
			"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {prm.Resource}}
		end := newSignInBrowser().signIn(t, as["authorization_endpoint"].(string)+"?"+q.Encode(), user, pw)
		code := end.Query().Get("code")
		if code == "" {
			t.Fatalf("%s: sign-in ended at %s without a code", user, end)
		}
		status, tok := postForm(t, as["token_endpoint"].(string), url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {redirect}, "client_id": {client.ClientID}, "code_verifier": {verifier}, "resource": {prm.Resource}})
		if status != http.StatusOK || tok.AccessToken == "" {
			t.Fatalf("%s: token endpoint %d %+v", user, status, tok)
		}
		return tok
	}
	tools := func(tok string) []string {
		t.Helper()
		cs := sdkClient(t, g.MCP, tok, nil, nil, false)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names
	}

	alice := signIn("alice", "alice-pw")
	if names := tools(alice.AccessToken); !slices.Contains(names, "knowledge_search") || slices.Contains(names, "cancel_workflow") {
		t.Errorf("alice (acme) sees %v, want the reads with acme's knowledge_search and no writes", names)
	}
	cs := sdkClient(t, g.MCP, alice.AccessToken, nil, nil, false)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_queues", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("alice calls list_queues: %v %+v", err, res)
	}
	if b, _ := json.Marshal(res.StructuredContent); strings.Contains(string(b), "globex") {
		t.Errorf("alice's call answered another workspace's data: %s", b)
	}
	bob := signIn("bob", "bob-pw")
	if names := tools(bob.AccessToken); slices.Contains(names, "knowledge_search") || len(names) == 0 {
		t.Errorf("bob (globex) sees %v, want the reads without acme's knowledge_search", names)
	}

	status, refreshed := postForm(t, as["token_endpoint"].(string), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {alice.RefreshToken}, "client_id": {client.ClientID}})
	if status != http.StatusOK || refreshed.AccessToken == "" || refreshed.RefreshToken == alice.RefreshToken {
		t.Fatalf("refresh: %d %+v", status, refreshed)
	}
	if names := tools(refreshed.AccessToken); !slices.Contains(names, "knowledge_search") {
		t.Errorf("the refreshed token sees %v", names)
	}
	if status, _ := postForm(t, as["revocation_endpoint"].(string), url.Values{"token": {refreshed.RefreshToken}, "client_id": {client.ClientID}}); status != http.StatusOK {
		t.Fatalf("revoke: %d", status)
	}
	resp, _ = post(t, g.MCP, refreshed.AccessToken, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after revocation the access token gets %d, want 401", resp.StatusCode)
	}
	// The catalog's own tokens still work beside the issued ones.
	if names := tools(token(t, "operator", "acme", operatorScopes...)); !slices.Contains(names, "cancel_workflow") {
		t.Errorf("an HMAC operator token sees %v beside the authorization server", names)
	}
}

// TestClaudeCodeSeesTheGatewayNeedsSignIn adds the gateway to Claude Code
// (pinned in test/ts) with no header, as a person would: its health
// check meets the 401, follows the metadata to the gateway's
// authorization server, and `claude mcp list` reports the server as
// needing authentication, not as failed.
func TestClaudeCodeSeesTheGatewayNeedsSignIn(t *testing.T) {
	claude, _ := filepath.Abs("ts/node_modules/.bin/claude")
	if _, err := os.Stat(claude); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Claude Code is not installed in test/ts (run npm ci there): %v", err)
		}
		t.Skip("test/ts/node_modules missing; run `npm ci --prefix test/ts`")
	}
	g, _ := oauthGateway(t)
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, args...)
		cmd.Dir = home
		cmd.Env = append(os.Environ(), "HOME="+home, "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args[:2], " "), err, out)
		}
		return string(out)
	}
	run("mcp", "add", "--transport", "http", "gateway", g.MCP)
	out := run("mcp", "list")
	t.Logf("claude mcp list:\n%s", out)
	if !strings.Contains(out, "gateway: "+g.MCP) || !strings.Contains(strings.ToLower(out), "needs authentication") || strings.Contains(out, "Failed") {
		t.Fatalf("claude mcp list:\n%s", out)
	}
	// Claude Code found the authorization server through the gateway's
	// metadata (its check reads the resource metadata after the 401).
	fetched := `"surface":"metadata"`
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(g.stderr.String(), fetched) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(g.stderr.String(), fetched) {
		t.Errorf("Claude Code never read the protected resource metadata; gateway log:\n%.3000s", g.stderr.String())
	}
}

// TestGoSDKClientSignsInAtTheProvider: the Go SDK's own OAuth client
// (auth.AuthorizationCodeHandler on the Streamable transport), with no
// token, discovers the gateway's authorization server from the 401,
// registers dynamically, has the person sign in at the provider, and
// lists the person's workspace's tools.
func TestGoSDKClientSignsInAtTheProvider(t *testing.T) {
	g, _ := oauthGateway(t)
	redirect := "http://127.0.0.1:1/callback"
	asked := 0
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code", "refresh_token"},
			ClientName: "Go SDK test",
		}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			asked++
			end := newSignInBrowser().signIn(t, args.URL, "alice", "alice-pw")
			q := end.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "go-oauth", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.MCP, OAuthHandler: h, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Connect with the Go SDK's OAuth handler: %v", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if asked != 1 || !slices.Contains(names, "knowledge_search") {
		t.Errorf("signed in %d times; alice (acme) sees %v", asked, names)
	}
}

// Two replicas behind one public URL, counting their limits in one Redis,
// register registration.per_minute clients between them, not each: a
// client that spreads its registrations over the fleet gains nothing.
func TestReplicasShareTheRegistrationLimit(t *testing.T) {
	redis := redistest.Start(t)
	addr := freeAddr(t)
	public := "http://" + addr
	issuer := startProvider(t, public+"/oauth/callback")
	up := startUpstream(t)
	cat := oauthCatalog(t)
	env := []string{approvalKeys(), "GATEWAY_PUBLIC_URL=" + public, "OIDC_ISSUER=" + issuer,
		"GATEWAY_STATE_STORE=" + redis, "GATEWAY_OAUTH_STORE=" + redis}
	replicas := []*gateway{
		launch(t, launchConfig{upstreamURL: up.URL, catalog: cat, args: []string{"--listen", addr}, env: env}),
		launch(t, launchConfig{upstreamURL: up.URL, catalog: cat, env: env}),
	}
	var as struct {
		Registration string `json:"registration_endpoint"`
	}
	getJSON(t, public+"/.well-known/oauth-authorization-server", &as)
	ep, err := url.Parse(as.Registration)
	if err != nil || ep.Path == "" {
		t.Fatalf("registration_endpoint %q", as.Registration)
	}
	var codes []int
	for i := range 12 { // the bundled catalog's per_minute is 10
		resp, err := http.Post(replicas[i%2].URL+ep.Path, "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:1/cb"]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	want := "[201 201 201 201 201 201 201 201 201 201 429 429]"
	if fmt.Sprint(codes) != want {
		t.Errorf("12 registrations alternating between 2 replicas: %v, want %s", codes, want)
	}
}
