// Package oauthserver makes the gateway an OAuth 2.1 authorization server
// for MCP clients (auth.oauth_server), with sign-in delegated to the
// company's OpenID provider. Enterprise providers mostly lack what MCP
// clients need (Client ID Metadata Documents or dynamic registration,
// resource indicators), so the gateway brokers it: a client registers
// here, the person signs in at the provider, the provider's ID token is
// mapped to a principal by the same mapper as a bearer JWT's claims, and
// the gateway issues its own short-lived access tokens for its MCP
// resource, which its verifier accepts beside the other methods.
//
// The protocol (authorization code with PKCE, refresh, revocation,
// discovery of keys) is zitadel/oidc's op package; this package holds the
// state it needs in a [Store] shared by replicas, the registration of
// clients (RFC 7591 and Client ID Metadata Documents), RFC 8414 metadata,
// RFC 8707 resource checks and the federation to the provider. It leaves
// the wire of the MCP endpoint to mcp and the principal's use to proxy.
package oauthserver

import (
	"context"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/cors"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/fleet"
)

// Options configures [New]. The zero value is usable.
type Options struct {
	// Store keeps the state; nil: in memory, lost on restart and not
	// shared.
	Store Store
	// Keys are the raw secrets (32 bytes or more, newest first) the
	// signing keys are derived from; every key verifies, the newest
	// signs. Nil: one random key, so tokens die with the process and
	// other replicas refuse them.
	Keys [][]byte
	// HTTPClient talks to the OpenID provider. Nil: a client with a 10 s
	// timeout that uses no proxy from the environment.
	HTTPClient *http.Client
	// Logger: nil discards.
	Logger *slog.Logger
	// Now: nil is time.Now.
	Now func() time.Time
	// Limits counts dynamic registrations against
	// registration.per_minute. The process's limiter, shared by the
	// replicas of a fleet when it counts in Redis, makes the cap hold for
	// the whole fleet and across reloads. Nil: a limiter of this Server
	// alone.
	Limits *fleet.Limiter
}

// Server is the authorization server one catalog describes. It is safe
// for concurrent use; a reload makes a new one over the same Store.
type Server struct {
	cfg        *catalog.OAuthServer
	principal  catalog.Principal
	issuer     string
	basePath   string // the issuer's path, "" at the root
	resource   string
	scopes     []string
	accessTTL  time.Duration
	refreshTTL time.Duration

	store  Store
	keys   []derivedKey
	log    *slog.Logger
	now    func() time.Time
	op     *op.Provider
	router http.Handler
	fed    *federation
	fetch  *metadataFetcher
	limits *fleet.Limiter
	verify authz.Verifier
}

type derivedKey struct {
	id   string
	priv ed25519.PrivateKey
}

// deriveKey makes an Ed25519 key from a secret with HKDF, so replicas
// given the same secrets sign with the same keys and nothing is stored.
func deriveKey(secret []byte, info string) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, nil, info, 32)
}

