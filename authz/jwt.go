package authz

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tidwall/gjson"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/internal/strictjson"
)

// MaxTokenBytes bounds a bearer token; a longer one is refused before any
// parsing, so a hostile header costs nothing.
const MaxTokenBytes = 8 << 10

// VerifierOptions configures [NewVerifier]. The zero value is usable.
type VerifierOptions struct {
	// Getenv reads the HMAC secret's environment variable. Nil: os.Getenv.
	Getenv func(string) string
	// Now is the clock for token times, the token cache, API key expiry and
	// the rate limit on JWKS refreshes. Nil: time.Now. The periodic JWKS
	// refresh runs on real timers (testing/synctest fakes them).
	Now func() time.Time
	// ReadFile reads public key files and the API keys file. Nil: os.ReadFile.
	ReadFile func(string) ([]byte, error)

	// HTTPClient fetches the JWKS. Nil: a client of its own that gives up
	// after [JWKSFetchTimeout], follows no redirect and never uses a proxy
	// from the environment (HTTP_PROXY and the like). Every fetch is bounded by
	// JWKSFetchTimeout and [MaxJWKSBytes] whatever the client.
	HTTPClient *http.Client
	// RefreshInterval is how often the JWKS is fetched while every kid is
	// known. Zero or less: [DefaultJWKSRefreshInterval].
	RefreshInterval time.Duration
	// MinRefreshInterval is the least time between fetches triggered by
	// unknown kids, and the retry interval while the verifier holds no key.
	// Zero or less: [DefaultJWKSMinRefreshInterval]. Tests shorten it;
	// production should not go below a few seconds.
	MinRefreshInterval time.Duration
	// StartWithoutJWKS makes a failed first JWKS fetch a logged error
	// instead of a [NewVerifier] error: the verifier starts with no key,
	// refuses every token (reason unknown_key) and retries every
	// MinRefreshInterval. False (the default): NewVerifier fails with an
	// error matching [ErrJWKSUnavailable], which the gateway retries at
	// start until auth.jwt.start_deadline (answering 503 meanwhile), and on
	// reload keeps the verifier it has.
	StartWithoutJWKS bool

	// CacheSize bounds the verified-token cache. Zero: [DefaultTokenCacheSize];
	// negative: no cache, every call verifies the signature.
	CacheSize int
	// Logger receives JWKS refresh failures and key set changes, never
	// tokens. Nil: discard.
	Logger *slog.Logger
	// OnJWKSFetch is told the result of every JWKS fetch, for metrics.
	// Nil: nothing is told.
	OnJWKSFetch func(ok bool)
}

// Algorithms a verifier can be configured with; "none" is never among them.
var (
	hmacAlgs       = []string{"HS256", "HS384", "HS512"}
	asymmetricAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)

