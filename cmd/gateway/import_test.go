package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
