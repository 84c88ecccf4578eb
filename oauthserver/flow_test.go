package oauthserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/oauthserver"
	"github.com/mcpgw/gateway/test/redistest"
)

const loopback = `"127.0.0.0/8", "::1/128"`

func TestMetadataAdvertisesPKCEWithS256OnlyAndBothRegistrations(t *testing.T) {
	e := newEnv(t, 10, loopback)
	resp, err := http.Get(e.url + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md map[string]any
	json.NewDecoder(resp.Body).Decode(&md)
	for k, want := range map[string]any{
		"issuer": e.url, "token_endpoint": e.url + "/oauth/token", "registration_endpoint": e.url + "/oauth/register",
		"revocation_endpoint": e.url + "/oauth/revoke", "client_id_metadata_document_supported": true,
	} {
		if md[k] != want {
			t.Errorf("%s = %v, want %v", k, md[k], want)
		}
	}
	if got := fmt.Sprint(md["code_challenge_methods_supported"]); got != "[S256]" {
		t.Errorf("code_challenge_methods_supported = %s, want [S256] only", got)
	}
}

// The whole flow through a real provider process: register, consent,
// sign in at the provider, exchange the code with PKCE, and the token
// the gateway issues maps to the person's own workspace.
func TestSignInAtTheProviderGivesEachPersonATokenForTheirWorkspace(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	for _, who := range []struct{ user, pw, ws string }{{"alice", "alice-pw", "acme"}, {"bob", "bob-pw", "globex"}} {
		q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), who.user, who.pw)
		if q.Get("state") != "st-1" || q.Get("code") == "" {
			t.Fatalf("%s: redirect query %v", who.user, q)
		}
		tok := e.exchange(t, c, q.Get("code"))
		if tok.AccessToken == "" || tok.RefreshToken == "" {
			t.Fatalf("%s: token response %+v", who.user, tok)
		}
		p, err := e.verify(t, tok.AccessToken)
		if err != nil {
			t.Fatalf("%s: the gateway refuses its own token: %v", who.user, err)
		}
		if p.Workspace != who.ws || p.Subject != who.ws {
			t.Errorf("%s: principal %s/%s, want workspace %s", who.user, p.Subject, p.Workspace, who.ws)
		}
	}
}

// Refresh tokens rotate; presenting a spent one is reuse, which revokes
// the grant: the rotated refresh token and every access token die too.
func TestRefreshRotatesAndReuseRevokesTheWholeGrant(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
	first := e.exchange(t, c, q.Get("code"))
	second := e.refresh(t, c, first.RefreshToken)
	if second.AccessToken == "" || second.RefreshToken == "" || second.RefreshToken == first.RefreshToken {
		t.Fatalf("refresh: %+v", second)
	}
	if _, err := e.verify(t, second.AccessToken); err != nil {
		t.Fatalf("refreshed token refused: %v", err)
	}
	if other := e.register(t, "http://127.0.0.1:7778/cb"); e.refresh(t, other, second.RefreshToken).Error != "invalid_grant" {
		t.Errorf("another client refreshed this client's token")
	}
	reuse := e.refresh(t, c, first.RefreshToken)
	if reuse.status != http.StatusBadRequest || reuse.Error != "invalid_grant" {
		t.Fatalf("reused refresh token: %d %+v, want 400 invalid_grant", reuse.status, reuse)
	}
	if _, err := e.verify(t, second.AccessToken); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("access token after reuse: %v, want revoked", err)
	}
	if r := e.refresh(t, c, second.RefreshToken); r.Error != "invalid_grant" {
		t.Errorf("rotated refresh token after reuse: %+v, want invalid_grant", r)
	}
}

