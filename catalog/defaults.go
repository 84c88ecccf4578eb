package catalog

import (
	"math"
	"net/http"
)

// DefaultProbeCache is how long a prerequisite probe's answer is kept per
// workspace when the probe does not say.
const DefaultProbeCache = Duration(60e9)

// DefaultNotFoundStatus is the upstream status a not_found block maps when
// it lists none.
const DefaultNotFoundStatus = http.StatusNotFound

// applyDefaults fills everything the operator left out, in one place (the
// table in design/catalog.md). It runs after decoding and before
// validation, so validation sees the values the gateway will use.
//
// Meta tells an absent key from a written zero: an empty admin_path disables
// the REST surface and "enabled: false" disables a tool, while an absent key
// takes the default. A written zero number or size is kept and refused by
// validation rather than silently replaced. Strings with no meaning when
// empty (listen, mcp_path, paths into the claims) take the default when
// empty too, so "${MCP_PATH:-}" behaves like an absent key.
func applyDefaults(c *Catalog) {
	approvalPageDefaults(c)
	approvalSettingsDefaults(c)
	discoveryDefaults(c.Discovery)
	for _, ts := range c.Toolsets {
		discoveryDefaults(ts.Discovery)
	}
	s := &c.Server
	s.Listen = or(s.Listen, DefaultListen)
	s.MCPPath = or(s.MCPPath, DefaultMCPPath)
	if !s.Has("admin_path") {
		s.AdminPath = DefaultAdminPath
	}
	if !s.Has("enabled") {
		s.Enabled = true
	}
	oauthServerDefaults(c)

	pr := &c.Auth.Principal
	pr.Subject = or(pr.Subject, "sub")
	pr.Workspace = or(pr.Workspace, "ws")
	pr.Scopes = or(pr.Scopes, "scope")
	// pr.Actor stays empty: the subject is the actor.
	pr.WorkspacePattern = or(pr.WorkspacePattern, DefaultWorkspacePattern)

	sd := &c.SensitiveData
	if !sd.Has("expose") {
		sd.Expose = true
	}
	sd.KillSwitchEnv = or(sd.KillSwitchEnv, DefaultKillSwitchEnv)

	if j := c.Auth.JWT; j != nil && !j.Has("start_deadline") {
		j.StartDeadline = DefaultStartDeadline
	}
	defSize(c.Audit.Meta, "max_argument_bytes", &c.Audit.MaxArgumentBytes, DefaultMaxArgumentBytes)

	for _, u := range c.Upstreams {
		u.ErrorDetail = or(u.ErrorDetail, ErrorDetailMessage)
		u.IdempotencyHeader = or(u.IdempotencyHeader, DefaultIdempotencyHeader)
		defaultCredentials(u)
		defaultUpstreamAuth(u)
		if !u.Has("timeout") {
			u.Timeout = DefaultTimeout
		}
		if !u.Has("max_response_bytes") {
			u.MaxResponseBytes = DefaultMaxResponseBytes
		}
	}

	for _, p := range c.Prerequisites {
		if p.Probe != nil {
			p.Probe.Method = or(p.Probe.Method, http.MethodGet)
			if !p.Probe.Has("cache") {
				p.Probe.Cache = DefaultProbeCache
			}
		}
	}

	l := &c.Limits
	defSize(l.Meta, "structured_bytes", &l.StructuredBytes, DefaultStructuredBytes)
	defSize(l.Meta, "text_bytes", &l.TextBytes, DefaultTextBytes)
	defSize(l.Meta, "inline_bytes", &l.InlineBytes, DefaultInlineBytes)
	defSize(l.Meta, "request_bytes", &l.RequestBytes, DefaultRequestBytes)
	if !l.PageSize.Has("max") {
		l.PageSize.Max = DefaultMaxPageSize
	}
	if !l.PageSize.Has("default") {
		// "page_size: {max: 10}" alone means pages of at most 10.
		l.PageSize.Default = max(1, min(DefaultPageSize, l.PageSize.Max))
	}
	if !l.Has("max_in_flight") {
		l.MaxInFlight = DefaultMaxInFlight
	}
	for _, r := range l.Rules {
		// One second's worth: a caller may spend its second at once.
		if r != nil && r.Rate != nil && !r.Rate.Has("burst") && r.Rate.RPS > 0 {
			r.Rate.Burst = max(1, int(math.Ceil(r.Rate.RPS)))
		}
	}

	for _, t := range c.Tools {
		if !t.Has("enabled") {
			t.Enabled = true
		}
		t.Kind = or(t.Kind, KindRead)
		t.Gate = or(t.Gate, ViewGate)
		if t.Request.Method == "" {
			t.Request.Method = http.MethodGet
			if t.Kind == KindWrite {
				t.Request.Method = http.MethodPost
			}
		}
		t.Request.BodyFormat = or(t.Request.BodyFormat, BodyJSON)
		approvalDefaults(t)
		if t.Input == nil {
			t.Input = map[string]any{"type": "object", "additionalProperties": false}
		}
		r := &t.Response
		r.Render = or(r.Render, RenderJSON)
		r.SensitiveNoteField = or(r.SensitiveNoteField, DefaultSensitiveNote)
		if nf := r.NotFound; nf != nil {
			if !nf.Has("status") {
				nf.Status = []int{DefaultNotFoundStatus}
			}
			if !nf.Has("result") {
				nf.Result = map[string]any{"found": false}
			}
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func defSize(m Meta, key string, s *Size, def Size) {
	if !m.Has(key) {
		*s = def
	}
}
