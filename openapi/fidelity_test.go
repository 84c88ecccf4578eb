package openapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
)

// importDoc reads and imports doc as a standalone catalog and loads it
// the way the gateway will.
func importDoc(t *testing.T, doc string, opts openapi.Options) (*openapi.Result, *catalog.Catalog) {
	t.Helper()
	d, err := openapi.Read([]byte(doc))
	if err != nil {
		t.Fatalf("Read = %v", err)
	}
	if opts.Upstream == "" {
		opts.Upstream = "u"
	}
	opts.Standalone = true
	res, err := openapi.Import(d, opts)
	if err != nil {
		t.Fatalf("Import = %v", err)
	}
	if res.Tools == 0 {
		return res, &catalog.Catalog{} // a catalog must declare a tool
	}
	cat, err := catalog.Parse("imported.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatalf("the imported catalog does not load: %v\n%s", err, res.YAML)
	}
	return res, cat
}

// oneOp is a document with one operation and no body or answer.
func oneOp(method, path, operationID, extra string) string {
	return "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\npaths:\n  " + path + ":\n    " +
		strings.ToLower(method) + ":\n      operationId: '" + operationID + "'\n" + extra + "      responses: {'200': {description: ok}}\n"
}

func TestImportKind(t *testing.T) {
	for _, tc := range []struct {
		name               string
		method, path, opID string
		extra              string
		reads              []string
		includeWrites      bool
		want               string // "read", "write", or "" for skipped as a write
		wantNote           string
	}{
		{name: "post-filter-path-is-a-read", method: "POST", path: "/flow_runs/filter", opID: "read_flow_runs_flow_runs_filter_post", want: "read", wantNote: "its path ends in filter"},
		{name: "post-count-path-is-a-read", method: "POST", path: "/deployments/count", want: "read"},
		{name: "post-google-style-search-is-a-read", method: "POST", path: "/pets:search", want: "read"},
		{name: "post-query-is-a-read", method: "POST", path: "/api/v1/query", want: "read"},
		{name: "post-operation-id-ending-in-list-is-a-read", method: "POST", path: "/users/lookup", opID: "usersList", want: "read", wantNote: "its operationId ends in list"},
		{name: "post-create-list-is-a-write", method: "POST", path: "/lists", opID: "createList", want: ""},
		{name: "post-delete-by-filter-is-a-write", method: "POST", path: "/things/delete_by_filter", want: ""},
		{name: "post-whose-id-says-delete-is-a-write", method: "POST", path: "/things/filter", opID: "deleteThingsByFilter", want: ""},
		{name: "post-reindex-search-is-a-write", method: "POST", path: "/admin/repositories/{repository}/reindex-search", want: ""},
		{name: "post-install-filter-is-a-write", method: "POST", path: "/system/console/bundles/install-io-filter", want: ""},
		{name: "post-answer-callback-query-is-a-write", method: "POST", path: "/answerCallbackQuery", want: ""},
		{name: "post-noun-search-is-a-read", method: "POST", path: "/cases/case-search", want: "read"},
		{name: "post-to-a-resource-whose-id-ends-in-list-is-a-write", method: "POST", path: "/v1/radar/value_lists/{value_list}", opID: "PostRadarValueListsValueList", want: ""},
		{name: "post-like-list-is-a-write", method: "POST", path: "/users/{id}/lists/{list_id}/like", opID: "likeList", want: ""},
		{name: "post-reorder-list-is-a-write", method: "POST", path: "/users/{id}/lists/{list_id}/items/reorder", opID: "reorderList", want: ""},
		{name: "post-configure-search-is-a-write", method: "POST", path: "/v1/{name}:configureSearch", opID: "healthcare.projects.locations.datasets.fhirStores.configureSearch", want: ""},
		{name: "post-configure-search-on-a-path-is-a-write", method: "POST", path: "/fhir/configureSearch", want: ""},
		{name: "post-custom-search-method-on-a-parameter-is-a-read", method: "POST", path: "/v2/{placement}:search", opID: "retail.projects.locations.catalogs.servingConfigs.search", extra: "      parameters: [{name: placement, in: path, required: true, schema: {type: string}}]\n", want: "read", wantNote: "its path ends in search"},
		{name: "post-filter-by-parameter-is-a-write", method: "POST", path: "/filter/{id}", want: ""},
		{name: "delete-filter-is-a-write", method: "DELETE", path: "/logs/filter", want: ""},
		{name: "x-mcp-kind-read-on-post", method: "POST", path: "/flow_runs/history", extra: "      x-mcp-kind: read\n", want: "read", wantNote: "from x-mcp-kind"},
		{name: "x-mcp-kind-write-on-a-query-name", method: "POST", path: "/things/filter", extra: "      x-mcp-kind: write\n", want: ""},
		{name: "x-mcp-kind-write-on-get", method: "GET", path: "/trigger", extra: "      x-mcp-kind: write\n", includeWrites: true, want: "write"},
		{name: "x-mcp-kind-read-never-ungates-a-delete", method: "DELETE", path: "/things", extra: "      x-mcp-kind: read\n", includeWrites: true, want: "write", wantNote: "x-mcp-kind: read is taken only for GET, HEAD and POST"},
		{name: "reads-flag-glob", method: "POST", path: "/reports/export", reads: []string{"POST /*/export"}, want: "read", wantNote: `from --reads "POST /*/export"`},
		{name: "reads-flag-any-method", method: "PUT", path: "/reports/render", reads: []string{"* /reports/*"}, want: "read"},
		{name: "reads-flag-other-method-does-not-match", method: "PUT", path: "/reports/render", reads: []string{"POST /reports/*"}, want: ""},
		{name: "reads-flag-beats-x-mcp-kind", method: "POST", path: "/things/filter", extra: "      x-mcp-kind: write\n", reads: []string{"post /things/filter"}, want: "read"},
		{name: "reads-glob-is-per-segment", method: "POST", path: "/a/b/export", reads: []string{"POST /*/export"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := oneOp(tc.method, tc.path, tc.opID, tc.extra)
			res, cat := importDoc(t, doc, openapi.Options{Reads: tc.reads, IncludeWrites: tc.includeWrites})
			if tc.want == "" {
				if res.Tools != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, "write operation") {
					t.Fatalf("Import = %d tools, skipped %v; want it skipped as a write\n%s", res.Tools, res.Skipped, res.YAML)
				}
				return
			}
			if len(cat.Tools) != 1 {
				t.Fatalf("imported %d tools (skipped %v), want 1\n%s", len(cat.Tools), res.Skipped, res.YAML)
			}
			tool := cat.Tools[0]
			if tool.Kind != tc.want {
				t.Errorf("kind = %s, want %s\n%s", tool.Kind, tc.want, res.YAML)
			}
			if tc.want == "read" && tool.Gate != catalog.ViewGate {
				t.Errorf("a read carries gate %q, want %q", tool.Gate, catalog.ViewGate)
			}
			if tool.Request.Method != tc.method {
				t.Errorf("method = %s, want %s", tool.Request.Method, tc.method)
			}
			if tc.wantNote != "" && !strings.Contains(string(res.YAML), tc.wantNote) {
				t.Errorf("the kind's comment does not say %q:\n%s", tc.wantNote, res.YAML)
			}
			nonGet := tc.method != "GET" && tc.method != "HEAD"
			if listed := len(res.Reads) == 1; listed != (tc.want == "read" && nonGet) {
				t.Errorf("Result.Reads = %v", res.Reads)
			}
		})
	}
}

