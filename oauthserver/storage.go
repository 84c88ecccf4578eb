package oauthserver

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/mcpgw/gateway/authz"
)

// Store key prefixes. Secrets (codes, refresh tokens) are stored by
// their SHA-256 only, so a copy of the store holds nothing a client could
// present.
const (
	keyAuthRequest = "ar:"      // auth request id → authRequest
	keyUpstream    = "up:"      // upstream state → auth request id
	keyCode        = "code:"    // sha(code) → auth request id
	keyCodeSpent   = "spent:"   // sha(code) → grant: a replay revokes the grant
	keyCodeIssued  = "issued:"  // auth request id → "1": one code per sign-in
	keyRefresh     = "rt:"      // sha(refresh token) → refreshRecord
	keyRefreshUsed = "rtused:"  // sha(refresh token) → grant: reuse revokes the grant
	keyRevoked     = "revoked:" // grant → "1"
	keyClient      = "client:"  // registered client id → clientRecord
)

// authRequestTTL bounds a sign-in from /authorize to the code exchange.
const authRequestTTL = 10 * time.Minute

// codeTTL bounds an authorization code (RFC 6749 §4.1.2: a maximum of 10
// minutes is recommended; a client exchanges it at once).
const codeTTL = time.Minute

// person is what the provider's ID token mapped to, through the same
// mapper as a bearer JWT's claims.
type person struct {
	Subject   string   `json:"sub"`
	Workspace string   `json:"ws"`
	Scopes    []string `json:"scopes"`
	Actor     string   `json:"actor"`
}

// authRequest is one sign-in in progress; it implements op.AuthRequest.
type authRequest struct {
	ID              string    `json:"id"`
	ClientID        string    `json:"client_id"`
	RedirectURI     string    `json:"redirect_uri"`
	State           string    `json:"state"`
	Nonce           string    `json:"nonce"`
	Scopes          []string  `json:"scopes"`
	ResponseMode    string    `json:"response_mode,omitempty"`
	Challenge       string    `json:"challenge"`
	ChallengeMethod string    `json:"challenge_method"`
	Created         time.Time `json:"created"`

	// Browser is the SHA-256 of the cookie that binds the sign-in to the
	// browser that consented; UpstreamVerifier and UpstreamNonce are the
	// PKCE verifier and nonce of the provider's leg.
	Browser          string `json:"browser,omitempty"`
	UpstreamVerifier string `json:"upstream_verifier,omitempty"`
	UpstreamNonce    string `json:"upstream_nonce,omitempty"`

	SignedIn bool      `json:"done,omitempty"`
	Person   *person   `json:"person,omitempty"`
	AuthTime time.Time `json:"auth_time,omitzero"`

	// grant is set when the code is taken, so the tokens made from it
	// and a replay of it name the same grant. Not stored.
	grant    string
	audience []string
}

func (a *authRequest) GetID() string          { return a.ID }
func (a *authRequest) GetACR() string         { return "" }
func (a *authRequest) GetAMR() []string       { return nil }
func (a *authRequest) GetAudience() []string  { return a.audience }
func (a *authRequest) GetAuthTime() time.Time { return a.AuthTime }
func (a *authRequest) GetClientID() string    { return a.ClientID }
func (a *authRequest) GetNonce() string       { return a.Nonce }
func (a *authRequest) GetRedirectURI() string { return a.RedirectURI }
func (a *authRequest) GetScopes() []string    { return a.Scopes }
func (a *authRequest) GetState() string       { return a.State }
func (a *authRequest) Done() bool             { return a.SignedIn }
func (a *authRequest) GetResponseType() oidc.ResponseType {
	return oidc.ResponseTypeCode
}
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return oidc.ResponseMode(a.ResponseMode) }
func (a *authRequest) GetSubject() string {
	if a.Person == nil {
		return ""
	}
	return a.Person.Subject
}
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.Challenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.Challenge, Method: oidc.CodeChallengeMethod(a.ChallengeMethod)}
}

