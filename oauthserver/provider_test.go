package oauthserver_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/oauthserver"
)

// The OpenID provider in these tests is a real process: zitadel/oidc's
// example provider, built from the module cache (go.mod lists it as a
// tool) with static users from a file. Dex was tried first: the module
// proxy refuses its current source, and its newest module version is
// from 2018.
var providerBin string

func TestMain(m *testing.M) {
	flag.Parse()
	// Listing and fuzzing run no test that needs the provider.
	if f := flag.Lookup("test.fuzz"); (f != nil && f.Value.String() != "") || flag.Lookup("test.list").Value.String() != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "oidc-provider")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	providerBin = filepath.Join(dir, "provider")
	build := exec.Command("go", "build", "-o", providerBin, "github.com/zitadel/oidc/v3/example/server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example OpenID provider:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// users of the provider: the ID is the subject, and the catalog maps the
// workspace from it (the example provider's ID tokens carry no other
// claim of the person's).
const usersJSON = `{
 "acme":   {"ID": "acme",   "Username": "alice", "Password": "alice-pw", "FirstName": "Alice", "LastName": "A", "Email": "alice@acme.example", "EmailVerified": true, "PreferredLanguage": "en"},
 "globex": {"ID": "globex", "Username": "bob",   "Password": "bob-pw",   "FirstName": "Bob",   "LastName": "B", "Email": "bob@globex.example", "EmailVerified": true, "PreferredLanguage": "en"},
 "Not A Workspace!": {"ID": "Not A Workspace!", "Username": "mallory", "Password": "m-pw", "FirstName": "M", "LastName": "M", "Email": "m@example.com", "EmailVerified": true, "PreferredLanguage": "en"}
}`

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}