func TestImportRefusesBadReadsPatterns(t *testing.T) {
	d, err := openapi.Read([]byte(oneOp("GET", "/a", "a", "")))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"POST", "FETCH /a", "POST a/b", "POST /[", ""} {
		_, err := openapi.Import(d, openapi.Options{Upstream: "u", Reads: []string{p}})
		if err == nil || !strings.Contains(err.Error(), "--reads") || !strings.Contains(err.Error(), p) {
			t.Errorf("Import with --reads %q = %v, want an error naming the pattern", p, err)
		}
	}
}

func TestImportKeepsRelativeServerURLs(t *testing.T) {
	const paths = "paths:\n  /things/{id}:\n    get:\n      operationId: getThing\n      parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n      responses: {'200': {description: ok}}\n"
	const swaggerPaths = `"paths":{"/things/{id}":{"get":{"operationId":"getThing","parameters":[{"name":"id","in":"path","required":true,"type":"string"}],"responses":{"200":{"description":"ok"}}}}}`
	for _, tc := range []struct {
		name, doc, wantPath, wantBase string
	}{
		{"relative-server-url", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: /api/v2}]\n" + paths, "/api/v2/things/{id}", "${U_URL}"},
		{"relative-server-url-trailing-slash", "openapi: 3.1.0\ninfo: {title: t, version: '1'}\nservers: [{url: /api/}]\n" + paths, "/api/things/{id}", "${U_URL}"},
		{"server-variables-defaulted", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: '/{prefix}/{version}', variables: {prefix: {default: api}, version: {default: v3, enum: [v2, v3]}}}]\n" + paths, "/api/v3/things/{id}", "${U_URL}"},
		{"absolute-server-variables-defaulted", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://{region}.example.com/v1', variables: {region: {default: eu}}}]\n" + paths, "/things/{id}", "${U_URL:-https://eu.example.com/v1}"},
		{"absolute-server-wins-over-relative", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: /api}, {url: 'https://api.example.com/api'}]\n" + paths, "/things/{id}", "${U_URL:-https://api.example.com/api}"},
		{"root-server-url", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: /}]\n" + paths, "/things/{id}", "${U_URL}"},
		{"swagger-base-path-without-host", `{"swagger":"2.0","info":{"title":"t","version":"1"},"basePath":"/api/v1",` + swaggerPaths + `}`, "/api/v1/things/{id}", "${U_URL}"},
		{"swagger-base-path-with-host", `{"swagger":"2.0","info":{"title":"t","version":"1"},"host":"gitea.example.com","basePath":"/api/v1","schemes":["https"],` + swaggerPaths + `}`, "/things/{id}", "${U_URL:-https://gitea.example.com/api/v1}"},
		{"document-relative-server-url-is-left-to-the-operator", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: api/v2}]\n" + paths, "/things/{id}", "${U_URL}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, cat := importDoc(t, tc.doc, openapi.Options{})
			if len(cat.Tools) != 1 {
				t.Fatalf("imported %d tools, skipped %v", len(cat.Tools), res.Skipped)
			}
			if got := cat.Tools[0].Request.Path; got != tc.wantPath {
				t.Errorf("request.path = %s, want %s\n%s", got, tc.wantPath, res.YAML)
			}
			if !strings.Contains(string(res.YAML), "base_url: "+tc.wantBase+" #") {
				t.Errorf("base_url is not %s:\n%s", tc.wantBase, res.YAML)
			}
			if tc.name == "document-relative-server-url-is-left-to-the-operator" && !strings.Contains(string(res.YAML), `"api/v2" cannot start the tool paths`) {
				t.Errorf("the base_url comment does not say why the server URL was not used:\n%s", res.YAML)
			}
		})
	}
}

