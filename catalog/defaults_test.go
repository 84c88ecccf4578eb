package catalog

import (
	"reflect"
	"testing"
)

// TestDefaults checks the "Defaults and required keys" table of
// design/catalog.md against a catalog that writes only what is required.
func TestDefaults(t *testing.T) {
	c := mustParse(t, `version: 1
server: { name: t }
auth: { jwt: { jwks_url: "https://idp/jwks", algorithms: [ES256], issuer: i, audience: a } }
upstreams: { svc: { base_url: "http://127.0.0.1:1" } }
prerequisites: { kb: { probe: { upstream: svc, path: /kb } } }
tools:
  - { name: r, description: R., request: { upstream: svc, path: /r }, response: { not_found: {} } }
  - { name: w, description: W., kind: write, gate: operate, request: { upstream: svc, path: /w } }
gates: { operate: { scopes: [op] } }
`, nil)
	r, w := c.Tool("r"), c.Tool("w")
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"server.listen", c.Server.Listen, DefaultListen},
		{"server.mcp_path", c.Server.MCPPath, DefaultMCPPath},
		{"server.admin_path", c.Server.AdminPath, DefaultAdminPath},
		{"server.enabled", c.Server.Enabled, true},
		{"principal.subject", c.Auth.Principal.Subject, "sub"},
		{"principal.workspace", c.Auth.Principal.Workspace, "ws"},
		{"principal.scopes", c.Auth.Principal.Scopes, "scope"},
		{"principal.actor", c.Auth.Principal.Actor, ""},
		{"principal.workspace_pattern", c.Auth.Principal.WorkspacePattern, DefaultWorkspacePattern},
		{"jwt.leeway", c.Auth.JWT.Leeway, Duration(0)},
		{"sensitive_data.gate", c.SensitiveData.Gate, ""},
		{"sensitive_data.expose", c.SensitiveData.Expose, true},
		{"sensitive_data.kill_switch_env", c.SensitiveData.KillSwitchEnv, DefaultKillSwitchEnv},
		{"upstream.timeout", c.Upstreams["svc"].Timeout, DefaultTimeout},
		{"upstream.max_response_bytes", c.Upstreams["svc"].MaxResponseBytes, DefaultMaxResponseBytes},
		{"probe.method", c.Prerequisites["kb"].Probe.Method, "GET"},
		{"probe.cache", c.Prerequisites["kb"].Probe.Cache, DefaultProbeCache},
		{"limits.structured_bytes", c.Limits.StructuredBytes, DefaultStructuredBytes},
		{"limits.text_bytes", c.Limits.TextBytes, DefaultTextBytes},
		{"limits.inline_bytes", c.Limits.InlineBytes, DefaultInlineBytes},
		{"limits.request_bytes", c.Limits.RequestBytes, DefaultRequestBytes},
		{"limits.page_size.default", c.Limits.PageSize.Default, DefaultPageSize},
		{"limits.page_size.max", c.Limits.PageSize.Max, DefaultMaxPageSize},
		{"limits.max_in_flight", c.Limits.MaxInFlight, DefaultMaxInFlight},
		{"limits.rate", c.Limits.Rate, (*Rate)(nil)},
		{"audit.path", c.Audit.Path, ""},
		{"tool.enabled", r.Enabled, true},
		{"tool.kind", r.Kind, KindRead},
		{"tool.gate", r.Gate, ViewGate},
		{"tool.method-read", r.Request.Method, "GET"},
		{"tool.method-write", w.Request.Method, "POST"},
		{"tool.input", r.Input, map[string]any{"type": "object", "additionalProperties": false}},
		{"tool.input-json", string(r.InputJSON), `{"additionalProperties":false,"type":"object"}`},
		{"tool.required", r.Required, []string(nil)},
		{"response.render", r.Response.Render, RenderJSON},
		{"response.sensitive_note_field", r.Response.SensitiveNoteField, DefaultSensitiveNote},
		{"response.not_found.status", r.Response.NotFound.Status, []int{404}},
		{"response.not_found.result", r.Response.NotFound.Result, map[string]any{"found": false}},
		{"response.not_found-absent", w.Response.NotFound, (*NotFound)(nil)},
	} {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
	if r.Schema == nil || w.Schema == nil {
		t.Error("Schema is nil after Load")
	}
}

func TestDefaultsRespectWrittenValues(t *testing.T) {
	for _, tt := range []struct {
		name  string
		src   string // inserted under tools' siblings
		check func(c *Catalog) bool
	}{
		{"empty-admin-path-disables-rest", "server: { name: t, admin_path: '' }",
			func(c *Catalog) bool { return c.Server.AdminPath == "" }},
		{"null-admin-path-is-absent", "server: { name: t, admin_path: null }",
			func(c *Catalog) bool { return c.Server.AdminPath == DefaultAdminPath }},
		{"server-disabled", "server: { name: t, enabled: false }",
			func(c *Catalog) bool { return !c.Server.Enabled }},
		{"expose-off", "server: { name: t }\nsensitive_data: { expose: false }",
			func(c *Catalog) bool { return !c.SensitiveData.Expose }},
		{"page-size-max-alone-caps-default", "server: { name: t }\nlimits: { page_size: { max: 10 } }",
			func(c *Catalog) bool { return c.Limits.PageSize.Default == 10 && c.Limits.PageSize.Max == 10 }},
		{"empty-mcp-path-takes-default", "server: { name: t, mcp_path: '${MCP_PATH:-}' }",
			func(c *Catalog) bool { return c.Server.MCPPath == DefaultMCPPath }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "version: 1\n" + tt.src + `
auth: { api_keys_file: k }
upstreams: { svc: { base_url: "http://127.0.0.1:1" } }
tools: [ { name: a, description: A., request: { upstream: svc, path: /a } } ]
`
			if c := mustParse(t, src, nil); !tt.check(c) {
				t.Errorf("Parse(%q): defaults overrode a written value", tt.src)
			}
		})
	}
}
