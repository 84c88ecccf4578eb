package proxy_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// What an upstream echoes back reaches the agent, but never a secret the
// gateway sent it or obtained for it: in an error's reason or in a
// success's body, whole, in part, or in the forms an encoder writes.

const obtainedTokenCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  cc:
    base_url: ${UP}
    workspace: none
    auth:
      type: client_credentials
      token_url: ${AS_TOKEN_URL}
      client_id: gateway
      client_secret_env: AS_CLIENT_SECRET
      client_auth: ${CLIENT_AUTH:-basic}
  tx:
    base_url: ${UP}
    workspace: none
    auth:
      type: token_exchange
      token_url: ${AS_TOKEN_URL}
      client_id: gateway
      client_secret_env: AS_CLIENT_SECRET
      subject_token: { issuer: https://gateway.test, key_file: "${KEY_FILE}" }
tools:
  - name: get_cc
    description: Read through the client-credentials upstream.
    request: { upstream: cc, path: /thing }
  - name: get_tx
    description: Read through the token-exchange upstream.
    request: { upstream: tx, path: /thing }
`

// tokenServer is a token endpoint that hands out a distinct opaque access
// token per request ("obtained-at-N-…"), or answers with fail when set.
func tokenServer(t *testing.T, fail http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail != nil {
			fail(w, r)
			return
		}
		i := n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("obtained-at-%d-9f8e7d6c5b4a", i), "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func obtainedTokenCore(t *testing.T, upURL, asURL string, env map[string]string) *proxy.Core {
	t.Helper()
	_, keyFile := exchangeKey(t)
	vars := map[string]string{"UP": upURL, "SECRET": strings.Repeat("k", 32), "AS_TOKEN_URL": asURL,
		"AS_CLIENT_SECRET": "as-client-s3cret+/=x", "KEY_FILE": keyFile}
	for k, v := range env {
		vars[k] = v
	}
	cat, err := catalog.Parse("test.yaml", []byte(obtainedTokenCatalog), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c, err := proxy.New(cat, &proxy.Options{Getenv: func(k string) string { return vars[k] }, Audit: discardAudit{}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// echoAuthorization answers status with a body quoting the Authorization
// header it received, as a debugging upstream or a naive API gateway does.
func echoAuthorization(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"message": "rejected credentials: " + r.Header.Get("Authorization")})
	}
}

// A token the gateway obtains (client_credentials or token_exchange) and
// the upstream echoes in an error body does not reach the agent, nor the
// fresh one sent after a 401.
func TestObtainedTokenEchoedInErrorBody(t *testing.T) {
	for _, status := range []int{400, 401, 403, 500} {
		for _, tool := range []string{"get_cc", "get_tx"} {
			t.Run(fmt.Sprintf("%s-%d", tool, status), func(t *testing.T) {
				as, _ := tokenServer(t, nil)
				up := httptest.NewServer(echoAuthorization(status))
				t.Cleanup(up.Close)
				c := obtainedTokenCore(t, up.URL, as.URL, nil)
				res := call(t, c, reader, tool, `{}`)
				if strings.Contains(res.Text, "obtained-at-") {
					t.Errorf("the obtained access token reaches the agent: %s", res.Text)
				}
			})
		}
	}
}

// The same token echoed in a 2xx body is taken out of the result.
func TestObtainedTokenEchoedInSuccessBody(t *testing.T) {
	as, _ := tokenServer(t, nil)
	up := httptest.NewServer(echoAuthorization(200))
	t.Cleanup(up.Close)
	c := obtainedTokenCore(t, up.URL, as.URL, nil)
	res := call(t, c, reader, "get_cc", `{}`)
	if strings.Contains(res.Text+string(res.Structured), "obtained-at-") {
		t.Errorf("the obtained access token reaches the agent in a 200 result: %s", res.Text)
	}
}

// Static credentials too: a 2xx body is cleaned of what was sent.
func TestStaticSecretEchoedInSuccessBody(t *testing.T) {
	rec := newRecorder(t, echoAuthorization(200))
	c := parseCoreWith(t, testCatalog, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	if strings.Contains(res.Text+string(res.Structured), "upstream-secret") {
		t.Errorf("the upstream's static credential reaches the agent in a 200 result: %s", res.Text)
	}
}

// echoCredentialAlone answers 401 quoting the credential of the
// Authorization header it received without its scheme, as GitHub's "Bad
// credentials" or a revoked-key message does.
func echoCredentialAlone(w http.ResponseWriter, r *http.Request) {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, `{"message":"credential %s is revoked"}`, cred)
}

// An Authorization value whose scheme is neither Bearer nor Basic
// ("token …" for Gitea/GitHub, "Token …" for DRF, "SSWS …" for Okta) is
// taken out whole and its credential alone.
func TestNonBearerSchemeCredentialEchoed(t *testing.T) {
	for _, scheme := range []string{"token", "Token", "SSWS", "ApiKey"} {
		t.Run(scheme, func(t *testing.T) {
			rec := newRecorder(t, echoCredentialAlone)
			src := strings.Replace(testCatalog, `Authorization: "Bearer upstream-secret"`, `Authorization: "`+scheme+` gitea-s3cret-0f3a"`, 1)
			c := parseCoreWith(t, src, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
			res := call(t, c, reader, "get_item", `{"id":"a"}`)
			if strings.Contains(res.Text, "gitea-s3cret-0f3a") {
				t.Errorf("the credential reaches the agent: %s", res.Text)
			}
		})
	}
}

// A credential set by a tool (request.headers or request.query, a
// literal from ${VAR}) counts among its secrets like the upstream's.
func TestToolLevelCredentialEchoed(t *testing.T) {
	const extra = `
  - name: get_keyed
    description: A read whose API key the tool sets.
    request:
      upstream: up
      path: /keyed
      headers: { X-Api-Key: "tool-hdr-k3y-77aa" }
      query: { api_key: "tool-qry-k3y-88bb" }
`
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "forbidden: key %s for %s", r.Header.Get("X-Api-Key"), r.URL.RequestURI())
	})
	c := parseCoreWith(t, testCatalog+extra, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_keyed", `{}`)
	for _, s := range []string{"tool-hdr-k3y-77aa", "tool-qry-k3y-88bb"} {
		if strings.Contains(res.Text, s) {
			t.Errorf("%s reaches the agent: %s", s, res.Text)
		}
	}
}

// Encoded echoes of a static credential in an error body are taken out.
// (One split over two lines is not: the reason joins the lines with a
// space, a form no encoder writes.)
func TestEncodedEchoes(t *testing.T) {
	const secret = "Zk9v+YmFy/cXV4=="
	cases := map[string]struct {
		ct, body string
	}{
		"json-unicode-escapes": {"application/json", `{"message":"bad key \u005a\u006b9v+YmFy/cXV4=="}`},
		"html-entities":        {"text/html", `<title>bad key &#90;k9v+YmFy/cXV4==</title>`},
		"url-encoded":          {"text/plain", "GET /v1/items/a?key=" + url.QueryEscape(secret) + " refused"},
		"json-slash-escaped":   {"application/json", `{"message":"bad key Zk9v+YmFy\/cXV4=="}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ct)
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, tc.body)
			})
			src := strings.Replace(testCatalog, `Authorization: "Bearer upstream-secret"`, `Authorization: "Bearer `+secret+`"`, 1)
			c := parseCoreWith(t, src, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
			res := call(t, c, reader, "get_item", `{"id":"a"}`)
			t.Logf("%s", res.Text)
			enc := []string{secret, url.QueryEscape(secret), "Zk9v+YmFy /cXV4=="}
			for _, s := range enc {
				if strings.Contains(res.Text, s) {
					t.Errorf("a form of the secret (%q) reaches the agent: %s", s, res.Text)
				}
			}
		})
	}
}

// Retry-After loses its secrets before its cut at 64 bytes: a secret
// straddling byte 64 shows no part of itself.
func TestRetryAfterCutBeforeRedaction(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", strings.Repeat("x", 50)+" "+r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := parseCoreWith(t, testCatalog, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	t.Logf("%s", res.Text)
	if strings.Contains(res.Text, "Bearer upstre") || !strings.Contains(res.Text, "retry after") {
		t.Errorf("part of the secret reaches the agent: %s", res.Text)
	}
}

// The token endpoint's error_description is cleaned of the client secret
// in every form it was sent: URL-encoded in the form, and, with
// client_secret_basic, the base64 of id:secret in the Basic header.
func TestTokenEndpointEchoesBasicHeader(t *testing.T) {
	for _, auth := range []string{"basic", "post"} {
		t.Run(auth, func(t *testing.T) {
			as, _ := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client",
					"error_description": "client authentication failed for " + r.Header.Get("Authorization") + " body " + r.PostForm.Encode()})
			})
			up := httptest.NewServer(echoAuthorization(200))
			t.Cleanup(up.Close)
			c := obtainedTokenCore(t, up.URL, as.URL, map[string]string{"CLIENT_AUTH": auth})
			res := call(t, c, reader, "get_cc", `{}`)
			t.Logf("%s", res.Text)
			basic := base64.StdEncoding.EncodeToString([]byte("gateway:" + url.QueryEscape("as-client-s3cret+/=x")))
			for _, s := range []string{"as-client-s3cret", basic, url.QueryEscape("as-client-s3cret+/=x")} {
				if strings.Contains(res.Text, s) {
					t.Errorf("a form of the client secret (%q) reaches the agent: %s", s, res.Text)
				}
			}
		})
	}
}

// credentials.by_workspace with the docs' own format "token {credential}":
// an upstream that echoes the credential alone ("bad token acme-gitea-…")
// does not pass it to the agent.
func TestWorkspaceCredentialAloneEchoed(t *testing.T) {
	for _, format := range []string{"token {credential}", "Bearer {credential}"} {
		t.Run(format, func(t *testing.T) {
			up := newRecorder(t, echoCredentialAlone)
			env := map[string]string{"UP": up.srv.URL, "SECRET": strings.Repeat("k", 32),
				"GITEA_ACME_TOKEN": giteaTokens["acme"], "GITEA_GLOBEX_TOKEN": giteaTokens["globex"]}
			src := strings.Replace(credentialsCatalog, `format: "token {credential}"`, `format: "`+format+`"`, 1)
			cat, err := catalog.Parse("test.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
				v, ok := env[k]
				return v, ok
			}})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			c, err := proxy.New(cat, &proxy.Options{Audit: discardAudit{}})
			if err != nil {
				t.Fatal(err)
			}
			res := call(t, c, reader, "get_repo", `{"repo":"site"}`)
			if strings.Contains(res.Text, giteaTokens["acme"]) {
				t.Errorf("the workspace's credential reaches the agent: %s", res.Text)
			}
		})
	}
}

func answerJSON(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// A constant query parameter whose name merely holds "key" (sort_key) or
// "auth" (author) is a setting: its value stays in the answer.
func TestQuerySettingsAreNotRedacted(t *testing.T) {
	const extra = `
  - name: list_sorted
    description: List sorted.
    request:
      upstream: up
      path: /sorted
      query: { sort_key: "created_at", author: "octocat" }
`
	rec := newRecorder(t, answerJSON(`{"items":[{"id":"a","created_at":"2024-01-01","author":{"login":"octocat"}}]}`))
	c := parseCoreWith(t, testCatalog+extra, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "list_sorted", `{}`)
	t.Logf("structured: %s", res.Structured)
	if !strings.Contains(string(res.Structured), `"created_at"`) || !strings.Contains(string(res.Structured), `"octocat"`) {
		t.Errorf("legit answer corrupted: %s", res.Structured)
	}
}

// Cookie: one name=value pair is a secret, the others settings, which
// stay in a 2xx body.
func TestCookieSettingsAreNotRedacted(t *testing.T) {
	src := strings.Replace(testCatalog, `headers: { Authorization: "Bearer upstream-secret" }`,
		`headers: { Cookie: "sid=s3cr3t-session-1; region=us-east-1; locale=en_US" }`, 1)
	rec := newRecorder(t, answerJSON(`{"id":"a","region":"us-east-1","zone":"us-east-1a"}`))
	c := parseCoreWith(t, src, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	t.Logf("structured: %s", res.Structured)
	if !strings.Contains(string(res.Structured), `"us-east-1"`) {
		t.Errorf("non-secret cookie value redacted from a 2xx body: %s", res.Structured)
	}
}

// Cloudflare's legacy auth: X-Auth-Email + X-Auth-Key. The account's
// e-mail address stays in the answers; the key does not.
func TestAuthEmailIsNotRedacted(t *testing.T) {
	src := strings.Replace(testCatalog, `headers: { Authorization: "Bearer upstream-secret" }`,
		`headers: { X-Auth-Email: "ops@example.com", X-Auth-Key: "c2547eb745079dac9320b638f5e225cf483cc5cfdda41" }`, 1)
	rec := newRecorder(t, answerJSON(`{"result":{"id":"a","email":"ops@example.com","key":"c2547eb745079dac9320b638f5e225cf483cc5cfdda41"}}`))
	c := parseCoreWith(t, src, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	if !strings.Contains(string(res.Structured), `ops@example.com`) || strings.Contains(res.Text, "c2547eb745079") || !strings.Contains(res.Text, `"key":"[redacted]"`) {
		t.Errorf("want the address kept and the key redacted: %s", res.Structured)
	}
}

// A payload tool reads past its inline cut by the longest secret, so a
// secret that starts before the cut is matched whole and none of it is
// shown.
func TestPayloadCutShowsNoPartOfASecret(t *testing.T) {
	src := strings.Replace(boundsCatalog, `up: { base_url: "${UP}",`, `up: { base_url: "${UP}", headers: { X-Api-Key: "sk-live-0123456789abcdefghij" },`, 1)
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("x", 80)+r.Header.Get("X-Api-Key")+strings.Repeat("y", 50))
	})
	c := parseCoreWith(t, src, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_payload", `{"n":"1","mode":"a"}`)
	t.Logf("%s", res.Structured)
	if strings.Contains(string(res.Structured), "sk-live-0123456789ab") {
		t.Errorf("20 of the secret's 28 bytes reach the agent: %s", res.Structured)
	}
}

// A short key that shares its letters with a JSON escape ("\nk3y…" holds
// a newline and "k3y…") leaves a legitimate answer whole.
func TestEscapesAreNotTakenForSecrets(t *testing.T) {
	src := strings.Replace(testCatalog, `headers: { Authorization: "Bearer upstream-secret" }`,
		`headers: { X-Api-Key: "nk3y-abcdef" }`, 1)
	rec := newRecorder(t, answerJSON(`{"id":"a","log":"line one\nk3y-abcdef is fine"}`))
	c := parseCoreWith(t, src, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	t.Logf("isError=%v text=%s", res.IsError, res.Text)
	if res.IsError {
		t.Errorf("a legitimate 200 answer became an error: %s", res.Text)
	}
}

// A cookie's numeric part (a user id) is a setting: a 2xx body holding
// the same number stays whole, and JSON.
func TestNumericPartsAreNotRedacted(t *testing.T) {
	src := strings.Replace(testCatalog, `headers: { Authorization: "Bearer upstream-secret" }`,
		`headers: { Cookie: "session=s3cr3t-session-1; uid=10482731" }`, 1)
	rec := newRecorder(t, answerJSON(`{"id":"a","owner_id":10482731,"name":"ok"}`))
	c := parseCoreWith(t, src, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	t.Logf("isError=%v text=%s", res.IsError, res.Text)
	if res.IsError {
		t.Errorf("a legitimate 200 answer became an error")
	}
}