// bodyDoc is a POST whose request body (and 200 answer) has media type mt.
func bodyDoc(mt, schema string) string {
	return "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\npaths:\n  /things:\n    post:\n      operationId: makeThing\n" +
		"      requestBody:\n        required: true\n        content:\n          '" + mt + "':\n            schema: " + schema + "\n" +
		"      responses:\n        '200':\n          description: ok\n          content:\n            '" + mt + "':\n              schema: {type: object, properties: {id: {type: string}}}\n"
}

// importedBody imports doc, which must give one tool whose body sets
// name from its argument, and returns the tool and the Content-Type it
// sends ("" for none).
func importedBody(t *testing.T, doc string) (tool *catalog.Tool, contentType string, yaml []byte) {
	t.Helper()
	res, cat := importDoc(t, doc, openapi.Options{IncludeWrites: true})
	if len(cat.Tools) != 1 {
		t.Fatalf("imported %d tools, skipped %v", len(cat.Tools), res.Skipped)
	}
	tool = cat.Tools[0]
	if body, _ := tool.Request.Body.(map[string]any); body["name"] != "{name}" {
		t.Errorf("body = %v, want name from the argument\n%s", tool.Request.Body, res.YAML)
	}
	for _, h := range tool.Request.HeaderParams {
		if h.Name == "Content-Type" {
			contentType = h.Template.Raw
		}
	}
	return tool, contentType, res.YAML
}

