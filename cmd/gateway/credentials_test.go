package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const credentialsCatalog = `version: 1
server: { name: gitea-gw }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  gitea:
    base_url: http://127.0.0.1:1/api/v1
    workspace: { header: X-Workspace-Id }
    credentials:
      format: "token {credential}"
      by_workspace: { acme: GITEA_ACME_TOKEN, globex: GITEA_GLOBEX_TOKEN }
tools:
  - { name: get_org, description: The caller's organisation., request: { upstream: gitea, path: "/orgs/{workspace}" } }
`

// gateway validate reports a catalog with per-workspace credentials
// without printing one, and a problem with one by its variable's name.
func TestValidateNeverPrintsACredential(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	os.WriteFile(path, []byte(credentialsCatalog), 0o600)
	for _, tc := range []struct {
		name   string
		env    map[string]string
		ok     bool
		output string
	}{
		{"every-credential-set", map[string]string{"GITEA_ACME_TOKEN": "acme-s3cret", "GITEA_GLOBEX_TOKEN": "globex-s3cret"}, true, "ok: 1 tools"},
		{"one-unset", map[string]string{"GITEA_ACME_TOKEN": "acme-s3cret"}, false, "by_workspace.globex: environment variable GITEA_GLOBEX_TOKEN is not set"},
		{"one-unsendable", map[string]string{"GITEA_ACME_TOKEN": "acme-s3cret\r\nX-Admin: 1", "GITEA_GLOBEX_TOKEN": "globex-s3cret"}, false,
			"by_workspace.acme: environment variable GITEA_ACME_TOKEN holds a control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"validate", "--catalog", path}, nil, &out, &errb, testEnv(tc.env))
			all := out.String() + errb.String()
			if (err == nil) != tc.ok || !strings.Contains(all, tc.output) {
				t.Fatalf("validate = %v\n%s\nwant ok %v and %q", err, all, tc.ok, tc.output)
			}
			if strings.Contains(all, "s3cret") {
				t.Errorf("validate printed a credential:\n%s", all)
			}
		})
	}
}
