package test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpgw/gateway/test/oauthas"
)

// The built gateway in front of an upstream that accepts only tokens from
// a real authorization server (zitadel/oidc's provider, test/oauthas),
// which it verifies against the server's JWKS.
const upstreamAuthCatalog = `version: 1
server: { name: tickets-gateway }
auth:
  jwt:
    hmac_secret_env: GATEWAY_JWT_SECRET
    algorithms: [HS256]
    issuer: ${GATEWAY_ISSUER}
    audience: ${GATEWAY_AUDIENCE}
  principal: { subject: sub, workspace: ws, scopes: scope, actor: email }
upstreams:
  tickets_service:
    base_url: ${TICKETS_URL}
    auth:
      type: client_credentials
      token_url: ${AS_TOKEN_URL}
      client_id: gateway
      client_secret_env: TICKETS_CLIENT_SECRET
      scopes: [tickets.read]
  tickets:
    base_url: ${TICKETS_URL}
    auth:
      type: token_exchange
      token_url: ${AS_TOKEN_URL}
      client_id: gateway
      client_secret_env: TICKETS_CLIENT_SECRET
      audience: https://tickets.test
      scopes: [tickets.read]
      subject_token: { issuer: https://gateway.test, key_file: "${EXCHANGE_KEY_FILE}" }
prerequisites:
  tickets_enabled:
    probe: { upstream: tickets_service, path: /enabled, true_when: enabled }
tools:
  - name: service_whoami
    description: Who the ticket service sees when the gateway calls as itself.
    requires: [tickets_enabled]
    request: { upstream: tickets_service, path: /whoami }
  - name: my_tickets
    description: The caller's tickets, as the ticket service sees the caller.
    requires: [tickets_enabled]
    request: { upstream: tickets, path: /whoami }
`

func TestBuiltGatewayCallsUpstreamsWithOAuthTokens(t *testing.T) {
	const clientSecret = "tickets-client-s3cret-a41f"
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "exchange.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	as, err := oauthas.Start(oauthas.Options{
		Clients: map[string]string{"gateway": clientSecret}, Audience: "https://tickets.test",
		SubjectIssuer: "https://gateway.test", SubjectKey: &key.PublicKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer as.Close()

	verify := as.Verifier("https://tickets.test")
	var mu sync.Mutex
	var auths []string
	tickets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		raw, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		claims, err := verify(r.Context(), raw)
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/enabled" {
			io.WriteString(w, `{"enabled":true}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"sub": claims["sub"], "workspace": claims["workspace"]})
	}))
	defer tickets.Close()

	path := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(path, []byte(upstreamAuthCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	g := launch(t, launchConfig{catalog: path, args: []string{"--metrics-listen", "127.0.0.1:0"}, env: []string{
		"TICKETS_URL=" + tickets.URL, "AS_TOKEN_URL=" + as.TokenURL,
		"TICKETS_CLIENT_SECRET=" + clientSecret, "EXCHANGE_KEY_FILE=" + keyFile,
	}})

	alice, bob := token(t, "alice", "acme"), token(t, "bob", "globex")
	for range 3 {
		for _, c := range []struct{ tok, sub, ws string }{{alice, "alice", "acme"}, {bob, "bob", "globex"}} {
			status, body := rpc(t, g.MCP, c.tok, "tools/call", `{"name":"my_tickets","arguments":{}}`)
			if status != 200 || strings.Contains(body, `"isError":true`) || !strings.Contains(body, `\"sub\":\"`+c.sub+`\"`) || !strings.Contains(body, `\"workspace\":\"`+c.ws+`\"`) {
				t.Fatalf("my_tickets as %s = %d %s, want the service to see %s in %s", c.sub, status, body, c.sub, c.ws)
			}
			status, body = rpc(t, g.MCP, c.tok, "tools/call", `{"name":"service_whoami","arguments":{}}`)
			if status != 200 || !strings.Contains(body, `\"sub\":\"gateway\"`) {
				t.Fatalf("service_whoami as %s = %d %s, want the service to see the gateway", c.sub, status, body)
			}
		}
	}
	// One client-credentials token for the probes of two workspaces and
	// six calls; one exchange per person.
	if n := as.TokenRequests("client_credentials"); n != 1 {
		t.Errorf("%d client-credentials token requests, want 1", n)
	}
	if n := as.TokenRequests("urn:ietf:params:oauth:grant-type:token-exchange"); n != 2 {
		t.Errorf("%d token exchanges for two people, want 2", n)
	}

	// The callers' own tokens went nowhere; the secret and the tokens
	// are in no log line and no metric.
	mu.Lock()
	seen := append([]string(nil), auths...)
	mu.Unlock()
	for _, raw := range []string{alice, bob} {
		if as.Received(raw) {
			t.Error("the authorization server received a caller's bearer token")
		}
		for _, a := range seen {
			if strings.Contains(a, raw) {
				t.Error("the upstream received a caller's bearer token")
			}
		}
	}
	resp, err := http.Get(g.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for where, text := range map[string]string{"log": g.stderr.String(), "metrics": string(metrics)} {
		if strings.Contains(text, clientSecret) {
			t.Errorf("the %s shows the client secret", where)
		}
		for _, a := range seen {
			if tok, _ := strings.CutPrefix(a, "Bearer "); tok != "" && strings.Contains(text, tok) {
				t.Errorf("the %s shows an upstream token", where)
			}
		}
	}
}

// A wrong client secret fails the call with the authorization server's
// invalid_client, and the gateway sends the upstream nothing.
func TestBuiltGatewayNamesInvalidClient(t *testing.T) {
	as, err := oauthas.Start(oauthas.Options{Clients: map[string]string{"gateway": "the-right-one"}, Audience: "https://tickets.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer as.Close()
	var calls atomic.Int32
	tickets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); w.WriteHeader(http.StatusUnauthorized) }))
	defer tickets.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.yaml")
	// Only the client-credentials upstream and a tool without a probe.
	src := upstreamAuthCatalog[:strings.Index(upstreamAuthCatalog, "  tickets:\n")] + `tools:
  - name: service_whoami
    description: Who the ticket service sees.
    request: { upstream: tickets_service, path: /whoami }
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	const wrong = "wr0ng-tickets-s3cret"
	g := launch(t, launchConfig{catalog: path, env: []string{"TICKETS_URL=" + tickets.URL, "AS_TOKEN_URL=" + as.TokenURL, "TICKETS_CLIENT_SECRET=" + wrong}})
	status, body := rpc(t, g.MCP, token(t, "alice", "acme"), "tools/call", `{"name":"service_whoami","arguments":{}}`)
	if status != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "invalid_client") {
		t.Errorf("service_whoami with a wrong client secret = %d %s, want a tool error naming invalid_client", status, body)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the upstream received %d requests, want none", n)
	}
	eventually(t, "a log line naming invalid_client", func() bool { return strings.Contains(g.stderr.String(), "invalid_client") })
	if strings.Contains(body, wrong) || strings.Contains(g.stderr.String(), wrong) {
		t.Error("the client secret appears in the answer or the log")
	}
}