func TestImportJSONMediaTypesOfAnySpelling(t *testing.T) {
	const schema = "{type: object, required: [name], properties: {name: {type: string}}}"
	for _, tc := range []struct{ mt, contentType string }{
		{"application/json; charset=utf-8", ""},
		{"text/json", "text/json"},
		{"application/vnd.api+json", "application/vnd.api+json"},
		{"application/merge-patch+json", "application/merge-patch+json"},
		{"application/x-amz-json-1.1", "application/x-amz-json-1.1"},
		{"Application/X-Amz-JSON-1.0", "application/x-amz-json-1.0"},
		{"application/*+json", ""},
	} {
		t.Run(tc.mt, func(t *testing.T) {
			tool, got, _ := importedBody(t, bodyDoc(tc.mt, schema))
			if tool.OutputSchema == nil {
				t.Errorf("the %s answer gave no output_schema", tc.mt)
			}
			if got != tc.contentType {
				t.Errorf("Content-Type header = %q, want %q", got, tc.contentType)
			}
		})
	}
	// Zuora's answers give application/json with examples only, and the
	// schema under "application/json; charset=utf-8"; its bodies likewise.
	t.Run("the-spelling-that-gives-a-schema", func(t *testing.T) {
		doc := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\npaths:\n  /things:\n    post:\n      operationId: makeThing\n" +
			"      requestBody:\n        required: true\n        content:\n          application/json: {example: {name: x}}\n          'application/json; charset=utf-8':\n            schema: " + schema + "\n" +
			"      responses:\n        '200':\n          description: ok\n          content:\n            application/json: {examples: {one: {value: {amount: 1}}}}\n" +
			"            'application/json; charset=utf-8':\n              schema: {type: object, properties: {amount: {type: number}, status: {type: string}}}\n"
		tool, _, yaml := importedBody(t, doc)
		if props, _ := tool.OutputSchema["properties"].(map[string]any); props["status"] == nil {
			t.Errorf("output_schema = %v, want the schema of the spelling that has one\n%s", tool.OutputSchema, yaml)
		}
	})
	t.Run("a-merge-patch-body-beside-a-bare-json-one", func(t *testing.T) {
		doc := strings.Replace(bodyDoc("application/merge-patch+json", schema), "        content:\n", "        content:\n          application/json: {}\n", 1)
		if _, got, yaml := importedBody(t, doc); got != "application/merge-patch+json" {
			t.Errorf("Content-Type = %q, want the media type whose schema shaped the body\n%s", got, yaml)
		}
	})
	t.Run("a-media-type-that-would-expand-is-not-sent", func(t *testing.T) {
		res, cat := importDoc(t, bodyDoc("application/${GATEWAY_JWT_SECRET}+json", schema), openapi.Options{IncludeWrites: true})
		if len(cat.Tools) != 1 || len(cat.Tools[0].Request.HeaderParams) != 0 {
			t.Fatalf("want one tool without headers:\n%s", res.YAML)
		}
	})
}

func TestImportFormBodies(t *testing.T) {
	t.Run("form-fields-become-arguments", func(t *testing.T) {
		res, cat := importDoc(t, bodyDoc("application/x-www-form-urlencoded", "{type: object, required: [grant_type], properties: {grant_type: {type: string}, scope: {type: array, items: {type: string}}, meta: {type: object}}}"), openapi.Options{IncludeWrites: true})
		if len(cat.Tools) != 1 {
			t.Fatalf("imported %d tools, skipped %v", len(cat.Tools), res.Skipped)
		}
		tool := cat.Tools[0]
		if tool.Request.BodyFormat != catalog.BodyForm {
			t.Errorf("body_format = %q, want form", tool.Request.BodyFormat)
		}
		body, _ := tool.Request.Body.(map[string]any)
		if body["grant_type"] != "{grant_type}" || body["scope"] != "{scope}" {
			t.Errorf("body = %v", body)
		}
		if _, ok := body["meta"]; ok || strings.Contains(string(tool.InputJSON), `"meta"`) {
			t.Errorf("an object field, which a form cannot carry, was kept: %v %s", body, tool.InputJSON)
		}
		if !strings.Contains(string(res.YAML), `form field "meta" left out`) {
			t.Errorf("no note on the left-out field:\n%s", res.YAML)
		}
	})
	t.Run("required-object-field-skips-the-operation", func(t *testing.T) {
		res, _ := importDoc(t, bodyDoc("application/x-www-form-urlencoded", "{type: object, required: [meta], properties: {meta: {type: object}}}"), openapi.Options{IncludeWrites: true})
		if res.Tools != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, `required form field "meta" is an object`) {
			t.Fatalf("Import = %d tools, skipped %v", res.Tools, res.Skipped)
		}
	})
	t.Run("json-is-preferred-to-a-form", func(t *testing.T) {
		doc := strings.Replace(bodyDoc("application/x-www-form-urlencoded", "{type: object, properties: {a: {type: string}}}"),
			"          'application/x-www-form-urlencoded':\n", "          'application/json':\n            schema: {type: object, properties: {a: {type: string}}}\n          'application/x-www-form-urlencoded':\n", 1)
		_, cat := importDoc(t, doc, openapi.Options{IncludeWrites: true})
		if f := cat.Tools[0].Request.BodyFormat; f != catalog.BodyJSON {
			t.Errorf("body_format = %q, want json", f)
		}
	})
}

