package catalog

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// An upstream behind an OAuth 2.0 authorization server takes no static
// credential: the gateway asks that server for an access token, as itself
// (client_credentials) or on behalf of the person calling
// (token_exchange, RFC 8693), and sends it as a bearer token. The caller's
// own token is never what is sent: it was issued for the gateway, and an
// upstream that received it could replay it against the gateway.

// Upstream authentication types (upstreams.NAME.auth.type).
const (
	// AuthHeaders sends the upstream's headers and, when set, the
	// workspace's credential: static credentials, the default.
	AuthHeaders = "headers"
	// AuthClientCredentials sends a token the gateway obtains for itself
	// (RFC 6749 §4.4), shared by every caller.
	AuthClientCredentials = "client_credentials"
	// AuthTokenExchange sends a token obtained for each person by
	// exchanging a subject token the gateway signs (RFC 8693).
	AuthTokenExchange = "token_exchange"
)

// Client authentication methods at the token endpoint (auth.client_auth).
const (
	ClientAuthBasic = "basic" // client_secret_basic, RFC 6749 §2.3.1
	ClientAuthPost  = "post"  // client_secret_post
)

// Defaults of an upstream's auth block.
const (
	// DefaultTokenTimeout bounds one token request, connect to last byte.
	DefaultTokenTimeout = Duration(10 * time.Second)
	// DefaultSubjectTokenLifetime is how long a signed subject token is
	// valid: long enough to reach the token endpoint, too short to keep.
	DefaultSubjectTokenLifetime = Duration(60 * time.Second)
	// MaxSubjectTokenLifetime caps subject_token.lifetime.
	MaxSubjectTokenLifetime = Duration(5 * time.Minute)
	// DefaultMaxCachedTokens bounds the per-person token cache of a
	// token_exchange upstream.
	DefaultMaxCachedTokens = 10000
)

// UpstreamAuth says how the gateway authenticates to an upstream
// (upstreams.NAME.auth). Absent, or with type headers, the upstream's
// headers and credentials are all it sends.
type UpstreamAuth struct {
	Meta `yaml:"-"`
	// Type is AuthHeaders (default), AuthClientCredentials or
	// AuthTokenExchange.
	Type string `yaml:"type"`
	// TokenURL is the authorization server's token endpoint.
	TokenURL string `yaml:"token_url"`
	// ClientID and ClientSecretEnv are the gateway's client at that
	// server. ClientSecretEnv names the environment variable holding the
	// secret; the name is taken as written, never expanded.
	ClientID        string `yaml:"client_id"`
	ClientSecretEnv string `yaml:"client_secret_env"`
	// ClientAuth is how the client authenticates: ClientAuthBasic
	// (default) or ClientAuthPost.
	ClientAuth string `yaml:"client_auth"`
	// Scopes are requested with every token (the scope parameter).
	Scopes []string `yaml:"scopes"`
	// Audience and Resource, when set, are sent as the audience (RFC
	// 8693) and resource (RFC 8707) parameters.
	Audience string `yaml:"audience"`
	Resource string `yaml:"resource"`
	// Timeout bounds one token request; default DefaultTokenTimeout.
	Timeout Duration `yaml:"timeout"`
	// SubjectToken is how the gateway states who is calling, for
	// AuthTokenExchange (required there, refused elsewhere).
	SubjectToken *SubjectToken `yaml:"subject_token"`
	// MaxCachedTokens bounds how many people's tokens a token_exchange
	// upstream keeps; default DefaultMaxCachedTokens.
	MaxCachedTokens int `yaml:"max_cached_tokens"`

	// ClientSecret is read by Load from ClientSecretEnv.
	ClientSecret Secret `yaml:"-"`
}

