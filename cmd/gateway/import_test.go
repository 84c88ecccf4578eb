package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
)

// From an OpenAPI document to a validated, checked catalog, through the
// commands an operator types.
func TestImportValidateCheck(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "pets.yaml")
	spec := filepath.Join("..", "..", "openapi", "testdata", "petstore30.yaml")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"import", "openapi", spec, "--upstream", "pets", "--include-writes", "--workspace-param", "tenant", "--standalone", "-o", out}, nil, &stdout, &stderr, os.LookupEnv)
	if err != nil {
		t.Fatalf("import = %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "skipped PUT /pets/{petId}/photo: request body is multipart/form-data, not JSON") {
		t.Errorf("stderr does not list the skipped operation:\n%s", stderr.String())
	}
	env := lookupEnv(os.LookupEnv).with(map[string]string{
		"IDP_JWKS_URL": "https://idp.example.com/jwks", "IDP_ISSUER": "https://idp.example.com/",
		"GATEWAY_AUDIENCE": "https://mcp.example.com/mcp", "PETS_API_KEY": "k",
	})
	stdout.Reset()
	stderr.Reset()
	if err := run(context.Background(), []string{"validate", "--catalog", out}, nil, &stdout, &stderr, env); err != nil {
		t.Fatalf("validate = %v\n%s", err, stderr.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"check", "--catalog", out, "--openapi", spec}, nil, &stdout, &stderr, env); err != nil {
		t.Fatalf("check of the imported catalog = %v\n%s%s", err, stdout.String(), stderr.String())
	}
	data, _ := os.ReadFile(out)
	broken := filepath.Join(dir, "broken.yaml")
	os.WriteFile(broken, bytes.Replace(data, []byte("path: /pets/{pet_id}\n    response:"), []byte("path: /animals/{pet_id}\n    response:"), 1), 0o644)
	stdout.Reset()
	err = run(context.Background(), []string{"check", "--catalog", broken, "--openapi", spec, "--format", "json"}, nil, &stdout, &stderr, env)
	if err != exitError(1) {
		t.Fatalf("check of a drifted catalog = %v, want exit status 1", err)
	}
	if !strings.Contains(stdout.String(), `"message": "no path in the document matches /animals/{pet_id}"`) || !strings.Contains(stdout.String(), `"ok": false`) {
		t.Errorf("json output:\n%s", stdout.String())
	}
}

// Re-importing over an earlier import's file keeps each name on its
// operation: an override written for DELETE /pets/{id} as delete_pet
// stays on it when the document gains an operation whose operationId is
// also delete_pet, and validate says the catalog still approves it.
func TestReimportKeepsNamesOnTheirOperations(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const head = "openapi: 3.0.3\ninfo: {title: pets, version: '1'}\nservers: [{url: 'https://api.example.com'}]\npaths:\n"
	const del = ": {operationId: %s, parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {'204': {description: ok}}}\n"
	v1 := write("v1.yaml", head+"  /pets/{id}:\n    delete"+fmt.Sprintf(del, "deletePet"))
	v2 := write("v2.yaml", head+"  /archive/pets/{id}:\n    delete"+fmt.Sprintf(del, "delete_pet")+"  /pets/{id}:\n    delete"+fmt.Sprintf(del, "deletePet"))
	frag := filepath.Join(dir, "pets.yaml")
	for _, spec := range []string{v1, v2} {
		var stderr bytes.Buffer
		if err := run(context.Background(), []string{"import", "openapi", spec, "--upstream", "pets", "--include-writes", "-o", frag}, nil, io.Discard, &stderr, os.LookupEnv); err != nil {
			t.Fatalf("import %s = %v\n%s", spec, err, stderr.String())
		}
	}
	cat := write("catalog.yaml", "version: 1\nserver: {name: s}\nauth: {jwt: {hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a}}\n"+
		"gates: {pets_write: {scopes: [w]}}\ninclude: [pets.yaml]\noverrides: {delete_pet: {approval: confirm}}\n")
	c, err := catalog.Load(cat, &catalog.LoadOptions{Getenv: func(k string) (string, bool) { return "Zq3vX9pL2mN8rT5wY1bC7dF4gH6jK0sA", k == "S" }})
	if err != nil {
		t.Fatal(err)
	}
	describe := func(tool *catalog.Tool) string {
		if tool == nil {
			return "absent"
		}
		return fmt.Sprintf("%s %s (approval %v)", tool.Request.Method, tool.Request.Path, tool.Approval != nil)
	}
	if tool := c.Tool("delete_pet"); tool == nil || tool.Request.Path != "/pets/{id}" || tool.Approval == nil {
		t.Errorf("delete_pet = %s, want DELETE /pets/{id} under its confirm approval", describe(tool))
	}
	if tool := c.Tool("delete_pet_2"); tool == nil || tool.Request.Path != "/archive/pets/{id}" || tool.Approval != nil {
		t.Errorf("delete_pet_2 = %s, want the new DELETE /archive/pets/{id}, without the override", describe(tool))
	}
}
