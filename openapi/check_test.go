package openapi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
)

// One deliberately broken catalog per kind of drift, each made from the
// imported pet store catalog by one edit; the findings are pinned in
// testdata/check/NAME.golden.
var drifts = []struct{ name, old, new string }{
	{"path-missing", "      path: /pets/{pet_id}\n    response:", "      path: /animals/{pet_id}\n    response:"},
	{"method-missing", "      method: DELETE", "      method: PATCH"},
	{"query-not-declared", "        cursor: '{cursor}'", "        cursor: '{cursor}'\n        sort: '{cursor}'"},
	{"required-header-unreachable", "    workspace: # from --workspace-param\n      header: tenant", "    workspace: none"},
	{"write-on-get", "  - name: get_pet_by_id\n    description: One pet.\n    kind: read", "  - name: get_pet_by_id\n    description: One pet.\n    kind: write\n    gate: pets_write"},
	{"read-on-delete", "    kind: write # from the method DELETE\n    gate: pets_write # the operator must grant this gate\n    annotations:\n      destructive: true\n      idempotent: true\n", "    kind: read\n"},
	{"select-path-missing", "    response:\n      not_found: # the operation declares 404\n        status: [404]\n    # from the first 2xx JSON response\n    output_schema:\n      properties:\n        id:\n          type: integer", "    response:\n      select: data.pet\n      not_found: # the operation declares 404\n        status: [404]\n    # from the first 2xx JSON response\n    output_schema:\n      properties:\n        id:\n          type: integer"},
	{"fields-path-missing", "    response:\n      not_found: # the operation declares 404\n        status: [404]\n    # from the first 2xx JSON response\n    output_schema:\n      properties:\n        id:\n          type: integer", "    response:\n      fields: { id: id, owner: owner.name }\n      not_found: # the operation declares 404\n        status: [404]\n    # from the first 2xx JSON response\n    output_schema:\n      properties:\n        id:\n          type: integer"},
	{"output-schema-incompatible", "        id:\n          type: integer\n        name:\n          type: string\n        parent: {}\n        status:\n          type: [string, \"null\"]\n      required: [id, name]\n      type: object\n  # guess: output_schema", "        id:\n          type: string\n        colour:\n          type: string\n      required: [id]\n      type: object\n  # guess: output_schema"},
	{"parameter-wrong-location", "        cursor: '{cursor}'\n        limit: '{limit}'", "        limit: '{limit}'\n      headers:\n        cursor: '{cursor}'"},
	{"body-on-bodiless-operation", "      method: DELETE\n      path: /pets/{pet_id}", "      method: DELETE\n      path: /pets/{pet_id}\n      body: { why: gone }"},
}