// startProvider runs the example provider on a free port, its client
// "web" (secret "secret") allowed to come back to redirect.
func startProvider(t *testing.T, redirect string) string {
	t.Helper()
	users := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(users, []byte(usersJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cmd := exec.Command(providerBin)
	cmd.Env = append(os.Environ(), "PORT="+port, "USERS_FILE="+users, "REDIRECT_URI="+redirect)
	out, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := make(chan string, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		logs <- b.String()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("provider log:\n%s", <-logs)
		}
	})
	issuer := "http://localhost:" + port + "/"
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(issuer + ".well-known/openid-configuration")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return issuer
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the provider did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const catalogTmpl = `version: 1
server: { name: t, public_url: "%s" }
auth:
  principal: { subject: sub, workspace: sub }
  oauth_server:
    provider: { issuer: "%s", client_id: web, client_secret: secret, scopes: [profile, email] }
    access_token_ttl: 5m
    registration: { per_minute: %d }
    client_metadata: { allow_private_addresses: [%s] }
upstreams:
  svc: { base_url: "http://127.0.0.1:9" }
tools:
  - name: read
    description: Read.
    request: { upstream: svc, path: /v1/read }
`

// env is one authorization server in front of one provider process.
type env struct {
	t        *testing.T
	cat      *catalog.Catalog
	srv      *oauthserver.Server
	store    *oauthserver.FileStore
	url      string // the gateway's origin and the issuer
	resource string
}

func newEnv(t *testing.T, registrationsPerMinute int, allowPrivate string) *env {
	t.Helper()
	return newEnvWith(t, registrationsPerMinute, allowPrivate, nil, nil)
}

// newEnvWith is newEnv with a clock for the server and its store, and a
// change to the catalog's text.
func newEnvWith(t *testing.T, registrationsPerMinute int, allowPrivate string, now func() time.Time, edit func(string) string) *env {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	issuer := startProvider(t, base+"/oauth/callback")
	src := fmt.Sprintf(catalogTmpl, base, issuer, registrationsPerMinute, allowPrivate)
	if edit != nil {
		src = edit(src)
	}
	cat, err := catalog.Parse("catalog.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := oauthserver.OpenFileStore("")
	if now != nil {
		store.SetNow(now)
	}
	s, err := oauthserver.New(cat, &oauthserver.Options{Store: store, Now: now, Keys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = s
	hs.Start()
	t.Cleanup(hs.Close)
	return &env{t: t, cat: cat, srv: s, store: store, url: base, resource: base + "/mcp"}
}

// replica is another authorization server of e's catalog and store,
// counting its limits with limits: a second replica of a fleet, or the
// server a reload makes. It answers at the URL it returns.
func (e *env) replica(limits *fleet.Limiter) string {
	e.t.Helper()
	s, err := oauthserver.New(e.cat, &oauthserver.Options{Store: e.store, Keys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}, Limits: limits})
	if err != nil {
		e.t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	e.t.Cleanup(hs.Close)
	return hs.URL
}

// browser is a person's browser: cookies, and no redirect followed on its
// own, so each hop can be checked.
type browser struct {
	c       *http.Client
	visited []string // every URL asked, in order
}

func newBrowser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(t *testing.T, method, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	b.visited = append(b.visited, u)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func location(t *testing.T, resp *http.Response, base string) string {
	t.Helper()
	loc := resp.Header.Get("Location")
	if loc == "" {
		t.Fatalf("status %d without a Location", resp.StatusCode)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	l, err := u.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return l.String()
}

var hiddenRe = regexp.MustCompile(`name="(id|csrf)" value="([^"]*)"`)

func hidden(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRe.FindAllStringSubmatch(page, -1) {
		v.Set(m[1], htmlUnescape(m[2]))
	}
	return v
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#43;", "+", "&#61;", "=", "&amp;", "&", "&#34;", `"`, "&#39;", "'").Replace(s)
}

// client is an MCP client's side of the flow.
type client struct {
	id, redirect string
	verifier     string
}

func (c *client) challenge() string {
	s := sha256.Sum256([]byte(c.verifier))
	return base64.RawURLEncoding.EncodeToString(s[:])
}

func (e *env) register(t *testing.T, redirect string) *client {
	t.Helper()
	resp, body := postJSON(t, e.url+"/oauth/register", fmt.Sprintf(`{"client_name":"Test client","redirect_uris":[%q]}`, redirect))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %s", resp.StatusCode, body)
	}
	var out struct {
		ClientID string `json:"client_id"`
	}
	json.Unmarshal([]byte(body), &out)
	return &client{id: out.ClientID, redirect: redirect, verifier: strings.Repeat("v", 20) + out.ClientID}
}

func postJSON(t *testing.T, u, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (e *env) authorizeURL(c *client, extra url.Values) string {
	q := url.Values{"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {c.redirect},
		"code_challenge": {c.challenge()}, "code_challenge_method": {"S256"}, "state": {"st-1"}, "resource": {e.resource}}
	for k, v := range extra {
		if v == nil {
			q.Del(k)
		} else {
			q[k] = v
		}
	}
	return e.url + "/oauth/authorize?" + q.Encode()
}

// signIn runs the browser through consent and the provider's sign-in as
// username and returns the query the client's redirect URI receives.
func (e *env) signIn(t *testing.T, b *browser, authorize, username, password string) url.Values {
	t.Helper()
	resp, _ := b.do(t, "GET", authorize, nil)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d", resp.StatusCode)
	}
	consent := location(t, resp, e.url)
	resp, page := b.do(t, "GET", consent, nil)
	if resp.StatusCode != 200 || !strings.Contains(page, "wants to call the tools of") {
		t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("the consent page can be framed")
	}
	form := hidden(page)
	form.Set("decision", "allow")
	resp, _ = b.do(t, "POST", e.url+"/oauth/login", form)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("consent: %d", resp.StatusCode)
	}
	next := location(t, resp, e.url)
	// At the provider: its authorize endpoint sends the browser to its
	// login page, whose form carries the request's id.
	for range 5 {
		resp, page = b.do(t, "GET", next, nil)
		if resp.StatusCode == 200 {
			break
		}
		next = location(t, resp, next)
	}
	form = hidden(page)
	form.Set("username", username)
	form.Set("password", password)
	u, _ := url.Parse(next)
	resp, _ = b.do(t, "POST", u.Scheme+"://"+u.Host+"/login/username", form)
	next = location(t, resp, next)
	for range 6 {
		if strings.HasPrefix(next, e.url+"/") && !strings.HasPrefix(next, e.url+"/oauth/") {
			break
		}
		if !strings.HasPrefix(next, "http://localhost") && !strings.HasPrefix(next, e.url) {
			break
		}
		resp, page = b.do(t, "GET", next, nil)
		if resp.StatusCode/100 != 3 {
			t.Fatalf("GET %s: %d %s", next, resp.StatusCode, page)
		}
		next = location(t, resp, next)
	}
	if !strings.HasPrefix(next, strings.SplitN(authorizeRedirect(authorize), "?", 2)[0]) {
		t.Fatalf("the browser ended at %s, not at the client's redirect URI", next)
	}
	r, _ := url.Parse(next)
	return r.Query()
}

func authorizeRedirect(authorize string) string {
	u, _ := url.Parse(authorize)
	return u.Query().Get("redirect_uri")
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
	status       int
}

func (e *env) token(t *testing.T, form url.Values) tokenResponse {
	t.Helper()
	resp, err := http.PostForm(e.url+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out tokenResponse
	json.NewDecoder(resp.Body).Decode(&out)
	out.status = resp.StatusCode
	return out
}

// signedIn signs alice in through c and exchanges the code: c's first
// tokens.
func (e *env) signedIn(t *testing.T, c *client) tokenResponse {
	t.Helper()
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
	return e.exchange(t, c, q.Get("code"))
}

// clockedEnv is newEnvWith whose clock runs ahead of the real one by what
// the returned skew holds (nanoseconds).
func clockedEnv(t *testing.T, edit func(string) string) (*env, *atomic.Int64) {
	t.Helper()
	skew := new(atomic.Int64)
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	return newEnvWith(t, 10, loopback, now, edit), skew
}

func (e *env) exchange(t *testing.T, c *client, code string) tokenResponse {
	t.Helper()
	return e.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.redirect},
		"client_id": {c.id}, "code_verifier": {c.verifier}, "resource": {e.resource}})
}

func (e *env) refresh(t *testing.T, c *client, rt string) tokenResponse {
	t.Helper()
	return e.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.id}})
}

func (e *env) verify(t *testing.T, tok string) (*authz.Principal, error) {
	t.Helper()
	return e.srv.Verifier().Verify(context.Background(), tok)
}
