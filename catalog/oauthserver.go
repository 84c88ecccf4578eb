package catalog

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Authorization server defaults.
const (
	// DefaultAccessTokenTTL is how long an access token the gateway issues
	// lives.
	DefaultAccessTokenTTL = Duration(10 * 60e9)
	// MaxAccessTokenTTL bounds auth.oauth_server.access_token_ttl: access
	// tokens are checked against revocation, but a short life bounds what
	// a token copied out of a client is worth.
	MaxAccessTokenTTL = Duration(60 * 60e9)
	// DefaultRefreshTokenTTL is how long a refresh token lives unused;
	// each refresh issues a new one with a new life.
	DefaultRefreshTokenTTL = Duration(7 * 24 * 3600e9)
	// DefaultRegistrationsPerMinute caps dynamic client registrations, in
	// the whole fleet when replicas count limits together.
	DefaultRegistrationsPerMinute = 10
	// DefaultSignInsPerMinute caps the sign-ins begun at /oauth/authorize,
	// in the whole fleet when replicas count limits together: each is
	// kept until it ends or for ten minutes, so the cap bounds what the
	// state store holds for people halfway through.
	DefaultSignInsPerMinute = 600
	// DefaultClientMetadataTimeout bounds the fetch of a Client ID
	// Metadata Document.
	DefaultClientMetadataTimeout = Duration(5e9)
	// DefaultClientMetadataBytes bounds a Client ID Metadata Document.
	DefaultClientMetadataBytes = Size(5 << 10)
	// OAuthPathPrefix, under the issuer's path, is where the gateway
	// serves the authorization server's endpoints.
	OAuthPathPrefix = "/oauth"
	// OAuthCallbackPath, under the prefix, is where the OpenID provider
	// sends the person back; register [Catalog.OAuthCallbackURL] with it.
	OAuthCallbackPath = "/callback"
)

// OAuthServer makes the gateway an OAuth 2.1 authorization server for MCP
// clients (auth.oauth_server): clients discover it from the protected
// resource metadata, register (a Client ID Metadata Document or RFC 7591),
// and send the person to sign in at Provider; the gateway then issues
// its own short-lived access tokens for its MCP resource. Nil: off.
type OAuthServer struct {
	Meta `yaml:"-"`
	// Issuer is the authorization server's issuer URL; default
	// server.public_url. Its endpoints are served under
	// {issuer path}/oauth.
	Issuer string `yaml:"issuer"`
	// Provider is the OpenID provider people sign in at.
	Provider OAuthProvider `yaml:"provider"`
	// AccessTokenTTL: default DefaultAccessTokenTTL, at most
	// MaxAccessTokenTTL.
	AccessTokenTTL Duration `yaml:"access_token_ttl"`
	// RefreshTokenTTL: default DefaultRefreshTokenTTL.
	RefreshTokenTTL Duration `yaml:"refresh_token_ttl"`
	// Registration is RFC 7591 dynamic client registration.
	Registration OAuthRegistration `yaml:"registration"`
	// ClientMetadata is how Client ID Metadata Documents are fetched.
	ClientMetadata OAuthClientMetadata `yaml:"client_metadata"`
	// SignIn bounds the sign-ins begun at /oauth/authorize.
	SignIn OAuthSignIn `yaml:"sign_in"`
}

// OAuthSignIn bounds the sign-ins in progress.
type OAuthSignIn struct {
	Meta `yaml:"-"`
	// PerMinute caps sign-ins begun a minute, counted where the gateway
	// counts its limits; default DefaultSignInsPerMinute.
	PerMinute int `yaml:"per_minute"`
}