func TestRevokingARefreshTokenEndsItsAccessTokens(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
	tok := e.exchange(t, c, q.Get("code"))
	resp, err := http.PostForm(e.url+"/oauth/revoke", url.Values{"token": {tok.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {c.id}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if _, err := e.verify(t, tok.AccessToken); err == nil {
		t.Errorf("the access token still verifies after its refresh token was revoked")
	}
	if r := e.refresh(t, c, tok.RefreshToken); r.Error != "invalid_grant" {
		t.Errorf("refresh after revocation: %+v, want invalid_grant", r)
	}
}

// A sign-in gives one code: asking its callback URL again (someone who
// learned the id from the person's history) gets no second code, and the
// first still works.
func TestSignInGivesOneCode(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	b := newBrowser()
	q := e.signIn(t, b, e.authorizeURL(c, nil), "alice", "alice-pw")
	var callback string
	for _, u := range b.visited {
		if strings.Contains(u, "/oauth/authorize/callback") {
			callback = u
		}
	}
	if callback == "" {
		t.Fatalf("the sign-in never passed /oauth/authorize/callback: %v", b.visited)
	}
	resp, _ := newBrowser().do(t, "GET", callback, nil)
	if loc, _ := url.Parse(resp.Header.Get("Location")); loc != nil && loc.Query().Get("code") != "" {
		t.Errorf("a second visit of %s gave another code (%d)", callback, resp.StatusCode)
	}
	if tok := e.exchange(t, c, q.Get("code")); tok.AccessToken == "" {
		t.Errorf("the first code no longer exchanges: %+v", tok)
	}
}

// A code is exchanged once; a replay (an intercepted code) is
// invalid_grant and revokes what the first exchange issued.
func TestCodeReplayIsRefusedAndRevokesItsTokens(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
	tok := e.exchange(t, c, q.Get("code"))
	if tok.AccessToken == "" {
		t.Fatalf("first exchange: %+v", tok)
	}
	again := e.exchange(t, c, q.Get("code"))
	if again.status != http.StatusBadRequest || again.Error != "invalid_grant" {
		t.Fatalf("replayed code: %d %+v, want 400 invalid_grant", again.status, again)
	}
	if _, err := e.verify(t, tok.AccessToken); err == nil {
		t.Errorf("the first exchange's token survives the replay")
	}
}

func TestTokenRequestRefusals(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	other := e.register(t, "http://127.0.0.1:7777/callback")
	cases := map[string]struct {
		change func(url.Values)
		want   string
	}{
		"wrong-resource":     {func(v url.Values) { v.Set("resource", "https://other.example/mcp") }, "invalid_target"},
		"missing-verifier":   {func(v url.Values) { v.Del("code_verifier") }, "invalid_request"},
		"wrong-verifier":     {func(v url.Values) { v.Set("code_verifier", strings.Repeat("w", 43)) }, "invalid_grant"},
		"other-redirect-uri": {func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:7777/other") }, "invalid_grant"},
		"other-client":       {func(v url.Values) { v.Set("client_id", other.id) }, "invalid_grant"},
		"unknown-client":     {func(v url.Values) { v.Set("client_id", "nobody") }, "invalid_client"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
			form := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {c.redirect},
				"client_id": {c.id}, "code_verifier": {c.verifier}, "resource": {e.resource}}
			tc.change(form)
			got := e.token(t, form)
			if got.status/100 != 4 || got.Error != tc.want || got.AccessToken != "" {
				t.Errorf("token: %d %+v, want %s", got.status, got, tc.want)
			}
		})
	}
}

// An authorization request that is refused stores nothing; one whose
// client or redirect URI is in doubt is answered here, never redirected.
func TestRefusedAuthorizationRequestsLeaveNothingBehind(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	cases := map[string]struct {
		extra    url.Values
		redirect bool
		want     string
	}{
		"unknown-client":       {url.Values{"client_id": {"mcpgw_c_nobody"}}, false, "unknown client"},
		"mismatched-redirect":  {url.Values{"redirect_uri": {"http://127.0.0.1:7777/callback/x"}}, false, "redirect_uri is not one the client registered"},
		"redirect-prefix-only": {url.Values{"redirect_uri": {"http://127.0.0.1:7777/"}}, false, "redirect_uri is not one the client registered"},
		"missing-pkce":         {url.Values{"code_challenge": nil, "code_challenge_method": nil}, true, "invalid_request"},
		"plain-pkce":           {url.Values{"code_challenge_method": {"plain"}}, true, "invalid_request"},
		"wrong-resource":       {url.Values{"resource": {"https://evil.example/mcp"}}, true, "invalid_target"},
		"implicit-flow":        {url.Values{"response_type": {"token"}}, true, "unsupported_response_type"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := e.store.Len()
			resp, body := newBrowser().do(t, "GET", e.authorizeURL(c, tc.extra), nil)
			if tc.redirect {
				loc := resp.Header.Get("Location")
				if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, c.redirect+"?") || !strings.Contains(loc, "error="+tc.want) {
					t.Errorf("got %d to %q, want a redirect to the client with error=%s", resp.StatusCode, loc, tc.want)
				}
			} else if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, tc.want) {
				t.Errorf("got %d %q (Location %q), want 400 naming %q and no redirect", resp.StatusCode, body, resp.Header.Get("Location"), tc.want)
			}
			if after := e.store.Len(); after != before {
				t.Errorf("the store holds %d entries after the refusal, %d before", after, before)
			}
		})
	}
}

