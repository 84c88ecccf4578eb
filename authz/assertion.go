package authz

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// An upstream behind its own authorization server learns who is calling
// through a token exchange (RFC 8693), and the subject token must say it.
// The caller's bearer token cannot: it was issued for the gateway (its
// audience), so the authorization server, and anyone it passes it on to,
// could replay it against the gateway; and an API key means nothing to
// another server. The gateway instead states the verified principal in a
// JWT of its own, signed with a key whose public half the authorization
// server trusts, addressed to that server alone and valid for a minute.

// AssertionSigner signs subject tokens: JWTs naming a principal, for an
// upstream's authorization server. It is safe for concurrent use.
type AssertionSigner struct {
	method jwt.SigningMethod
	key    crypto.Signer
	keyID  string
}

// NewAssertionSigner reads a PEM private key: PKCS#8 ("PRIVATE KEY", RSA,
// ECDSA or Ed25519), PKCS#1 ("RSA PRIVATE KEY") or SEC 1 ("EC PRIVATE
// KEY"). RSA keys sign RS256, P-256 ES256, P-384 ES384, Ed25519 EdDSA.
// keyID, when set, is the kid header.
func NewAssertionSigner(pemData []byte, keyID string) (*AssertionSigner, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, errors.New("no PEM block found (want a private key)")
	}
	var (
		key any
		err error
	)
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q is not a private key (want PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)", block.Type)
	}
	if err != nil {
		return nil, errors.New("the private key cannot be parsed")
	}
	s := &AssertionSigner{keyID: keyID}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("RSA key of %d bits is too short (want at least 2048)", k.N.BitLen())
		}
		s.method, s.key = jwt.SigningMethodRS256, k
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			s.method = jwt.SigningMethodES256
		case elliptic.P384():
			s.method = jwt.SigningMethodES384
		default:
			return nil, errors.New("ECDSA key must be on P-256 or P-384")
		}
		s.key = k
	case ed25519.PrivateKey:
		s.method, s.key = jwt.SigningMethodEdDSA, k
	default:
		return nil, fmt.Errorf("unsupported private key type %T", key)
	}
	return s, nil
}

// Public is the public half of the signing key, for the authorization
// server that verifies the tokens.
func (s *AssertionSigner) Public() crypto.PublicKey { return s.key.Public() }

// Algorithm is the JWS alg the signer uses (RS256, ES256, ES384, EdDSA).
func (s *AssertionSigner) Algorithm() string { return s.method.Alg() }

// Assertion is what a subject token says.
type Assertion struct {
	Issuer, Audience string
	Principal        *Principal
	Lifetime         time.Duration
	Now              time.Time
}

// Sign returns a compact JWT with iss, aud, sub (the principal's
// subject), workspace, actor, iat, nbf, exp and a random jti.
func (s *AssertionSigner) Sign(a Assertion) (string, error) {
	jti := make([]byte, 16)
	rand.Read(jti)
	claims := jwt.MapClaims{
		"iss":       a.Issuer,
		"aud":       a.Audience,
		"sub":       a.Principal.Subject,
		"workspace": a.Principal.Workspace,
		"actor":     a.Principal.Actor,
		"iat":       a.Now.Unix(),
		"nbf":       a.Now.Unix(),
		"exp":       a.Now.Add(a.Lifetime).Unix(),
		"jti":       hex.EncodeToString(jti),
	}
	t := jwt.NewWithClaims(s.method, claims)
	if s.keyID != "" {
		t.Header["kid"] = s.keyID
	}
	return t.SignedString(s.key)
}