// NewVerifier builds the verifier the catalog's auth section describes:
// a JWT verifier (JWKS URL, PEM public key file or HMAC secret) when
// auth.jwt is set, else an API key verifier over auth.api_keys_file.
//
// With a JWKS URL it fetches the key set before returning (failing if it cannot, unless
// opts.StartWithoutJWKS) and owns a goroutine that refreshes the set until
// Close; the other kinds hold no goroutine and their Close does nothing.
func NewVerifier(auth catalog.Auth, opts *VerifierOptions) (ClosableVerifier, error) {
	if opts == nil {
		opts = &VerifierOptions{}
	}
	m, err := newMapper(auth.Principal)
	if err != nil {
		return nil, err
	}
	// Each case returns a nil interface on error, never a typed nil a
	// caller could mistake for a verifier.
	switch {
	case auth.JWT != nil:
		v, err := newJWTVerifier(auth.JWT, auth.MaxTokenLifetime.D(), m, opts)
		if err != nil {
			return nil, err
		}
		return v, nil
	case auth.APIKeysFile != "":
		v, err := newAPIKeyVerifier(auth.APIKeysFile, auth.Principal, opts)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, errors.New("auth: no verifier configured")
}

// mapper turns verified claims into a principal with the catalog's gjson
// paths. It is the one place claims become identity, for every token kind.
type mapper struct {
	subject, workspace, scopes, actor string
	pattern                           *regexp.Regexp
	// workspaceOptional accepts claims without a workspace, as the
	// workspace "" (a tenantless catalog: catalog.Principal.WorkspaceOptional).
	workspaceOptional bool
}

func newMapper(p catalog.Principal) (*mapper, error) {
	pat := p.WorkspacePattern
	if pat == "" {
		pat = catalog.DefaultWorkspacePattern
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, fmt.Errorf("auth.principal.workspace_pattern: %w", err)
	}
	m := &mapper{subject: p.Subject, workspace: p.Workspace, scopes: p.Scopes, actor: p.Actor, pattern: re, workspaceOptional: p.WorkspaceOptional}
	if m.subject == "" {
		m.subject = "sub"
	}
	if m.workspace == "" {
		m.workspace = "ws"
	}
	if m.scopes == "" {
		m.scopes = "scope"
	}
	return m, nil
}

func (m *mapper) principal(claims []byte) (*Principal, error) {
	res := gjson.GetManyBytes(claims, m.subject, m.workspace, m.scopes)
	sub, ws, sc := res[0], res[1], res[2]
	if sub.Type != gjson.String || sub.Str == "" {
		return nil, rejectd(ReasonClaims, fmt.Sprintf("the token has no subject claim (%.64s)", m.subject), "claim %q is not a non-empty string", m.subject)
	}
	switch {
	case m.workspaceOptional && (!ws.Exists() || ws.Type == gjson.Null):
		// A tenantless catalog: no upstream reads a workspace, so a token
		// need not name one. A token that does is held to the pattern.
	case ws.Type != gjson.String || ws.Str == "":
		return nil, rejectd(ReasonClaims, fmt.Sprintf("the token has no workspace claim (%.64s)", m.workspace), "no workspace in claim %q", m.workspace)
	case !m.pattern.MatchString(ws.Str):
		return nil, rejectd(ReasonClaims, "the token's workspace is refused by the workspace pattern", "workspace does not match the workspace pattern")
	}
	var scopes []string
	switch {
	case sc.Type == gjson.String:
		// RFC 6749 §3.3: scope tokens are separated by single spaces and
		// hold only %x21-7E. Another blank (a no-break space, a tab) is
		// not a separator: "jobs:read\u00a0jobs:cancel" is one scope
		// name, never two grants.
		for _, s := range strings.Split(sc.Str, " ") {
			if s != "" {
				scopes = append(scopes, s)
			}
		}
	case sc.IsArray():
		for _, s := range sc.Array() {
			if s.Type != gjson.String {
				return nil, rejectd(ReasonClaims, scopesDesc(m.scopes), "claim %q holds a non-string scope", m.scopes)
			}
			scopes = append(scopes, s.Str)
		}
	case sc.Exists() && sc.Type != gjson.Null:
		return nil, rejectd(ReasonClaims, scopesDesc(m.scopes), "claim %q is neither a string nor an array", m.scopes)
	}
	actor := ""
	if m.actor != "" {
		if a := gjson.GetBytes(claims, m.actor); a.Type == gjson.String {
			actor = a.Str
		}
	}
	return NewPrincipal(sub.Str, ws.Str, actor, scopes, claims), nil
}

func scopesDesc(path string) string {
	return fmt.Sprintf("the token's scope claim (%.64s) is neither a string nor a list of strings", path)
}

// jwtVerifier verifies JWTs against one key source: a static key (HMAC
// secret or PEM public key) or a JWKS. It is safe for concurrent use.
type jwtVerifier struct {
	parser *jwt.Parser
	static any         // []byte for HMAC, a crypto.PublicKey for a PEM file; nil with a JWKS
	jwks   *jwksSource // nil with a static key
	mapper *mapper
	leeway time.Duration
	// maxLifetime refuses tokens living longer (auth.max_token_lifetime);
	// 0: no ceiling.
	maxLifetime time.Duration
	now         func() time.Time
	cache       *tokenCache

	closeOnce  sync.Once
	keyLookups atomic.Int64 // keys handed to signature verification; for tests
}

func newJWTVerifier(c *catalog.JWT, maxLifetime time.Duration, m *mapper, opts *VerifierOptions) (*jwtVerifier, error) {
	if len(c.Algorithms) == 0 {
		return nil, errors.New("auth.jwt.algorithms: at least one algorithm is required")
	}
	hmac := c.HMACSecretEnv != ""
	for _, a := range c.Algorithms {
		switch {
		case strings.EqualFold(a, "none"):
			return nil, errors.New(`auth.jwt.algorithms: "none" is never accepted`)
		case hmac && !slices.Contains(hmacAlgs, a):
			return nil, fmt.Errorf("auth.jwt.algorithms: %q cannot be verified with hmac_secret_env", a)
		case !hmac && !slices.Contains(asymmetricAlgs, a):
			return nil, fmt.Errorf("auth.jwt.algorithms: %q cannot be verified with a public key; want one of %s", a, strings.Join(asymmetricAlgs, " "))
		}
	}
	// The cap holds even if a catalog skipped validation.
	leeway := min(c.Leeway.D(), catalog.DefaultMaxLeeway.D())
	popts := []jwt.ParserOption{
		jwt.WithValidMethods(c.Algorithms),
		jwt.WithExpirationRequired(),
		jwt.WithStrictDecoding(),
		jwt.WithLeeway(leeway),
		jwt.WithIssuedAt(),
	}
	if c.Issuer != "" {
		popts = append(popts, jwt.WithIssuer(c.Issuer))
	}
	if c.Audience != "" {
		popts = append(popts, jwt.WithAudience(c.Audience))
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	popts = append(popts, jwt.WithTimeFunc(now))
	v := &jwtVerifier{
		parser:      jwt.NewParser(popts...),
		mapper:      m,
		leeway:      leeway,
		maxLifetime: max(maxLifetime, 0),
		now:         now,
		cache:       newTokenCache(opts.CacheSize),
	}
	switch {
	case c.HMACSecretEnv != "":
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		secret := []byte(getenv(c.HMACSecretEnv))
		if len(secret) == 0 {
			// Unset or empty: say so, not how long a secret should be.
			return nil, fmt.Errorf("auth.jwt.hmac_secret_env: %s is not set; set it to a random secret, e.g. from `openssl rand -base64 32`", c.HMACSecretEnv)
		}
		if err := CheckHMACSecret(secret); err != nil {
			return nil, fmt.Errorf("auth.jwt.hmac_secret_env: %s: %w", c.HMACSecretEnv, err)
		}
		v.static = secret
	case c.PublicKeyFile != "":
		read := opts.ReadFile
		if read == nil {
			read = os.ReadFile
		}
		data, err := read(c.PublicKeyFile)
		if err != nil {
			return nil, fmt.Errorf("auth.jwt.public_key_file: %w", err)
		}
		key, err := ParsePublicKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("auth.jwt.public_key_file %s: %w", c.PublicKeyFile, err)
		}
		v.static = key
	case c.JWKSURL != "":
		if err := checkJWKSURL(c.JWKSURL, c.AllowInsecureJWKS); err != nil {
			return nil, err
		}
		src, err := newJWKSSource(jwksConfig{url: c.JWKSURL, algs: c.Algorithms, opts: opts, startWithoutKeys: opts.StartWithoutJWKS})
		if err != nil {
			return nil, err
		}
		v.jwks = src
	default:
		return nil, errors.New("auth.jwt: set one key source: jwks_url, public_key_file or hmac_secret_env")
	}
	return v, nil
}

// ParsePublicKeyPEM parses an RSA, ECDSA or Ed25519 public key (PKIX
// "PUBLIC KEY", or PKCS#1 "RSA PUBLIC KEY").
func ParsePublicKeyPEM(data []byte) (crypto.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		switch k.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			return k, nil
		}
		return nil, fmt.Errorf("unsupported public key type %T", k)
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(block.Bytes)
	}
	return nil, fmt.Errorf("PEM block %q is not a public key", block.Type)
}

