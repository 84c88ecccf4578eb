package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
)

// sweepMaxBytes bounds the documents TestEveryCachedDocument imports
// under CI's race detector; GATEWAY_SWEEP_ALL=1 takes every size (the
// GitHub descriptions are 10 MB each).
const sweepMaxBytes = 1 << 20

// openAPIHead recognises a document that declares itself an OpenAPI or
// Swagger description near its start.
var openAPIHead = regexp.MustCompile(`(?m)^\s*("openapi"|"swagger"|openapi|swagger)\s*:`)

// TestEveryCachedDocument imports every OpenAPI document that the pinned
// npm packages carry, with every write, and holds the import to its
// promise: a document either becomes a catalog fragment that loads, or
// the command fails saying why. Writing a catalog that the gateway then
// refuses is the one outcome never allowed.
func TestEveryCachedDocument(t *testing.T) {
	requireRealDocs(t)
	all := os.Getenv("GATEWAY_SWEEP_ALL") == "1"
	var docs []string
	filepath.WalkDir(realDocsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == "@apidevtools" { // JSON Schemas of OpenAPI itself, not API descriptions
				return filepath.SkipDir
			}
			return nil
		}
		ext := strings.ToLower(filepath.Ext(path))
		if ext != ".json" && ext != ".yaml" && ext != ".yml" || d.Name() == "package.json" || d.Name() == "package-lock.json" {
			return nil
		}
		info, err := d.Info()
		if err != nil || !all && info.Size() > sweepMaxBytes {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || !openAPIHead.Match(data[:min(len(data), 4096)]) {
			return nil
		}
		docs = append(docs, path)
		return nil
	})
	sort.Strings(docs)
	if len(docs) < 100 {
		t.Fatalf("found %d OpenAPI documents in %s, want the pinned packages' 100 or more", len(docs), realDocsDir)
	}
	env := testEnv(map[string]string{"UP_URL": "http://127.0.0.1:1", "UP_TOKEN": "t", "UP_API_KEY": "k", "UP_BASIC_AUTH": "b", "UP_QUERY_KEY": "q", "UP_QUERY_KEY_2": "q", "UP_API_KEY_2": "k", "UP_API_ID": "i", "UP_AUTHORIZATION": "a"})
	main := []byte(`version: 1
server: { name: sweep }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  up_write: { scopes: [up:write] }
include: [up.yaml]
`)
	var imported, refused int
	for _, spec := range docs {
		name, _ := filepath.Rel(realDocsDir, spec)
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"import", "openapi", spec, "--upstream", "up", "--include-writes", "-o", filepath.Join(dir, "up.yaml")}, nil, &stdout, &stderr, env)
		if err != nil {
			refused++
			if strings.TrimSpace(stderr.String()) == "" {
				t.Errorf("%s: import failed (%v) without saying why", name, err)
			}
			if _, statErr := os.Stat(filepath.Join(dir, "up.yaml")); statErr == nil {
				t.Errorf("%s: import failed but wrote a catalog", name)
			}
			t.Logf("refused %s: %.300s", name, lastLine(stderr.String()))
			continue
		}
		path := filepath.Join(dir, "catalog.yaml")
		if err := os.WriteFile(path, main, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env}); err != nil {
			t.Errorf("%s: the import wrote a catalog the gateway refuses:\n%.1500s", name, err)
			continue
		}
		imported++
	}
	t.Logf("%d documents: %d imported and loaded, %d refused with a reason", len(docs), imported, refused)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
