package authz_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
)

func pemOf(t *testing.T, typ string, der []byte, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// Each supported key signs a subject token that its public half verifies,
// naming the principal, addressed and short-lived as configured.
func TestAssertionSignerSignsWhatItIsTold(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	pkcs8 := func(k any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		return pemOf(t, "PRIVATE KEY", der, err)
	}
	sec1, err := x509.MarshalECPrivateKey(p256)
	for _, tt := range []struct {
		name, alg string
		pem       []byte
	}{
		{"rsa-pkcs8", "RS256", pkcs8(rsaKey)},
		{"rsa-pkcs1", "RS256", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), nil)},
		{"p256-pkcs8", "ES256", pkcs8(p256)},
		{"p256-sec1", "ES256", pemOf(t, "EC PRIVATE KEY", sec1, err)},
		{"p384", "ES384", pkcs8(p384)},
		{"ed25519", "EdDSA", pkcs8(edKey)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := authz.NewAssertionSigner(tt.pem, "kid-1")
			if err != nil {
				t.Fatalf("NewAssertionSigner: %v", err)
			}
			now := time.Now()
			raw, err := s.Sign(authz.Assertion{Issuer: "https://gw", Audience: "https://as/token", Lifetime: time.Minute, Now: now,
				Principal: authz.NewPrincipal("alice", "acme", "alice@acme.example", nil, nil)})
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			claims := jwt.MapClaims{}
			tok, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return s.Public(), nil },
				jwt.WithValidMethods([]string{tt.alg}), jwt.WithIssuer("https://gw"), jwt.WithAudience("https://as/token"), jwt.WithExpirationRequired())
			if err != nil {
				t.Fatalf("the signer's own public key does not verify its token: %v", err)
			}
			if tok.Header["kid"] != "kid-1" || claims["sub"] != "alice" || claims["workspace"] != "acme" || claims["actor"] != "alice@acme.example" || claims["jti"] == "" {
				t.Errorf("header %v claims %v, want kid-1 and alice, acme, her actor and a jti", tok.Header, claims)
			}
			if exp, _ := claims.GetExpirationTime(); exp.Unix() != now.Add(time.Minute).Unix() {
				t.Errorf("exp = %v, want a minute from now", exp)
			}
		})
	}
}

func TestAssertionSignerRefusesWeakOrWrongKeys(t *testing.T) {
	short, _ := rsa.GenerateKey(rand.Reader, 1024)
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	pub, _ := x509.MarshalPKIXPublicKey(&short.PublicKey)
	p224der, p224err := x509.MarshalPKCS8PrivateKey(p224)
	for _, tt := range []struct {
		name string
		pem  []byte
		want string
	}{
		{"not-pem", []byte("-----BEGIN nothing"), "no PEM block"},
		{"public-key", pemOf(t, "PUBLIC KEY", pub, nil), `PEM block "PUBLIC KEY" is not a private key`},
		{"short-rsa", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(short), nil), "RSA key of 1024 bits is too short"},
		{"p224", pemOf(t, "PRIVATE KEY", p224der, p224err), "P-256 or P-384"},
		{"garbage", pemOf(t, "PRIVATE KEY", []byte("garbage"), nil), "cannot be parsed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := authz.NewAssertionSigner(tt.pem, "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewAssertionSigner = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
