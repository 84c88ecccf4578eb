package proxy

import (
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

// DefaultRequestBytes is limits.request_bytes when a catalog leaves it
// unset, for a surface that must read before any catalog is installed.
const DefaultRequestBytes = int64(catalog.DefaultRequestBytes)

// Config is what the surfaces read of a catalog, resolved once when a
// [Core] is built: every default applied, every lookup done. Nothing on
// the request path re-applies a default or reads the raw catalog. It is
// immutable; a reload builds a new Core, and with it a new Config.
type Config struct {
	// Enabled is server.enabled: false answers 503 on every MCP route.
	Enabled bool
	// MCPPath is server.mcp_path, [catalog.DefaultMCPPath] when unset.
	MCPPath string
	// AdminPath is server.admin_path; "" disables the REST mirror.
	AdminPath string
	// Server names the implementation: Version is "unknown" when the
	// catalog leaves it out (the MCP schema requires one).
	Server ServerInfo
	// Instructions are the catalog's, with [FenceNotice] added when any
	// tool fences untrusted text.
	Instructions string
	// AllowedOrigins, AllowedHosts and PublicURL are server's, as written.
	AllowedOrigins []string
	AllowedHosts   []string
	PublicURL      string
	// RequestBytes is limits.request_bytes, [catalog.DefaultRequestBytes]
	// when unset.
	RequestBytes int64
	// MaxInFlight is limits.max_in_flight, [catalog.DefaultMaxInFlight]
	// when unset.
	MaxInFlight int
	// Rate is limits.rate; nil buckets are no limit.
	Rate RateLimits
	// Rules are limits.rules, in catalog order.
	Rules []*LimitRule
	// ToolUpstream maps each tool, by name, to its upstream's name, for
	// the rules keyed or matched by upstream.
	ToolUpstream map[string]string
	// ToolKeyed is true when some limit is keyed or matched by a tool or
	// its upstream (a per_tool bucket, a rule that NeedsTool): only then
	// does a call's tool matter to the limits (see [Core.Counted]).
	ToolKeyed bool
	// ViewScopes are the view gate's scopes, which every use of the
	// surface needs; nil without a view gate.
	ViewScopes []string
	// ResourceMetadata is auth.resource_metadata; nil when not served.
	ResourceMetadata *ResourceMetadata
	// Hash is the catalog's hash (tools/list cursors carry its prefix).
	Hash string
	// Approvals says where approvals are decided.
	Approvals ApprovalConfig
}

// ApprovalConfig is where approvals are decided: the approver REST API
// and the approval page, under {admin_path}/approvals.
type ApprovalConfig struct {
	// Base is {admin_path}/approvals; "" when admin_path is "" (a catalog
	// with a four-eyes tool then does not load).
	Base string
	// URL starts every approval's URL: {public_url}{admin_path}/approvals/,
	// root-relative without public_url.
	URL string
	// Page is approval_page; nil when the page is off.
	Page *ApprovalPage
}

// ApprovalPage is approval_page with its defaults applied and what it
// derives from server and auth.
type ApprovalPage struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// Scopes requested, openid first.
	Scopes []string
	// SessionTTL is how long a sign-in lasts.
	SessionTTL time.Duration
	// RedirectURL is where the provider sends the approver back.
	RedirectURL string
	// SecureCookies: public_url is https, so the page's cookies are Secure
	// even where TLS ends before the gateway.
	SecureCookies bool
	// Principal maps an ID token's claims, as auth.principal maps a
	// bearer token's.
	Principal catalog.Principal
}

// ServerInfo is the MCP Implementation object.
type ServerInfo struct{ Name, Version, Title string }

// RateLimits are the token buckets limits.rate declares.
type RateLimits struct {
	PerPrincipal *Bucket
	PerTool      map[string]*Bucket
}

// Bucket is one token bucket's refill rate and size.
type Bucket struct {
	RPS   float64
	Burst int
}

// LimitRule is one of limits.rules, resolved: its dimensions as flags,
// its matches as sets (nil: any value) and its numbers.
type LimitRule struct {
	Name string
	// ByWorkspace, BySubject, ByTool and ByUpstream say which values key
	// the rule's counters.
	ByWorkspace, BySubject, ByTool, ByUpstream bool
	// Workspaces, Subjects, Tools and Upstreams select the calls the rule
	// applies to; nil matches any.
	Workspaces, Subjects, Tools, Upstreams map[string]bool
	// Rate is nil when the rule has no rate.
	Rate *Bucket
	// PerDay is the daily quota; 0: none.
	PerDay int64
}