// New builds the authorization server for cat, which must have
// auth.oauth_server. It does not contact the provider: discovery happens
// on the first sign-in, and is retried until it works.
func New(cat *catalog.Catalog, opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	c := cat.Auth.OAuthServer
	if c == nil {
		return nil, errors.New("auth.oauth_server is not configured")
	}
	iu, err := url.Parse(c.Issuer)
	if err != nil {
		return nil, fmt.Errorf("auth.oauth_server.issuer: %v", err)
	}
	s := &Server{
		cfg: c, principal: cat.Auth.Principal, issuer: c.Issuer, basePath: strings.TrimSuffix(iu.Path, "/"),
		resource: cat.MCPResource(), accessTTL: c.AccessTokenTTL.D(), refreshTTL: c.RefreshTokenTTL.D(),
		store: opts.Store, log: opts.Logger, now: opts.Now,
		limits: opts.Limits,
	}
	if rm := cat.Auth.ResourceMetadata; rm != nil {
		s.scopes = rm.ScopesSupported
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.limits == nil {
		s.limits, _ = fleet.New(&fleet.Options{Now: s.now}) // local: no error
	}
	if s.store == nil {
		s.store, _ = OpenFileStore("")
	}
	secrets := opts.Keys
	if len(secrets) == 0 {
		secrets = [][]byte{[]byte(randomToken(32))}
	}
	for _, sec := range secrets {
		seed, err := deriveKey(sec, "mcpgw oauth server signing key v1")
		if err != nil {
			return nil, err
		}
		priv := ed25519.NewKeyFromSeed(seed)
		sum := sha256.Sum256(priv.Public().(ed25519.PublicKey))
		s.keys = append(s.keys, derivedKey{id: hex.EncodeToString(sum[:8]), priv: priv})
	}
	var crypt [32]byte
	ck, err := deriveKey(secrets[0], "mcpgw oauth server crypto key v1")
	if err != nil {
		return nil, err
	}
	copy(crypt[:], ck)

	conf := &op.Config{CryptoKey: crypt, CodeMethodS256: true, GrantTypeRefreshToken: true}
	p := s.basePath + catalog.OAuthPathPrefix
	oopts := []op.Option{
		op.WithCustomAuthEndpoint(op.NewEndpoint(strings.TrimPrefix(p+"/authorize", "/"))),
		op.WithCustomTokenEndpoint(op.NewEndpoint(strings.TrimPrefix(p+"/token", "/"))),
		op.WithCustomRevocationEndpoint(op.NewEndpoint(strings.TrimPrefix(p+"/revoke", "/"))),
		op.WithCustomKeysEndpoint(op.NewEndpoint(strings.TrimPrefix(p+"/keys", "/"))),
		op.WithCustomUserinfoEndpoint(op.NewEndpoint(strings.TrimPrefix(p+"/userinfo", "/"))),
		op.WithCustomIntrospectionEndpoint(op.NewEndpoint(strings.TrimPrefix(p+"/introspect", "/"))),
		op.WithCustomEndSessionEndpoint(op.NewEndpoint(strings.TrimPrefix(p+"/end_session", "/"))),
		op.WithCustomDeviceAuthorizationEndpoint(op.NewEndpoint(strings.TrimPrefix(p+"/device", "/"))),
	}
	// Browser-based clients call the token and revocation endpoints from
	// any origin; none of them reads a cookie, so none is allowed along.
	oopts = append(oopts, op.WithCORSOptions(&cors.Options{
		AllowOriginFunc:  func(string) bool { return true },
		AllowedMethods:   []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:   []string{"Content-Type", "Authorization", "MCP-Protocol-Version"},
		AllowCredentials: false,
	}))
	// The issuer is the gateway's origin (and path), not the request's:
	// the library reads it from here, so only the path (without the
	// issuer's own path) is routed on.
	if iu.Scheme == "http" {
		oopts = append(oopts, op.WithAllowInsecure())
	}
	prov, err := op.NewProvider(conf, &storage{s: s}, func(bool) (op.IssuerFromRequest, error) {
		return func(*http.Request) string { return s.issuer }, nil
	}, oopts...)
	if err != nil {
		return nil, fmt.Errorf("auth.oauth_server: %v", err)
	}
	s.op = prov
	s.router = op.CreateRouter(&validating{Provider: prov, s: s})

	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	}
	s.fed = &federation{s: s, cfg: c.Provider, hc: hc}
	s.fetch = newMetadataFetcher(&c.ClientMetadata, s.now)

	keys := map[string]ed25519.PublicKey{}
	for _, k := range s.keys {
		keys[k.id] = k.priv.Public().(ed25519.PublicKey)
	}
	s.verify = authz.NewIssuedVerifier(authz.IssuedOptions{Issuer: s.issuer, Audience: s.resource, Keys: keys, Revoked: s.Revoked, Now: s.now})
	return s, nil
}

// Issuer is the server's issuer URL.
func (s *Server) Issuer() string { return s.issuer }

// Verifier verifies the access tokens this server issues (see
// [authz.NewIssuedVerifier]); combine it with the catalog's verifier in an
// [authz.Federated].
func (s *Server) Verifier() authz.Verifier { return s.verify }

// Paths the server answers, relative to the issuer's path.
const (
	wellKnownAS   = "/.well-known/oauth-authorization-server"
	wellKnownOIDC = "/.well-known/openid-configuration"
)

// Handles reports whether the path is one of the server's: its
// metadata and everything under {issuer path}/oauth/.
func (s *Server) Handles(path string) bool {
	return path == wellKnownAS+s.basePath || path == s.basePath+wellKnownOIDC ||
		strings.HasPrefix(path, s.basePath+catalog.OAuthPathPrefix+"/")
}