// SubjectToken configures the JWT the gateway signs for a token exchange:
// it names the caller's subject, workspace and actor, is addressed to the
// authorization server and lives DefaultSubjectTokenLifetime.
type SubjectToken struct {
	Meta `yaml:"-"`
	// Issuer is the token's iss: how the authorization server knows the
	// gateway (it trusts this issuer's key). Required.
	Issuer string `yaml:"issuer"`
	// Audience is the token's aud; default the token_url.
	Audience string `yaml:"audience"`
	// KeyFile is a PEM private key (RSA, ECDSA P-256/P-384 or Ed25519)
	// the gateway signs with; the server holds its public half.
	KeyFile string `yaml:"key_file"`
	// KeyID is the kid header, when the server selects keys by it.
	KeyID string `yaml:"key_id"`
	// Lifetime is the token's validity; default
	// DefaultSubjectTokenLifetime, at most MaxSubjectTokenLifetime.
	Lifetime Duration `yaml:"lifetime"`
}

// Tokens reports whether the upstream is called with bearer tokens the
// gateway obtains (client_credentials or token_exchange).
func (a *UpstreamAuth) Tokens() bool {
	return a != nil && (a.Type == AuthClientCredentials || a.Type == AuthTokenExchange)
}

func defaultUpstreamAuth(u *Upstream) {
	a := u.Auth
	if a == nil {
		return
	}
	a.Type = or(a.Type, AuthHeaders)
	if !a.Tokens() {
		return
	}
	a.ClientAuth = or(a.ClientAuth, ClientAuthBasic)
	if !a.Has("timeout") {
		a.Timeout = DefaultTokenTimeout
	}
	if !a.Has("max_cached_tokens") {
		a.MaxCachedTokens = DefaultMaxCachedTokens
	}
	if st := a.SubjectToken; st != nil {
		st.Audience = or(st.Audience, a.TokenURL)
		if !st.Has("lifetime") {
			st.Lifetime = DefaultSubjectTokenLifetime
		}
	}
}

// upstreamAuth checks an upstream's auth block and reads its client
// secret. Messages name variables, never their values.
func (v *checker) upstreamAuth(name string, u *Upstream, subj string) {
	a := u.Auth
	if a == nil {
		return
	}
	subj += " auth"
	switch a.Type {
	case AuthHeaders:
		for _, k := range []string{"token_url", "client_id", "client_secret_env", "client_auth", "scopes", "audience", "resource", "timeout", "subject_token", "max_cached_tokens"} {
			if a.Has(k) {
				v.add(a.At(k), subj, "%s is for type client_credentials or token_exchange; type headers sends the upstream's headers and credentials alone", k)
			}
		}
		return
	case AuthClientCredentials, AuthTokenExchange:
	default:
		v.add(a.At("type"), subj, "type %q must be headers, client_credentials or token_exchange", clip(a.Type))
		return
	}
	if msg := tokenURLRule(a.TokenURL); msg != "" {
		v.add(a.At("token_url"), subj, "token_url %s", msg)
	}
	if a.ClientID == "" {
		v.add(a.At("client_id"), subj, "client_id is required")
	}
	v.clientSecret(a, subj)
	if a.ClientAuth != ClientAuthBasic && a.ClientAuth != ClientAuthPost {
		v.add(a.At("client_auth"), subj, "client_auth %q must be basic or post", clip(a.ClientAuth))
	}
	for _, s := range a.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			v.add(a.At("scopes"), subj, "scope %q must be a non-empty token without spaces, quotes or backslashes (RFC 6749 §3.3)", clip(s))
		}
	}
	if a.Resource != "" {
		if r, err := url.Parse(a.Resource); err != nil || !r.IsAbs() || r.Fragment != "" {
			v.add(a.At("resource"), subj, "resource %q must be an absolute URI without a fragment (RFC 8707)", clip(a.Resource))
		}
	}
	if a.Timeout <= 0 {
		v.add(a.At("timeout"), subj, "timeout must be greater than 0")
	}
	if a.MaxCachedTokens <= 0 {
		v.add(a.At("max_cached_tokens"), subj, "max_cached_tokens must be greater than 0")
	}
	if u.Credentials != nil {
		v.add(u.At("credentials"), subj, "type %s and credentials both authenticate every request: the token the gateway obtains goes in Authorization, so choose one (credentials by workspace, or auth)", a.Type)
	}
	for h := range u.Headers {
		if strings.EqualFold(h, "Authorization") {
			v.add(first(v.pos[childKey(childKey(childKey("upstreams", name), "headers"), h)], u.At("headers")), subj, "headers set %s, which carries the token that type %s obtains", h, a.Type)
		}
	}
	st := a.SubjectToken
	switch {
	case a.Type == AuthClientCredentials && st != nil:
		v.add(a.At("subject_token"), subj, "subject_token is for type token_exchange; client_credentials asks for a token as the gateway itself")
	case a.Type == AuthTokenExchange && st == nil:
		v.add(a.Pos, subj, "type token_exchange needs subject_token (issuer and key_file): the JWT in which the gateway names the caller")
	case st != nil:
		ssubj := subj + " subject_token"
		if st.Issuer == "" {
			v.add(first(st.At("issuer"), a.At("subject_token")), ssubj, "issuer is required: the iss the authorization server trusts for the gateway's key")
		}
		if st.KeyFile == "" {
			v.add(first(st.At("key_file"), a.At("subject_token")), ssubj, "key_file is required: the PEM private key the gateway signs subject tokens with")
		}
		if st.Lifetime <= 0 || st.Lifetime > MaxSubjectTokenLifetime {
			v.add(st.At("lifetime"), ssubj, "lifetime must be greater than 0 and at most %s", MaxSubjectTokenLifetime.D())
		}
	}
}

