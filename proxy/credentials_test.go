package proxy_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// A Gitea-shaped upstream that fences its own tenants: each organisation
// is readable and writable only with that organisation's token.
const credentialsCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  gitea:
    base_url: ${UP}
    workspace: { header: X-Workspace-Id }
    credentials:
      format: "token {credential}"
      by_workspace:
        acme: GITEA_ACME_TOKEN
        globex: GITEA_GLOBEX_TOKEN
tools:
  - name: get_repo
    description: Read a repository of the caller's organisation.
    input: { type: object, properties: { repo: { type: string } }, required: [repo], additionalProperties: false }
    request: { upstream: gitea, path: "/repos/{workspace}/{repo}" }
  - name: create_issue
    description: Open an issue.
    kind: write
    gate: write
    input: { type: object, properties: { repo: { type: string }, title: { type: string } }, required: [repo, title], additionalProperties: false }
    request: { upstream: gitea, method: POST, path: "/repos/{workspace}/{repo}/issues", body: { title: "{title}" } }
`

var giteaTokens = map[string]string{"acme": "acme-gitea-t0ken-0f3a", "globex": "globex-gitea-t0ken-77c1"}

// signHS256 is a real compact JWS over claims, as an identity provider
// would mint it.
func signHS256(t *testing.T, secret string, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	head, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT"})
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	signing := enc.EncodeToString(head) + "." + enc.EncodeToString(body)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

func TestCredentialsFollowTheTokensWorkspace(t *testing.T) {
	var mu sync.Mutex
	var received []string // "workspace authorization" per request
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		owner := strings.Split(r.URL.Path, "/")[2]
		auth := r.Header.Get("Authorization")
		mu.Lock()
		received = append(received, owner+" "+auth)
		mu.Unlock()
		if tok, ok := giteaTokens[owner]; !ok || auth != "token "+tok {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"message":"token does not grant access to this organisation"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"owner":"`+owner+`","name":"site"}`)
	})
	secret := "q7Vd2LxP9mRt4ZsKw8NbYc3HfJ6gUe1A"
	env := map[string]string{"UP": up.srv.URL, "SECRET": secret,
		"GITEA_ACME_TOKEN": giteaTokens["acme"], "GITEA_GLOBEX_TOKEN": giteaTokens["globex"]}
	cat, err := catalog.Parse("test.yaml", []byte(credentialsCatalog), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := proxy.New(cat, &proxy.Options{Logger: logger}) // audit records go to the same log
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	verifier, err := authz.NewVerifier(cat.Auth, &authz.VerifierOptions{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	t.Cleanup(func() { verifier.Close() })
	principal := func(ws string) *authz.Principal {
		now := time.Now()
		tok := signHS256(t, secret, map[string]any{"iss": "iss", "aud": "aud", "sub": "agent-" + ws, "ws": ws,
			"scope": "write", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
		p, err := verifier.Verify(context.Background(), tok)
		if err != nil {
			t.Fatalf("Verify(%s's token): %v", ws, err)
		}
		return p
	}

	for _, ws := range []string{"acme", "globex"} {
		p := principal(ws)
		if res := call(t, c, p, "get_repo", `{"repo":"site"}`); res.IsError || !strings.Contains(res.Text, `"owner":"`+ws+`"`) {
			t.Errorf("%s reading its repository = %q (isError %v)", ws, res.Text, res.IsError)
		}
		if res := call(t, c, p, "create_issue", `{"repo":"site","title":"hello"}`); res.IsError {
			t.Errorf("%s opening an issue = %q", ws, res.Text)
		}
	}
	mu.Lock()
	got := append([]string(nil), received...)
	mu.Unlock()
	want := []string{
		"acme token " + giteaTokens["acme"], "acme token " + giteaTokens["acme"],
		"globex token " + giteaTokens["globex"], "globex token " + giteaTokens["globex"],
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the upstream received\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A workspace with no credential of its own is refused, and nothing
	// is sent: not another workspace's credential, not an anonymous call.
	initech := principal("initech")
	for _, tc := range []struct{ tool, args string }{
		{"get_repo", `{"repo":"site"}`},
		{"create_issue", `{"repo":"site","title":"hello"}`},
	} {
		res := call(t, c, initech, tc.tool, tc.args)
		if !res.IsError || res.Outcome != proxy.OutcomeRefused || !strings.Contains(res.Text, `no credential for this token's workspace "initech"`) {
			t.Errorf("initech calling %s = %q (isError %v, outcome %s), want a refusal naming the missing credential", tc.tool, res.Text, res.IsError, res.Outcome)
		}
	}
	if n := up.count(); n != 4 {
		t.Errorf("the upstream received %d requests, want only acme's and globex's 4", n)
	}

	log := logs.String()
	if !strings.Contains(log, `"outcome":"refused"`) || !strings.Contains(log, `"workspace":"initech"`) {
		t.Errorf("no refused audit record for initech's write in:\n%s", log)
	}
	for ws, tok := range giteaTokens {
		if strings.Contains(log, tok) {
			t.Errorf("%s's credential appears in the logs or audit:\n%s", ws, log)
		}
	}
}

// Prerequisite probes are bound like calls: each carries its workspace's
// credential, and a workspace without one sends no probe and does not see
// the tool that needs it.
func TestProbesCarryTheWorkspacesCredential(t *testing.T) {
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		owner := strings.Split(r.URL.Path, "/")[2]
		if tok, ok := giteaTokens[owner]; !ok || r.Header.Get("Authorization") != "token "+tok {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"enabled":true}`)
	})
	src := strings.Replace(credentialsCatalog, "tools:\n", `prerequisites:
  wiki: { probe: { upstream: gitea, path: "/orgs/{workspace}/wiki", true_when: enabled } }
tools:
  - name: read_wiki
    description: Read the organisation's wiki.
    requires: [wiki]
    request: { upstream: gitea, path: "/orgs/{workspace}/wiki/home" }
`, 1)
	c := parseCore(t, src, up.srv.URL, map[string]string{"GITEA_ACME_TOKEN": giteaTokens["acme"], "GITEA_GLOBEX_TOKEN": giteaTokens["globex"]})
	lists := func(p *authz.Principal) bool {
		for _, l := range c.List(context.Background(), p) {
			if l.Tool.Name == "read_wiki" {
				return true
			}
		}
		return false
	}
	acme := authz.NewPrincipal("a", "acme", "", nil, nil)
	initech := authz.NewPrincipal("i", "initech", "", nil, nil)
	if !lists(acme) {
		t.Errorf("acme does not see read_wiki: its probe did not carry its credential (%+v)", up.all())
	}
	if lists(initech) {
		t.Error("initech sees read_wiki without a credential of its own")
	}
	for _, r := range up.all() {
		if strings.Contains(r.Path, "initech") {
			t.Errorf("a probe for initech was sent: %+v", r)
		}
	}
}
