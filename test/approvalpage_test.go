package test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The approval page driven in headless Chromium against a real
// OpenID provider the test runs: discovery, JWKS, an authorize endpoint
// with a sign-in form, a token endpoint that checks PKCE and signs RS256
// ID tokens.

// oidcUser is one person the provider signs in: the claims their ID
// token carries (mapped by the catalog's auth.principal: sub, ws, scope,
// email).
type oidcUser struct {
	ws    string
	scope string
}

type oidcProvider struct {
	*httptest.Server
	t        *testing.T
	key      *rsa.PrivateKey
	clientID string
	secret   string
	redirect string
	users    map[string]oidcUser

	mu    sync.Mutex
	codes map[string]oidcCode
}

type oidcCode struct {
	user, challenge, nonce, redirect string
}

var loginForm = template.Must(template.New("login").Parse(`<!doctype html><html><body><h1>Test provider sign-in</h1>
<form method="post" action="/authorize">{{range $k, $v := .}}<input type="hidden" name="{{$k}}" value="{{$v}}">{{end}}
<input id="user" name="user"><button id="signin">Sign in</button></form></body></html>`))

func startOIDCProvider(t *testing.T, redirect string, users map[string]oidcUser) *oidcProvider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &oidcProvider{t: t, key: key, clientID: "gateway-approvals", secret: "provider-secret", redirect: redirect, users: users, codes: map[string]oidcCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
			"jwks_uri": p.URL + "/jwks", "response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		b64 := base64.RawURLEncoding.EncodeToString
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case q.Get("client_id") != p.clientID, q.Get("redirect_uri") != p.redirect, q.Get("response_type") != "code",
			q.Get("code_challenge_method") != "S256", q.Get("code_challenge") == "", q.Get("nonce") == "", q.Get("state") == "",
			!strings.Contains(" "+q.Get("scope")+" ", " openid "):
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		fields := map[string]string{}
		for _, k := range []string{"redirect_uri", "state", "nonce", "code_challenge"} {
			fields[k] = q.Get(k)
		}
		w.Header().Set("Content-Type", "text/html")
		loginForm.Execute(w, fields)
	})
	mux.HandleFunc("POST /authorize", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		user := r.PostForm.Get("user")
		if _, ok := p.users[user]; !ok {
			http.Error(w, "unknown user "+user, http.StatusForbidden)
			return
		}
		code := rand.Text()
		p.mu.Lock()
		p.codes[code] = oidcCode{user: user, challenge: r.PostForm.Get("code_challenge"), nonce: r.PostForm.Get("nonce"), redirect: r.PostForm.Get("redirect_uri")}
		p.mu.Unlock()
		http.Redirect(w, r, r.PostForm.Get("redirect_uri")+"?"+url.Values{"code": {code}, "state": {r.PostForm.Get("state")}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		p.mu.Lock()
		c, found := p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code")) // a code is used once
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case id != p.clientID || secret != p.secret:
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		case r.PostForm.Get("grant_type") != "authorization_code" || !found || c.redirect != r.PostForm.Get("redirect_uri"):
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			http.Error(w, `{"error":"invalid_grant","error_description":"PKCE verifier does not match"}`, http.StatusBadRequest)
			return
		}
		u := p.users[c.user]
		now := time.Now()
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
			"iss": p.URL, "sub": c.user, "aud": p.clientID, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
			"nonce": c.nonce, "ws": u.ws, "scope": u.scope, "email": c.user + "@example.com",
		})
		tok.Header["kid"] = "k1"
		signed, err := tok.SignedString(key)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 300, "id_token": signed})
	})
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	return p
}

// freeAddr returns a loopback address nobody listens on (the gateway's
// public_url must be known before it starts).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// pageCatalog is the bundled catalog with a public_url and an
// approval_page naming the test's provider.
func pageCatalog(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "\nserver:\n", "\nserver:\n  public_url: ${GATEWAY_PUBLIC_URL}\n", 1)
	s += "\napproval_page:\n  issuer: ${OIDC_ISSUER}\n  client_id: gateway-approvals\n  client_secret: ${OIDC_CLIENT_SECRET}\n  scopes: [profile, email]\n"
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// browser starts headless Chromium (Debian's chromium, which
// scripts/test.sh installs).
func browser(t *testing.T) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (scripts/test.sh installs it): %v", err)
		}
		t.Skip("chromium is not installed")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Headless,
		chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel3)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// signInAndOpen clears the browser's cookies, opens page (which sends the
