package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/openapi"
)

// An API key the document sends in the query (Trello's key and token) is
// the gateway's, as a header key is: every tool whose security names it
// sets it from a variable the import names (U_QUERY_KEY, U_QUERY_KEY_2),
// whether the operation declares it as a parameter or only its security
// asks for it; no argument carries it, so the agent is never asked for it
// and no tool is marked sensitive for naming it. A call reaches the
// upstream with the keys from the environment.
func TestImportSendsQueryAPIKeysFromTheEnvironment(t *testing.T) {
	res := importDoc(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    api_key: { type: apiKey, in: query, name: key }
    api_token: { type: apiKey, in: query, name: token }
paths:
  /boards/{id}:
    get:
      operationId: getBoard
      security: [ { api_key: [] }, { api_token: [] } ]
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
        - { name: key, in: query, required: true, schema: { type: string } }
        - { name: token, in: query, required: true, schema: { type: string } }
        - { name: fields, in: query, schema: { type: string } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /members/me:
    get:
      operationId: getMe
      security: [ { api_key: [], api_token: [] } ]
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /public/search:
    get:
      operationId: searchPublic
      security: []
      parameters:
        - { name: key, in: query, schema: { type: string } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
`, "u")
	if !strings.Contains(string(res.YAML), `U_QUERY_KEY (query parameter "key"), U_QUERY_KEY_2 (query parameter "token")`) {
		t.Errorf("the upstream does not say which variables to set:\n%s", res.YAML)
	}
	var got url.Values
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer up.Close()
	cat, core := loadImported(t, res, map[string]string{"U_URL": up.URL, "U_QUERY_KEY": "k3y-from-env", "U_QUERY_KEY_2": "t0ken-from-env"})
	// An operation whose security is none keeps its "key" as the
	// argument it is (a search key, not the upstream's).
	if in := string(cat.Tool("search_public").InputJSON); !strings.Contains(in, `"key"`) {
		t.Errorf("search_public lost its own key argument: %s", in)
	}
	p := authz.NewPrincipal("agent", "", "", nil, nil)
	for _, c := range []struct{ tool, args string }{{"get_board", `{"id":"b1","fields":"name"}`}, {"get_me", `{}`}} {
		tool := cat.Tool(c.tool)
		if tool == nil {
			t.Fatalf("%s was not imported (skipped: %v)\n%s", c.tool, res.Skipped, res.YAML)
		}
		if in := string(tool.InputJSON); strings.Contains(in, `"key"`) || strings.Contains(in, `"token"`) {
			t.Errorf("%s asks the agent for the upstream's key: %s", c.tool, in)
		}
		if tool.Sensitive {
			t.Errorf("%s is marked sensitive for naming the upstream's key", c.tool)
		}
		got = nil
		r, err := core.Call(context.Background(), p, c.tool, []byte(c.args))
		if err != nil || r.IsError {
			t.Fatalf("call %s: %v %s", c.tool, err, r.Text)
		}
		if got.Get("key") != "k3y-from-env" || got.Get("token") != "t0ken-from-env" {
			t.Errorf("%s reached the upstream with query %v, want the keys from the environment", c.tool, got)
		}
	}
}

// The document never names the variable a query key is read from: a key
// of upstream "gateway" named jwt_secret, token or url would otherwise
// read GATEWAY_JWT_SECRET, GATEWAY_TOKEN or GATEWAY_URL. A name the
// gateway does not know as a credential (jwt_secret) stays an argument;
// a name it does (token) reads GATEWAY_QUERY_KEY; _method never becomes a
// fixed value.
func TestImportQueryKeyVariablesAreTheImportsOwn(t *testing.T) {
	res := importDoc(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    a: { type: apiKey, in: query, name: jwt_secret }
    b: { type: apiKey, in: query, name: token }
    c: { type: apiKey, in: query, name: _method }
security: [ { a: [], b: [], c: [] } ]
paths:
  /things:
    get:
      operationId: listThings
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
`, "gateway")
	y := string(res.YAML)
	for _, bad := range []string{"GATEWAY_JWT_SECRET", "GATEWAY_TOKEN}", "_method:", "GATEWAY__METHOD"} {
		if strings.Contains(y, bad) {
			t.Errorf("the import wrote %s:\n%s", bad, y)
		}
	}
	if !strings.Contains(y, "token: ${GATEWAY_QUERY_KEY}") {
		t.Errorf("the token is not read from GATEWAY_QUERY_KEY:\n%s", y)
	}
}

// A document that takes a header credential or a query key (Directus: a
// bearer token or access_token) is imported with the header alone: the
// query key is another way to the same, and asking for both would only
// add a variable the operator must set.
func TestImportQueryKeyIsLeftWhenAHeaderAuthenticates(t *testing.T) {
	res := importDoc(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    Auth: { type: http, scheme: bearer }
    KeyAuth: { type: apiKey, in: query, name: access_token }
security: [ { Auth: [] }, { KeyAuth: [] } ]
paths:
  /items:
    get:
      operationId: listItems
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
`, "d")
	if y := string(res.YAML); strings.Contains(y, "QUERY_KEY") || strings.Contains(y, "access_token") || !strings.Contains(y, "Bearer ${D_TOKEN}") {
		t.Errorf("want the bearer header alone:\n%s", y)
	}
}

// importDoc imports an OpenAPI document written inline for upstream name.
func importDoc(t *testing.T, doc, name string) *openapi.Result {
	t.Helper()
	return importOpts(t, doc, openapi.Options{Upstream: name})
}