// claims captures the verified payload's raw JSON beside the registered
// claims, so principal mapping reads it with gjson and nothing re-encodes it.
type claims struct {
	jwt.RegisteredClaims
	raw []byte
}

// UnmarshalJSON refuses a payload that names a member twice, at any
// level: the registered claims are read last-wins (encoding/json) and
// the rest first-wins (gjson), so {"ws":"globex",…,"ws":"acme"} or two
// exp would mean one thing here and another to the next reader.
func (c *claims) UnmarshalJSON(b []byte) error {
	payload := gjson.ParseBytes(b)
	if dup := duplicateMember(payload, 0); dup != "" {
		return fmt.Errorf("the token's payload names %q twice", dup)
	}
	// encoding/json matches member names to fields without regard to
	// case, so "Exp" or "AUD" would stand for exp or aud here while every
	// other reader takes them for claims of their own.
	var variant string
	payload.ForEach(func(k, _ gjson.Result) bool {
		for _, name := range registeredClaims {
			if k.Str != name && strings.EqualFold(k.Str, name) {
				variant = k.Str
				return false
			}
		}
		return true
	})
	if variant != "" {
		return fmt.Errorf("the token's payload names %q, a registered claim in other letters", variant)
	}
	c.raw = append([]byte(nil), b...)
	return json.Unmarshal(b, &c.RegisteredClaims)
}

// duplicateHeader refuses a token whose JOSE header names a member twice
// ({"alg":"none",…,"alg":"HS256"}): the header is read last-wins here
// and may be read first-wins by the next reader. A header that does not
// decode is left to the parser to refuse.
func duplicateHeader(token string) error {
	seg, _, ok := strings.Cut(token, ".")
	if !ok {
		return nil
	}
	h, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil || !gjson.ValidBytes(h) || !gjson.ParseBytes(h).IsObject() {
		return nil
	}
	if dup := strictjson.FirstDuplicate(h); dup != nil {
		return rejectf(ReasonMalformed, "the token's header names %.64q twice", dup)
	}
	return nil
}

// registeredClaims are the member names of jwt.RegisteredClaims.
var registeredClaims = []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti"}

