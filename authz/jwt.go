package authz

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tidwall/gjson"

	"github.com/mcpgw/gateway/catalog"
)

// MaxTokenBytes bounds a bearer token; a longer one is refused before any
// parsing, so a hostile header costs nothing.
const MaxTokenBytes = 8 << 10

// VerifierOptions configures [NewVerifier]. The zero value is usable.
type VerifierOptions struct {
	// Getenv reads the HMAC secret's environment variable. Nil: os.Getenv.
	Getenv func(string) string
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// ReadFile reads public key files. Nil: os.ReadFile.
	ReadFile func(string) ([]byte, error)
}

// NewVerifier builds the verifier the catalog's auth section describes.
func NewVerifier(auth catalog.Auth, opts *VerifierOptions) (Verifier, error) {
	if opts == nil {
		opts = &VerifierOptions{}
	}
	m, err := newMapper(auth.Principal)
	if err != nil {
		return nil, err
	}
	switch {
	case auth.JWT != nil:
		return newJWTVerifier(auth.JWT, m, opts)
	case auth.APIKeysFile != "":
		return nil, errors.New("auth.api_keys_file is not supported yet")
	}
	return nil, errors.New("auth: no verifier configured")
}

// mapper turns verified claims into a principal with the catalog's gjson
// paths. It is the one place claims become identity, for every token kind.
type mapper struct {
	subject, workspace, scopes, actor string
	pattern                           *regexp.Regexp
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
	m := &mapper{subject: p.Subject, workspace: p.Workspace, scopes: p.Scopes, actor: p.Actor, pattern: re}
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
		return nil, fmt.Errorf("%w: claim %q is not a non-empty string", ErrInvalidToken, m.subject)
	}
	if ws.Type != gjson.String || ws.Str == "" {
		return nil, fmt.Errorf("%w: no workspace in claim %q", ErrInvalidToken, m.workspace)
	}
	if !m.pattern.MatchString(ws.Str) {
		return nil, fmt.Errorf("%w: workspace does not match the workspace pattern", ErrInvalidToken)
	}
	var scopes []string
	switch {
	case sc.Type == gjson.String:
		scopes = strings.Fields(sc.Str)
	case sc.IsArray():
		for _, s := range sc.Array() {
			if s.Type != gjson.String {
				return nil, fmt.Errorf("%w: claim %q holds a non-string scope", ErrInvalidToken, m.scopes)
			}
			scopes = append(scopes, s.Str)
		}
	case sc.Exists() && sc.Type != gjson.Null:
		return nil, fmt.Errorf("%w: claim %q is neither a string nor an array", ErrInvalidToken, m.scopes)
	}
	actor := ""
	if m.actor != "" {
		if a := gjson.GetBytes(claims, m.actor); a.Type == gjson.String {
			actor = a.Str
		}
	}
	return NewPrincipal(sub.Str, ws.Str, actor, scopes, claims), nil
}

type jwtVerifier struct {
	parser *jwt.Parser
	key    any // []byte for HMAC, a crypto.PublicKey otherwise
	mapper *mapper
}

func newJWTVerifier(c *catalog.JWT, m *mapper, opts *VerifierOptions) (*jwtVerifier, error) {
	if len(c.Algorithms) == 0 {
		return nil, errors.New("auth.jwt.algorithms: at least one algorithm is required")
	}
	for _, a := range c.Algorithms {
		if strings.EqualFold(a, "none") {
			return nil, errors.New(`auth.jwt.algorithms: "none" is never accepted`)
		}
	}
	leeway := c.Leeway.D()
	if leeway > catalog.DefaultMaxLeeway.D() {
		leeway = catalog.DefaultMaxLeeway.D()
	}
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
	if opts.Now != nil {
		popts = append(popts, jwt.WithTimeFunc(opts.Now))
	}
	v := &jwtVerifier{parser: jwt.NewParser(popts...), mapper: m}
	switch {
	case c.HMACSecretEnv != "":
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		secret := getenv(c.HMACSecretEnv)
		if len(secret) < 32 {
			return nil, fmt.Errorf("auth.jwt.hmac_secret_env: %s must hold a secret of at least 32 bytes", c.HMACSecretEnv)
		}
		v.key = []byte(secret)
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
		v.key = key
	default:
		return nil, errors.New("auth.jwt: jwks_url is not supported yet; use public_key_file or hmac_secret_env")
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

func (c *claims) UnmarshalJSON(b []byte) error {
	c.raw = append([]byte(nil), b...)
	return json.Unmarshal(b, &c.RegisteredClaims)
}

func (v *jwtVerifier) Verify(_ context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	if len(token) > MaxTokenBytes {
		return nil, fmt.Errorf("%w: token longer than %d bytes", ErrInvalidToken, MaxTokenBytes)
	}
	var c claims
	_, err := v.parser.ParseWithClaims(token, &c, v.keyFor)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	return v.mapper.principal(c.raw)
}

func (v *jwtVerifier) keyFor(t *jwt.Token) (any, error) {
	// We implement no JWS extensions, so any "crit" header is one we do not
	// understand (RFC 7515 §4.1.11). Key-location headers (jku, x5u, jwk,
	// x5c) are never consulted: keys come only from configuration.
	if _, ok := t.Header["crit"]; ok {
		return nil, errors.New("unsupported crit header")
	}
	return v.key, nil
}
