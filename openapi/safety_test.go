package openapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
)

// The gateway's own secrets, as a deployment would set them.
const (
	jwtSecret    = "jwt-secret-that-must-never-leak-5f1c"
	approvalKeys = "approval-keys-that-must-never-leak-9a2e"
)

// loadFragment loads an imported fragment in a catalog of its own, with
// every placeholder set.
func loadFragment(t *testing.T, res *openapi.Result) *catalog.Catalog {
	t.Helper()
	head := "version: 1\nserver: {name: s}\nauth: {jwt: {hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a}}\ngates: {up_write: {scopes: [w]}}\n"
	cat, err := catalog.Parse("fragment.yaml", append([]byte(head), res.YAML...), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		if v, ok := placeholders(k); ok {
			return v, true
		}
		return "x", true
	}})
	if err != nil {
		t.Fatalf("the import does not load:\n%v\n%s", err, res.YAML)
	}
	return cat
}

func importFile(t *testing.T, name string, opts openapi.Options) *openapi.Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return importRaw(t, string(data), opts)
}

func importRaw(t *testing.T, doc string, opts openapi.Options) *openapi.Result {
	t.Helper()
	d, err := openapi.Read([]byte(doc))
	if err != nil {
		t.Fatalf("Read = %v", err)
	}
	res, err := openapi.Import(d, opts)
	if err != nil {
		t.Fatalf("Import = %v", err)
	}
	return res
}

// TestImportedTextIsNeverExpanded imports a document whose every text
// (title, summary, description, enum, default, example, parameter names,
// server URL, tags, security scheme) holds ${GATEWAY_JWT_SECRET} or
// ${GATEWAY_APPROVAL_KEYS}, and loads the result with the real catalog
// loader in an environment that sets both: neither secret is read, and
// neither appears anywhere in the catalog's tools or upstream.
func TestImportedTextIsNeverExpanded(t *testing.T) {
	res := importFile(t, "hostile-expand.yaml", openapi.Options{Upstream: "up", IncludeWrites: true, Standalone: true})
	if res.Tools != 2 {
		t.Fatalf("imported %d tools, want 2; skipped %v", res.Tools, res.Skipped)
	}
	var looked []string
	env := func(k string) (string, bool) {
		looked = append(looked, k)
		switch k {
		case "GATEWAY_JWT_SECRET":
			return jwtSecret, true
		case "GATEWAY_APPROVAL_KEYS":
			return approvalKeys, true
		case "UP_URL":
			return "", false // the document's server URL, the default
		}
		return placeholders(k)
	}
	cat, err := catalog.Parse("hostile.yaml", res.YAML, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatalf("the import does not load:\n%v", err)
	}
	if slices.Contains(looked, "GATEWAY_JWT_SECRET") || slices.Contains(looked, "GATEWAY_APPROVAL_KEYS") {
		t.Errorf("loading the import looked up %v", looked)
	}
	var all strings.Builder
	for _, tool := range cat.Tools {
		text := toolText(t, tool)
		all.WriteString(text)
		for _, secret := range []string{jwtSecret, approvalKeys} {
			if strings.Contains(text, secret) {
				t.Errorf("tool %s carries a gateway secret:\n%s", tool.Name, text)
			}
		}
	}
	for _, u := range cat.Upstreams {
		if s := fmt.Sprint(u.BaseURL, u.Headers); strings.Contains(s, jwtSecret) || strings.Contains(s, approvalKeys) {
			t.Errorf("upstream %s carries a gateway secret: %s", u.Name, s)
		}
		if want := "https://api.example.com/$GATEWAY_JWT_SECRET/v1"; u.BaseURL != want {
			t.Errorf("base_url = %q, want the server URL as written, %q", u.BaseURL, want)
		}
	}
	// The text is kept as written, so the agent sees what the document said.
	for _, want := range []string{`"default":"${GATEWAY_JWT_SECRET}"`, `"enum":["${GATEWAY_JWT_SECRET}","${GATEWAY_APPROVAL_KEYS}","ok"]`, `${GATEWAY_APPROVAL_KEYS}:{gateway_approval_keys}`} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the tools do not carry %s as written:\n%s", want, all.String())
		}
	}
}