// refreshRecord is one live refresh token; it implements
// op.RefreshTokenRequest.
type refreshRecord struct {
	Grant    string    `json:"grant"`
	ClientID string    `json:"client_id"`
	Person   person    `json:"person"`
	Scopes   []string  `json:"scopes"`
	AuthTime time.Time `json:"auth_time"`

	token    string // the token presented; not stored
	audience []string
}

func (r *refreshRecord) GetAMR() []string                 { return nil }
func (r *refreshRecord) GetAudience() []string            { return r.audience }
func (r *refreshRecord) GetAuthTime() time.Time           { return r.AuthTime }
func (r *refreshRecord) GetClientID() string              { return r.ClientID }
func (r *refreshRecord) GetScopes() []string              { return r.Scopes }
func (r *refreshRecord) GetSubject() string               { return r.Person.Subject }
func (r *refreshRecord) SetCurrentScopes(scopes []string) { r.Scopes = scopes }

func hashKey(secret string) string {
	s := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(s[:])
}

func randomToken(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// storage is the op.Storage over a [Store]: the library runs the
// protocol, this keeps its state shared and enforces single use.
type storage struct {
	s *Server
}

var _ op.Storage = (*storage)(nil)
var _ op.CanGetPrivateClaimsFromRequest = (*storage)(nil)

func (st *storage) store() Store { return st.s.store }

func (st *storage) getJSON(ctx context.Context, key string, v any) error {
	b, err := st.store().Get(ctx, key)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (st *storage) putJSON(ctx context.Context, key string, v any, exp time.Time) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return st.store().Put(ctx, key, b, exp)
}

func (st *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	a := &authRequest{
		ID:              randomToken(18),
		ClientID:        req.ClientID,
		RedirectURI:     req.RedirectURI,
		State:           req.State,
		Nonce:           req.Nonce,
		Scopes:          req.Scopes,
		ResponseMode:    string(req.ResponseMode),
		Challenge:       req.CodeChallenge,
		ChallengeMethod: string(req.CodeChallengeMethod),
		Created:         st.s.now(),
	}
	if err := st.putJSON(ctx, keyAuthRequest+a.ID, a, a.Created.Add(authRequestTTL)); err != nil {
		return nil, err
	}
	return a, nil
}

func (st *storage) authRequest(ctx context.Context, id string) (*authRequest, error) {
	a := &authRequest{}
	if err := st.getJSON(ctx, keyAuthRequest+id, a); err != nil {
		return nil, err
	}
	a.audience = []string{st.s.resource}
	return a, nil
}

func (st *storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	return st.authRequest(ctx, id)
}

// AuthRequestByCode takes the code: it can be exchanged once. The spent
// mark names the grant its tokens will carry, so a second exchange (a
// code intercepted and replayed) revokes them too (RFC 6749 §4.1.2).
func (st *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	h := hashKey(code)
	id, err := st.store().Take(ctx, keyCode+h)
	if errors.Is(err, ErrNotFound) {
		if grant, err := st.store().Get(ctx, keyCodeSpent+h); err == nil {
			st.revoke(ctx, string(grant))
			st.s.log.Info("authorization code replayed; its grant is revoked", "grant", string(grant))
		}
		return nil, errors.New("unknown, expired or spent code")
	}
	if err != nil {
		return nil, err
	}
	a, err := st.authRequest(ctx, string(id))
	if err != nil {
		return nil, err
	}
	a.grant = "g_" + randomToken(15)
	if err := st.store().Put(ctx, keyCodeSpent+h, []byte(a.grant), st.s.now().Add(st.s.refreshTTL)); err != nil {
		return nil, err
	}
	return a, nil
}

// SaveAuthCode stores the one code of sign-in id. The library mints a
// code each time /authorize/callback?id= is asked after the person signed
// in; only the first is stored, so whoever else learns the id (a shared
// screen, a browser history) gets no second code for the person.
func (st *storage) SaveAuthCode(ctx context.Context, id, code string) error {
	now := st.s.now()
	first, err := st.store().Create(ctx, keyCodeIssued+id, []byte("1"), now.Add(authRequestTTL))
	if err != nil {
		return err
	}
	if !first {
		return errors.New("this sign-in already gave its code; start again from your MCP client")
	}
	return st.store().Put(ctx, keyCode+hashKey(code), []byte(id), now.Add(codeTTL))
}

func (st *storage) DeleteAuthRequest(ctx context.Context, id string) error {
	return st.store().Delete(ctx, keyAuthRequest+id)
}

// accessTokenID names the grant in the token id, so revoking an access
// token by its id revokes its grant.
func accessTokenID(grant string) string { return grant + "." + randomToken(9) }

func grantOf(tokenID string) string {
	g, _, _ := strings.Cut(tokenID, ".")
	return g
}

func (st *storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	g := grantFor(req)
	if g == "" {
		return "", time.Time{}, errors.New("no grant for this token request")
	}
	return accessTokenID(g), st.s.now().Add(st.s.accessTTL), nil
}

func grantFor(req op.TokenRequest) string {
	switch r := req.(type) {
	case *authRequest:
		return r.grant
	case *refreshRecord:
		return r.Grant
	}
	return ""
}

// CreateAccessAndRefreshTokens issues a refresh token. With a current
// one (a refresh) it first spends it: the spend is a single-use mark, so
// of two racing refreshes with one token, one wins and the other is
// reuse, which revokes the grant (OAuth 2.1 §4.3.1).
func (st *storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	now := st.s.now()
	rec := &refreshRecord{}
	switch r := req.(type) {
	case *authRequest:
		if r.Person == nil || r.grant == "" {
			return "", "", time.Time{}, errors.New("sign-in not finished")
		}
		*rec = refreshRecord{Grant: r.grant, ClientID: r.ClientID, Person: *r.Person, Scopes: r.Scopes, AuthTime: r.AuthTime}
	case *refreshRecord:
		h := hashKey(current)
		ok, err := st.store().Create(ctx, keyRefreshUsed+h, []byte(r.Grant), now.Add(st.s.refreshTTL))
		if err != nil {
			return "", "", time.Time{}, err
		}
		if !ok {
			st.revoke(ctx, r.Grant)
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("refresh token already used; the grant is revoked")
		}
		if err := st.store().Delete(ctx, keyRefresh+h); err != nil {
			return "", "", time.Time{}, err
		}
		*rec = *r
	default:
		return "", "", time.Time{}, fmt.Errorf("unsupported token request %T", req)
	}
	if st.revoked(ctx, rec.Grant) {
		return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("the grant was revoked")
	}
	token := "mcpgw_rt_" + randomToken(32)
	if err := st.putJSON(ctx, keyRefresh+hashKey(token), rec, now.Add(st.s.refreshTTL)); err != nil {
		return "", "", time.Time{}, err
	}
	return accessTokenID(rec.Grant), token, now.Add(st.s.accessTTL), nil
}

// TokenRequestByRefreshToken finds a live refresh token. A spent one is
// reuse: someone holds a copy, so the grant is revoked.
func (st *storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	h := hashKey(token)
	rec := &refreshRecord{}
	err := st.getJSON(ctx, keyRefresh+h, rec)
	if errors.Is(err, ErrNotFound) {
		if reused, _ := st.reused(ctx, h); reused {
			return nil, errors.New("refresh token already used; the grant is revoked")
		}
		return nil, errors.New("unknown or expired refresh token")
	}
	if err != nil {
		return nil, err
	}
	if st.revoked(ctx, rec.Grant) {
		return nil, errors.New("the grant was revoked")
	}
	rec.token = token
	rec.audience = []string{st.s.resource}
	return rec, nil
}

func (st *storage) TerminateSession(context.Context, string, string) error { return nil }

// RevokeToken revokes the grant a token belongs to (RFC 7009 §2.1: a
// refresh token's revocation should end its access tokens too; revoking
// an access token ends the grant as well, which is stricter). A token of
// another client is refused; an unknown one is answered as revoked.
func (st *storage) RevokeToken(ctx context.Context, tokenOrID, _, clientID string) *oidc.Error {
	// Anything but a token of ours is answered as revoked, and nothing
	// done (RFC 7009 §2.2); see tokenOwner.
	client, grant, err := st.tokenOwner(ctx, tokenOrID)
	if err != nil {
		return nil
	}
	if client != clientID {
		return otherClientsToken()
	}
	st.revoke(ctx, grant)
	return nil
}

// tokenOwner returns the client and the grant of a token this server
// issued: a refresh token it holds, or an access token that verifies (one
// expired or revoked does not). Anything else is ErrNotFound; a bare
// grant id in particular: the library hands over what it could not read
// as given, and acting on a grant id would let any client end another's
// grant by it (every access token carries it), and store a revocation
// for every string sent. A store that fails is its error.
func (st *storage) tokenOwner(ctx context.Context, token string) (client, grant string, err error) {
	switch {
	case strings.HasPrefix(token, "mcpgw_rt_"):
		rec := &refreshRecord{}
		if err := st.getJSON(ctx, keyRefresh+hashKey(token), rec); err != nil {
			return "", "", err
		}
		return rec.ClientID, rec.Grant, nil
	case strings.Count(token, ".") == 2:
		p, err := st.s.verify.Verify(ctx, token)
		if err != nil {
			return "", "", ErrNotFound
		}
		var c struct {
			ClientID string `json:"client_id"`
			Grant    string `json:"mcpgw_grant"`
		}
		if json.Unmarshal(p.Claims, &c) != nil {
			return "", "", ErrNotFound
		}
		return c.ClientID, c.Grant, nil
	}
	return "", "", ErrNotFound
}

// reused handles a refresh token sent again after it was spent (h is its
// hash): its grant is revoked, whichever client sends it. It reports
// whether h was such a token.
func (st *storage) reused(ctx context.Context, h string) (bool, error) {
	grant, err := st.store().Get(ctx, keyRefreshUsed+h)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			err = nil
		}
		return false, err
	}
	st.revoke(ctx, string(grant))
	st.s.log.Info("refresh token reused; its grant is revoked", "grant", string(grant))
	return true, nil
}