// ServeHTTP answers the server's endpoints (RFC 8414 metadata,
// /oauth/authorize, /oauth/token, /oauth/register, /oauth/revoke,
// /oauth/keys, and the sign-in pages) and 404 for anything else.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	p := r.URL.Path
	if p == wellKnownAS+s.basePath || p == s.basePath+wellKnownOIDC {
		s.serveMetadata(w, r)
		return
	}
	rest := strings.TrimPrefix(p, s.basePath+catalog.OAuthPathPrefix)
	switch rest {
	case "/register":
		s.serveRegister(w, r)
	case "/login":
		s.fed.serveLogin(w, r)
	case catalog.OAuthCallbackPath:
		s.fed.serveCallback(w, r)
	case "/authorize":
		r = s.withResource(w, r)
		if r == nil {
			return
		}
		if msg := oversizeAuthorize(r.Form); msg != "" {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", msg)
			return
		}
		// The client_id checked below must be the one the library reads
		// (the last of several): two that differ are refused.
		if msg := repeatedParam(url.Values{"client_id": r.Form["client_id"]}); msg != "" {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", msg)
			return
		}
		// Only a sign-in that can be stored takes from the budget: one
		// for a client that is not there is refused by the library,
		// storing nothing, and must not spend everyone's sign-ins.
		// A client_id that is a URL is checked by fetching it: that fetch
		// spends the budget, so no stream of URLs fetches unbounded.
		if id := r.Form.Get("client_id"); !strings.Contains(id, "://") {
			if _, err := s.client(r.Context(), id); err != nil {
				s.router.ServeHTTP(w, r)
				return
			}
		}
		if !s.take(w, r, s.signIns(), "sign-ins are starting", "sign_in.per_minute", s.cfg.SignIn.PerMinute) {
			return
		}
		s.router.ServeHTTP(w, r)
	case "/token":
		// RFC 8707 §2.2: a resource at the token endpoint must be one
		// the grant is for; this server's grants are for one resource.
		if err := r.ParseForm(); err != nil {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the form cannot be read")
			return
		}
		for _, res := range r.PostForm["resource"] {
			if !s.sameResource(res) {
				writeOAuthError(w, http.StatusBadRequest, "invalid_target", "resource must be "+s.resource+", the MCP server these tokens are for")
				return
			}
		}
		if msg := repeatedParam(r.Form); msg != "" {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", msg)
			return
		}
		if r.Form.Get("grant_type") == "refresh_token" {
			if ok, err := s.mayFetchClient(r, false); err != nil {
				s.storeFailed(w, err)
				return
			} else if !ok {
				writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, expired or not this client's")
				return
			}
		}
		s.router.ServeHTTP(w, r)
	case "/revoke":
		if err := r.ParseForm(); err != nil {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the form cannot be read")
			return
		}
		if msg := repeatedParam(r.Form); msg != "" {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", msg)
			return
		}
		if ok, err := s.mayFetchClient(r, true); errors.Is(err, errOtherClientsToken) {
			// RFC 7009 §2.1: another client's token is refused.
			writeOAuthError(w, http.StatusUnauthorized, "invalid_client", errOtherClientsToken.Description)
			return
		} else if err != nil {
			s.storeFailed(w, err)
			return
		} else if !ok {
			// RFC 7009 §2.2: a token that is not one of ours is
			// answered as revoked, and nothing is done.
			writeJSON(w, http.StatusOK, nil)
			return
		}
		s.router.ServeHTTP(w, r)
	case "/authorize/callback", "/keys":
		s.router.ServeHTTP(w, r)
	default:
		writeOAuthError(w, http.StatusNotFound, "not_found", "no such endpoint")
	}
}

// mayFetchClient reports whether a refresh or a revocation may go on to
// load its client, which for a client_id that is a URL means fetching
// that URL: only when what it sends is that client's (mayLoadClient),
// and why a revocation is refused outright.
// The client_id is the library's: the Basic credentials' user when
// there are some, else the form's, which the library reads from the body
// and the query together (r.Form; repeatedParam has refused one given
// twice, of which the library would read the last).
func (s *Server) mayFetchClient(r *http.Request, revocation bool) (bool, error) {
	id := r.Form.Get("client_id")
	if user, _, ok := r.BasicAuth(); ok {
		if revocation {
			return true, nil // a client with a secret: none here, and no fetch
		}
		var err error
		if id, err = url.QueryUnescape(user); err != nil {
			return true, nil // the library refuses it
		}
	}
	if !strings.Contains(id, "://") {
		return true, nil
	}
	return (&storage{s: s}).mayLoadClient(r.Context(), id, revocation, r.Form)
}

// storeFailed answers a request the store could not be read for.
func (s *Server) storeFailed(w http.ResponseWriter, err error) {
	s.log.Error("the authorization server's store failed", "error", err)
	writeOAuthError(w, http.StatusInternalServerError, "server_error", "the server cannot read its state now; try again shortly")
}