// A person whose ID token maps to no principal (here a subject the
// workspace pattern refuses) is sent back with access_denied, and no code
// exists for them.
func TestPersonWhoMapsToNoPrincipalIsDenied(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "mallory", "m-pw")
	if q.Get("error") != "access_denied" || q.Get("code") != "" || !strings.Contains(q.Get("error_description"), "workspace") {
		t.Fatalf("redirect query %v, want access_denied naming the workspace", q)
	}
}

// The consent must be given in the browser that started the sign-in:
// a consent form posted from elsewhere (another browser, a forged page)
// is refused.
func TestConsentFromAnotherBrowserIsRefused(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	victim, attacker := newBrowser(), newBrowser()
	resp, _ := attacker.do(t, "GET", e.authorizeURL(c, nil), nil)
	_, page := attacker.do(t, "GET", location(t, resp, e.url), nil)
	form := hidden(page)
	form.Set("decision", "allow")
	resp, _ = victim.do(t, "POST", e.url+"/oauth/login", form)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("consent from another browser: %d, want 403", resp.StatusCode)
	}
}

func TestRegistrationRefusalsNameTheField(t *testing.T) {
	e := newEnv(t, 100, loopback)
	cases := map[string]struct{ body, code, want string }{
		"no-redirects":      {`{"client_name":"x"}`, "invalid_redirect_uri", "redirect_uris is required"},
		"http-off-loopback": {`{"redirect_uris":["http://evil.example/cb"]}`, "invalid_redirect_uri", "http is allowed for a loopback host only"},
		"fragment":          {`{"redirect_uris":["https://a.example/cb#x"]}`, "invalid_redirect_uri", "fragment"},
		"javascript":        {`{"redirect_uris":["javascript:alert(1)"]}`, "invalid_redirect_uri", "javascript is not allowed"},
		"secret-client":     {`{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`, "invalid_client_metadata", "public and use PKCE"},
		"implicit-grant":    {`{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`, "invalid_client_metadata", `implicit\" is not supported`},
		"client-chosen-id":  {`{"client_id":"mine","redirect_uris":["https://a.example/cb"]}`, "invalid_client_metadata", "chosen by the server"},
		"not-json":          {`redirect_uris=x`, "invalid_client_metadata", "not a JSON object"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := e.store.Len()
			resp, body := postJSON(t, e.url+"/oauth/register", tc.body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"error":"`+tc.code+`"`) || !strings.Contains(body, tc.want) {
				t.Errorf("got %d %s, want 400 %s naming %q", resp.StatusCode, body, tc.code, tc.want)
			}
			if e.store.Len() != before {
				t.Errorf("a refused registration was stored")
			}
		})
	}
}

// register posts n registrations to the server at base and returns the
// statuses, and the last refusal's Retry-After and body.
func register(t *testing.T, base string, n int) (codes []int, retryAfter, refusal string) {
	t.Helper()
	for range n {
		resp, body := postJSON(t, base+"/oauth/register", `{"redirect_uris":["http://127.0.0.1:1/cb"]}`)
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			retryAfter, refusal = resp.Header.Get("Retry-After"), body
		}
	}
	return codes, retryAfter, refusal
}

func TestRegistrationIsRateLimited(t *testing.T) {
	e := newEnv(t, 2, loopback)
	// Malformed registrations store nothing and spend nothing.
	for range 5 {
		resp, err := http.Post(e.url+"/oauth/register", "application/json", strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("an empty registration: %d, want 400", resp.StatusCode)
		}
	}
	codes, retry, body := register(t, e.url, 3)
	if fmt.Sprint(codes) != "[201 201 429]" {
		t.Errorf("three registrations with per_minute 2: %v, want [201 201 429]", codes)
	}
	// per_minute 2 frees one registration every 30 s: the refusal says
	// when, and which setting refused it.
	if n, err := strconv.Atoi(retry); err != nil || n < 1 || n > 30 {
		t.Errorf("Retry-After %q, want 1 to 30 seconds", retry)
	}
	if !strings.Contains(body, `"error":"temporarily_unavailable"`) || !strings.Contains(body, "registration.per_minute is 2") {
		t.Errorf("refusal %s, want temporarily_unavailable naming registration.per_minute", body)
	}
}

// A sign-in is held in the state store until it ends: /oauth/authorize
// refuses parameters too large to hold (a megabyte of state, a nonce, a
// POSTed form) before storing anything, and refuses sign-ins beyond
// sign_in.per_minute with 429 and Retry-After. A sign-in within the
// bounds goes on to the consent page.
func TestAuthorizeIsBounded(t *testing.T) {
	e := newEnvWith(t, 10, loopback, nil, func(s string) string {
		return strings.Replace(s, "access_token_ttl: 5m", "access_token_ttl: 5m\n    sign_in: { per_minute: 4 }", 1)
	})
	c := e.register(t, "http://127.0.0.1:7777/callback")
	get := func(u string) (int, string, http.Header) {
		t.Helper()
		resp, body := newBrowser().do(t, "GET", u, nil)
		return resp.StatusCode, body, resp.Header
	}
	big := strings.Repeat("s", 1<<20)
	for name, extra := range map[string]url.Values{
		"state": {"state": {big}}, "nonce": {"nonce": {strings.Repeat("n", 1025)}},
		"redirect": {"redirect_uri": {"http://127.0.0.1:7777/callback?" + strings.Repeat("x", 2100)}},
	} {
		if code, body, _ := get(e.authorizeURL(c, extra)); code != http.StatusBadRequest || !strings.Contains(body, "invalid_request") || !strings.Contains(body, "bytes allowed") {
			t.Errorf("%s too long: %d %.200s; want 400 invalid_request naming the bound", name, code, body)
		}
	}
	many := url.Values{}
	for i := range 70 {
		many.Set(fmt.Sprintf("p%d", i), "x")
	}
	if code, body, _ := get(e.authorizeURL(c, many)); code != http.StatusBadRequest || !strings.Contains(body, "parameters") {
		t.Errorf("70 extra parameters: %d %.200s; want 400", code, body)
	}
	form := url.Values{"response_type": {"code"}, "client_id": {c.id}, "state": {strings.Repeat("s", 20<<10)}}
	resp, err := http.Post(e.url+"/oauth/authorize", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a 20 KiB POSTed form: %d, want 400", resp.StatusCode)
	}
	// Nor do sign-ins naming a client that is not there: they store
	// nothing, and must not spend everyone's budget.
	for range 6 {
		if code, _, _ := get(e.authorizeURL(&client{id: "nope", redirect: c.redirect, verifier: c.verifier}, nil)); code == http.StatusTooManyRequests || code == http.StatusFound {
			t.Fatalf("a sign-in for an unknown client: %d, want refused as unknown", code)
		}
	}
	// The refusals above took nothing from the rate: four sign-ins start
	// (the longest state allowed among them), the fifth waits.
	var codes []int
	var retry string
	for i := range 5 {
		st := fmt.Sprintf("st-%d", i)
		if i == 0 {
			st = strings.Repeat("s", 1024)
		}
		code, _, h := get(e.authorizeURL(c, url.Values{"state": {st}}))
		codes, retry = append(codes, code), h.Get("Retry-After")
	}
	if fmt.Sprint(codes) != "[302 302 302 302 429]" {
		t.Errorf("five sign-ins with sign_in.per_minute 4: %v, want [302 302 302 302 429]", codes)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 1 || n > 15 {
		t.Errorf("Retry-After %q, want 1 to 15 seconds", retry)
	}
}

// The cap is the fleet's, not each replica's: two replicas counting in
// one Redis register per_minute clients between them, as does a server
// a reload made over the process's limiter.
func TestRegistrationLimitIsSharedByReplicas(t *testing.T) {
	e := newEnv(t, 3, loopback)
	t.Run("reload", func(t *testing.T) {
		limits, _ := fleet.New(&fleet.Options{})
		defer limits.Close()
		before := e.replica(limits)
		codes1, _, _ := register(t, before, 2)
		after := e.replica(limits) // the reloaded catalog's server
		codes2, _, _ := register(t, after, 2)
		if got := fmt.Sprint(codes1, codes2); got != "[201 201] [201 429]" {
			t.Errorf("2 registrations, a reload, 2 more, with per_minute 3: %s, want [201 201] [201 429]", got)
		}
	})
	t.Run("redis", func(t *testing.T) {
		url := redistest.Start(t)
		prefix := "oauthtest:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":" // the same for both
		var replicas []string
		for range 2 {
			limits, err := fleet.New(&fleet.Options{Redis: url, Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			defer limits.Close()
			replicas = append(replicas, e.replica(limits))
		}
		var codes []int
		for i := range 6 {
			c, _, _ := register(t, replicas[i%2], 1)
			codes = append(codes, c...)
		}
		if fmt.Sprint(codes) != "[201 201 201 429 429 429]" {
			t.Errorf("6 registrations alternating between 2 replicas, per_minute 3: %v, want [201 201 201 429 429 429]", codes)
		}
	})
}

// A client whose id is the URL of its metadata document: the document is
// fetched (loopback is allowed here) and its redirect URIs are held
// exactly; a document that lies about its URL, redirects, or lives on an
// address not allowed is refused.
func TestClientIDMetadataDocument(t *testing.T) {
	docs := http.NewServeMux()
	var docURL string
	docs.HandleFunc("/client.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"client_id":%q,"client_name":"Doc client","redirect_uris":["http://127.0.0.1:7777/callback"]}`, docURL)
	})
	docs.HandleFunc("/liar.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"client_id":"https://claude.ai/client.json","redirect_uris":["http://127.0.0.1:7777/callback"]}`)
	})
	docs.HandleFunc("/moved.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/client.json", http.StatusFound)
	})
	docs.HandleFunc("/huge.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"client_id":%q,"client_name":%q,"redirect_uris":["http://127.0.0.1:7777/callback"]}`, r.URL.String(), strings.Repeat("x", 6000))
	})
	ds := httptest.NewServer(docs)
	defer ds.Close()
	docURL = ds.URL + "/client.json"

	e := newEnv(t, 10, loopback)
	c := docClient(docURL)
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
	tok := e.exchange(t, c, q.Get("code"))
	if p, err := e.verify(t, tok.AccessToken); err != nil || p.Workspace != "acme" {
		t.Fatalf("document client: %v %v", p, err)
	}
	for name, tc := range map[string]struct{ id, redirect, want string }{
		"redirect-not-in-document": {docURL, "http://127.0.0.1:7777/other", "redirect_uri is not one the client registered"},
		"client-id-mismatch":       {ds.URL + "/liar.json", c.redirect, "client_id must be its own URL"},
		"redirect-not-followed":    {ds.URL + "/moved.json", c.redirect, "answered HTTP 302"},
		"too-large":                {ds.URL + "/huge.json", c.redirect, "larger than 5KiB"},
		"no-path":                  {ds.URL, c.redirect, "must have a path"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := newBrowser().do(t, "GET", e.authorizeURL(&client{id: tc.id, redirect: tc.redirect, verifier: c.verifier}, nil), nil)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Errorf("got %d %q, want 400 naming %q", resp.StatusCode, body, tc.want)
			}
		})
	}
	t.Run("private-address-not-allowed", func(t *testing.T) {
		strict := newEnv(t, 10, "")
		resp, body := newBrowser().do(t, "GET", strict.authorizeURL(c, nil), nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not a public address") {
			t.Errorf("got %d %q, want the fetch refused for a private address", resp.StatusCode, body)
		}
	})
}