func (st *storage) GetRefreshTokenInfo(ctx context.Context, _ string, token string) (string, string, error) {
	rec := &refreshRecord{}
	if err := st.getJSON(ctx, keyRefresh+hashKey(token), rec); err != nil {
		return "", "", op.ErrInvalidRefreshToken
	}
	return rec.Person.Subject, token, nil
}

func (st *storage) revoke(ctx context.Context, grant string) {
	exp := st.s.now().Add(st.s.refreshTTL + st.s.accessTTL)
	if err := st.store().Put(ctx, keyRevoked+grant, []byte("1"), exp); err != nil {
		st.s.log.Error("revoking a grant failed", "grant", grant, "error", err)
	}
}

// revoked reports whether grant was revoked; a store that cannot answer
// counts as revoked.
func (st *storage) revoked(ctx context.Context, grant string) bool {
	_, err := st.store().Get(ctx, keyRevoked+grant)
	return !errors.Is(err, ErrNotFound)
}

// Revoked reports whether grant was revoked, for the verifier.
func (s *Server) Revoked(ctx context.Context, grant string) (bool, error) {
	_, err := s.store.Get(ctx, keyRevoked+grant)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

type signingKey struct {
	id  string
	key ed25519.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.EdDSA }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct {
	id  string
	key ed25519.PublicKey
}

func (k *publicKey) ID() string                         { return k.id }
func (k *publicKey) Algorithm() jose.SignatureAlgorithm { return jose.EdDSA }
func (k *publicKey) Use() string                        { return "sig" }
func (k *publicKey) Key() any                           { return k.key }

func (st *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return &signingKey{id: st.s.keys[0].id, key: st.s.keys[0].priv}, nil
}

func (st *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.EdDSA}, nil
}

