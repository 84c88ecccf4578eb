// Package oauthas runs a real OAuth 2.0 authorization server for tests:
// zitadel/oidc's OpenID provider (package op), which implements the
// client-credentials grant and the token exchange (RFC 8693) itself, over
// an in-memory storage that knows a few confidential clients and trusts
// one issuer of subject tokens (the gateway's). It issues JWT access
// tokens signed with its own key and published at its JWKS, so a test
// upstream can verify them as a real resource server does.
//
// The server counts token requests by grant, and records every header
// and form value it receives, so tests can say what reached it.
package oauthas

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Options configures a [Server].
type Options struct {
	// Clients maps client IDs to their secrets. Each may use both grants.
	Clients map[string]string
	// Audience is the aud of client-credentials tokens.
	Audience string
	// SubjectIssuer and SubjectKey are the issuer of subject tokens the
	// server accepts in a token exchange, and its public key.
	SubjectIssuer string
	SubjectKey    crypto.PublicKey
	// Lifetime of the access tokens; zero: 5 minutes.
	Lifetime time.Duration
}

// Server is a running authorization server.
type Server struct {
	// Issuer is the server's URL and the iss of its tokens.
	Issuer   string
	TokenURL string
	JWKSURL  string

	srv     *httptest.Server
	storage *storage

	mu       sync.Mutex
	byGrant  map[string]int
	received []string // every header value and form value, raw
}

// Start starts a server on a loopback port. Close stops it.
func Start(opts Options) (*Server, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	st := &storage{opts: opts, key: key, keyID: "as-1", tokens: map[string]*token{}}
	st.lifetime.Store(int64(opts.Lifetime))
	if opts.Lifetime == 0 {
		st.lifetime.Store(int64(5 * time.Minute))
	}
	s := &Server{storage: st, byGrant: map[string]int{}}
	var h http.Handler
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.record(r)
		h.ServeHTTP(w, r)
	}))
	s.Issuer = s.srv.URL
	cryptoKey := sha256.Sum256([]byte("oauthas test key"))
	p, err := op.NewProvider(&op.Config{CryptoKey: cryptoKey, AuthMethodPost: true, GrantTypeRefreshToken: false},
		st, op.StaticIssuer(s.Issuer), op.WithAllowInsecure(), op.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		s.srv.Close()
		return nil, err
	}
	h = p
	s.TokenURL = s.Issuer + "/oauth/token"
	s.JWKSURL = s.Issuer + "/keys"
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// TokenRequests is how many token requests of a grant
// ("client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange")
// reached the server; "" counts all.
func (s *Server) TokenRequests(grant string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if grant == "" {
		n := 0
		for _, c := range s.byGrant {
			n += c
		}
		return n
	}
	return s.byGrant[grant]
}

// Received reports whether any header or form value the server received
// contains v.
func (s *Server) Received(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.received {
		if strings.Contains(r, v) {
			return true
		}
	}
	return false
}

func (s *Server) record(r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, vs := range r.Header {
		s.received = append(s.received, vs...)
	}
	s.received = append(s.received, string(body), r.URL.RawQuery)
	if r.Method == http.MethodPost && r.URL.Path == "/oauth/token" {
		grant := ""
		for _, kv := range strings.Split(string(body), "&") {
			if g, ok := strings.CutPrefix(kv, "grant_type="); ok {
				grant = strings.ReplaceAll(strings.ReplaceAll(g, "%3A", ":"), "%3a", ":")
			}
		}
		s.byGrant[grant]++
	}
}

// Verifier returns a function that verifies an access token as a resource
// server would: its signature against the server's JWKS, its issuer, its
// expiry and that audience is among its aud. It returns the claims.
func (s *Server) Verifier(audience string) func(ctx context.Context, raw string) (map[string]any, error) {
	keys := oidc.NewRemoteKeySet(context.Background(), s.JWKSURL)
	v := oidc.NewVerifier(s.Issuer, keys, &oidc.Config{ClientID: audience, SupportedSigningAlgs: []string{"RS256"}})
	return func(ctx context.Context, raw string) (map[string]any, error) {
		t, err := v.Verify(ctx, raw)
		if err != nil {
			return nil, err
		}
		var claims map[string]any
		if err := t.Claims(&claims); err != nil {
			return nil, err
		}
		return claims, nil
	}
}

