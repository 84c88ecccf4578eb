package proxy_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
	"github.com/mcpgw/gateway/test/oauthas"
)

// The upstreams of these tests sit behind a real authorization server
// (zitadel/oidc's provider, test/oauthas) and accept only its tokens,
// verified against its JWKS as a resource server does.

const upstreamAuthCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
  principal: { actor: email }
gates:
  write: { scopes: [write] }
upstreams:
  service:
    base_url: ${UP}
    auth:
      type: client_credentials
      token_url: ${AS_TOKEN_URL}
      client_id: gateway
      client_secret_env: AS_CLIENT_SECRET
      scopes: [tickets.read]
      audience: https://tickets.test
  personal:
    base_url: ${UP}
    workspace: { header: X-Workspace-Id }
    auth:
      type: token_exchange
      token_url: ${AS_TOKEN_URL}
      client_id: gateway
      client_secret_env: AS_CLIENT_SECRET
      scopes: [tickets.read, tickets.write]
      audience: https://tickets.test
      max_cached_tokens: ${MAX_CACHED:-100}
      timeout: ${TOKEN_TIMEOUT:-10s}
      subject_token: { issuer: https://gateway.test, key_file: "${KEY_FILE}", key_id: gw-1 }
tools:
  - name: whoami_service
    description: Who the ticket service thinks is calling, as the gateway.
    request: { upstream: service, path: /whoami }
  - name: whoami_person
    description: Who the ticket service thinks is calling, per person.
    request: { upstream: personal, path: /whoami }
  - name: file_ticket
    description: File a ticket as the caller.
    kind: write
    gate: write
    input: { type: object, properties: { title: { type: string } }, required: [title], additionalProperties: false }
    request: { upstream: personal, method: POST, path: /tickets, body: { title: "{title}" } }
`

const (
	asSecret   = "as-client-s3cret-5be1c7"
	jwtSecret  = "q7Vd2LxP9mRt4ZsKw8NbYc3HfJ6gUe1A"
	ticketsAud = "https://tickets.test"
)

// ticketService is the upstream: it answers with the claims of the token
// it was sent, after verifying it, and 401 to anything else.
type ticketService struct {
	srv    *httptest.Server
	verify func(context.Context, string) (map[string]any, error)

	mu       sync.Mutex
	auths    []string // every Authorization header received
	bodies   []string
	accepted int
	// refuse, when set, makes the service answer 401 to a verified token
	// it names (revoked at the authorization server, say).
	refuse func(claims map[string]any) bool
}

func (s *ticketService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	s.bodies = append(s.bodies, string(body))
	refuse := s.refuse
	s.mu.Unlock()
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	claims, err := s.verify(r.Context(), raw)
	if !ok || err != nil || (refuse != nil && refuse(claims)) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message":"invalid token"}`)
		return
	}
	s.mu.Lock()
	s.accepted++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"sub": claims["sub"], "workspace": claims["workspace"], "actor": claims["actor"],
		"client_id": claims["client_id"], "scope": claims["scope"], "body": string(body),
	})
}

func (s *ticketService) requests() ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...), s.accepted
}