// repeatedParam refuses a token or revocation request that gives one of
// the parameters the gateway checks before the library twice with
// different values (RFC 6749 §3.2: parameters must not be included more
// than once): the library reads the grant type's first value and the
// others' last, from the body and the query together, so the gateway
// could check one value and the library use another. The same value
// twice (in the query and the body, say) reads the same either way.
func repeatedParam(form url.Values) string {
	for _, k := range []string{"grant_type", "client_id", "refresh_token", "token"} {
		if vs := form[k]; len(vs) > 1 && slices.ContainsFunc(vs[1:], func(v string) bool { return v != vs[0] }) {
			return k + " is given more than once, with different values"
		}
	}
	return ""
}

// sameResource compares a resource indicator to the MCP resource, with
// the scheme and host case-insensitive and a trailing slash ignored
// (RFC 3986 §6.2.2 normalisation, as clients vary in both).
func (s *Server) sameResource(res string) bool {
	norm := func(v string) string {
		u, err := url.Parse(v)
		if err != nil || u.Fragment != "" || u.RawQuery != "" {
			return "\x00" + v
		}
		return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimSuffix(u.EscapedPath(), "/")
	}
	return norm(res) == norm(s.resource)
}

type ctxKey struct{}

// Bounds of an authorization request. A sign-in is stored, with its
// state and nonce, until it ends or for ten minutes: unbounded, one
// request could park a megabyte there. Real clients send a state and a
// nonce of a few dozen bytes, a code challenge of 43 to 128.
const (
	maxAuthorizeBytes = 16 << 10 // the whole request (a POST's form)
	maxAuthorizeValue = 2048     // any one value: a redirect URI, a client_id URL
	maxAuthorizeState = 1024     // state and nonce, kept verbatim
	maxAuthorizeCount = 64       // parameters, repeats included
)

// oversizeAuthorize names the bound an authorization request's
// parameters break, or "".
func oversizeAuthorize(form url.Values) string {
	n := 0
	for k, vs := range form {
		n += len(vs)
		limit := maxAuthorizeValue
		if k == "state" || k == "nonce" {
			limit = maxAuthorizeState
		}
		for _, v := range vs {
			if len(k) > maxAuthorizeValue || len(v) > limit {
				return fmt.Sprintf("parameter %.64q is longer than the %d bytes allowed", k, limit)
			}
		}
	}
	if n > maxAuthorizeCount {
		return fmt.Sprintf("the request has %d parameters, more than the %d allowed", n, maxAuthorizeCount)
	}
	return ""
}

// take takes one from c, or answers 429 with Retry-After, saying that
// too many of what (per setting, n a minute) came, and reports false.
func (s *Server) take(w http.ResponseWriter, r *http.Request, c fleet.Counter, what, setting string, n int) bool {
	ref := s.limits.Take(r.Context(), []fleet.Counter{c})
	if ref == nil {
		return true
	}
	secs := max(int64((ref.Retry+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	writeOAuthError(w, http.StatusTooManyRequests, "temporarily_unavailable",
		fmt.Sprintf("too many %s (%s is %d); try again in %d s", what, setting, n, secs))
	return false
}

// signIns is the counter /oauth/authorize takes from: one per issuer, a
// burst of per_minute and per_minute a minute after it.
func (s *Server) signIns() fleet.Counter {
	n := s.cfg.SignIn.PerMinute
	return fleet.Counter{Rule: "oauth_server.sign_in", Key: s.issuer, RPS: float64(n) / 60, Burst: n}
}

// withResource reads the authorization request's resource indicators for
// the validator, which cannot see the request.
func (s *Server) withResource(w http.ResponseWriter, r *http.Request) *http.Request {
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxAuthorizeBytes)
	}
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the request cannot be read")
		return nil
	}
	return r.WithContext(context.WithValue(r.Context(), ctxKey{}, r.Form["resource"]))
}

// validating replaces the library's validation of an authorization
// request with this server's stricter one.
type validating struct {
	*op.Provider
	s *Server
}

var _ op.AuthorizeValidator = (*validating)(nil)

