package openapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
)

// An orchestrator-shaped document: runs composed with allOf (a base
// object plus its own members), a result that is oneOf two shapes, POST
// queries, a path whose placeholder shares its segment, an answer with no
// body, a scalar answer and a text answer.
const composedDoc = `openapi: 3.1.0
info: { title: runs, version: "1" }
components:
  securitySchemes:
    key: { type: apiKey, in: header, name: X-Api-Key }
  schemas:
    Base:
      type: object
      properties:
        id: { type: string }
        created: { type: string }
    Run:
      allOf:
        - $ref: '#/components/schemas/Base'
        - type: object
          properties:
            name: { type: string }
            state: { type: object, properties: { type: { type: string }, message: { type: string } } }
            tags: { type: array, items: { type: string } }
    Flow:
      allOf:
        - $ref: '#/components/schemas/Base'
        - properties:
            flow_name: { type: string }
    Page:
      type: object
      properties:
        results: { type: array, items: { $ref: '#/components/schemas/Run' } }
        next: { anyOf: [ { type: string }, { type: "null" } ] }
paths:
  /runs/filter:
    post:
      operationId: read_runs
      requestBody: { content: { application/json: { schema: { type: object } } } }
      responses:
        "200": { description: ok, content: { application/json: { schema: { type: array, items: { $ref: '#/components/schemas/Run' } } } } }
  /runs/page:
    get:
      responses:
        "200": { description: ok, content: { application/json: { schema: { $ref: '#/components/schemas/Page' } } } }
  /runs/{id}:
    parameters: [ { name: id, in: path, required: true, schema: { type: string } } ]
    get:
      responses:
        "200": { description: ok, content: { application/json: { schema: { $ref: '#/components/schemas/Run' } } } }
    delete:
      responses: { "204": { description: gone } }
  /things/{id}:
    parameters: [ { name: id, in: path, required: true, schema: { type: string } } ]
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                oneOf:
                  - $ref: '#/components/schemas/Run'
                  - $ref: '#/components/schemas/Flow'
  /runs/{id}:cancel:
    parameters: [ { name: id, in: path, required: true, schema: { type: string } } ]
    post:
      x-mcp-kind: write
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object, properties: { ok: { type: boolean } } } } } } }
  /runs/count:
    post:
      responses: { "200": { description: ok, content: { application/json: { schema: { type: integer } } } } }
  /runs/export:
    get:
      responses: { "200": { description: ok, content: { text/csv: { schema: { type: string } } } } }
  /orgs/{org}/runs:
    parameters: [ { name: org, in: path, required: true, schema: { type: string } } ]
    get:
      responses: { "200": { description: ok, content: { application/json: { schema: { type: array, items: { $ref: '#/components/schemas/Run' } } } } } }
  /pets/{petId}:
    get:
      parameters: [ { name: petId, in: path, required: true, schema: { type: integer } } ]
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /ping:
    post:
      x-mcp-kind: read
      responses: { "200": { description: ok, content: { application/json: { schema: { type: boolean } } } } }
  /legacy/purge:
    get:
      x-mcp-kind: write
      responses: { "204": { description: done } }
`

const composedCatalog = `version: 1
server: { name: t }
auth: { jwt: { jwks_url: "https://idp.example.com/jwks", algorithms: [RS256], issuer: i, audience: a } }
gates: { operate: { scopes: [op] } }
upstreams: { runs: { base_url: "http://127.0.0.1:1", workspace: none } }
tools:
`