type authFixture struct {
	as      *oauthas.Server
	tickets *ticketService
	core    *proxy.Core
	logs    *syncBuffer
	clock   *handClock
	// token signs a caller's bearer token; principal verifies it as the
	// gateway does.
	token     func(sub, ws string) string
	principal func(raw string) *authz.Principal
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// handClock is the gateway's clock, moved by hand: token lifetimes are
// judged by it.
type handClock struct{ offset atomic.Int64 }

func (c *handClock) now() time.Time            { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *handClock) advance(d time.Duration)   { c.offset.Add(int64(d)) }
func (c *handClock) nowFunc() func() time.Time { return c.now }

// newAuthFixture starts the authorization server, the ticket service and
// a core whose upstreams authenticate there. env overrides the catalog's
// variables (AS_CLIENT_SECRET, MAX_CACHED…).
func newAuthFixture(t *testing.T, lifetime time.Duration, env map[string]string) *authFixture {
	t.Helper()
	key, keyFile := exchangeKey(t)
	as, err := oauthas.Start(oauthas.Options{
		Clients:       map[string]string{"gateway": asSecret},
		Audience:      ticketsAud,
		SubjectIssuer: "https://gateway.test",
		SubjectKey:    &key.PublicKey,
		Lifetime:      lifetime,
	})
	if err != nil {
		t.Fatalf("starting the authorization server: %v", err)
	}
	t.Cleanup(as.Close)
	ts := &ticketService{verify: as.Verifier(ticketsAud)}
	ts.srv = httptest.NewServer(ts)
	t.Cleanup(ts.srv.Close)

	vars := map[string]string{"UP": ts.srv.URL, "SECRET": jwtSecret, "AS_TOKEN_URL": as.TokenURL, "AS_CLIENT_SECRET": asSecret, "KEY_FILE": keyFile}
	for k, v := range env {
		vars[k] = v
	}
	cat, err := catalog.Parse("test.yaml", []byte(upstreamAuthCatalog), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	f := &authFixture{as: as, tickets: ts, logs: &syncBuffer{}, clock: &handClock{}}
	logger := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if f.core, err = proxy.New(cat, &proxy.Options{Logger: logger, Now: f.clock.nowFunc(), Getenv: func(k string) string { return vars[k] }}); err != nil {
		t.Fatalf("New: %v", err)
	}
	verifier, err := authz.NewVerifier(cat.Auth, &authz.VerifierOptions{Getenv: func(k string) string { return vars[k] }})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	t.Cleanup(func() { verifier.Close() })
	f.token = func(sub, ws string) string {
		now := time.Now()
		return signHS256(t, jwtSecret, map[string]any{"iss": "iss", "aud": "aud", "sub": sub, "ws": ws, "email": sub + "@" + ws + ".example",
			"scope": "write", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	}
	f.principal = func(raw string) *authz.Principal {
		p, err := verifier.Verify(context.Background(), raw)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		return p
	}
	return f
}

// exchangeKey makes the gateway's subject-token key and writes it to a
// PEM file.
func exchangeKey(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "exchange.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return key, keyFile
}

func (f *authFixture) call(t *testing.T, p *authz.Principal, tool, args string) *proxy.Result {
	t.Helper()
	return call(t, f.core, p, tool, args)
}

const (
	grantClientCredentials = "client_credentials"
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// Many calls, from several people at once, share one client-credentials
// token: the authorization server is asked once.
func TestClientCredentialsTokenIsSharedByEveryCall(t *testing.T) {
	f := newAuthFixture(t, 5*time.Minute, nil)
	alice := f.principal(f.token("alice", "acme"))
	bob := f.principal(f.token("bob", "globex"))
	var wg sync.WaitGroup
	results := make([]*proxy.Result, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := alice
			if i%2 == 1 {
				p = bob
			}
			res, err := f.core.Call(context.Background(), p, "whoami_service", nil)
			if err != nil {
				t.Errorf("Call: %v", err)
				return
			}
			results[i] = res
		}()
	}
	wg.Wait()
	for range 5 {
		results = append(results, f.call(t, alice, "whoami_service", `{}`))
	}
	for i, res := range results {
		if res == nil || res.IsError || !strings.Contains(res.Text, `"sub":"gateway"`) || !strings.Contains(res.Text, `"scope":"tickets.read"`) {
			t.Fatalf("call %d = %+v, want the service to see the gateway's own token", i, res)
		}
	}
	if n := f.as.TokenRequests(""); n != 1 {
		t.Errorf("the authorization server received %d token requests for 25 calls, want 1", n)
	}
	if _, accepted := f.tickets.requests(); accepted != 25 {
		t.Errorf("the service accepted %d requests, want 25", accepted)
	}
}

// A token is used until shortly before it expires, then replaced.
func TestClientCredentialsTokenIsRefreshedBeforeItExpires(t *testing.T) {
	f := newAuthFixture(t, 2*time.Minute, nil)
	alice := f.principal(f.token("alice", "acme"))
	steps := []struct {
		advance time.Duration
		want    int
	}{
		{0, 1},
		{time.Minute, 1},      // halfway through its life: kept
		{50 * time.Second, 2}, // 110 s of 120: due, replaced
		{30 * time.Second, 2}, // the new one is fresh
		{3 * time.Minute, 3},  // long expired: replaced
	}
	for i, s := range steps {
		f.clock.advance(s.advance)
		if res := f.call(t, alice, "whoami_service", `{}`); res.IsError {
			t.Fatalf("step %d: call = %q", i, res.Text)
		}
		if n := f.as.TokenRequests(grantClientCredentials); n != s.want {
			t.Fatalf("step %d (clock +%s): %d token requests, want %d", i, s.advance, n, s.want)
		}
	}
}

// A token the upstream refuses before it expires (revoked, rotated) is
// replaced once, and the call sent once more, body and all; an upstream
// that refuses every token gets two tries, not a loop.
func TestUpstream401GetsOneRetryWithAFreshToken(t *testing.T) {
	f := newAuthFixture(t, 5*time.Minute, nil)
	bob := f.principal(f.token("bob", "acme"))
	var first atomic.Value // the jti of the first token the service saw
	f.tickets.refuse = func(c map[string]any) bool {
		first.CompareAndSwap(nil, c["jti"])
		return c["jti"] == first.Load()
	}
	res := f.call(t, bob, "file_ticket", `{"title":"printer on fire"}`)
	if res.IsError || !strings.Contains(res.Text, `"sub":"bob"`) || !strings.Contains(res.Text, `printer on fire`) {
		t.Fatalf("file_ticket = %q, want it filed as bob on the second try with its body", res.Text)
	}
	auths, accepted := f.tickets.requests()
	if len(auths) != 2 || accepted != 1 || auths[0] == auths[1] {
		t.Errorf("the service saw %d requests (%d accepted), want a refused one and one with a different token", len(auths), accepted)
	}
	if n := f.as.TokenRequests(grantTokenExchange); n != 2 {
		t.Errorf("%d token exchanges, want 2 (the first token and its replacement)", n)
	}

	f.tickets.refuse = func(map[string]any) bool { return true }
	before, _ := f.tickets.requests()
	res = f.call(t, bob, "whoami_person", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "401") {
		t.Errorf("whoami_person against a service that refuses every token = %q, want a 401 tool error", res.Text)
	}
	after, _ := f.tickets.requests()
	if n := len(after) - len(before); n != 2 {
		t.Errorf("the service was asked %d times, want 2 (one retry)", n)
	}
}

// Through a token exchange the upstream sees the person, in their
// workspace, not a shared account; each person's token is cached for
// them. The caller's own bearer token reaches neither the authorization
// server nor the upstream.
func TestTokenExchangeCarriesThePersonNotTheirToken(t *testing.T) {
	f := newAuthFixture(t, 5*time.Minute, nil)
	aliceToken, bobToken := f.token("alice", "acme"), f.token("bob", "globex")
	alice, bob := f.principal(aliceToken), f.principal(bobToken)
	for range 3 {
		for _, c := range []struct {
			p           *authz.Principal
			sub, ws, by string
		}{{alice, "alice", "acme", "alice@acme.example"}, {bob, "bob", "globex", "bob@globex.example"}} {
			res := f.call(t, c.p, "whoami_person", `{}`)
			want := fmt.Sprintf(`"actor":%q,"body":"","client_id":"gateway","scope":"tickets.read tickets.write","sub":%q,"workspace":%q`, c.by, c.sub, c.ws)
			if res.IsError || !strings.Contains(res.Text, want) {
				t.Fatalf("whoami_person as %s = %q\nwant it to contain %s", c.sub, res.Text, want)
			}
		}
	}
	if n := f.as.TokenRequests(grantTokenExchange); n != 2 {
		t.Errorf("%d token exchanges for 6 calls by 2 people, want 2", n)
	}
	auths, _ := f.tickets.requests()
	for _, raw := range []string{aliceToken, bobToken} {
		if f.as.Received(raw) {
			t.Errorf("the authorization server received a caller's own bearer token")
		}
		for _, a := range auths {
			if strings.Contains(a, raw) {
				t.Errorf("the upstream received a caller's own bearer token")
			}
		}
	}
	if log := f.logs.String(); strings.Contains(log, asSecret) || strings.Contains(log, "Bearer ") {
		t.Errorf("logs hold a secret or a token:\n%s", log)
	}
}

// The per-person cache holds max_cached_tokens people: one more pushes
// out the token fetched longest ago, which is fetched again when needed.
func TestTokenExchangeCacheIsBounded(t *testing.T) {
	f := newAuthFixture(t, 5*time.Minute, map[string]string{"MAX_CACHED": "2"})
	people := []*authz.Principal{f.principal(f.token("alice", "acme")), f.principal(f.token("bob", "acme")), f.principal(f.token("carol", "acme"))}
	for _, p := range people {
		if res := f.call(t, p, "whoami_person", `{}`); res.IsError {
			t.Fatalf("whoami_person = %q", res.Text)
		}
	}
	f.call(t, people[2], "whoami_person", `{}`) // carol: cached
	if n := f.as.TokenRequests(grantTokenExchange); n != 3 {
		t.Fatalf("%d token exchanges for 3 people, want 3", n)
	}
	f.call(t, people[0], "whoami_person", `{}`) // alice: pushed out by carol
	if n := f.as.TokenRequests(grantTokenExchange); n != 4 {
		t.Errorf("%d token exchanges, want alice's token fetched again (4)", n)
	}
}

// A wrong client secret is the authorization server's invalid_client,
// named in the tool error; the secret appears nowhere, and nothing is
// sent to the upstream.
func TestWrongClientSecretIsInvalidClient(t *testing.T) {
	const wrong = "wr0ng-s3cret-9d2e"
	f := newAuthFixture(t, 5*time.Minute, map[string]string{"AS_CLIENT_SECRET": wrong})
	alice := f.principal(f.token("alice", "acme"))
	for _, c := range []struct{ tool, args string }{{"whoami_service", `{}`}, {"whoami_person", `{}`}, {"file_ticket", `{"title":"x"}`}} {
		tool := c.tool
		res := f.call(t, alice, tool, c.args)
		if !res.IsError || !strings.Contains(res.Text, "invalid_client") || !strings.Contains(res.Text, "nothing was sent to the upstream") {
			t.Errorf("%s with a wrong client secret = %q, want a tool error naming invalid_client", tool, res.Text)
		}
		if strings.Contains(res.Text, wrong) || strings.Contains(res.Text, asSecret) {
			t.Errorf("%s's error shows the secret: %q", tool, res.Text)
		}
	}
	if auths, _ := f.tickets.requests(); len(auths) != 0 {
		t.Errorf("the upstream received %d requests, want none", len(auths))
	}
	log := f.logs.String()
	if !strings.Contains(log, "invalid_client") {
		t.Errorf("the log does not name invalid_client:\n%s", log)
	}
	if strings.Contains(log, wrong) {
		t.Errorf("the log shows the client secret:\n%s", log)
	}
}

// A token endpoint that misbehaves fails the call with a bounded, clear
// error: an answer too large, no answer in time, a redirect elsewhere.
func TestTokenEndpointBounds(t *testing.T) {
	var redirected atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { redirected.Add(1) }))
	defer elsewhere.Close()
	block := make(chan struct{})
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server sees the client leave
		switch r.URL.Path {
		case "/huge":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"`+strings.Repeat("a", 1<<20)+`","token_type":"Bearer"}`)
		case "/slow":
			select {
			case <-block:
			case <-r.Context().Done():
			}
		case "/redirect":
			http.Redirect(w, r, elsewhere.URL+"/token", http.StatusTemporaryRedirect)
		}
	}))
	defer bad.Close()
	defer close(block)
	for _, tt := range []struct{ path, want string }{
		{"/huge", "answered more than 64 KiB to the token request"},
		{"/slow", "did not answer the token request within 200ms"},
		{"/redirect", "answered 307 Temporary Redirect to the token request (a redirect, not followed)"},
	} {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			src := strings.Replace(upstreamAuthCatalog, "token_url: ${AS_TOKEN_URL}\n      client_id: gateway\n      client_secret_env: AS_CLIENT_SECRET\n      scopes: [tickets.read]\n",
				"token_url: "+bad.URL+tt.path+"\n      timeout: 200ms\n      client_id: gateway\n      client_secret_env: AS_CLIENT_SECRET\n      scopes: [tickets.read]\n", 1)
			rec := newRecorder(t, nil)
			_, keyFile := exchangeKey(t)
			c := parseCore(t, src, rec.srv.URL, map[string]string{"AS_TOKEN_URL": bad.URL, "AS_CLIENT_SECRET": asSecret, "KEY_FILE": keyFile})
			start := time.Now()
			res := call(t, c, writer, "whoami_service", `{}`)
			if !res.IsError || !strings.Contains(res.Text, tt.want) {
				t.Errorf("call = %q, want a tool error containing %q", res.Text, tt.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the call took %s", d)
			}
			if rec.count() != 0 {
				t.Errorf("the upstream was called without a token")
			}
		})
	}
	if redirected.Load() != 0 {
		t.Errorf("the token request followed a redirect to another server")
	}
}
