package catalog

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const credentialsCatalog = `version: 1
server: { name: t }
auth: { api_keys_file: keys.yaml }
upstreams:
  gitea:
    base_url: "http://127.0.0.1:1"
    workspace: { header: X-Workspace-Id }
    credentials:
%s
tools:
  - { name: a, description: A., request: { upstream: gitea, path: /a } }
`

const (
	acmeToken   = "acme-t0ken-\u00e9"
	globexToken = "globex-t0ken"
)

var credentialsEnv = map[string]string{"GITEA_ACME_TOKEN": acmeToken, "GITEA_GLOBEX_TOKEN": globexToken, "EMPTY": ""}

func parseCredentials(block string, env map[string]string) (*Catalog, error) {
	src := fmt.Sprintf(credentialsCatalog, block)
	return Parse("c.yaml", []byte(src), &LoadOptions{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
}

func TestCredentialsByWorkspaceLoad(t *testing.T) {
	c, err := parseCredentials(`      format: "token {credential}"
      by_workspace: { acme: GITEA_ACME_TOKEN, globex: GITEA_GLOBEX_TOKEN }`, credentialsEnv)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	cr := c.Upstreams["gitea"].Credentials
	if cr.Header != "Authorization" {
		t.Errorf("header = %q, want the default Authorization", cr.Header)
	}
	if got := cr.Values["acme"].Reveal(); got != "token "+acmeToken {
		t.Errorf("acme's value = %q, want %q", got, "token "+acmeToken)
	}
	if got := cr.Values["globex"].Reveal(); got != "token "+globexToken {
		t.Errorf("globex's value = %q", got)
	}
	if _, ok := cr.Values["initech"]; ok {
		t.Error("a workspace not listed has a credential")
	}
}

// A credential printed by accident, in any of the ways Go prints values,
// shows nothing of itself.
func TestSecretNeverPrintsItsValue(t *testing.T) {
	c, err := parseCredentials(`      by_workspace: { acme: GITEA_ACME_TOKEN, globex: GITEA_GLOBEX_TOKEN }`, credentialsEnv)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	cr := c.Upstreams["gitea"].Credentials
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("creds", "value", cr.Values["acme"], "credentials", cr.Values)
	j, _ := json.Marshal(cr)
	for _, out := range []string{
		fmt.Sprint(cr.Values["acme"]), fmt.Sprintf("%v %+v %#v %s %q %x", cr, cr, cr.Values, cr.Values["acme"], cr.Values["acme"], cr.Values["acme"]),
		logged.String(), string(j),
	} {
		if strings.Contains(out, "t0ken") || strings.Contains(out, "74306b656e") {
			t.Errorf("printed credential: %s", out)
		}
	}
}

func TestCredentialsRules(t *testing.T) {
	for _, tt := range []struct {
		name, block string
		want        string
	}{
		{"unset-variable-is-named", `      by_workspace: { acme: GITEA_ACME_TOKEN, globex: GITEA_MISSING }`,
			`by_workspace.globex: environment variable GITEA_MISSING is not set`},
		{"empty-variable", `      by_workspace: { acme: EMPTY }`, `environment variable EMPTY is empty`},
		{"a-reference-is-not-a-name", `      by_workspace: { acme: "${GITEA_ACME_TOKEN}" }`,
			`by_workspace.acme is not an environment variable name (write GITEA_ACME_TOKEN, without ${})`},
		{"a-credential-in-place-of-a-name-is-not-quoted", `      by_workspace: { acme: "t0ken/abc+=" }`,
			`by_workspace.acme is not an environment variable name (write the name of the variable holding the credential`},
		{"no-workspaces", `      header: X-Token`, `by_workspace must name at least one workspace`},
		{"format-without-credential", `      format: "Bearer"
      by_workspace: { acme: GITEA_ACME_TOKEN }`, `format must hold {credential} exactly once`},
		{"framing-header", `      header: Host
      by_workspace: { acme: GITEA_ACME_TOKEN }`, `header Host is set by the gateway's HTTP client`},
		{"workspace-header", `      header: x-workspace-id
      by_workspace: { acme: GITEA_ACME_TOKEN }`, `header X-Workspace-Id is the workspace binding's header`},
		{"workspace-outside-the-pattern", `      by_workspace: { "acme corp": GITEA_ACME_TOKEN }`, `"acme corp" is not a workspace`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseCredentials(tt.block, credentialsEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "t0ken") {
				t.Errorf("the error quotes a credential: %v", err)
			}
		})
	}
}

// A variable's value never reaches a message, even when it is what is
// wrong.
func TestCredentialErrorNamesTheVariableNotItsValue(t *testing.T) {
	env := map[string]string{"GITEA_ACME_TOKEN": "s3cret\r\nX-Admin: yes"}
	_, err := parseCredentials(`      by_workspace: { acme: GITEA_ACME_TOKEN }`, env)
	if err == nil || !strings.Contains(err.Error(), "GITEA_ACME_TOKEN holds a control character") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Parse = %v, want an error naming GITEA_ACME_TOKEN and not its value", err)
	}
}

func TestCredentialHeaderIsSetOnce(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{"also-under-headers", strings.Replace(fmt.Sprintf(credentialsCatalog, `      by_workspace: { acme: GITEA_ACME_TOKEN }`),
			"    credentials:", "    headers: { authorization: \"Bearer shared\" }\n    credentials:", 1),
			`header Authorization is also set under headers (authorization)`},
		{"by-a-tool-argument", strings.Replace(fmt.Sprintf(credentialsCatalog, `      by_workspace: { acme: GITEA_ACME_TOKEN }`),
			"request: { upstream: gitea, path: /a }", `input: { type: object, properties: { tok: { type: string } } }, request: { upstream: gitea, path: /a, headers: { Authorization: "{tok}" } }`, 1),
			`header Authorization: upstream "gitea" sends each workspace's credential in this header`},
		{"by-a-tool-literal", strings.Replace(fmt.Sprintf(credentialsCatalog, `      by_workspace: { acme: GITEA_ACME_TOKEN }`),
			"request: { upstream: gitea, path: /a }", `request: { upstream: gitea, path: /a, headers: { authorization: "Bearer admin" } }`, 1),
			`sends each workspace's credential in this header`},
		{"tenantless-upstream", strings.Replace(fmt.Sprintf(credentialsCatalog, `      by_workspace: { acme: GITEA_ACME_TOKEN }`),
			"workspace: { header: X-Workspace-Id }", "workspace: none", 1),
			`credentials are chosen by workspace, and the upstream says workspace: none`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tt.src), &LoadOptions{Getenv: func(k string) (string, bool) { v, ok := credentialsEnv[k]; return v, ok }})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// An upstream's fixed headers cannot set what the gateway sets per call
// from the caller: the actor on a write, the workspace from the token.
func TestUpstreamHeadersLeaveTheCallersHeaders(t *testing.T) {
	for _, tt := range []struct{ name, upstream, want string }{
		{"actor", "    actor_header: X-Actor\n    headers: { x-actor: ops-bot }\n", `header X-Actor is the actor_header`},
		{"workspace", "    headers: { X-WORKSPACE-ID: acme }\n", `header X-Workspace-Id is the workspace binding's header`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(fmt.Sprintf(credentialsCatalog, "      by_workspace: { acme: GITEA_ACME_TOKEN }"), "    credentials:\n", tt.upstream+"    credentials:\n", 1)
			_, err := Parse("c.yaml", []byte(src), &LoadOptions{Getenv: func(k string) (string, bool) { v, ok := credentialsEnv[k]; return v, ok }})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