// Anyone may name any URL as a client_id, so fetching documents is
// bounded: callers of one URL share one fetch, a URL that fails is not
// fetched again for each request, and at most 16 fetches run at once
// (more are refused at once, not queued).
func TestClientMetadataFetchesAreBounded(t *testing.T) {
	var fetches sync.Map // path → *atomic.Int64
	count := func(path string) int64 {
		n, _ := fetches.LoadOrStore(path, new(atomic.Int64))
		return n.(*atomic.Int64).Load()
	}
	release := make(chan struct{})
	entered := make(chan string, 64)
	var sharedGate atomic.Pointer[chan struct{}]
	docs := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := fetches.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		if strings.HasPrefix(r.URL.Path, "/fail") {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		entered <- r.URL.Path
		<-release
		if g := sharedGate.Load(); g != nil && r.URL.Path == "/shared.json" {
			<-*g
		}
		fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["http://127.0.0.1:7777/callback"]}`, "http://"+r.Host+r.URL.Path)
	})
	ds := httptest.NewServer(docs)
	defer ds.Close()
	e := newEnv(t, 10, loopback)
	authorize := func(path string) (int, string) {
		c := docClient(ds.URL + path)
		resp, body := newBrowser().do(t, "GET", e.authorizeURL(c, nil), nil)
		return resp.StatusCode, body
	}

	for range 5 {
		if code, body := authorize("/fail.json"); code != http.StatusBadRequest || !strings.Contains(body, "HTTP 500") {
			t.Fatalf("a failing document: %d %s", code, body)
		}
	}
	if n := count("/fail.json"); n != 1 {
		t.Errorf("five sign-ins naming a failing document fetched it %d times, want once", n)
	}

	// 20 different documents that hang: 16 fetches run, 4 are refused.
	var wg sync.WaitGroup
	var refused atomic.Int64
	for i := range 20 {
		wg.Go(func() {
			if code, body := authorize(fmt.Sprintf("/hang/%d.json", i)); code == http.StatusBadRequest && strings.Contains(body, "too many client metadata documents") {
				refused.Add(1)
			}
		})
	}
	running := 0
	deadline := time.After(10 * time.Second)
	for running < 16 || refused.Load() < 4 {
		select {
		case <-entered:
			running++
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("after 10 s: %d fetches running, %d refused; want 16 and 4", running, refused.Load())
		}
	}
	close(release)
	wg.Wait()
	if running != 16 || refused.Load() != 4 {
		t.Errorf("20 hanging documents: %d fetched, %d refused; want 16 and 4", running, refused.Load())
	}
	// Six callers of one document at once share a fetch: the document
	// answers only after a pause in which the other five arrive (were
	// each to fetch, they would be counted; the count does not depend on
	// the pause being long enough).
	hold := make(chan struct{})
	sharedGate.Store(&hold)
	for range 6 {
		wg.Go(func() {
			if code, _ := authorize("/shared.json"); code != http.StatusFound {
				t.Errorf("a sign-in naming a good document: %d", code)
			}
		})
	}
	<-entered
	time.Sleep(200 * time.Millisecond)
	close(hold)
	wg.Wait()
	if n := count("/shared.json"); n != 1 {
		t.Errorf("six sign-ins naming one document fetched it %d times, want once", n)
	}
}

// Revoking an access token ends its grant too; revoking another client's
// refresh token is refused and changes nothing.
func TestRevocationOfAccessTokensAndOfOtherClientsTokens(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	other := e.register(t, "http://127.0.0.1:7778/callback")
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
	tok := e.exchange(t, c, q.Get("code"))

	resp, err := http.PostForm(e.url+"/oauth/revoke", url.Values{"token": {tok.RefreshToken}, "client_id": {other.id}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("another client revoked this client's refresh token")
	}
	if _, err := e.verify(t, tok.AccessToken); err != nil {
		t.Fatalf("a refused revocation ended the grant: %v", err)
	}

	resp, err = http.PostForm(e.url+"/oauth/revoke", url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}, "client_id": {other.id}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := e.verify(t, tok.AccessToken); resp.StatusCode == http.StatusOK || err != nil {
		t.Errorf("another client revoking this client's access token: %d, token now %v", resp.StatusCode, err)
	}
	resp, err = http.PostForm(e.url+"/oauth/revoke", url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}, "client_id": {c.id}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke the access token: %d", resp.StatusCode)
	}
	if _, err := e.verify(t, tok.AccessToken); err == nil {
		t.Errorf("a revoked access token still verifies")
	}
	if r := e.refresh(t, c, tok.RefreshToken); r.Error != "invalid_grant" {
		t.Errorf("refresh after the access token's revocation: %+v, want invalid_grant", r)
	}
}

// A grant's id, which every access token carries in its claims, is not
// a token: sent to /revoke by any client, the token's own included, it
// ends nothing.
func TestRevocationOfABareGrantIDEndsNothing(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	other := e.register(t, "http://127.0.0.1:7778/callback")
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
	tok := e.exchange(t, c, q.Get("code"))
	p, err := e.verify(t, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Grant string `json:"mcpgw_grant"`
	}
	if json.Unmarshal(p.Claims, &claims); !strings.HasPrefix(claims.Grant, "g_") {
		t.Fatalf("the access token names no grant: %s", p.Claims)
	}
	for _, id := range []string{other.id, c.id} {
		for _, token := range []string{claims.Grant, claims.Grant + ".x"} {
			resp, err := http.PostForm(e.url+"/oauth/revoke", url.Values{"token": {token}, "client_id": {id}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if _, err := e.verify(t, tok.AccessToken); err != nil {
				t.Fatalf("revoking %q as %s ended the grant: %v", token, id, err)
			}
		}
	}
	if r := e.refresh(t, c, tok.RefreshToken); r.Error != "" {
		t.Errorf("refresh after the bare grant ids were sent: %+v", r)
	}
}

// The provider's answer must come back to the browser that consented: a
// callback carried to another browser is refused and spends the state.
func TestProviderCallbackInAnotherBrowserIsRefused(t *testing.T) {
	e := newEnv(t, 10, loopback)
	c := e.register(t, "http://127.0.0.1:7777/callback")
	b := newBrowser()
	resp, _ := b.do(t, "GET", e.authorizeURL(c, nil), nil)
	_, page := b.do(t, "GET", location(t, resp, e.url), nil)
	form := hidden(page)
	form.Set("decision", "allow")
	resp, _ = b.do(t, "POST", e.url+"/oauth/login", form)
	toProvider, _ := url.Parse(location(t, resp, e.url))
	state := toProvider.Query().Get("state")
	resp, body := newBrowser().do(t, "GET", e.url+"/oauth/callback?code=x&state="+url.QueryEscape(state), nil)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "not started in this browser") {
		t.Errorf("callback in another browser: %d %q, want 403", resp.StatusCode, body)
	}
	resp, _ = b.do(t, "GET", e.url+"/oauth/callback?code=x&state="+url.QueryEscape(state), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("the state was not spent: %d", resp.StatusCode)
	}
}

// Two replicas sharing a Redis store and GATEWAY_APPROVAL_KEYS, with
// every request going to the other one: registration on one, consent on
// the other, the provider's callback, the code exchange and the refresh
// each on whichever node; each node accepts the token the other issued,
// and a revocation at one is refused at the other at once.
func TestAnyReplicaServesAnyStep(t *testing.T) {
	redisURL := redistest.Start(t)
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	issuer := startProvider(t, base+"/oauth/callback")
	cat, err := catalog.Parse("catalog.yaml", []byte(fmt.Sprintf(catalogTmpl, base, issuer, 10, loopback)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var nodes [2]*oauthserver.Server
	for i := range nodes {
		store, err := oauthserver.OpenRedisStore(context.Background(), redisURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		if nodes[i], err = oauthserver.New(cat, &oauthserver.Options{Store: store, Keys: [][]byte{[]byte("replicas-share-these-32-bytes!!!")}}); err != nil {
			t.Fatal(err)
		}
	}
	var n atomic.Int64
	hs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nodes[n.Add(1)%2].ServeHTTP(w, r)
	})
	hs.Start()
	t.Cleanup(hs.Close)
	e := &env{t: t, srv: nodes[0], url: base, resource: base + "/mcp"}

	c := e.register(t, "http://127.0.0.1:7777/callback")
	q := e.signIn(t, newBrowser(), e.authorizeURL(c, nil), "alice", "alice-pw")
	tok := e.exchange(t, c, q.Get("code"))
	tok = e.refresh(t, c, tok.RefreshToken)
	if tok.AccessToken == "" {
		t.Fatalf("refresh across replicas: %+v", tok)
	}
	for i, node := range nodes {
		if p, err := node.Verifier().Verify(context.Background(), tok.AccessToken); err != nil || p.Workspace != "acme" {
			t.Fatalf("node %d refuses the token: %v", i, err)
		}
	}
	resp, err := http.PostForm(base+"/oauth/revoke", url.Values{"token": {tok.RefreshToken}, "client_id": {c.id}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for i, node := range nodes {
		if _, err := node.Verifier().Verify(context.Background(), tok.AccessToken); err == nil {
			t.Errorf("node %d still accepts a revoked token", i)
		}
	}
}

// Access tokens live access_token_ttl and refresh tokens
// refresh_token_ttl; past them the access token is refused and the
// refresh token is invalid_grant.
func TestTokensExpire(t *testing.T) {
	e, skew := clockedEnv(t, func(s string) string {
		return strings.Replace(s, "access_token_ttl: 5m", "access_token_ttl: 5m\n    refresh_token_ttl: 1h", 1)
	})
	c := e.register(t, "http://127.0.0.1:7777/callback")
	tok := e.signedIn(t, c)
	skew.Store(int64(5*time.Minute + time.Second))
	if _, err := e.verify(t, tok.AccessToken); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an access token past access_token_ttl: %v, want expired", err)
	}
	skew.Store(int64(time.Hour + time.Second))
	if r := e.refresh(t, c, tok.RefreshToken); r.status != http.StatusBadRequest || r.Error != "invalid_grant" {
		t.Errorf("a refresh token past refresh_token_ttl: %d %+v, want 400 invalid_grant", r.status, r)
	}
}

func TestRegistrationTurnedOffIsRefusedButDocumentsWork(t *testing.T) {
	e := newEnvWith(t, 10, loopback, nil, func(s string) string {
		return strings.Replace(s, "registration: { per_minute: 10 }", "registration: { enabled: false }", 1)
	})
	resp, body := postJSON(t, e.url+"/oauth/register", `{"redirect_uris":["http://127.0.0.1:1/cb"]}`)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "turned off") {
		t.Errorf("registration when off: %d %s, want 403", resp.StatusCode, body)
	}
	var md map[string]any
	r, err := http.Get(e.url + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(r.Body).Decode(&md)
	r.Body.Close()
	if _, ok := md["registration_endpoint"]; ok || md["client_id_metadata_document_supported"] != true {
		t.Errorf("metadata with registration off: %v", md)
	}
}

// A web page of any origin may call the token endpoint (browser-based
// MCP clients do), but never with the person's cookies.
func TestTokenEndpointAllowsAnyOriginWithoutCredentials(t *testing.T) {
	e := newEnv(t, 10, loopback)
	req, _ := http.NewRequest(http.MethodOptions, e.url+"/oauth/token", nil)
	req.Header.Set("Origin", "https://inspector.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") == "" || resp.Header.Get("Access-Control-Allow-Credentials") == "true" {
		t.Errorf("preflight: allow-origin %q, allow-credentials %q; want any origin, no credentials",
			resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Credentials"))
	}
}