// toolText is everything of a loaded tool an agent reads or an upstream
// receives, as text.
func toolText(t *testing.T, tool *catalog.Tool) string {
	t.Helper()
	r := tool.Request
	body, _ := json.Marshal(r.Body)
	defaults, _ := json.Marshal(tool.Defaults)
	var q []string
	for k, v := range r.Query {
		q = append(q, k+":"+v)
	}
	for k, v := range r.Headers {
		q = append(q, k+":"+v)
	}
	slices.Sort(q)
	return strings.Join([]string{tool.Name, tool.Title, tool.Description, strings.Join(tool.Tags, ","),
		string(tool.InputJSON), string(tool.OutputJSON), r.Path, strings.Join(q, ","), string(body), string(defaults)}, "\n")
}

// workspaceDoc is a document with one operation whose parameters are
// params (YAML list items) and whose JSON body has the properties body.
func workspaceDoc(method, path, params, body string) string {
	doc := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\npaths:\n  " + path + ":\n    " + method + ":\n      operationId: op\n"
	if params != "" {
		doc += "      parameters: [" + params + "]\n"
	}
	if body != "" {
		doc += "      requestBody: {content: {application/json: {schema: {type: object, properties: {" + body + "}}}}}\n"
	}
	return doc + "      responses: {'200': {description: ok}}\n"
}

// TestWorkspaceBoundInEverySpellingAndPlace: with --workspace-param
// workspace_id, the workspace in any spelling (case, snake, camel, kebab,
// X- header) and any place (path, query, header, body) is the token's,
// never an argument an acme token could set to globex.
func TestWorkspaceBoundInEverySpellingAndPlace(t *testing.T) {
	for _, c := range []struct {
		name, method, path, params, body string
		want                             string // in the tool (or its upstream), as YAML
	}{
		{"path-camel", "get", "/w/{workspaceId}/jobs", "{name: workspaceId, in: path, required: true, schema: {type: string}}", "", "path: /w/{workspace}/jobs"},
		{"query-snake", "get", "/jobs", "{name: workspace_id, in: query, schema: {type: string}}", "", "workspace: # from --workspace-param\n      query: workspace_id"},
		{"query-kebab", "get", "/jobs", "{name: workspace-id, in: query, schema: {type: string}}", "", "workspace: # from --workspace-param\n      query: workspace-id"},
		{"header-x-prefix", "get", "/jobs", "{name: X-Workspace-Id, in: header, schema: {type: string}}", "", "workspace: # from --workspace-param\n      header: X-Workspace-Id"},
		{"query-beside-a-header-binding", "get", "/jobs",
			"{name: X-Workspace-Id, in: header, schema: {type: string}}, {name: workspaceId, in: query, schema: {type: string}}", "",
			"query:\n        workspaceId: '{workspace}'"},
		{"two-header-spellings", "get", "/jobs",
			"{name: Workspace-Id, in: header, schema: {type: string}}, {name: X-WORKSPACE-ID, in: header, schema: {type: string}}", "",
			"headers:\n        X-WORKSPACE-ID: '{workspace}'"},
		{"body-snake", "post", "/jobs", "", "workspace_id: {type: string}, name: {type: string}", "workspace_id: '{workspace}'"},
		{"body-pascal", "post", "/jobs", "", "WorkspaceID: {type: string}, name: {type: string}", "WorkspaceID: '{workspace}'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := importRaw(t, workspaceDoc(c.method, c.path, c.params, c.body), openapi.Options{Upstream: "up", IncludeWrites: true, WorkspaceParam: "workspace_id"})
			if res.Tools != 1 {
				t.Fatalf("imported %d tools, want 1; skipped %v", res.Tools, res.Skipped)
			}
			if !strings.Contains(string(res.YAML), c.want) {
				t.Errorf("the import does not bind the workspace as %q:\n%s", c.want, res.YAML)
			}
			cat := loadFragment(t, res)
			if in := string(cat.Tools[0].InputJSON); strings.Contains(strings.ToLower(in), "workspace") {
				t.Errorf("the workspace is an argument: inputSchema %s", in)
			}
		})
	}
}

