package authz_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/mcpgw/gateway/authz"
)

// TestGeneratedSecretsPass: the secrets the docs tell operators to make,
// and the demo's own, pass the rule every time, not most of the time.
func TestGeneratedSecretsPass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		encode func([]byte) string
		n      int
	}{
		{"openssl-rand-base64-32", base64.StdEncoding.EncodeToString, 32},
		{"openssl-rand-base64-48", base64.StdEncoding.EncodeToString, 48},
		{"openssl-rand-hex-32", hex.EncodeToString, 32}, // also the demo's randomHex(32)
		{"base64url-32", base64.RawURLEncoding.EncodeToString, 32},
		{"raw-32", func(b []byte) string { return string(b) }, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lowest := 1e9
			for i := 0; i < 3000; i++ {
				b := make([]byte, tc.n)
				rand.Read(b)
				s := []byte(tc.encode(b))
				if err := authz.CheckHMACSecret(s); err != nil {
					t.Fatalf("CheckHMACSecret(%q) = %v, want nil", s, err)
				}
				lowest = min(lowest, authz.EstimateSecretBits(s))
			}
			t.Logf("lowest estimate over 3000: %.0f bits", lowest)
		})
	}
}

func TestEstimateSecretBits(t *testing.T) {
	for _, tc := range []struct {
		secret   string
		max, min float64
	}{
		{"", 0, 0},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0, 0},
		{"abababababababababababababababababababab", 2, 0},
		{"0123456789abcdef0123456789abcdef", 20, 0},
		{"388f7468567e91661e4bf959993bbcb3c5c260217e9965a18abd9fd5a29e0f1c", 400, 150},
		{"bTzelvbcDLReRnFetnAOn5DOgYWnpeGzVeEnyoRNYlY=", 400, 150},
	} {
		got := authz.EstimateSecretBits([]byte(tc.secret))
		if got > tc.max || got < tc.min {
			t.Errorf("EstimateSecretBits(%q) = %.1f, want %v..%v", tc.secret, got, tc.min, tc.max)
		}
	}
}

func ExampleCheckHMACSecret() {
	fmt.Println(authz.CheckHMACSecret([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")))
	fmt.Println(authz.CheckHMACSecret([]byte("z8HVGnp8fvZW/f0n6yEXaa4CveyS/6viDgcfP3LkYtY=")))
	// Output:
	// the secret is low-entropy (estimated 0 bits, want at least 128): it repeats itself or follows a pattern; generate one with `openssl rand -base64 32`
	// <nil>
}

// TestHMACSecretEntropyBoundary: the rule is "at least MinHMACSecretBits",
// so a secret estimated at exactly 128 bits passes and one just under is
// refused. The first secret is 16 letters twice each, with no repeated
// four-byte run and varied steps between neighbours: 32 × log2(16) = 128.
func TestHMACSecretEntropyBoundary(t *testing.T) {
	at := []byte("APGLKQJFAEJNHKRQLFHEBMGCDBCMNRPD")
	if got := authz.EstimateSecretBits(at); got != authz.MinHMACSecretBits {
		t.Fatalf("EstimateSecretBits(%q) = %v, want exactly %d", at, got, authz.MinHMACSecretBits)
	}
	if err := authz.CheckHMACSecret(at); err != nil {
		t.Errorf("CheckHMACSecret at exactly %d bits = %v, want nil", authz.MinHMACSecretBits, err)
	}
	under := []byte("APGLKQJFAEJNHKRQLFHEBMGCDBCMNRPP") // one letter three times
	if got := authz.EstimateSecretBits(under); got >= authz.MinHMACSecretBits {
		t.Fatalf("EstimateSecretBits(%q) = %v, want under %d", under, got, authz.MinHMACSecretBits)
	}
	if err := authz.CheckHMACSecret(under); err == nil {
		t.Errorf("CheckHMACSecret under %d bits = nil, want refused", authz.MinHMACSecretBits)
	}
}

// TestEstimateSecretBitsByHand: a value worked out from the rule's
// definition. "abca": no four-byte run repeats, so all 4 bytes count; the
// bytes' entropy is 1.5 bits (a twice, b, c), the steps' (+1, +1, −2)
// H(2/3, 1/3) ≈ 0.918; the estimate is 4 × the smaller.
func TestEstimateSecretBitsByHand(t *testing.T) {
	want := -4 * (2.0/3*math.Log2(2.0/3) + 1.0/3*math.Log2(1.0/3))
	if got := authz.EstimateSecretBits([]byte("abca")); math.Abs(got-want) > 1e-9 {
		t.Errorf("EstimateSecretBits(abca) = %v, want %v", got, want)
	}
	if got := authz.EstimateSecretBits([]byte("z")); got != 0 {
		t.Errorf("EstimateSecretBits(z) = %v, want 0 (one symbol carries no information)", got)
	}
}