// clientSecret reads the client secret from the variable named by
// client_secret_env.
func (v *checker) clientSecret(a *UpstreamAuth, subj string) {
	env := a.ClientSecretEnv
	p := a.At("client_secret_env")
	switch {
	case env == "":
		v.add(p, subj, "client_secret_env is required: the name of the environment variable holding the client secret")
		return
	case !validEnvName(env):
		// Not quoted: what stands here by mistake may be the secret.
		hint := "write the name of the variable holding the secret, such as TICKETS_CLIENT_SECRET"
		if inner, ok := strings.CutPrefix(env, "${"); ok {
			if name, _, _ := strings.Cut(strings.TrimSuffix(inner, "}"), ":-"); validEnvName(name) {
				hint = "write " + name + ", without ${}"
			}
		}
		v.add(p, subj, "client_secret_env is not an environment variable name (%s)", hint)
		return
	}
	switch val, ok := v.lookup(env); {
	case !ok:
		v.add(p, subj, "client_secret_env: environment variable %s is not set", env)
	case val == "":
		v.add(p, subj, "client_secret_env: environment variable %s is empty", env)
	case !validHeaderValue(val):
		v.add(p, subj, "client_secret_env: environment variable %s holds a control character (CR, LF, NUL or another)", env)
	default:
		a.ClientSecret = NewSecret(val)
	}
}

// tokenURLRule is why s cannot be a token endpoint, or "". The client
// secret travels to it, so plain http is allowed on loopback only.
func tokenURLRule(s string) string {
	if msg := httpURLRule(s); msg != "" {
		return msg
	}
	u, _ := url.Parse(s)
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return "must use https (the client secret is sent to it); http is allowed on loopback only"
	}
	return ""
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// authHeader refuses a tool header that names Authorization on an
// upstream whose auth obtains tokens: it would replace the token.
func (tc *toolCheck) authHeader(r *Request, name string, p Pos) {
	u := tc.c.Upstreams[r.Upstream]
	if u == nil || !u.Auth.Tokens() || http.CanonicalHeaderKey(name) != "Authorization" {
		return
	}
	tc.add(p, tc.subj, "header %s: upstream %q sends the token its auth (%s) obtains in this header, so a tool must not set it", name, r.Upstream, u.Auth.Type)
}