// TestTenantLookAlikes: a name that looks like a tenant but is not one of
// --workspace-param cannot be decided by the import. By default its
// operation is left out with the reason; --allow-unbound imports it with
// a "guess: not tenant-bound" comment and a Flagged entry (a stderr line).
func TestTenantLookAlikes(t *testing.T) {
	for _, c := range []struct {
		name, method, params, body, arg string
	}{
		{"query-tenant", "get", "{name: org, in: query, schema: {type: string}}, {name: tenant, in: query, schema: {type: string}}", "", "tenant"},
		{"query-org-id", "get", "{name: org, in: query, schema: {type: string}}, {name: org_id, in: query, schema: {type: string}}", "", "org_id"},
		{"header-organization", "get", "{name: org, in: query, schema: {type: string}}, {name: X-Organization, in: header, schema: {type: string}}", "", "x_organization"},
		{"body-new-owner", "post", "{name: org, in: query, schema: {type: string}}", "new_owner: {type: string}", "new_owner"},
		{"nested-owner", "post", "{name: org, in: query, schema: {type: string}}", "repo: {type: object, properties: {owner: {type: string}}}", "repo"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := workspaceDoc(c.method, "/things", c.params, c.body)
			res := importRaw(t, doc, openapi.Options{Upstream: "up", IncludeWrites: true, WorkspaceParam: "org"})
			if res.Tools != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, "not tenant-bound") || !strings.Contains(res.Skipped[0].Reason, fmt.Sprintf("argument %q", c.arg)) {
				t.Fatalf("Import = %d tools, skipped %v; want the operation left out over argument %q", res.Tools, res.Skipped, c.arg)
			}
			res = importRaw(t, doc, openapi.Options{Upstream: "up", IncludeWrites: true, WorkspaceParam: "org", AllowUnbound: true})
			if res.Tools != 1 {
				t.Fatalf("--allow-unbound imported %d tools, skipped %v", res.Tools, res.Skipped)
			}
			if !strings.Contains(string(res.YAML), fmt.Sprintf("# guess: not tenant-bound: argument %q", c.arg)) {
				t.Errorf("no guess comment for %q:\n%s", c.arg, res.YAML)
			}
			if len(res.Flagged) != 1 || res.Flagged[0].Tool != "op" || !strings.HasPrefix(res.Flagged[0].Note, "not tenant-bound") {
				t.Errorf("Flagged = %v, want the look-alike", res.Flagged)
			}
		})
	}
}

// Names that only resemble a tenant's in passing stay arguments: the
// fence must not leave out every operation with an "order" or an "id".
func TestNotTenantLookAlikes(t *testing.T) {
	doc := workspaceDoc("get", "/orgs/{org}/things",
		"{name: org, in: path, required: true, schema: {type: string}}, {name: sort_order, in: query, schema: {type: string}}, "+
			"{name: organism, in: query, schema: {type: string}}, {name: user_id, in: query, schema: {type: string}}, {name: X-Request-Id, in: header, schema: {type: string}}", "")
	res := importRaw(t, doc, openapi.Options{Upstream: "up", WorkspaceParam: "org"})
	if res.Tools != 1 || len(res.Flagged) != 0 {
		t.Fatalf("Import = %d tools, skipped %v, flagged %v; want the operation, unflagged", res.Tools, res.Skipped, res.Flagged)
	}
	in := string(loadFragment(t, res).Tools[0].InputJSON)
	for _, a := range []string{"sort_order", "organism", "user_id", "x_request_id"} {
		if !strings.Contains(in, `"`+a+`"`) {
			t.Errorf("argument %s is missing from %s", a, in)
		}
	}
}

// tenantish is an independent oracle for names an agent could use to name
// a tenant of the forge in testdata/tenants.yaml.
var tenantish = regexp.MustCompile(`(?i)owner|org|user|tenant|workspace|namespace|account`)