// NeedsTool reports whether the rule applies only to calls of a known
// tool: it is keyed or matched by tool or upstream, which a name no tool
// has does not give (and must not mint counters for).
func (r *LimitRule) NeedsTool() bool {
	return r.ByTool || r.ByUpstream || r.Tools != nil || r.Upstreams != nil
}

// ResourceMetadata is RFC 9728 metadata for the protected resource.
type ResourceMetadata struct {
	Resource             string
	AuthorizationServers []string
	ScopesSupported      []string
}

// resolveConfig builds the Config of cat; instructions are the Core's.
func resolveConfig(cat *catalog.Catalog, instructions string) *Config {
	srv := &cat.Server
	c := &Config{
		Enabled:        srv.Enabled,
		MCPPath:        or(srv.MCPPath, catalog.DefaultMCPPath),
		AdminPath:      srv.AdminPath,
		Server:         ServerInfo{Name: srv.Name, Version: or(srv.Version, "unknown"), Title: srv.Title},
		Instructions:   instructions,
		AllowedOrigins: srv.AllowedOrigins,
		AllowedHosts:   srv.AllowedHosts,
		PublicURL:      srv.PublicURL,
		RequestBytes:   int64(cat.Limits.RequestBytes),
		MaxInFlight:    cat.Limits.MaxInFlight,
		Hash:           cat.Hash,
	}
	if c.RequestBytes <= 0 {
		c.RequestBytes = DefaultRequestBytes
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = catalog.DefaultMaxInFlight
	}
	if r := cat.Limits.Rate; r != nil {
		c.Rate.PerPrincipal = bucketOf(r.PerPrincipal)
		for name, b := range r.PerTool {
			if c.Rate.PerTool == nil {
				c.Rate.PerTool = make(map[string]*Bucket, len(r.PerTool))
			}
			c.Rate.PerTool[name] = bucketOf(b)
		}
	}
	for _, r := range cat.Limits.Rules {
		c.Rules = append(c.Rules, limitRuleOf(r))
	}
	c.ToolKeyed = len(c.Rate.PerTool) > 0 || slices.ContainsFunc(c.Rules, (*LimitRule).NeedsTool)
	if len(c.Rules) > 0 {
		c.ToolUpstream = make(map[string]string, len(cat.Tools))
		// search_tools has no upstream: only rules that need none apply.
		c.ToolUpstream[catalog.SearchToolsName] = ""
		for _, t := range cat.Tools {
			c.ToolUpstream[t.Name] = t.Request.Upstream
		}
	}
	if g := cat.Gates[catalog.ViewGate]; g != nil && len(g.Scopes) > 0 {
		c.ViewScopes = g.Scopes
	}
	if c.AdminPath != "" {
		c.Approvals.Base = c.AdminPath + "/approvals"
		c.Approvals.URL = c.PublicURL + c.Approvals.Base + "/"
	}
	if ap := cat.ApprovalPage; ap != nil {
		c.Approvals.Page = &ApprovalPage{Issuer: ap.Issuer, ClientID: ap.ClientID, ClientSecret: ap.ClientSecret,
			Scopes: slices.Clone(ap.Scopes), SessionTTL: ap.SessionTTL.D(), RedirectURL: cat.ApprovalRedirectURL(),
			SecureCookies: strings.HasPrefix(c.PublicURL, "https://"), Principal: cat.Auth.Principal}
	}
	if rm := cat.Auth.ResourceMetadata; rm != nil {
		c.ResourceMetadata = &ResourceMetadata{Resource: rm.Resource, AuthorizationServers: rm.AuthorizationServers, ScopesSupported: rm.ScopesSupported}
	}
	return c
}

func limitRuleOf(r *catalog.LimitRule) *LimitRule {
	lr := &LimitRule{Name: r.Name, Rate: bucketOf(r.Rate)}
	for _, d := range r.Per {
		switch d {
		case catalog.DimWorkspace:
			lr.ByWorkspace = true
		case catalog.DimSubject:
			lr.BySubject = true
		case catalog.DimTool:
			lr.ByTool = true
		case catalog.DimUpstream:
			lr.ByUpstream = true
		}
	}
	set := func(vals []string) map[string]bool {
		if vals == nil {
			return nil
		}
		m := make(map[string]bool, len(vals))
		for _, v := range vals {
			m[v] = true
		}
		return m
	}
	lr.Workspaces, lr.Subjects = set(r.Match.Workspace), set(r.Match.Subject)
	lr.Tools, lr.Upstreams = set(r.Match.Tool), set(r.Match.Upstream)
	if r.Quota != nil {
		lr.PerDay = r.Quota.PerDay
	}
	return lr
}

func bucketOf(b *catalog.Bucket) *Bucket {
	if b == nil {
		return nil
	}
	return &Bucket{RPS: b.RPS, Burst: b.Burst}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