func TestCheckDrift(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "petstore30.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile(filepath.Join("testdata", "petstore30.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Read(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("imported-catalog-passes", func(t *testing.T) {
		c, err := catalog.Parse("pets.yaml", base, &catalog.LoadOptions{Getenv: placeholders})
		if err != nil {
			t.Fatal(err)
		}
		if f := openapi.Check(c, doc, ""); len(f) != 0 {
			t.Errorf("Check of the imported catalog = %v, want no findings", f)
		}
	})
	for _, d := range drifts {
		t.Run(d.name, func(t *testing.T) {
			if !strings.Contains(string(base), d.old) {
				t.Fatalf("the base catalog no longer contains the text this drift edits: %q", d.old)
			}
			broken := strings.Replace(string(base), d.old, d.new, 1)
			c, err := catalog.Parse("pets.yaml", []byte(broken), &catalog.LoadOptions{Getenv: placeholders})
			if err != nil {
				t.Fatalf("the broken catalog must still load (drift is what validate cannot see): %v", err)
			}
			var lines []string
			for _, f := range openapi.Check(c, doc, "") {
				lines = append(lines, f.String())
			}
			if len(lines) == 0 {
				t.Fatal("Check found nothing")
			}
			got := strings.Join(lines, "\n") + "\n"
			golden := filepath.Join("testdata", "check", d.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("Check =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// The import leaves out a required parameter that sends the upstream's
// bearer token another way (Slack's "token: Authentication token",
// required on most operations): the upstream's Authorization header sends
// it, and the check of the import's own catalog finds nothing. The same
// parameter is still unreachable when the upstream sends no bearer token.
func TestCheckTakesACredentialParameterAsSentByTheBearerHeader(t *testing.T) {
	const spec = `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    oauth: { type: oauth2, flows: { clientCredentials: { tokenUrl: "https://x/t", scopes: {} } } }
security: [ { oauth: [] } ]
paths:
  /chat.postMessage:
    get:
      operationId: chat_post_message
      parameters:
        - { name: token, in: header, required: true, description: "Authentication token. Requires scope: chat:write", schema: { type: string } }
        - { name: channel, in: query, required: true, schema: { type: string } }
      responses: { "200": { description: ok } }
  /files.list:
    get:
      operationId: files_list
      parameters:
        - { name: token, in: query, required: true, description: "Authentication token. Requires scope: files:read", schema: { type: string } }
      responses: { "200": { description: ok } }
`
	res, c := importDoc(t, spec, openapi.Options{})
	doc, err := openapi.Read([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if f := openapi.Check(c, doc, ""); len(f) != 0 {
		t.Errorf("Check of the imported catalog = %v, want no findings", f)
	}
	// Without the bearer header, nothing sends the token.
	basic := strings.Replace(string(res.YAML), "Authorization: Bearer ${U_TOKEN}", "Authorization: Basic ${U_BASIC_AUTH}", 1)
	if basic == string(res.YAML) {
		t.Fatalf("the catalog sends no bearer token:\n%s", res.YAML)
	}
	c, err = catalog.Parse("imported.yaml", []byte(basic), &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatal(err)
	}
	if f := openapi.Check(c, doc, ""); len(f) != 2 {
		t.Errorf("Check without a bearer header = %v, want the two tokens unreachable", f)
	}
}

// An API key the document sends in the query, declared only by its
// security scheme (webscraping.ai's api_key), is set by the import from
// the environment; Check takes it as the scheme's, not as a query
// parameter the operation does not declare.
func TestCheckTakesAQueryAPIKeyAsTheSecuritySchemes(t *testing.T) {
	const spec = `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
components:
  securitySchemes:
    api_key: { type: apiKey, in: query, name: api_key }
security: [ { api_key: [] } ]
paths:
  /html:
    get:
      operationId: getHTML
      parameters:
        - { name: url, in: query, required: true, schema: { type: string } }
      responses: { "200": { description: ok } }
`
	res, c := importDoc(t, spec, openapi.Options{})
	if !strings.Contains(string(res.YAML), "api_key: ${U_QUERY_KEY}") {
		t.Fatalf("the import does not send the key from the environment:\n%s", res.YAML)
	}
	wantNoFindings(t, c, spec)
}

// A required framing header (here.com declares content-length on an
// upload) is the HTTP client's to send, as Content-Type is: no finding.
func TestCheckLeavesFramingHeadersToTheClient(t *testing.T) {
	const spec = `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /shadows/{id}:
    get:
      operationId: getShadow
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
        - { name: content-length, in: header, required: true, schema: { type: integer } }
        - { name: Host, in: header, required: true, schema: { type: string } }
      responses: { "200": { description: ok } }
`
	_, c := importDoc(t, spec, openapi.Options{})
	wantNoFindings(t, c, spec)
}

// A document path may carry a query or a fragment: AWS's
// "/tags/{resourceArn}#tagKeys" holds the DELETE that "/tags/{resourceArn}"
// lacks, and Flickr's "/rest?method=…" paths tell their operations apart
// by a query value the path itself sets, as Azure's
// "/templeton/v1/jobs?op=LISTAFTERID" does beside "/templeton/v1/jobs".
// Check finds each tool's own operation and takes the path's query as
// declared.
func TestCheckFindsOperationsOnPathsWithQueriesAndFragments(t *testing.T) {
	const spec = `openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /tags/{resourceArn}:
    get:
      operationId: ListTags
      parameters: [ { name: resourceArn, in: path, required: true, schema: { type: string } } ]
      responses: { "200": { description: ok } }
    post:
      operationId: TagResource
      parameters: [ { name: resourceArn, in: path, required: true, schema: { type: string } } ]
      requestBody: { required: true, content: { application/json: { schema: { type: object, required: [tags], properties: { tags: { type: object } } } } } }
      responses: { "200": { description: ok } }
  /tags/{resourceArn}#tagKeys:
    delete:
      operationId: UntagResource
      parameters:
        - { name: resourceArn, in: path, required: true, schema: { type: string } }
        - { name: tagKeys, in: query, required: true, schema: { type: array, items: { type: string } } }
      responses: { "200": { description: ok } }
  /rest?method=flickr.photos.getInfo:
    get:
      operationId: getPhoto
      parameters: [ { name: photo_id, in: query, required: true, schema: { type: string } } ]
      responses: { "200": { description: ok } }
  /templeton/v1/jobs:
    get:
      operationId: listJobs
      responses: { "200": { description: ok } }
  /templeton/v1/jobs?op=LISTAFTERID:
    get:
      operationId: listAfterID
      parameters: [ { name: jobid, in: query, required: true, schema: { type: string } } ]
      responses: { "200": { description: ok } }
  /rest?method=flickr.people.getInfo:
    get:
      operationId: getPerson
      parameters: [ { name: user_id, in: query, required: true, schema: { type: string } } ]
      responses: { "200": { description: ok } }
`
	res, c := importDoc(t, spec, openapi.Options{IncludeWrites: true})
	if len(c.Tools) != 7 {
		t.Fatalf("imported %d tools, skipped %v", len(c.Tools), res.Skipped)
	}
	wantNoFindings(t, c, spec)
}

// wantNoFindings checks c, imported from spec, against spec itself:
// an import and its own document must agree.
func wantNoFindings(t *testing.T, c *catalog.Catalog, spec string) {
	t.Helper()
	doc, err := openapi.Read([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if f := openapi.Check(c, doc, ""); len(f) != 0 {
		t.Errorf("Check of the imported catalog = %v, want no findings", f)
	}
}