// TestTenantEscapeStatic imports the Gitea-shaped document with
// --workspace-param owner,org,username: no imported tool has an argument
// that could name a tenant (at any depth of its input schema), every
// tool's path is under the bound segment or binds the workspace in its
// query, headers or body, and each operation left out is listed.
func TestTenantEscapeStatic(t *testing.T) {
	res := importFile(t, "tenants.yaml", openapi.Options{Upstream: "forge", IncludeWrites: true, WorkspaceParam: "owner,org,username", Standalone: true})
	cat, err := catalog.Parse("tenants.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range cat.Tools {
		var names []string
		collectNames(tool.Input, &names)
		for _, n := range names {
			if tenantish.MatchString(n) {
				t.Errorf("tool %s: argument or property %q can name a tenant", tool.Name, n)
			}
		}
		r := tool.Request
		body, _ := json.Marshal(r.Body)
		phs := regexp.MustCompile(`\{[^}]*\}`).FindAllString(r.Path, -1)
		if strings.Contains(r.Path, "{workspace}") && phs[0] != "{workspace}" {
			t.Errorf("tool %s: path %s has an argument before the workspace", tool.Name, r.Path)
		}
		if !strings.Contains(r.Path, "{workspace}") && !slices.Contains(mapValues(r.Query), "{workspace}") &&
			!slices.Contains(mapValues(r.Headers), "{workspace}") && !strings.Contains(string(body), `"{workspace}"`) {
			t.Errorf("tool %s (%s %s) is not bound to the caller's workspace", tool.Name, r.Method, r.Path)
		}
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Method+" "+s.Path)
		if !strings.Contains(s.Reason, "not tenant-bound") && !strings.Contains(s.Reason, "both read as --workspace-param") {
			t.Errorf("skipped %s for another reason", s)
		}
	}
	want := []string{
		"POST /admin/hooks", "GET /admin/orgs", "POST /admin/users/{username}/orgs", "GET /api/{version}/orgs/{org}/labels",
		"GET /orgs", "DELETE /orgs/{org}/members/{username}", "GET /repos/issues/search", "POST /repos/migrate",
		"POST /repos/{owner}/{repo}/transfer", "GET /repositories/{id}", "GET /teams/{id}", "GET /teams/{id}/members", "POST /user/repos",
	}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped\n%q\nwant\n%q", skipped, want)
	}
	if res.Tools+len(res.Skipped) != 23 {
		t.Errorf("%d tools and %d skipped, want the document's 23 operations", res.Tools, len(res.Skipped))
	}
}

func mapValues(m map[string]string) []string {
	var vs []string
	for _, v := range m {
		vs = append(vs, v)
	}
	return vs
}

// collectNames appends every property name of schema s, at any depth.
func collectNames(s any, names *[]string) {
	switch s := s.(type) {
	case map[string]any:
		if props, ok := s["properties"].(map[string]any); ok {
			for k, v := range props {
				*names = append(*names, k)
				collectNames(v, names)
			}
		}
		for k, v := range s {
			if k != "properties" {
				collectNames(v, names)
			}
		}
	case []any:
		for _, e := range s {
			collectNames(e, names)
		}
	}
}

// TestDistinctParametersStayDistinct: /orgs/{orgId}/members/{org_id}
// names two resources; both parameters read as argument org_id, and a
// path built by replacing one placeholder after another made them one
// argument used twice, so a DELETE removed the wrong member.
func TestDistinctParametersStayDistinct(t *testing.T) {
	doc := workspaceDoc("delete", "/orgs/{orgId}/members/{org_id}",
		"{name: orgId, in: path, required: true, schema: {type: string}}, {name: org_id, in: path, required: true, schema: {type: integer}}", "")
	res := importRaw(t, doc, openapi.Options{Upstream: "up", IncludeWrites: true})
	cat := loadFragment(t, res)
	tool := cat.Tools[0]
	ph := regexp.MustCompile(`\{[^}]*\}`).FindAllString(tool.Request.Path, -1)
	if len(ph) != 2 || ph[0] == ph[1] {
		t.Fatalf("path = %s, want two distinct placeholders", tool.Request.Path)
	}
	if len(tool.Required) != 2 || !strings.Contains(string(tool.InputJSON), `"type":"integer"`) {
		t.Errorf("required %v, inputSchema %s: want both arguments, the member an integer", tool.Required, tool.InputJSON)
	}
	if !strings.Contains(string(res.YAML), `# guess: "org_id" would be argument "org_id", which another parameter is: it is "path_org_id"`) {
		t.Errorf("no note on the renamed argument:\n%s", res.YAML)
	}

	// Both read as the workspace: which is the caller's is unclear.
	res = importRaw(t, doc, openapi.Options{Upstream: "up", IncludeWrites: true, WorkspaceParam: "org_id"})
	if res.Tools != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, `path parameters "orgId" and "org_id" both read as --workspace-param org_id`) {
		t.Errorf("Import with the workspace = %d tools, skipped %v; want it refused", res.Tools, res.Skipped)
	}
}