func (st *storage) KeySet(context.Context) ([]op.Key, error) {
	out := make([]op.Key, len(st.s.keys))
	for i, k := range st.s.keys {
		out[i] = &publicKey{id: k.id, key: k.priv.Public().(ed25519.PublicKey)}
	}
	return out, nil
}

// GetClientByClientID loads a client for the library. A client that is
// not there (unregistered, expired, its document failing) is the
// client's fault: invalid_client, with what the client may read of why,
// not the server_error the library makes of any other error; a store
// that fails stays a server error, and so does a document that cannot
// be had now (Transient: its host down or every fetch slot taken).
func (st *storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := st.s.client(ctx, id)
	var ce *ClientError
	if errors.As(err, &ce) && ce.Transient {
		// Not the client's fault, nor known to be wrong: a client told
		// invalid_client drops its credentials (the MCP SDKs do).
		return nil, oidc.ErrServerError().WithDescription("the client's metadata document cannot be had now: %s", ce.Description)
	}
	if err != nil && (ce != nil || errors.Is(err, ErrNotFound)) {
		return nil, oidc.ErrInvalidClient().WithDescription("unknown client: %s", publicClientError(err))
	}
	return c, err
}

func (st *storage) AuthorizeClientIDSecret(context.Context, string, string) error {
	return errors.New("clients of this server are public: they authenticate with PKCE, not a secret")
}