// ValidateAuthRequest checks, in an order that never redirects an error
// to a URI the client did not register: the client, the exact redirect
// URI, then code flow, PKCE with S256, and the resource.
func (v *validating) ValidateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ op.Storage, _ *op.IDTokenHintVerifier) (string, error) {
	c, err := v.s.client(ctx, req.ClientID)
	if err != nil {
		return "", oidc.ErrInvalidRequestRedirectURI().WithDescription("unknown client: %s", publicClientError(err))
	}
	if !slices.Contains(c.RedirectURIs(), req.RedirectURI) {
		return "", oidc.ErrInvalidRequestRedirectURI().WithDescription("redirect_uri is not one the client registered (they are compared exactly)")
	}
	if req.ResponseType != oidc.ResponseTypeCode {
		return "", &oidc.Error{ErrorType: "unsupported_response_type", Description: "only response_type=code is supported"}
	}
	if req.CodeChallenge == "" {
		return "", oidc.ErrInvalidRequest().WithDescription("code_challenge is required: PKCE with S256")
	}
	if req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return "", oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256 (plain is refused)")
	}
	res, _ := ctx.Value(ctxKey{}).([]string)
	for _, r := range res {
		if !v.s.sameResource(r) {
			return "", oidc.ErrInvalidTarget().WithDescription("resource must be %s, the MCP server this gateway issues tokens for", v.s.resource)
		}
	}
	if req.RequestParam != "" {
		return "", oidc.ErrRequestNotSupported()
	}
	if slices.Contains(req.Prompt, oidc.PromptNone) {
		return "", oidc.ErrLoginRequired().WithDescription("signing in needs the person at the provider")
	}
	if req.ResponseMode != "" && req.ResponseMode != oidc.ResponseModeQuery {
		return "", oidc.ErrInvalidRequest().WithDescription("only response_mode=query is supported")
	}
	// Scopes are the client's wish, not what the token grants: the
	// gateway's scopes come from the person's ID token. Refresh tokens
	// are issued to clients registered for them, whether or not they ask
	// for offline_access (MCP clients are told not to).
	scopes := slices.DeleteFunc(slices.Clone(req.Scopes), func(s string) bool { return s == "" })
	if slices.Contains(c.GrantTypes(), oidc.GrantTypeRefreshToken) && !slices.Contains(scopes, oidc.ScopeOfflineAccess) {
		scopes = append(scopes, oidc.ScopeOfflineAccess)
	}
	req.Scopes = scopes
	return "", nil
}

// endpoint is the absolute URL of one of the server's endpoints.
func (s *Server) endpoint(name string) string {
	u, _ := url.Parse(s.issuer)
	return u.Scheme + "://" + u.Host + s.basePath + catalog.OAuthPathPrefix + name
}

// serveMetadata serves RFC 8414 authorization server metadata (also at
// the OpenID path, for clients that look there first).
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if !allowCORS(w, r, "GET, HEAD") {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "use GET")
		return
	}
	md := map[string]any{
		"issuer":                                     s.issuer,
		"authorization_endpoint":                     s.endpoint("/authorize"),
		"token_endpoint":                             s.endpoint("/token"),
		"revocation_endpoint":                        s.endpoint("/revoke"),
		"jwks_uri":                                   s.endpoint("/keys"),
		"response_types_supported":                   []string{"code"},
		"response_modes_supported":                   []string{"query"},
		"grant_types_supported":                      []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":      []string{"none"},
		"revocation_endpoint_auth_methods_supported": []string{"none"},
		"code_challenge_methods_supported":           []string{"S256"},
		"client_id_metadata_document_supported":      s.cfg.ClientMetadata.Enabled,
		"id_token_signing_alg_values_supported":      []string{"EdDSA"},
		"subject_types_supported":                    []string{"public"},
	}
	if s.cfg.Registration.Enabled {
		md["registration_endpoint"] = s.endpoint("/register")
	}
	if len(s.scopes) > 0 {
		md["scopes_supported"] = s.scopes
	}
	writeJSON(w, http.StatusOK, md)
}

// client returns the client with id: a Client ID Metadata Document when
// id is a URL, else a registered client.
func (s *Server) client(ctx context.Context, id string) (*client, error) {
	if id == "" {
		return nil, clientErr("invalid_client_metadata", "no client_id")
	}
	if strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://") {
		if !s.cfg.ClientMetadata.Enabled {
			return nil, clientErr("invalid_client_metadata", "client id metadata documents are turned off here")
		}
		md, err := s.fetch.get(ctx, id)
		if err != nil {
			return nil, err
		}
		return s.newClient(md), nil
	}
	md, err := s.registered(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.newClient(md), nil
}

// publicClientError is what a client may read about why its id was
// refused: the fetch and parse errors name only the client's own input.
func publicClientError(err error) string {
	var ce *ClientError
	if errors.As(err, &ce) {
		return ce.Description
	}
	if errors.Is(err, ErrNotFound) {
		return "this client_id is not registered here"
	}
	return "it cannot be loaded"
}