// storage is the provider's state: clients, issued tokens, the signing
// key. Only what the two grants need is implemented; the rest refuses.
type storage struct {
	opts     Options
	key      *rsa.PrivateKey
	keyID    string
	lifetime atomic.Int64

	mu     sync.Mutex
	tokens map[string]*token
}

type token struct {
	subject  string
	audience []string
	scopes   []string
	expires  time.Time
}

var errUnsupported = errors.New("not supported by this test server")

func (s *storage) client(id string) (*client, bool) {
	secret, ok := s.opts.Clients[id]
	if !ok {
		return nil, false
	}
	return &client{id: id, secret: secret}, true
}

// ClientCredentials implements op.ClientCredentialsStorage.
func (s *storage) ClientCredentials(_ context.Context, clientID, clientSecret string) (op.Client, error) {
	c, ok := s.client(clientID)
	if !ok || c.secret != clientSecret {
		return nil, errors.New("wrong client id or secret")
	}
	return c, nil
}

// ClientCredentialsTokenRequest implements op.ClientCredentialsStorage.
func (s *storage) ClientCredentialsTokenRequest(_ context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	return &zoidc.JWTTokenRequest{Subject: clientID, Audience: []string{s.opts.Audience}, Scopes: scopes}, nil
}

// VerifyExchangeSubjectToken implements op.TokenExchangeTokensVerifierStorage:
// a subject token is a JWT from the trusted issuer, signed with its key,
// addressed to this server's token endpoint and unexpired.
func (s *storage) VerifyExchangeSubjectToken(ctx context.Context, raw string, tokenType zoidc.TokenType) (string, string, map[string]any, error) {
	if tokenType != zoidc.JWTTokenType || s.opts.SubjectKey == nil {
		return "", "", nil, errors.New("unsupported subject token")
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return s.opts.SubjectKey, nil },
		jwt.WithIssuer(s.opts.SubjectIssuer), jwt.WithAudience(op.IssuerFromContext(ctx)+"/oauth/token"),
		jwt.WithExpirationRequired(), jwt.WithValidMethods([]string{"RS256", "ES256", "ES384", "EdDSA"}))
	if err != nil {
		return "", "", nil, err
	}
	sub, _ := claims["sub"].(string)
	jti, _ := claims["jti"].(string)
	return jti, sub, claims, nil
}

// VerifyExchangeActorToken implements op.TokenExchangeTokensVerifierStorage.
func (s *storage) VerifyExchangeActorToken(context.Context, string, zoidc.TokenType) (string, string, map[string]any, error) {
	return "", "", nil, errUnsupported
}

// ValidateTokenExchangeRequest implements op.TokenExchangeStorage: the
// token is for the person the subject token names, with the scopes asked.
func (s *storage) ValidateTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) error {
	if r.GetRequestedTokenType() == "" {
		r.SetRequestedTokenType(zoidc.AccessTokenType)
	}
	if r.GetRequestedTokenType() != zoidc.AccessTokenType {
		return zoidc.ErrInvalidRequest().WithDescription("only access tokens are issued")
	}
	return nil
}

// CreateTokenExchangeRequest implements op.TokenExchangeStorage.
func (s *storage) CreateTokenExchangeRequest(context.Context, op.TokenExchangeRequest) error {
	return nil
}

// GetPrivateClaimsFromTokenExchangeRequest implements
// op.TokenExchangeStorage: the exchanged token carries the workspace and
// actor the subject token named.
func (s *storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) (map[string]any, error) {
	c := r.GetExchangeSubjectTokenClaims()
	return map[string]any{"workspace": c["workspace"], "actor": c["actor"], "scope": strings.Join(r.GetScopes(), " ")}, nil
}