// validate decodes js as a call or an answer does (numbers as
// json.Number) and holds it to v.
func validate(t *testing.T, v catalog.Validator, js string) error {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	return v.Validate(x)
}

// A Swagger 2.0 document shaped like Gitea's: it cannot say nullable, and
// the service answers null for closed_at and assignees and "" for an
// email declared format: email.
const giteaLike = `{"swagger":"2.0","info":{"title":"gitea","version":"1"},"basePath":"/api/v1",
"definitions":{
 "User":{"type":"object","properties":{"id":{"type":"integer","format":"int64"},"login":{"type":"string"},"email":{"type":"string","format":"email"}}},
 "Issue":{"type":"object","required":["id"],"properties":{
   "id":{"type":"integer","format":"int64"},
   "state":{"type":"string","enum":["open","closed"]},
   "title":{"type":"string","maxLength":255},
   "closed_at":{"type":"string","format":"date-time"},
   "html_url":{"type":"string","format":"uri"},
   "assignees":{"type":"array","items":{"$ref":"#/definitions/User"}},
   "user":{"$ref":"#/definitions/User"},
   "labels":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string"}}}},
   "ref":{"type":"object","properties":{"kind":{"type":"string"}},"additionalProperties":false}}}},
"paths":{
 "/repos/{owner}/{repo}/issues/{index}":{"get":{"operationId":"issueGetIssue","parameters":[{"name":"owner","in":"path","required":true,"type":"string"},{"name":"repo","in":"path","required":true,"type":"string"},{"name":"index","in":"path","required":true,"type":"integer"}],
   "responses":{"200":{"description":"ok","schema":{"$ref":"#/definitions/Issue"}},"404":{"description":"none"}}}},
 "/repos/{owner}/{repo}/issues":{"post":{"operationId":"issueCreateIssue","consumes":["application/json"],"parameters":[{"name":"owner","in":"path","required":true,"type":"string"},{"name":"repo","in":"path","required":true,"type":"string"},
   {"name":"body","in":"body","schema":{"type":"object","properties":{"title":{"type":"string"},"due_date":{"type":"string","format":"date-time"},"ref_id":{"type":"string","format":"uuid"},"day":{"type":"string","format":"date"},"email":{"type":"string","format":"email"}}}}],
   "responses":{"201":{"description":"created","schema":{"$ref":"#/definitions/Issue"}},"404":{"description":"no such repository"}}}}}}`

func TestImportedOutputSchemaNeverRefusesARealAnswer(t *testing.T) {
	res, cat := importDoc(t, giteaLike, openapi.Options{IncludeWrites: true})
	for _, name := range []string{"issue_get_issue", "issue_create_issue"} {
		tool := cat.Tool(name)
		if tool == nil || tool.Output == nil {
			t.Fatalf("%s imported without an output schema:\n%s", name, res.YAML)
		}
		for _, tc := range []struct{ name, answer string }{
			{"null-where-not-required", `{"id":1,"state":null,"title":null,"closed_at":null,"html_url":null,"assignees":null,"user":null,"labels":null,"ref":null}`},
			{"null-nested-in-an-array", `{"id":1,"assignees":[{"id":null,"login":null,"email":null}]}`},
			{"empty-string-for-a-format-email", `{"id":1,"user":{"id":2,"login":"acme","email":""}}`},
			{"not-a-date-time-nor-a-uri", `{"id":1,"closed_at":"yesterday","html_url":"not a url"}`},
			{"an-enum-value-the-document-does-not-list", `{"id":1,"state":"locked"}`},
			{"longer-than-the-document-said", `{"id":1,"title":"` + strings.Repeat("x", 300) + `"}`},
			{"members-the-document-does-not-declare", `{"id":1,"pull_request":{},"labels":[{"name":"bug","color":"red"}],"ref":{"kind":"branch","sha":"abc"}}`},
		} {
			if err := validate(t, tool.Output, tc.answer); err != nil {
				t.Errorf("%s: the answer %s is refused: %v", name, tc.name, err)
			}
		}
		// Still a description of the shape: what is required, and the types.
		for _, answer := range []string{`{"state":"open"}`, `{"id":null}`, `{"id":"one"}`, `{"id":1,"assignees":{}}`} {
			if err := validate(t, tool.Output, answer); err == nil {
				t.Errorf("%s: the answer %s passes; the schema no longer describes the shape", name, answer)
			}
		}
	}
	for _, tool := range cat.Tools {
		for _, js := range [][]byte{tool.InputJSON, tool.OutputJSON} {
			if bytes.Contains(js, []byte(`"format":"email"`)) || bytes.Contains(js, []byte(`"format":"date-time"`)) || bytes.Contains(js, []byte(`"format":"uri"`)) {
				t.Errorf("%s: a format the service does not hold its values to is asserted: %s", tool.Name, js)
			}
		}
	}
}