// duplicateMember returns a member name some object in v holds twice,
// or "".
func duplicateMember(v gjson.Result, depth int) string {
	if depth > 32 {
		return "" // a token is at most MaxTokenBytes; json.Unmarshal bounds the rest
	}
	var dup string
	if v.IsObject() {
		if d := strictjson.FirstDuplicate([]byte(v.Raw)); d != nil {
			return string(d)
		}
	}
	if v.IsObject() || v.IsArray() {
		v.ForEach(func(_, e gjson.Result) bool {
			dup = duplicateMember(e, depth+1)
			return dup == ""
		})
	}
	return dup
}

// Verify checks token and maps its claims to a principal. A token verified
// before, under the current key set and not yet expired, is answered from
// the cache without signature work.
func (v *jwtVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	if len(token) > MaxTokenBytes {
		return nil, rejectf(ReasonOversize, "token longer than %d bytes", MaxTokenBytes)
	}
	sum := tokenSum(token)
	if p, ok := v.cache.get(sum, v.generation(), v.now()); ok {
		return p, nil
	}
	if err := duplicateHeader(token); err != nil {
		return nil, err
	}
	var c claims
	var gen uint64
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		key, g, err := v.keyFor(ctx, t)
		gen = g
		return key, err
	})
	if err != nil {
		var r *rejection // from keyFor: keep its reason and drop the parser's wrapping
		if errors.As(err, &r) {
			return nil, r
		}
		return nil, &rejection{reason: jwtReason(err), desc: jwtDescription(err), err: err}
	}
	if v.maxLifetime > 0 {
		if life := lifetime(&c.RegisteredClaims, v.now()); life > v.maxLifetime {
			return nil, rejectf(ReasonLifetime, "token lifetime %s is over auth.max_token_lifetime %s", life, v.maxLifetime)
		}
	}
	p, err := v.mapper.principal(c.raw)
	if err != nil {
		return nil, err
	}
	// The parser accepts a token while now is before exp+leeway; the cache
	// holds it exactly as long, and not a moment beyond.
	v.cache.put(sum, p, c.ExpiresAt.Add(v.leeway), gen)
	return p, nil
}

// lifetime is how long a token was minted to live: exp − iat when iat is
// present, else exp − nbf when nbf is, else exp − now (the most a token
// that does not say when it was issued can still be used for). exp is
// required, so it is always there.
func lifetime(c *jwt.RegisteredClaims, now time.Time) time.Duration {
	switch {
	case c.IssuedAt != nil:
		return c.ExpiresAt.Sub(c.IssuedAt.Time)
	case c.NotBefore != nil:
		return c.ExpiresAt.Sub(c.NotBefore.Time)
	}
	return c.ExpiresAt.Sub(now)
}

// Close stops the JWKS refresh goroutine, if any, and waits for it. It is
// idempotent and always returns nil. Verify keeps working afterwards with
// the last key set, so a verifier replaced on reload may be closed while
// requests still hold it.
func (v *jwtVerifier) Close() error {
	v.closeOnce.Do(func() {
		if v.jwks != nil {
			v.jwks.close()
		}
	})
	return nil
}

// generation is the key set generation the cache must match.
func (v *jwtVerifier) generation() uint64 {
	if v.jwks == nil {
		return 0
	}
	return v.jwks.current().gen
}

// keyFor returns the key that verifies t and the generation of the key
// set it came from.
func (v *jwtVerifier) keyFor(ctx context.Context, t *jwt.Token) (any, uint64, error) {
	// We implement no JWS extensions, so any "crit" header is one we do not
	// understand (RFC 7515 §4.1.11). Key-location headers (jku, x5u, jwk,
	// x5c) are never consulted: keys come only from configuration.
	if _, ok := t.Header["crit"]; ok {
		return nil, 0, rejectd(ReasonMalformed, "the token has a crit header this gateway does not implement", "unsupported crit header")
	}
	if v.static != nil {
		v.keyLookups.Add(1)
		return v.static, 0, nil
	}
	kid := ""
	if k, ok := t.Header["kid"]; ok {
		s, ok := k.(string)
		if !ok {
			return nil, 0, rejectd(ReasonMalformed, "the token's kid header is not a string", "kid header is not a string")
		}
		kid = s
	}
	alg := t.Method.Alg()
	set := v.jwks.current()
	key := set.lookup(kid, alg)
	if key == nil {
		// Perhaps the identity provider rotated: refresh (rate limited,
		// shared with concurrent callers) and look again.
		set = v.jwks.update(ctx, true)
		key = set.lookup(kid, alg)
	}
	if key == nil {
		return nil, 0, rejectf(ReasonUnknownKey, "no key for kid %.64q and alg %s", kid, alg)
	}
	v.keyLookups.Add(1)
	return key, set.gen, nil
}