// TestSensitiveOperationsAreFlagged: operations that reveal secrets are
// imported sensitive: true (behind the triple lock) with a guess comment
// and a Flagged entry; a paging token is not a secret.
func TestSensitiveOperationsAreFlagged(t *testing.T) {
	for _, c := range []struct {
		name, path, params, answer string
		why                        string // "" for not sensitive
	}{
		{"include-secrets", "/block_documents/{id}", "{name: id, in: path, required: true, schema: {type: string}}, {name: include_secrets, in: query, schema: {type: boolean}}", "", `the parameter "include_secrets" names secrets`},
		{"admin-path", "/admin/users", "", "", `the path segment "admin" is the service's own administration or configuration`},
		{"settings-path", "/repos/settings", "", "", `the path segment "settings" is the service's own administration or configuration`},
		{"config-path", "/api/config", "", "", `the path segment "config" is the service's own administration or configuration`},
		{"tokens-path", "/user/tokens", "", "", `the path segment "tokens" names tokens`},
		{"password-answer", "/users/{id}", "{name: id, in: path, required: true, schema: {type: string}}", "{type: object, properties: {login: {type: string}, profile: {type: object, properties: {password: {type: string}}}}}", `the answer holds a property "password"`},
		{"api-key-header", "/things", "{name: X-Api-Key, in: header, schema: {type: string}}", "", `the parameter "X-Api-Key" names api_key`},
		{"paging-token", "/things", "{name: page_token, in: query, schema: {type: string}}, {name: next_token, in: query, schema: {type: string}}", "{type: object, properties: {next_page_token: {type: string}, token_type: {type: string}, access_tokens_url: {type: string}}}", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := workspaceDoc("get", c.path, c.params, "")
			if c.answer != "" {
				doc = strings.Replace(doc, "{'200': {description: ok}}", "{'200': {description: ok, content: {application/json: {schema: "+c.answer+"}}}}", 1)
			}
			res := importRaw(t, doc, openapi.Options{Upstream: "up"})
			if res.Tools != 1 {
				t.Fatalf("imported %d tools; skipped %v", res.Tools, res.Skipped)
			}
			cat := loadFragment(t, res)
			if got := cat.Tools[0].Sensitive; got != (c.why != "") {
				t.Fatalf("sensitive = %v, want %v:\n%s", got, c.why != "", res.YAML)
			}
			if c.why == "" {
				if len(res.Flagged) > 0 {
					t.Errorf("Flagged = %v, want none", res.Flagged)
				}
				return
			}
			if !strings.Contains(string(res.YAML), "sensitive: true # guess: it may reveal secrets: "+c.why) {
				t.Errorf("no guess comment saying %q:\n%s", c.why, res.YAML)
			}
			if len(res.Flagged) == 0 || res.Flagged[0].Note != "sensitive: "+c.why {
				t.Errorf("Flagged = %v, want %q", res.Flagged, c.why)
			}
		})
	}
}