func (st *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

func (st *storage) SetUserinfoFromRequest(_ context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, _ []string) error {
	ui.Subject = req.GetSubject()
	return nil
}

func (st *storage) SetUserinfoFromToken(_ context.Context, ui *oidc.UserInfo, _, subject, _ string) error {
	ui.Subject = subject
	return nil
}

func (st *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("introspection is not offered")
}

func (st *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, errors.New("private claims come from the request")
}

// GetPrivateClaimsFromRequest writes the person the provider's ID token
// mapped to into the access token, with the grant that revokes it.
func (st *storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	var p *person
	switch r := req.(type) {
	case *authRequest:
		p = r.Person
	case *refreshRecord:
		p = &r.Person
	}
	g := grantFor(req)
	if p == nil || g == "" {
		return nil, errors.New("no person for this token request")
	}
	scopes := p.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	c := map[string]any{
		authz.IssuedWorkspaceClaim: p.Workspace,
		authz.IssuedScopesClaim:    scopes,
		authz.IssuedGrantClaim:     g,
	}
	if p.Actor != "" {
		c[authz.IssuedActorClaim] = p.Actor
	}
	return c, nil
}

func (st *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("private_key_jwt is not offered")
}

func (st *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("the JWT profile grant is not offered")
}

func (st *storage) Health(context.Context) error { return nil }

// errOtherClientsToken is the refusal of a revocation of a token issued
// to another client (RFC 7009 §2.1). oidc errors compare by type and
// description, so errors.Is finds a fresh one (otherClientsToken, which
// is what goes to the library: it may change an error it is given).
var errOtherClientsToken = otherClientsToken()

func otherClientsToken() *oidc.Error {
	return oidc.ErrInvalidClient().WithDescription("the token was not issued to this client")
}

// mayLoadClient reports whether a refresh or a revocation (its form)
// may load client id: whether the refresh token or the token it sends is
// one this server issued to id. A spent refresh token's grant is revoked
// here (reuse), and the refresh refused; a revocation of another client's
// token is refused with errOtherClientsToken. These are the two requests
// for which the library loads the client before reading what they send;
// a code is read first. It reads the store only, and is asked before a
// client_id that is a URL is fetched: anyone may name any URL there, each
// fetch holds one of a few slots for up to its timeout, and a request
// that cannot succeed must not take one. A store that fails is its
// error: nothing is fetched then either.
func (st *storage) mayLoadClient(ctx context.Context, id string, revocation bool, form url.Values) (bool, error) {
	if revocation {
		client, _, err := st.tokenOwner(ctx, form.Get("token"))
		switch {
		case errors.Is(err, ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		case client != id:
			return false, errOtherClientsToken
		}
		return true, nil
	}
	h := hashKey(form.Get("refresh_token"))
	rec := &refreshRecord{}
	if err := st.getJSON(ctx, keyRefresh+h, rec); err != nil {
		if !errors.Is(err, ErrNotFound) {
			return false, err
		}
		// A spent token is kept with its grant only, not its client: its
		// reuse revokes the grant here, whichever client_id it names,
		// without loading (fetching) that client.
		_, err := st.reused(ctx, h)
		return false, err
	}
	return rec.ClientID == id, nil
}