// OAuthProvider is the OpenID provider the gateway federates sign-in to.
type OAuthProvider struct {
	Meta     `yaml:"-"`
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"client_id"`
	// ClientSecret is written as ${VAR}; "" for a public client (PKCE).
	ClientSecret string `yaml:"client_secret"`
	// Scopes requested besides openid; the ID token must carry the
	// claims auth.principal names.
	Scopes []string `yaml:"scopes"`
}

// OAuthRegistration configures RFC 7591 dynamic client registration.
type OAuthRegistration struct {
	Meta `yaml:"-"`
	// Enabled: default true.
	Enabled bool `yaml:"enabled"`
	// PerMinute caps registrations a minute, counted where the gateway
	// counts its limits (shared by a fleet with GATEWAY_STATE_STORE);
	// default DefaultRegistrationsPerMinute.
	PerMinute int `yaml:"per_minute"`
}

// OAuthClientMetadata configures how Client ID Metadata Documents (a
// client_id that is an https URL) are fetched.
type OAuthClientMetadata struct {
	Meta `yaml:"-"`
	// Enabled: default true.
	Enabled bool `yaml:"enabled"`
	// AllowedHosts, when not empty, are the only hosts whose documents
	// are fetched.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// AllowPrivateAddresses lists prefixes (127.0.0.0/8, 10.0.0.0/8) a
	// document's host may resolve to; by default only public addresses
	// are dialled. Plain http is allowed only for a loopback host whose
	// addresses are allowed here.
	AllowPrivateAddresses []string `yaml:"allow_private_addresses"`
	// Timeout: default DefaultClientMetadataTimeout.
	Timeout Duration `yaml:"timeout"`
	// MaxBytes: default DefaultClientMetadataBytes.
	MaxBytes Size `yaml:"max_bytes"`
}

// OAuthCallbackURL is the redirect URL to register at the provider; ""
// without an authorization server.
func (c *Catalog) OAuthCallbackURL() string {
	if c.Auth.OAuthServer == nil {
		return ""
	}
	return c.Auth.OAuthServer.Issuer + OAuthPathPrefix + OAuthCallbackPath
}

// MCPResource is the gateway's canonical MCP URL, the resource its own
// access tokens are for: auth.resource_metadata.resource when set, else
// server.public_url and mcp_path.
func (c *Catalog) MCPResource() string {
	if rm := c.Auth.ResourceMetadata; rm != nil && rm.Resource != "" {
		return rm.Resource
	}
	if c.Server.PublicURL == "" {
		return ""
	}
	return strings.TrimSuffix(c.Server.PublicURL, "/") + c.Server.MCPPath
}

func oauthServerDefaults(c *Catalog) {
	o := c.Auth.OAuthServer
	if o == nil {
		return
	}
	o.Issuer = strings.TrimSuffix(or(o.Issuer, c.Server.PublicURL), "/")
	if !o.Has("access_token_ttl") {
		o.AccessTokenTTL = DefaultAccessTokenTTL
	}
	if !o.Has("refresh_token_ttl") {
		o.RefreshTokenTTL = DefaultRefreshTokenTTL
	}
	if !o.Registration.Has("enabled") {
		o.Registration.Enabled = true
	}
	if !o.Registration.Has("per_minute") {
		o.Registration.PerMinute = DefaultRegistrationsPerMinute
	}
	if !o.SignIn.Has("per_minute") {
		o.SignIn.PerMinute = DefaultSignInsPerMinute
	}
	cm := &o.ClientMetadata
	if !cm.Has("enabled") {
		cm.Enabled = true
	}
	if !cm.Has("timeout") {
		cm.Timeout = DefaultClientMetadataTimeout
	}
	defSize(cm.Meta, "max_bytes", &cm.MaxBytes, DefaultClientMetadataBytes)
	if !slices.Contains(o.Provider.Scopes, "openid") {
		o.Provider.Scopes = append([]string{"openid"}, o.Provider.Scopes...)
	}
	// The protected resource metadata points clients at this server
	// (RFC 9728 §2): first, so clients that take the first one use it.
	rm := c.Auth.ResourceMetadata
	if rm == nil {
		rm = &ResourceMetadata{}
		c.Auth.ResourceMetadata = rm
	}
	if rm.Resource == "" {
		rm.Resource = c.MCPResource()
	}
	if o.Issuer != "" && !slices.Contains(rm.AuthorizationServers, o.Issuer) {
		rm.AuthorizationServers = append([]string{o.Issuer}, rm.AuthorizationServers...)
	}
}

// oauthServer checks the authorization server: an issuer, a provider, a
// resource, and bounds on what clients can make it do.
func (v *checker) oauthServer() {
	o := v.c.Auth.OAuthServer
	if o == nil {
		return
	}
	const subj = "auth.oauth_server"
	outer := first(v.c.Auth.At("oauth_server"), v.c.At("auth"))
	secureURL := func(m Meta, key, what, s string) {
		if msg := httpURLRule(s); msg != "" {
			v.add(at(m, key, outer), subj, "%s %s", what, msg)
		} else if u, _ := url.Parse(s); u.Scheme != "https" && !IsLoopbackHost(u.Hostname()) {
			v.add(at(m, key, outer), subj, "%s must be https:// (http:// is allowed on loopback only)", what)
		}
	}
	switch {
	case v.c.Server.PublicURL == "" && !o.Has("issuer"):
		v.add(outer, subj, "needs server.public_url (or issuer): clients and the provider send people back to it")
	default:
		secureURL(o.Meta, "issuer", "issuer", o.Issuer)
	}
	if v.c.MCPResource() == "" {
		v.add(outer, subj, "needs server.public_url or auth.resource_metadata.resource: the tokens it issues are for that MCP resource only")
	}
	pr := &o.Provider
	if !o.Has("provider") {
		v.add(outer, subj, "provider is required: the OpenID provider people sign in at (issuer, client_id)")
	} else {
		secureURL(pr.Meta, "issuer", "provider.issuer", pr.Issuer)
		if pr.ClientID == "" {
			v.add(at(pr.Meta, "client_id", outer), subj, "provider.client_id is required: the gateway's client id at the provider")
		}
		for _, sc := range pr.Scopes {
			if sc == "" || strings.ContainsAny(sc, " \t\n\"") {
				v.add(at(pr.Meta, "scopes", outer), subj, "provider.scopes entry %q must be one scope token without spaces or quotes", clip(sc))
			}
		}
	}
	if o.AccessTokenTTL <= 0 || o.AccessTokenTTL > MaxAccessTokenTTL {
		v.add(at(o.Meta, "access_token_ttl", outer), subj, "access_token_ttl must be greater than 0 and at most %s", MaxAccessTokenTTL)
	}
	if o.RefreshTokenTTL <= 0 {
		v.add(at(o.Meta, "refresh_token_ttl", outer), subj, "refresh_token_ttl must be greater than 0")
	}
	if o.Registration.PerMinute <= 0 {
		v.add(at(o.Registration.Meta, "per_minute", outer), subj, "registration.per_minute must be greater than 0 (turn registration off with enabled: false)")
	}
	if o.SignIn.PerMinute <= 0 {
		v.add(at(o.SignIn.Meta, "per_minute", outer), subj, "sign_in.per_minute must be greater than 0")
	}
	cm := &o.ClientMetadata
	if cm.Timeout <= 0 {
		v.add(at(cm.Meta, "timeout", outer), subj, "client_metadata.timeout must be greater than 0")
	}
	if cm.MaxBytes <= 0 {
		v.add(at(cm.Meta, "max_bytes", outer), subj, "client_metadata.max_bytes must be greater than 0")
	}
	for _, h := range cm.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/:@ ") {
			v.add(at(cm.Meta, "allowed_hosts", outer), subj, "client_metadata.allowed_hosts entry %q must be a host name, without scheme, port or path", clip(h))
		}
	}
	for _, p := range cm.AllowPrivateAddresses {
		if _, err := netip.ParsePrefix(p); err != nil {
			v.add(at(cm.Meta, "allow_private_addresses", outer), subj, "client_metadata.allow_private_addresses entry %q is not an address prefix such as 127.0.0.0/8", clip(p))
		}
	}
	if j := v.c.Auth.JWT; j != nil && o.Issuer != "" && strings.TrimSuffix(j.Issuer, "/") == o.Issuer {
		// Tokens are handed to a verifier by their iss: the gateway's own
		// issuer must not be one whose tokens another verifier checks.
		v.add(at(o.Meta, "issuer", outer), subj, "issuer %q is also auth.jwt.issuer: the gateway's own tokens need an issuer of their own", o.Issuer)
	}
	if u, err := url.Parse(o.Issuer); err == nil {
		prefix := strings.TrimSuffix(u.Path, "/") + OAuthPathPrefix + "/"
		for key, p := range map[string]string{"mcp_path": v.c.Server.MCPPath, "admin_path": v.c.Server.AdminPath} {
			if p != "" && strings.HasPrefix(p+"/", prefix) {
				v.add(at(v.c.Server.Meta, key, outer), subj, "server.%s %q lies under %s, where the authorization server's endpoints are served", key, p, prefix)
			}
		}
	}
	if !o.Registration.Enabled && !cm.Enabled {
		v.add(outer, subj, "registration and client_metadata are both off: no MCP client could get a client id")
	}
}