// A document's paths and parameters cannot steer the request out of the
// operator's base path, or change its method, client or connection at
// the upstream: such paths are skipped, such parameters left out, and
// what is imported loads.
func TestPathsAndParametersCannotSteerTheRequest(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: '1'}
servers: [{url: 'https://api.example.com/v1/tenants/acme'}]
paths:
  /../../globex/data:
    get: {operationId: escape, responses: {'200': {description: ok}}}
  /x/{id}/%2E%2E/y:
    get: {operationId: escapeEncoded, parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {'200': {description: ok}}}
  /items:
    get:
      operationId: listItems
      parameters:
        - {name: X-HTTP-Method-Override, in: header, schema: {type: string}}
        - {name: X-Forwarded-For, in: header, required: true, schema: {type: string}}
        - {name: Forwarded, in: header, schema: {type: string}}
        - {name: X-Original-URL, in: header, schema: {type: string}}
        - {name: Upgrade, in: header, schema: {type: string}}
        - {name: _method, in: query, schema: {type: string}}
        - {name: X-Request-Source, in: header, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {'200': {description: ok}}
`
	res := importRaw(t, doc, openapi.Options{Upstream: "up", Standalone: true})
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Path+": "+s.Reason)
	}
	want := []string{`/../../globex/data: path holds a "." or ".." segment`, `/x/{id}/%2E%2E/y: path holds a "." or ".." segment`}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
	cat, err := catalog.Parse("steer.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatalf("%v\n%s", err, res.YAML)
	}
	if len(cat.Tools) != 1 {
		t.Fatalf("%d tools, want list_items alone", len(cat.Tools))
	}
	r := cat.Tools[0].Request
	if got := slices.Sorted(maps.Keys(r.Headers)); !slices.Equal(got, []string{"X-Request-Source"}) {
		t.Errorf("headers %v, want X-Request-Source alone", got)
	}
	if got := slices.Sorted(maps.Keys(r.Query)); !slices.Equal(got, []string{"q"}) {
		t.Errorf("query %v, want q alone", got)
	}
}

// A server URL's password, key or fragment never reaches the catalog,
// and the default base_url that remains loads without its variable set.
func TestServerURLCredentialsStayOut(t *testing.T) {
	for _, server := range []string{
		"https://admin:hunter2@api.example.com/v1",
		"https://api.example.com/v1?api_key=sk_live_hunter2#frag",
		"https://api.example.com/v1?",
		"https://{cred}api.example.com/v1",
	} {
		doc := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: '" + server + "', variables: {cred: {default: 'root:hunter2@'}}}]\n" +
			"paths:\n  /items:\n    get: {operationId: listItems, responses: {'200': {description: ok}}}\n"
		res := importRaw(t, doc, openapi.Options{Upstream: "up", Standalone: true})
		if strings.Contains(string(res.YAML), "hunter2") {
			t.Errorf("%s: the secret is in the catalog:\n%s", server, res.YAML)
		}
		env := func(k string) (string, bool) {
			if k == "UP_URL" {
				return "", false // the import's default stands
			}
			return placeholders(k)
		}
		cat, err := catalog.Parse("creds.yaml", res.YAML, &catalog.LoadOptions{Getenv: env})
		if err != nil {
			t.Errorf("%s: %v\n%s", server, err, res.YAML)
			continue
		}
		if got := cat.Upstreams["up"].BaseURL; got != "https://api.example.com/v1" {
			t.Errorf("%s: base_url %q, want https://api.example.com/v1", server, got)
		}
	}
}

// A tenant property past what the import keeps of a schema (deeper than
// its depth bound, or past its width bound) still fences the operation:
// the cut would have passed it through an open object unseen.
func TestTenantPropertyPastTheCutIsFenced(t *testing.T) {
	deep := "{type: object, properties: {owner: {type: string}}}"
	for range 9 {
		deep = "{type: object, properties: {a: " + deep + "}}"
	}
	var wide strings.Builder
	for i := range 300 {
		fmt.Fprintf(&wide, "p%03d: {type: string}, ", i)
	}
	wide.WriteString("zz_owner: {type: string}")
	for name, body := range map[string]string{"deep": "spec: " + deep, "wide": wide.String()} {
		doc := workspaceDoc("post", "/orgs/{org}/things", "{name: org, in: path, required: true, schema: {type: string}}", body)
		res := importRaw(t, doc, openapi.Options{Upstream: "up", IncludeWrites: true, WorkspaceParam: "org", Standalone: true})
		if res.Tools != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, "looks like a tenant") {
			t.Errorf("%s: %d tools, skipped %v; want the operation skipped for its tenant property", name, res.Tools, res.Skipped)
		}
	}
	// The same operation without the tenant property is imported.
	doc := workspaceDoc("post", "/orgs/{org}/things", "{name: org, in: path, required: true, schema: {type: string}}", "spec: {type: object, properties: {a: {type: string}}}")
	if res := importRaw(t, doc, openapi.Options{Upstream: "up", IncludeWrites: true, WorkspaceParam: "org", Standalone: true}); res.Tools != 1 {
		t.Errorf("a clean operation: %d tools, skipped %v", res.Tools, res.Skipped)
	}
}

// Names stay unique and clear of the discovery meta tools' (in linear
// time: 20,000 equal operationIds took minutes), and a POST whose name
// says it removes is destructive, as PATCH is.
func TestImportedNamesAndAnnotations(t *testing.T) {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\npaths:\n")
	op := func(path, method, id string) {
		params := ""
		if strings.Contains(path, "{id}") {
			params = "parameters: [{name: id, in: path, required: true, schema: {type: string}}], "
		}
		fmt.Fprintf(&b, "  %s:\n    %s: {%soperationId: %s, responses: {'200': {description: ok}}}\n", path, method, params, id)
	}
	op("/repos/{id}/delete", "post", "deleteRepo")
	op("/accounts/purge", "post", "purgeAllAccounts")
	op("/things", "post", "createThing")
	op("/things/{id}", "patch", "editThing")
	op("/search", "get", "searchTools")
	op("/call", "get", "callTool")
	for i := range 300 {
		op(fmt.Sprintf("/dup/%d", i), "get", "dup")
	}
	res := importRaw(t, b.String(), openapi.Options{Upstream: "up", IncludeWrites: true})
	cat := loadFragment(t, res)
	names := map[string]bool{}
	for _, tool := range cat.Tools {
		if names[tool.Name] {
			t.Errorf("name %q twice", tool.Name)
		}
		names[tool.Name] = true
	}
	for _, n := range []string{"search_tools_2", "call_tool_2", "dup", "dup_2", "dup_300"} {
		if !names[n] {
			t.Errorf("no tool %q", n)
		}
	}
	if names["search_tools"] || names["call_tool"] {
		t.Error("an imported tool took a discovery meta tool's name")
	}
	for _, tc := range []struct {
		name        string
		destructive bool
	}{{"delete_repo", true}, {"purge_all_accounts", true}, {"create_thing", false}, {"edit_thing", true}} {
		tool := cat.Tool(tc.name)
		if tool == nil || tool.Annotations.Destructive == nil || *tool.Annotations.Destructive != tc.destructive {
			t.Errorf("%s: annotations %+v, want destructive %v", tc.name, tool, tc.destructive)
		}
	}
}

// An operation with more parameters than an agent could fill is skipped,
// not compiled for minutes (100,000 of them took five).
func TestTooManyParametersAreSkipped(t *testing.T) {
	var ps strings.Builder
	for i := range 501 {
		fmt.Fprintf(&ps, "{name: p%d, in: query, schema: {type: string}}, ", i)
	}
	doc := workspaceDoc("get", "/items", strings.TrimSuffix(ps.String(), ", "), "")
	res := importRaw(t, doc+"  /ok:\n    get: {operationId: ok, responses: {'200': {description: ok}}}\n", openapi.Options{Upstream: "up"})
	if res.Tools != 1 || len(res.Skipped) != 1 || res.Skipped[0].Reason != "501 parameters; at most 500 are mapped" {
		t.Errorf("%d tools, skipped %v; want /items skipped for its 501 parameters", res.Tools, res.Skipped)
	}
}

// What the catalog would refuse in one operation's details costs a note,
// not the operation: an empty or overlong tag, a parameter named like a
// computed time, an API key "sent" in a framing header.
func TestDetailsTheCatalogRefusesCostANote(t *testing.T) {
	var tags strings.Builder
	tags.WriteString(`"", "   ", "` + strings.Repeat("x", 101) + `"`)
	for i := range 30 {
		fmt.Fprintf(&tags, ", t%02d", i)
	}
	doc := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\n" +
		"components: {securitySchemes: {k: {type: apiKey, in: header, name: Host}}}\nsecurity: [{k: []}]\npaths:\n" +
		"  /logs/{now}:\n    get: {operationId: logsAt, tags: [" + tags.String() + "], parameters: [{name: now, in: path, required: true, schema: {type: string}}], responses: {'200': {description: ok}}}\n"
	res := importRaw(t, doc, openapi.Options{Upstream: "up"})
	if res.Tools != 1 {
		t.Fatalf("%d tools, skipped %v", res.Tools, res.Skipped)
	}
	cat := loadFragment(t, res)
	tool := cat.Tool("logs_at")
	if tool == nil || len(tool.Tags) != 20 || tool.Request.Path != "/logs/{now_}" {
		t.Fatalf("tool %+v", tool)
	}
	if _, ok := cat.Upstreams["up"].Headers["Host"]; ok {
		t.Error("the upstream sets Host")
	}
}

// TestPathQueryNamesNoTenantKeyOrMethod: what a document writes into its
// path's query is sent with every call, so it may not name the
// workspace (a constant would send globex for an acme token; a {param}
// would let the caller choose), look like a tenant, set the upstream's
// API key or any credential to the document's own, or steer the
// request's method.
func TestPathQueryNamesNoTenantKeyOrMethod(t *testing.T) {
	const ws = "{name: X-Workspace-Id, in: header, schema: {type: string}}"
	for _, c := range []struct {
		name, path, params, want string
	}{
		{"workspace-constant", "/jobs?workspaceId=globex", ws, `sets "workspaceId", which --workspace-param workspace_id binds`},
		{"workspace-exact-constant", "/jobs?workspace_id=globex", "{name: workspace_id, in: query, schema: {type: string}}", `sets "workspace_id", which --workspace-param workspace_id binds`},
		{"workspace-argument", "/jobs?workspace_id={x}", ws + ", {name: x, in: path, required: true, schema: {type: string}}", `sets "workspace_id", which --workspace-param workspace_id binds`},
		{"tenant-look-alike", "/jobs?org=globex", ws, `not tenant-bound: the path's query sets "org", which looks like a tenant`},
		{"credential-constant", "/jobs?access_token=mine", ws, `sets credential "access_token" to a value of the document's`},
		{"method-override", "/jobs/{id}?_method=DELETE", ws + ", {name: id, in: path, required: true, schema: {type: string}}", `sets "_method", which frameworks read as the request's method`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := importRaw(t, workspaceDoc("get", "'"+c.path+"'", c.params, ""), openapi.Options{Upstream: "up", WorkspaceParam: "workspace_id"})
			if res.Tools != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, c.want) {
				t.Errorf("imported %d tools, skipped %v; want it skipped saying %q\n%s", res.Tools, res.Skipped, c.want, res.YAML)
			}
		})
	}
	t.Run("api-key", func(t *testing.T) {
		doc := `openapi: 3.0.3
info: {title: t, version: '1'}
servers: [{url: 'https://api.example.com'}]
components: {securitySchemes: {key: {type: apiKey, in: query, name: api_key}}}
security: [{key: []}]
paths:
  '/jobs?api_key={k}':
    get:
      operationId: op
      parameters: [{name: k, in: path, required: true, schema: {type: string}}]
      responses: {'200': {description: ok}}
  '/jobs?api_key=mine':
    post: {operationId: op2, responses: {'200': {description: ok}}}
`
		res := importRaw(t, doc, openapi.Options{Upstream: "up", IncludeWrites: true})
		if res.Tools != 0 || len(res.Skipped) != 2 {
			t.Fatalf("imported %d tools, skipped %v; want both skipped\n%s", res.Tools, res.Skipped, res.YAML)
		}
		for _, s := range res.Skipped {
			if !strings.Contains(s.Reason, `sets "api_key", the upstream's API key`) {
				t.Errorf("skipped %v, want it to name the API key", s)
			}
		}
	})
}