// TestCheckComposedSchemas: select and fields paths, projections among
// them, are followed through allOf (members merge), oneOf and anyOf
// (a member of any branch) exactly as through properties, and a member no
// branch declares is a problem.
func TestCheckComposedSchemas(t *testing.T) {
	doc, err := openapi.Read([]byte(composedDoc))
	if err != nil {
		t.Fatal(err)
	}
	read := func(path, response string) string {
		return "  - { name: t, description: T., kind: read, request: { upstream: runs, path: " + path + " }, response: " + response + " }\n"
	}
	query := func(response string) string {
		return "  - { name: t, description: T., kind: read, request: { upstream: runs, method: POST, path: /runs/filter, body: {} }, response: " + response + " }\n"
	}
	for _, tt := range []struct {
		name, tool string
		want       []string
	}{
		{"allof-members-merge", read("/runs/page", `{ select: results, fields: { id: "#.id", name: "#.name" } }`), nil},
		{"allof-member-from-the-ref-branch",
			"  - { name: t, description: T., input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: runs, path: \"/runs/{id}\" }, response: { fields: { id: id, created: created, state: state.type } } }\n", nil},
		{"allof-missing-member", read("/runs/page", `{ select: results, fields: { owner: "#.owner" } }`),
			[]string{`response.fields owner: path "#.owner" is not in the response schema`}},
		{"allof-missing-nested-member", read("/runs/page", `{ fields: { why: results.0.state.reason } }`),
			[]string{`response.fields why: path "results.0.state.reason" is not in the response schema`}},
		{"projection-of-existing-members", query(`{ select: "#.{id,name,kind:state.type}" }`), nil},
		{"projection-of-a-missing-member", query(`{ select: "#.{id,nmae}" }`),
			[]string{`response.select "#.{id,nmae}" is not in the response schema ("nmae" is not there)`}},
		{"projection-array-form", query(`{ select: "#.[id,tags.0]" }`), nil},
		{"projection-after-pipe", query(`{ select: "#.id|0" }`), nil},
		{"query-then-member", query(`{ select: "#(state.type==\"FAILED\")#.name" }`), nil},
		{"query-then-missing-member", query(`{ select: "#(state.type==\"FAILED\")#.owner" }`),
			[]string{`response.select "#(state.type==\"FAILED\")#.owner" is not in the response schema`}},
		{"count-of-an-array", query(`{ fields: { total: "#" } }`), nil},
		{"index-into-an-object-is-a-problem", read("/runs/page", `{ select: next.0 }`),
			[]string{`response.select "next.0" is not in the response schema`}},
		{"oneof-member-of-either-branch", "  - { name: t, description: T., input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: runs, path: \"/things/{id}\" }, response: { fields: { name: name, flow: flow_name, id: id } } }\n", nil},
		{"oneof-member-of-no-branch", "  - { name: t, description: T., input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: runs, path: \"/things/{id}\" }, response: { fields: { owner: owner } } }\n",
			[]string{`response.fields owner: path "owner" is not in the response schema`}},
		{"output-schema-of-a-projection", query(`{ select: "#.{id,name}" }, output_schema: { type: object, properties: { items: { type: array } } }`), nil},
		{"output-schema-over-allof", read("/runs/page", `{}, output_schema: { type: object, properties: { results: { type: array }, next: { type: [string, "null"] } } }`), nil},
		{"output-schema-naming-no-member-of-allof", read("/runs/page", `{}, output_schema: { type: object, properties: { total: { type: integer } } }`),
			[]string{`output_schema property "total" is not in the shaped response`}},
		{"output-schema-type-clash-through-anyof", read("/runs/page", `{}, output_schema: { type: object, properties: { next: { type: integer } } }`),
			[]string{`output_schema property "next": type [integer] does not admit the document's string`}},
		{"output-schema-of-a-mapped-path-is-an-array", read("/runs/page", `{ fields: { ids: "results.#.id" } }, output_schema: { type: object, properties: { ids: { type: array } } }`), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := checkMessages(t, doc, composedCatalog+tt.tool)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Check(%s) =\n  %s\nwant\n  %s", tt.tool, strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestCheckCuratedCatalogIsGreen: what a curated catalog decides on
// purpose (a POST query read as kind: read, an argument hidden with a
// fixed value, headers the document may not declare, the results the
// gateway makes of empty, scalar and text answers, the sensitive note) is
// not a problem, and the drift each rule exists for still is.
func TestCheckCuratedCatalogIsGreen(t *testing.T) {
	doc, err := openapi.Read([]byte(composedDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, tool string
		overrides  string
		want       []string
	}{
		{"post-query-marked-read", "  - { name: t, description: T., kind: read, request: { upstream: runs, method: POST, path: /runs/filter, body: {} } }\n", "", nil},
		{"post-with-kind-left-to-its-default", "  - { name: t, description: T., request: { upstream: runs, method: POST, path: /runs/filter, body: {} } }\n", "",
			[]string{`a read tool is bound to POST, which may change state: if the operation only queries, write kind: read on the tool (or in its override); if it changes anything, make it kind: write behind a gate`}},
		{"post-the-document-marks-read", "  - { name: t, description: T., request: { upstream: runs, method: POST, path: /ping } }\n", "", nil},
		{"read-on-delete-stays-a-problem", "  - { name: t, description: T., kind: read, input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: runs, method: DELETE, path: \"/runs/{id}\" } }\n", "",
			[]string{`a read tool is bound to DELETE, which may change state: make it kind: write behind a gate`}},
		{"write-on-get-stays-a-problem", "  - { name: t, description: T., kind: write, gate: operate, request: { upstream: runs, method: GET, path: /runs/page } }\n", "",
			[]string{`a write tool is bound to GET, which does not change anything`}},
		{"write-on-a-get-the-document-marks-write", "  - { name: t, description: T., kind: write, gate: operate, request: { upstream: runs, method: GET, path: /legacy/purge } }\n", "", nil},
		{"placeholder-sharing-its-segment", "  - { name: t, description: T., kind: write, gate: operate, input: { type: object, properties: { run: { type: string } }, required: [run] }, request: { upstream: runs, method: POST, path: \"/runs/{run}:cancel\" } }\n", "", nil},
		{"hidden-path-argument", "  - { name: t, description: T., input: { type: object, properties: { org: { type: string } }, required: [org] }, request: { upstream: runs, path: \"/orgs/{org}/runs\" } }\n",
			"overrides: { t: { arguments: { org: { hide: true, value: acme } } } }\n", nil},
		{"literal-the-placeholder-schema-refuses", "  - { name: t, description: T., request: { upstream: runs, path: /pets/mine } }\n", "",
			[]string{`no path in the document matches /pets/mine`}},
		{"literal-the-placeholder-schema-allows", "  - { name: t, description: T., request: { upstream: runs, path: /pets/42 } }\n", "", nil},
		{"literal-path-that-matches-nothing", "  - { name: t, description: T., request: { upstream: runs, path: /orgs/acme/jobs } }\n", "",
			[]string{`no path in the document matches /orgs/acme/jobs`}},
		{"headers-openapi-cannot-declare", "  - { name: t, description: T., request: { upstream: runs, path: /runs/page, headers: { Accept: application/json, X-Api-Key: k } } }\n", "", nil},
		{"undeclared-header-stays-a-problem", "  - { name: t, description: T., request: { upstream: runs, path: /runs/page, headers: { X-Trace: t } } }\n", "",
			[]string{`header "X-Trace" is not a declared header parameter`}},
		{"empty-answer-result", "  - { name: t, description: T., kind: write, gate: operate, input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: runs, method: DELETE, path: \"/runs/{id}\" }, output_schema: { type: object, properties: { ok: { type: boolean }, upstreamStatus: { type: integer } } } }\n", "", nil},
		{"empty-answer-has-no-members-of-its-own", "  - { name: t, description: T., kind: write, gate: operate, input: { type: object, properties: { id: { type: string } }, required: [id] }, request: { upstream: runs, method: DELETE, path: \"/runs/{id}\" }, output_schema: { type: object, properties: { id: { type: string } } } }\n", "",
			[]string{`output_schema property "id" is not in the shaped response`}},
		{"scalar-answer-is-value", "  - { name: t, description: T., kind: read, request: { upstream: runs, method: POST, path: /runs/count }, output_schema: { type: object, properties: { value: { type: integer } } } }\n", "", nil},
		{"scalar-answer-has-no-members", "  - { name: t, description: T., kind: read, request: { upstream: runs, method: POST, path: /runs/count }, output_schema: { type: object, properties: { count: { type: integer } } } }\n", "",
			[]string{`output_schema property "count" is not in the shaped response`}},
		{"text-answer-result", "  - { name: t, description: T., request: { upstream: runs, path: /runs/export }, output_schema: { type: object, properties: { text: { type: string }, byteCount: { type: integer } } } }\n", "", nil},
		{"sensitive-note", "  - { name: t, description: T., request: { upstream: runs, path: /runs/page }, response: { sensitive: [\"results.#.name\"], sensitive_note_field: why }, output_schema: { type: object, properties: { results: { type: array }, why: { type: string } } } }\n", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := checkMessages(t, doc, composedCatalog+tt.tool+tt.overrides)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Check(%s%s) =\n  %s\nwant\n  %s", tt.tool, tt.overrides, strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func checkMessages(t *testing.T, doc *openapi.Document, src string) []string {
	t.Helper()
	c, err := catalog.Parse("c.yaml", []byte(src), &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatalf("the catalog must load: %v\n%s", err, src)
	}
	var got []string
	for _, f := range openapi.Check(c, doc, "") {
		got = append(got, f.Message)
	}
	return got
}

// TestCheckServerVariables: a server URL written with variables
// ({scheme}://{host}/{base}) prefixes the tools' paths with its variables'
// defaults, as a client of the document would call it.
func TestCheckServerVariables(t *testing.T) {
	doc, err := openapi.Read([]byte(strings.Replace(composedDoc, "components:", `servers:
  - url: "{scheme}://api.example.com/{base}"
    variables:
      scheme: { default: https }
      base: { default: api/v2 }
components:`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	tool := "  - { name: t, description: T., request: { upstream: runs, path: /api/v2/runs/page } }\n"
	if got := checkMessages(t, doc, composedCatalog+tool); len(got) != 0 {
		t.Errorf("Check(%s) = %q, want no problems", tool, got)
	}
}

// TestCheckDiscriminatedSubtypes: a response declared as a discriminated
// base schema may be any schema that extends it (allOf: [{$ref: Base}])
// or that its mapping names, so their members are there too; a member
// none of them declares is still a problem.
func TestCheckDiscriminatedSubtypes(t *testing.T) {
	doc, err := openapi.Read([]byte(`openapi: 3.0.3
info: { title: pets, version: "1" }
components:
  schemas:
    Pet:
      type: object
      required: [petType]
      properties: { name: { type: string }, petType: { type: string } }
      discriminator: { propertyName: petType, mapping: { lizard: '#/components/schemas/Lizard' } }
    Cat:
      allOf:
        - $ref: '#/components/schemas/Pet'
        - type: object
          properties: { huntingSkill: { type: string } }
    Dog:
      allOf:
        - $ref: '#/components/schemas/Pet'
        - type: object
          properties: { packSize: { type: integer } }
    Lizard:
      type: object
      properties: { petType: { type: string }, scales: { type: integer } }
paths:
  /pet:
    get:
      responses: { "200": { description: ok, content: { application/json: { schema: { $ref: '#/components/schemas/Pet' } } } } }
`))
	if err != nil {
		t.Fatal(err)
	}
	tool := func(fields string) string {
		return composedCatalog + "  - { name: t, description: T., request: { upstream: runs, path: /pet }, response: { fields: " + fields + " } }\n"
	}
	if got := checkMessages(t, doc, tool("{ name: name, hunting: huntingSkill, pack: packSize, scales: scales }")); len(got) != 0 {
		t.Errorf("Check of members of the subtypes = %q, want no problems", got)
	}
	want := []string{`response.fields wings: path "wings" is not in the response schema`}
	if got := checkMessages(t, doc, tool("{ wings: wings }")); !slices.Equal(got, want) {
		t.Errorf("Check of a member no subtype has = %q, want %q", got, want)
	}
}

// A document whose schemas fan out through allOf (ten $refs to the next
// schema, seven deep, within maxComposition) is checked in a walk that
// visits each schema once: ten million visits before, minutes of gateway
// check for a 3 KB document. The bound below guards
// against a hang; it is not a measure of speed.
func TestCheckFanOutThroughAllOfEnds(t *testing.T) {
	var b strings.Builder
	b.WriteString("openapi: 3.1.0\ninfo: { title: t, version: '1' }\npaths:\n  /runs/page:\n    get:\n      responses:\n        '200':\n          description: ok\n          content: { application/json: { schema: { $ref: '#/components/schemas/S0' } } }\ncomponents:\n  schemas:\n")
	for i := range 7 {
		fmt.Fprintf(&b, "    S%d:\n      allOf:\n", i)
		for range 10 {
			fmt.Fprintf(&b, "        - $ref: '#/components/schemas/S%d'\n", i+1)
		}
	}
	b.WriteString("    S7: { type: object, properties: { id: { type: string } } }\n")
	doc, err := openapi.Read([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() {
		done <- checkMessages(t, doc, composedCatalog+"  - { name: t, description: T., kind: read, request: { upstream: runs, path: /runs/page }, response: { fields: { id: id, who: owner } } }\n")
	}()
	select {
	case got := <-done:
		want := []string{`response.fields who: path "owner" is not in the response schema`}
		if !slices.Equal(got, want) {
			t.Errorf("Check = %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Check of a 4 KB fan-out document did not end within 10 s")
	}
}