func TestImportedInputFormats(t *testing.T) {
	_, cat := importDoc(t, giteaLike, openapi.Options{IncludeWrites: true})
	tool := cat.Tool("issue_create_issue")
	if tool == nil {
		t.Fatal("issue_create_issue was not imported")
	}
	for _, tc := range []struct {
		name, args string
		ok         bool
	}{
		// The services' own rules, not RFC 3339's: Gitea and Pydantic take
		// a date-time without an offset, and "" to clear an email.
		{"date-time-without-offset-passes", `{"owner":"o","repo":"r","due_date":"2024-01-01T00:00:00"}`, true},
		{"empty-email-passes", `{"owner":"o","repo":"r","email":""}`, true},
		{"uuid-is-asserted", `{"owner":"o","repo":"r","ref_id":"not-a-uuid"}`, false},
		{"uuid-passes", `{"owner":"o","repo":"r","ref_id":"0f8fad5b-d9cb-469f-a165-70867728950e"}`, true},
		{"date-is-asserted", `{"owner":"o","repo":"r","day":"01/02/2024"}`, false},
		{"date-passes", `{"owner":"o","repo":"r","day":"2024-01-02"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validate(t, tool.Schema, tc.args)
			if (err == nil) != tc.ok {
				t.Errorf("Validate(%s) = %v, want ok=%v", tc.args, err, tc.ok)
			}
		})
	}
	if !strings.Contains(string(tool.InputJSON), `(format: date-time)`) {
		t.Errorf("the dropped format is not in the argument's description: %s", tool.InputJSON)
	}
}

func TestImportNotFoundOnlyForReads(t *testing.T) {
	_, cat := importDoc(t, giteaLike, openapi.Options{IncludeWrites: true})
	get, create := cat.Tool("issue_get_issue"), cat.Tool("issue_create_issue")
	if get == nil || create == nil {
		t.Fatal("the document's operations were not imported")
	}
	if get.Response.NotFound == nil {
		t.Error("a read that declares 404 has no response.not_found")
	}
	if create.Response.NotFound != nil {
		t.Error("a write that declares 404 has response.not_found: a write to a missing repository would be reported as a success")
	}
}

func TestImportCutsLongNamesAtAWord(t *testing.T) {
	const id = "create_flow_run_from_deployment_deployments__id__create_flow_run_post"
	_, cat := importDoc(t, oneOp("POST", "/deployments/{id}/create_flow_run", id, "      parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n"), openapi.Options{IncludeWrites: true})
	if len(cat.Tools) != 1 {
		t.Fatalf("imported %d tools", len(cat.Tools))
	}
	name := cat.Tools[0].Name
	if len(name) > 60 {
		t.Fatalf("name %q is longer than 60", name)
	}
	full := "create_flow_run_from_deployment_deployments_id_create_flow_run_post"
	if !strings.HasPrefix(full, name) || full[len(name)] != '_' {
		t.Errorf("name %q is not %q cut at an underscore", name, full)
	}
	if name != "create_flow_run_from_deployment_deployments_id_create_flow" {
		t.Errorf("name = %q", name)
	}
}

func TestImportTagsMatchInAnyCase(t *testing.T) {
	doc := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get: {operationId: a, tags: [Flow Runs], responses: {'200': {description: ok}}}\n  /b:\n    get: {operationId: b, tags: [Logs], responses: {'200': {description: ok}}}\n"
	_, cat := importDoc(t, doc, openapi.Options{Tags: []string{"flow runs"}})
	if len(cat.Tools) != 1 || cat.Tools[0].Name != "a" {
		t.Errorf("--tags 'flow runs' imported %d tools, want only a", len(cat.Tools))
	}
}