// SetUserinfoFromTokenExchangeRequest implements op.TokenExchangeStorage.
func (s *storage) SetUserinfoFromTokenExchangeRequest(context.Context, *zoidc.UserInfo, op.TokenExchangeRequest) error {
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, r op.TokenRequest) (string, time.Time, error) {
	id := rand.Text()
	exp := time.Now().Add(time.Duration(s.lifetime.Load()))
	s.mu.Lock()
	s.tokens[id] = &token{subject: r.GetSubject(), audience: r.GetAudience(), scopes: r.GetScopes(), expires: exp}
	s.mu.Unlock()
	return id, exp, nil
}

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errUnsupported
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := s.client(id)
	if !ok {
		return nil, errors.New("unknown client")
	}
	return c, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c, ok := s.client(id)
	if !ok || c.secret != secret {
		return errors.New("wrong client id or secret")
	}
	return nil
}

// GetPrivateClaimsFromScopes puts the granted scopes in a
// client-credentials token.
func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	return map[string]any{"scope": strings.Join(scopes, " ")}, nil
}

type signingKey struct{ s *storage }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.s.key }
func (k signingKey) ID() string                                  { return k.s.keyID }

type publicKey struct{ s *storage }

func (k publicKey) ID() string                         { return k.s.keyID }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.s.key.PublicKey }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return signingKey{s}, nil }
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}
func (s *storage) KeySet(context.Context) ([]op.Key, error) { return []op.Key{publicKey{s}}, nil }
func (s *storage) Health(context.Context) error             { return nil }

// The rest of op.Storage: the authorization-code, refresh, userinfo and
// introspection flows, which these tests do not use.

func (s *storage) CreateAuthRequest(context.Context, *zoidc.AuthRequest, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) AuthRequestByID(context.Context, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) AuthRequestByCode(context.Context, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) SaveAuthCode(context.Context, string, string) error { return errUnsupported }
func (s *storage) DeleteAuthRequest(context.Context, string) error    { return errUnsupported }
func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errUnsupported
}
func (s *storage) TerminateSession(context.Context, string, string) error { return errUnsupported }
func (s *storage) RevokeToken(context.Context, string, string, string) *zoidc.Error {
	return zoidc.ErrServerError().WithDescription("revocation is not supported")
}
func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", errUnsupported
}
func (s *storage) SetUserinfoFromScopes(context.Context, *zoidc.UserInfo, string, string, []string) error {
	return nil
}
func (s *storage) SetUserinfoFromToken(context.Context, *zoidc.UserInfo, string, string, string) error {
	return errUnsupported
}
func (s *storage) SetIntrospectionFromToken(context.Context, *zoidc.IntrospectionResponse, string, string, string) error {
	return errUnsupported
}
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errUnsupported
}
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errUnsupported
}

// client is a confidential client allowed both grants, whose access
// tokens are JWTs.
type client struct{ id, secret string }

func (c *client) GetID() string                        { return c.id }
func (c *client) RedirectURIs() []string               { return nil }
func (c *client) PostLogoutRedirectURIs() []string     { return nil }
func (c *client) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() zoidc.AuthMethod         { return zoidc.AuthMethodBasic }
func (c *client) ResponseTypes() []zoidc.ResponseType  { return nil }
func (c *client) LoginURL(string) string               { return "" }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration       { return time.Minute }
func (c *client) DevMode() bool                        { return false }
func (c *client) IsScopeAllowed(string) bool           { return true }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) GrantTypes() []zoidc.GrantType {
	return []zoidc.GrantType{zoidc.GrantTypeClientCredentials, zoidc.GrantTypeTokenExchange}
}

// String keeps a client's secret out of test failure messages.
func (c *client) String() string { return fmt.Sprintf("client %s", c.id) }