// browser to the provider), signs in as user and waits for selector on
// the page the gateway answers after the sign-in.
func signInAndOpen(t *testing.T, ctx context.Context, page, user, selector string) {
	t.Helper()
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatalf("clear cookies: %v", err)
	}
	step, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := chromedp.Do(step,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#user")),
		chromedp.SendKeys(chromedp.CSS("#user"), user),
		chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS(selector)),
	)
	if err != nil {
		t.Fatalf("sign in as %s and open %s: %v", user, page, err)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(step, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func TestApprovalPageSignsInWithOpenIDAndReleasesTheCall(t *testing.T) {
	ctx := browser(t)
	addr := freeAddr(t)
	public := "http://" + addr
	idp := startOIDCProvider(t, public+"/admin/mcp/approvals/signin/callback", map[string]oidcUser{
		"approver":  {ws: "acme", scope: strings.Join(approverScopes, " ")},
		"approver2": {ws: "globex", scope: strings.Join(approverScopes, " ")},
		"operator":  {ws: "acme", scope: strings.Join(append(operatorScopes, "workflows:approve"), " ")},
	})
	up := startUpstream(t)
	g := launch(t, launchConfig{upstreamURL: up.URL, catalog: pageCatalog(t), args: []string{"--listen", addr},
		env: []string{approvalKeys(), "GATEWAY_PUBLIC_URL=" + public, "OIDC_ISSUER=" + idp.URL, "OIDC_CLIENT_SECRET=" + idp.secret}})

	// The agent asks; its arguments carry markup the page must show as text.
	op := token(t, "operator", "acme", operatorScopes...)
	cs := sdkClient(t, g.MCP, op, nil, nil, false)
	args := map[string]any{"workflow_id": "wf-acme-0011", "reason": `<b id="injected">now</b> & "quoted"`}
	id := fourEyesRequest(t, cs, args)
	page := public + "/admin/mcp/approvals/" + id

	t.Run("an-approver-of-another-workspace-cannot-see-it", func(t *testing.T) {
		signInAndOpen(t, ctx, page, "approver2", "#error")
		if got := text(t, ctx, "#me"); !strings.Contains(got, "approver2") || !strings.Contains(got, "globex") {
			t.Errorf("signed in as %q, want approver2 in globex", got)
		}
		if got := text(t, ctx, "#error"); !strings.Contains(got, "no approval "+id+" in your workspace") {
			t.Errorf("another workspace sees %q", got)
		}
		n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#call, #approve").length`))
		if n != 0 {
			t.Errorf("another workspace's page shows the call (%d elements)", n)
		}
	})

	t.Run("the-requester-cannot-approve-their-own", func(t *testing.T) {
		signInAndOpen(t, ctx, page, "operator", "#approve")
		if got := text(t, ctx, "#self"); !strings.Contains(got, "someone else must decide") {
			t.Errorf("requester's page says %q", got)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#error"))); err != nil {
			t.Fatal(err)
		}
		if got := text(t, ctx, "#error"); !strings.Contains(got, "someone else must decide") {
			t.Errorf("self-approval answered %q", got)
		}
	})

	t.Run("the-approver-sees-the-call-as-the-agent-made-it", func(t *testing.T) {
		signInAndOpen(t, ctx, page, "approver", "#approve")
		for sel, want := range map[string]string{"#tool": "cancel_workflow", "#workspace": "acme", "#requester": "operator", "#status": "pending"} {
			if got := text(t, ctx, sel); !strings.Contains(got, want) {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		argsText := text(t, ctx, "#arguments")
		for _, want := range []string{`"workflow_id": "wf-acme-0011"`, `\u003cb id=\"injected\"\u003enow\u003c/b\u003e \u0026 \"quoted\"`} {
			if !strings.Contains(argsText, want) {
				t.Errorf("arguments shown as %q, want %s", argsText, want)
			}
		}
		injected, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#injected").length`))
		if injected != 0 {
			t.Errorf("the arguments' markup became part of the page")
		}
		if got := text(t, ctx, "#expires"); got == "" {
			t.Error("no expiry shown")
		}
	})

	t.Run("hostile-arguments-are-shown-as-they-are", func(t *testing.T) {
		// A bidi override would draw the IBAN reversed; 3000 spaces would
		// push the tail of the value out of the window.
		hostile := map[string]any{"workflow_id": "DE89\u202e0001\u202c\u200b" + strings.Repeat(" ", 3000) + "; ALSO: drop production database", "reason": "x"}
		hid := fourEyesRequest(t, cs, hostile)
		step, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err := chromedp.Do(step, chromedp.Navigate(public+"/admin/mcp/approvals/"+hid), chromedp.WaitVisible(chromedp.CSS("#arguments")))
		if err != nil {
			t.Fatal(err)
		}
		shot, err := chromedp.Run(step, chromedp.FullScreenshot(90))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "hostile-arguments.png")
		if err := os.WriteFile(path, shot, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
		inner, err := chromedp.Run(step, chromedp.Evaluate[string](`document.querySelector("#arguments").innerText`))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"DE89⟨U+202E⟩0001⟨U+202C⟩⟨U+200B⟩␠×3000; ALSO: drop production database"} {
			if !strings.Contains(inner, want) {
				t.Errorf("the page shows the arguments as %q, want %q in them", inner, want)
			}
		}
		if strings.ContainsAny(inner, "\u202e\u202c\u200b") {
			t.Errorf("the page applies hidden characters instead of showing them: %q", inner)
		}
		// The REST API answers the same value with the hidden characters
		// escaped, and the page's text beside it.
		req, _ := http.NewRequest("GET", g.URL+"/admin/mcp/approvals/"+hid, nil)
		req.Header.Set("Authorization", "Bearer "+token(t, "approver", "acme", approverScopes...))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got struct {
			Arguments      map[string]string `json:"arguments"`
			ArgumentsShown string            `json:"arguments_shown"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || resp.StatusCode != 200 {
			t.Fatalf("REST GET %s: %d %s", hid, resp.StatusCode, raw)
		}
		if strings.ContainsAny(string(raw), "\u202e\u202c\u200b") || !strings.Contains(string(raw), `DE89\u202e0001\u202c\u200b`) {
			t.Errorf("REST answers hidden characters unescaped: %.200s", raw)
		}
		if got.Arguments["workflow_id"] != hostile["workflow_id"] {
			t.Errorf("REST arguments.workflow_id = %q, want the value as sent", got.Arguments["workflow_id"])
		}
		if !strings.Contains(got.ArgumentsShown, "DE89⟨U+202E⟩0001⟨U+202C⟩⟨U+200B⟩␠×3000; ALSO: drop production database") {
			t.Errorf("REST arguments_shown = %q", got.ArgumentsShown)
		}
		// The tail is on screen: its box lies inside the viewport once
		// the arguments are scrolled into view.
		visible, err := chromedp.Run(step, chromedp.Evaluate[bool](`(() => {
			const pre = document.querySelector("#arguments");
			pre.scrollIntoView({block: "start"});
			const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
			for (let n = walker.nextNode(); n; n = walker.nextNode()) {
				const i = n.data.indexOf("drop production database");
				if (i < 0) continue;
				const r = document.createRange();
				r.setStart(n, i); r.setEnd(n, i + "drop production database".length);
				const b = r.getBoundingClientRect();
				return b.width > 0 && b.left >= 0 && b.top >= 0 && b.right <= window.innerWidth && b.bottom <= window.innerHeight;
			}
			return false;
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if !visible {
			t.Errorf("\"drop production database\" is not within the viewport (screenshot %s)", path)
		}
	})

	t.Run("a-forged-post-without-the-csrf-token-is-refused", func(t *testing.T) {
		// From the page itself: a form without the token.
		err := chromedp.Do(ctx,
			evaluateVoid(fmt.Sprintf(`(() => { const f = document.createElement("form"); f.method = "post"; f.action = %q;
				const d = document.createElement("input"); d.name = "decision"; d.value = "approve"; f.appendChild(d);
				document.body.appendChild(f); f.submit(); return true })()`, "/admin/mcp/approvals/"+id+"/decide")),
			chromedp.WaitVisible(chromedp.CSS("#error")))
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, ctx, "#error"); !strings.Contains(got, "CSRF token is missing") {
			t.Errorf("forged form answered %q", got)
		}
		// From outside, with the approver's session cookie but a wrong token.
		got, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{page}})
		if err != nil {
			t.Fatal(err)
		}
		var session string
		for _, c := range got.Cookies {
			if c.Name == "mcpgw_approval_session" {
				session = c.Value
				if !c.HTTPOnly || c.SameSite != network.CookieSameSiteLax {
					t.Errorf("session cookie HttpOnly %v SameSite %v, want HttpOnly and Lax", c.HTTPOnly, c.SameSite)
				}
			}
		}
		if session == "" {
			t.Fatalf("no session cookie among %v", got.Cookies)
		}
		for name, form := range map[string]url.Values{"no-token": {"decision": {"approve"}}, "wrong-token": {"decision": {"approve"}, "csrf": {"0123456789abcdef0123456789abcdef"}}} {
			req, _ := http.NewRequest("POST", page+"/decide", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: "mcpgw_approval_session", Value: session})
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: %d, want 403", name, resp.StatusCode)
			}
		}
		if code, body, _ := rest(t, "GET", g.URL+"/admin/mcp/approvals/"+id, token(t, "approver", "acme", approverScopes...)); code != 200 || body["status"] != "pending" {
			t.Errorf("after forged posts: %d %v, want still pending", code, body)
		}
		if n := len(sent(up, "/v1/workflows/wf-acme-0011/cancel")); n != 0 {
			t.Errorf("upstream saw %d cancels before approval", n)
		}
	})

	t.Run("approve-then-the-requesters-retry-runs-once", func(t *testing.T) {
		err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#approve")),
			chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#notice")))
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, ctx, "#status"); !strings.Contains(got, "approved by approver") {
			t.Errorf("after approving, status %q", got)
		}
		res, out := callText(t, cs, &mcp.CallToolParams{Name: "cancel_workflow", Arguments: args})
		if res.IsError {
			t.Fatalf("the requester's retry after approval: %q", out)
		}
		if n := len(sent(up, "/v1/workflows/wf-acme-0011/cancel")); n != 1 {
			t.Errorf("upstream saw %d cancels, want 1", n)
		}
		if !g.logHas(regexp.MustCompile(`"stage":"approved"`), regexp.MustCompile(`"approver":"approver"`)) {
			t.Errorf("the audit trail does not name the page's approver")
		}
	})

	t.Run("a-client-that-opens-urls-is-offered-the-page", func(t *testing.T) {
		var got []*mcp.ElicitParams
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e-url", Version: "1.0.0"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				got = append(got, req.Params)
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		})
		ucs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: g.MCP, HTTPClient: httpClient(op), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ucs.Close()
		uargs := map[string]any{"workflow_id": "wf-acme-0012", "reason": "e2e"}
		res, out := callText(t, ucs, &mcp.CallToolParams{Name: "cancel_workflow", Arguments: uargs})
		id := approvalID.FindString(out)
		if len(got) != 1 || got[0].Mode != "url" || id == "" || got[0].ElicitationID != id || got[0].URL != public+"/admin/mcp/approvals/"+id {
			t.Fatalf("url elicitations %+v for approval %q, want one of %s", got, id, public+"/admin/mcp/approvals/"+id)
		}
		// The retry the SDK made after the user accepted still waits: the
		// store, not the answer, decides.
		if !res.IsError || !strings.Contains(out, "awaits approval") {
			t.Fatalf("after the url elicitation: isError %v %q, want awaits approval", res.IsError, out)
		}
		// The approver, still signed in, opens the offered URL and approves.
		err = chromedp.Do(ctx, chromedp.Navigate(got[0].URL), chromedp.WaitVisible(chromedp.CSS("#approve")),
			chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#notice")))
		if err != nil {
			t.Fatal(err)
		}
		if res, out := callText(t, ucs, &mcp.CallToolParams{Name: "cancel_workflow", Arguments: uargs}); res.IsError {
			t.Fatalf("retry after approval through the offered page: %q", out)
		}
		if n := len(sent(up, "/v1/workflows/wf-acme-0012/cancel")); n != 1 {
			t.Errorf("upstream saw %d cancels, want 1", n)
		}
		if len(got) != 1 {
			t.Errorf("the approved retry elicited again: %+v", got[1:])
		}
	})
}

// evaluateVoid runs a script in the page for its effect.
func evaluateVoid(js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[bool](js)(ctx, t)
		return chromedp.Void{}, err
	}
}
