package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/openapi"
)

// A document with no security scheme that sends its API key as a header
// parameter on every operation (VictorOps: X-VO-Api-Key "Your API Key",
// with X-VO-Api-Id "Your API ID" beside it) is imported with the key and
// its id as the upstream's own headers, read from variables the import
// names (U_API_KEY, U_API_ID): no argument carries them, so the agent is
// never asked for the gateway's credential, no tool is marked sensitive
// for naming it (which would hide the whole service), and an argument
// cannot set it. A call reaches the upstream with both from the
// environment. A header described as something else (an idempotency
// key, a request id) stays an argument.
func TestImportSendsHeaderAPIKeysFromTheEnvironment(t *testing.T) {
	res := importWithWrites(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  parameters:
    apiId: { name: X-VO-Api-Id, in: header, required: true, description: Your API ID, schema: { type: string } }
    apiKey: { name: X-VO-Api-Key, in: header, required: true, description: Your API Key, schema: { type: string } }
paths:
  /incidents/{id}:
    parameters: [ { $ref: "#/components/parameters/apiId" }, { $ref: "#/components/parameters/apiKey" } ]
    get:
      operationId: getIncident
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
        - { name: X-Request-Id, in: header, description: a request id for tracing, schema: { type: string } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /incidents:
    post:
      operationId: createIncident
      parameters:
        - { $ref: "#/components/parameters/apiId" }
        - { $ref: "#/components/parameters/apiKey" }
        - { name: Idempotency-Key, in: header, description: a unique key that makes a retry safe, schema: { type: string } }
      requestBody: { content: { application/json: { schema: { type: object, properties: { summary: { type: string } } } } } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
`, "u")
	y := string(res.YAML)
	for _, want := range []string{"X-Vo-Api-Key: ${U_API_KEY}", "X-Vo-Api-Id: ${U_API_ID}"} {
		if !strings.Contains(y, want) {
			t.Errorf("the upstream does not set %s:\n%s", want, y)
		}
	}
	upURL, seen := headerRecorder(t)
	cat, core := loadImported(t, res, map[string]string{"U_URL": upURL, "U_API_KEY": "k3y-from-env", "U_API_ID": "acme-ops"})
	p := authz.NewPrincipal("agent", "", "", []string{"u:write"}, nil)
	for _, c := range []struct{ tool, args, keeps string }{
		{"get_incident", `{"id":"4121","x_request_id":"trace-1"}`, "x_request_id"},
		{"create_incident", `{"summary":"disk full","idempotency_key":"retry-1"}`, "idempotency_key"},
	} {
		tool := cat.Tool(c.tool)
		if tool == nil {
			t.Fatalf("%s was not imported (skipped: %v)\n%s", c.tool, res.Skipped, y)
		}
		in := strings.ToLower(string(tool.InputJSON))
		if strings.Contains(in, "api_key") || strings.Contains(in, "api_id") {
			t.Errorf("%s asks the agent for the upstream's key: %s", c.tool, in)
		}
		if !strings.Contains(in, c.keeps) {
			t.Errorf("%s lost its own argument %s: %s", c.tool, c.keeps, in)
		}
		if tool.Sensitive {
			t.Errorf("%s is marked sensitive for naming the upstream's key", c.tool)
		}
		*seen = nil
		r, err := core.Call(context.Background(), p, c.tool, []byte(c.args))
		if err != nil || r.IsError {
			t.Fatalf("call %s: %v %s", c.tool, err, r.Text)
		}
		if seen.Get("X-VO-Api-Key") != "k3y-from-env" || seen.Get("X-VO-Api-Id") != "acme-ops" {
			t.Errorf("%s reached the upstream with headers %v, want the key and id from the environment", c.tool, *seen)
		}
	}
	// An agent cannot send a key of its own.
	*seen = nil
	r, err := core.Call(context.Background(), p, "get_incident", []byte(`{"id":"4121","x_vo_api_key":"agent-key"}`))
	if err == nil && !r.IsError || *seen != nil {
		t.Errorf("a key in the arguments was accepted (%+v) or reached the upstream (%v)", r, *seen)
	}
}

// A key header only some operations take is what those operations act
// on ("the key to rotate"), not the service's credential: it stays an
// argument. An Authorization header every operation declares is the
// credential whatever its description: the operator sets its whole
// value. The document never names a variable: a key header called
// Client-Secret on upstream "gateway" is read from GATEWAY_API_KEY,
// never GATEWAY_CLIENT_SECRET.
func TestImportHeaderKeysOnlyWhenTheServiceTakesThem(t *testing.T) {
	res := importWithWrites(t, docHead+`  /keys/rotate:
    post:
      operationId: rotateKey
      parameters: [ { name: X-Api-Key, in: header, required: true, description: the API key to rotate, schema: { type: string } } ]
      responses: { "200": { description: ok } }
  /a:
    get: { operationId: getA, responses: { "200": { description: ok } } }
  /b:
    get: { operationId: getB, responses: { "200": { description: ok } } }
`, "u")
	if y := string(res.YAML); strings.Contains(y, "U_API_KEY") || !strings.Contains(y, "x_api_key") {
		t.Errorf("a key one operation of three takes was made the upstream's:\n%s", y)
	}

	res = importWithWrites(t, docHead+`  /a:
    get:
      operationId: getA
      parameters:
        - { name: Authorization, in: header, required: true, schema: { type: string } }
        - { name: Client-Secret, in: header, required: true, description: the shared secret, schema: { type: string } }
      responses: { "200": { description: ok } }
`, "gateway")
	y := string(res.YAML)
	if !strings.Contains(y, "Authorization: ${GATEWAY_AUTHORIZATION}") || !strings.Contains(y, "Client-Secret: ${GATEWAY_API_KEY}") || strings.Contains(y, "GATEWAY_CLIENT_SECRET") {
		t.Errorf("want Authorization and the key from the import's own variables:\n%s", y)
	}
	upURL, seen := headerRecorder(t)
	res.YAML = []byte(strings.ReplaceAll(y, "GATEWAY_", "U_"))
	_, core := loadImported(t, res, map[string]string{"U_URL": upURL, "U_AUTHORIZATION": "Token abc", "U_API_KEY": "s3cret"})
	r, err := core.Call(context.Background(), authz.NewPrincipal("agent", "", "", nil, nil), "get_a", []byte(`{}`))
	if err != nil || r.IsError {
		t.Fatalf("call get_a: %v %s", err, r.Text)
	}
	if seen.Get("Authorization") != "Token abc" || seen.Get("Client-Secret") != "s3cret" {
		t.Errorf("the upstream saw %v, want the credential from the environment", *seen)
	}
}

// An API key header beside a security scheme the import maps (Trakt's
// trakt-api-key, "e.g. [client_id]", on 178 of its 183 operations,
// beside its OAuth scheme) is the upstream's too: the call carries the
// scheme's bearer token and the key from the environment, and no tool
// asks for the key or is marked sensitive for naming it (Trakt had 179
// of 181 tools hidden so). Another way to send the bearer token
// (DRACOON's X-Sds-Auth-Token, "Authentication token") is left out, not
// sent twice; beside an API-key scheme, whose header holds U_API_KEY,
// the next key is U_API_KEY_2; and a second API-key scheme's header is
// a key however its parameters are described.
func TestImportHeaderKeysBesideAScheme(t *testing.T) {
	const ops = `paths:
  /movies/trending:
    get:
      operationId: getTrending
      parameters: [ { $ref: "#/components/parameters/traktKey" }, { $ref: "#/components/parameters/sdsToken" }, { name: limit, in: query, schema: { type: integer } } ]
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /sync/watchlist:
    post:
      operationId: addToWatchlist
      parameters: [ { $ref: "#/components/parameters/traktKey" }, { $ref: "#/components/parameters/sdsToken" } ]
      requestBody: { content: { application/json: { schema: { type: object, properties: { title: { type: string } } } } } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
`
	head := `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
security: [ { oauth: [] } ]
components:
  parameters:
    traktKey: { name: trakt-api-key, in: header, description: "e.g. [client_id]", schema: { type: string } }
    sdsToken: { name: X-Sds-Auth-Token, in: header, description: Authentication token, schema: { type: string } }
  securitySchemes:
    oauth: { type: oauth2, flows: { authorizationCode: { authorizationUrl: "https://example.com/auth", tokenUrl: "https://example.com/token", scopes: {} } } }
`
	res := importWithWrites(t, head+ops, "u")
	y := string(res.YAML)
	for _, want := range []string{"Authorization: Bearer ${U_TOKEN}", "Trakt-Api-Key: ${U_API_KEY}"} {
		if !strings.Contains(y, want) {
			t.Errorf("the upstream does not set %s:\n%s", want, y)
		}
	}
	if strings.Contains(y, "X-Sds-Auth-Token:") || strings.Contains(y, "x_sds_auth_token") {
		t.Errorf("the bearer token's other way became the upstream's or an argument:\n%s", y)
	}
	upURL, seen := headerRecorder(t)
	cat, core := loadImported(t, res, map[string]string{"U_URL": upURL, "U_TOKEN": "tok-1", "U_API_KEY": "client-id-1"})
	p := authz.NewPrincipal("agent", "", "", []string{"u:write"}, nil)
	for tool, args := range map[string]string{"get_trending": `{"limit":3}`, "add_to_watchlist": `{"title":"Dune"}`} {
		def := cat.Tool(tool)
		if def == nil {
			t.Fatalf("%s was not imported (skipped: %v)\n%s", tool, res.Skipped, y)
		}
		if in := strings.ToLower(string(def.InputJSON)); strings.Contains(in, "api_key") || strings.Contains(in, "auth_token") {
			t.Errorf("%s asks the agent for a credential: %s", tool, in)
		}
		if def.Sensitive {
			t.Errorf("%s is marked sensitive for naming the upstream's key", tool)
		}
		*seen = nil
		r, err := core.Call(context.Background(), p, tool, []byte(args))
		if err != nil || r.IsError {
			t.Fatalf("call %s: %v %s", tool, err, r.Text)
		}
		if seen.Get("Authorization") != "Bearer tok-1" || seen.Get("Trakt-Api-Key") != "client-id-1" || seen.Get("X-Sds-Auth-Token") != "" {
			t.Errorf("%s reached the upstream with headers %v, want the bearer token and the key from the environment", tool, *seen)
		}
	}

	keyed := strings.Replace(head, "security: [ { oauth: [] } ]", "security: [ { key: [] } ]", 1) +
		"    key: { type: apiKey, in: header, name: X-Api-Key }\n"
	res = importWithWrites(t, keyed+ops, "u")
	y = string(res.YAML)
	for _, want := range []string{"X-Api-Key: ${U_API_KEY}", "Trakt-Api-Key: ${U_API_KEY_2}"} {
		if !strings.Contains(y, want) {
			t.Errorf("the upstream does not set %s:\n%s", want, y)
		}
	}

	// A second API-key scheme's header, declared on every operation with
	// no description (envoice's x-auth-secret beside x-auth-key), is the
	// document's own word that it is a credential.
	two := `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    key: { type: apiKey, in: header, name: x-auth-key }
    secret: { type: apiKey, in: header, name: x-auth-secret, description: Your account API secret }
paths:
  /clients:
    get:
      operationId: listClients
      parameters: [ { name: x-auth-key, in: header, schema: { type: string } }, { name: x-auth-secret, in: header, schema: { type: string } } ]
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
`
	res = importWithWrites(t, two, "u")
	y = string(res.YAML)
	if !strings.Contains(y, "x-auth-key: ${U_API_KEY}") || !strings.Contains(y, "X-Auth-Secret: ${U_API_KEY_2}") || strings.Contains(y, "x_auth_secret") {
		t.Errorf("want both schemes' headers on the upstream and neither as an argument:\n%s", y)
	}
}

// importWithWrites imports an OpenAPI document written inline for
// upstream name, its writes included.
func importWithWrites(t *testing.T, doc, name string) *openapi.Result {
	t.Helper()
	return importOpts(t, doc, openapi.Options{Upstream: name, IncludeWrites: true})
}

// What is no API key stays what it was: a key header that looks like a
// tenant, or its id, under --workspace-param (an argument would be
// refused for it; a fixed value would send one tenant for every
// caller); the actor header (--actor-header sets it per caller); and
// headers named as a page, CSRF, upload or WebSocket token, key or
// secret, or described as a credential only in passing. Spellings of one
// key across operations (X-Api-Key, X_API_KEY, x-api-key) are one key,
// whatever the order the document's paths are read in.
func TestImportHeaderKeysLeaveWhatIsNoKey(t *testing.T) {
	tenant := docHead + `  /workspaces/{workspace}/items:
    parameters:
      - { name: workspace, in: path, required: true, schema: { type: string } }
      - { name: X-Tenant-Key, in: header, required: true, description: Your API key, schema: { type: string } }
      - { name: X-Tenant-Id, in: header, required: true, description: the tenant the key is for, schema: { type: string } }
    get: { operationId: listItems, responses: { "200": { description: ok } } }
`
	res := importOpts(t, tenant, openapi.Options{Upstream: "u", IncludeWrites: true, WorkspaceParam: "workspace"})
	if y := string(res.YAML); strings.Contains(y, "U_API_ID") || strings.Contains(y, "U_API_KEY") {
		t.Errorf("a tenant's header became a fixed value for every caller:\n%s", y)
	}

	actor := docHead + `  /items:
    get:
      operationId: listItems
      parameters: [ { name: X-Actor-Token, in: header, required: true, description: authentication token of the acting user, schema: { type: string } } ]
      responses: { "200": { description: ok } }
`
	res = importOpts(t, actor, openapi.Options{Upstream: "u", IncludeWrites: true, ActorHeader: "X-Actor-Token"})
	if y := string(res.YAML); strings.Contains(y, "U_API_KEY") || !strings.Contains(y, "actor_header: X-Actor-Token") {
		t.Errorf("the actor header became the upstream's fixed key:\n%s", y)
	}

	// Nor do more keys than any service takes at once.
	var many []string
	for i := range 5 {
		many = append(many, fmt.Sprintf("        - { name: X-Api-%d-Key, in: header, description: your API key, schema: { type: string } }", i))
	}
	manyKeys := docHead + "  /items:\n    get:\n      operationId: listItems\n      parameters:\n" + strings.Join(many, "\n") + "\n      responses: { \"200\": { description: ok } }\n"
	if y := string(importOpts(t, manyKeys, openapi.Options{Upstream: "u"}).YAML); strings.Contains(y, "U_API_KEY") {
		t.Errorf("five key headers became the upstream's:\n%s", y)
	}

	var params []string
	for _, p := range []string{
		"{ name: X-Page-Token, in: header, description: 'Unlike the API key, it expires', schema: { type: string } }",
		"{ name: X-CSRF-Token, in: header, description: required for authenticated browser sessions, schema: { type: string } }",
		"{ name: Sec-WebSocket-Key, in: header, description: the handshake's secret nonce, schema: { type: string } }",
		"{ name: X-Upload-Secret, in: header, description: the secret to store, schema: { type: string } }",
		"{ name: X-Request-Key, in: header, description: 'a request key; authorization is by bearer token', schema: { type: string } }",
		"{ name: Idempotency-Key, in: header, description: 'a key for a safe retry, never your API key', schema: { type: string } }",
	} {
		params = append(params, "        - "+p)
	}
	noKeys := docHead + `  /items:
    get:
      operationId: listItems
      parameters:
` + strings.Join(params, "\n") + `
      responses: { "200": { description: ok } }
`
	if y := string(importOpts(t, noKeys, openapi.Options{Upstream: "u"}).YAML); strings.Contains(y, "U_API_KEY") {
		t.Errorf("a header that is no API key became the upstream's:\n%s", y)
	}

	spellings := docHead + `  /a: { get: { operationId: getA, parameters: [ { name: X-Api-Key, in: header, required: true, description: Your API key, schema: { type: string } } ], responses: { "200": { description: ok } } } }
  /b: { get: { operationId: getB, parameters: [ { name: x-api-key, in: header, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } } }
  /c: { get: { operationId: getC, parameters: [ { name: X_API_KEY, in: header, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } } }
  /d: { get: { operationId: getD, parameters: [ { name: X-API-KEY, in: header, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } } }
`
	first := importOpts(t, spellings, openapi.Options{Upstream: "u"}).YAML
	if y := string(first); !strings.Contains(y, "X-Api-Key: ${U_API_KEY}") || strings.Contains(y, "x_api_key") || strings.Contains(y, "sensitive: true") {
		t.Errorf("want one key from U_API_KEY, no argument and no sensitive tool:\n%s", y)
	}
	for range 20 {
		if again := importOpts(t, spellings, openapi.Options{Upstream: "u"}).YAML; !bytes.Equal(again, first) {
			t.Fatalf("the import differs from run to run:\n%s\n---\n%s", first, again)
		}
	}
}

// docHead opens the OpenAPI documents these tests write inline.
const docHead = `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
`

// headerRecorder starts an upstream that answers a JSON object and keeps
// the headers of the last request it was sent.
func headerRecorder(t *testing.T) (string, *http.Header) {
	t.Helper()
	seen := new(http.Header)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*seen = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(up.Close)
	return up.URL, seen
}

// importOpts imports an OpenAPI document written inline with opts.
func importOpts(t *testing.T, doc string, opts openapi.Options) *openapi.Result {
	t.Helper()
	d, err := openapi.Read([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
