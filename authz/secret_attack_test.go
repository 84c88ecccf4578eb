package authz_test

import (
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
)

// TestWeakHMACSecretsRefused: a secret long enough but guessable in no
// time must not verify tokens. The verifier refuses it at
// build, naming the variable and not the secret.
func TestWeakHMACSecretsRefused(t *testing.T) {
	for name, s := range map[string]string{
		"32-times-a":              strings.Repeat("a", 32),
		"40-times-s":              strings.Repeat("s", 40),
		"abab":                    strings.Repeat("ab", 32),
		"digit-run":               strings.Repeat("0123456789", 4),
		"hex-alphabet-twice":      "0123456789abcdef0123456789abcdef",
		"alphabet-run":            "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"alphabet-run-descending": "zyxwvutsrqponmlkjihgfedcba9876543210",
		"repeated-word":           "e2e-secret-e2e-secret-e2e-secret-0123",
		"repeated-word-suffix":    "bench-secret-bench-secret-bench-secret-0123456789",
		"passphrase-repeated":     "correct horse battery staple correct horse battery staple",
		"short-random":            "1JfZpKXcI0BFKy756xdtmrE5DEm",
	} {
		t.Run(name, func(t *testing.T) {
			v, err := authz.NewVerifier(hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return s }})
			if err == nil {
				v.(authz.ClosableVerifier).Close()
				t.Fatalf("NewVerifier accepted the HMAC secret %q", s)
			}
			if msg := err.Error(); !strings.Contains(msg, "auth.jwt.hmac_secret_env: S") || strings.Contains(msg, s) {
				t.Errorf("NewVerifier error %q: want it to name the variable S and not quote the secret", msg)
			}
		})
	}
}

// TestUnsetHMACSecretSaysNotSet: hmac_secret_env naming a variable that
// is unset or empty says so, naming the variable, instead of talking about
// the length of a secret nobody gave.
func TestUnsetHMACSecretSaysNotSet(t *testing.T) {
	auth := hsAuth()
	auth.JWT.HMACSecretEnv = "GATEWAY_JWT_SECRET"
	v, err := authz.NewVerifier(auth, &authz.VerifierOptions{Getenv: func(string) string { return "" }})
	if err == nil {
		v.(authz.ClosableVerifier).Close()
		t.Fatal("NewVerifier accepted an unset HMAC secret")
	}
	if msg := err.Error(); !strings.Contains(msg, "GATEWAY_JWT_SECRET is not set") || strings.Contains(msg, "at least") {
		t.Errorf("NewVerifier error = %q, want it to say GATEWAY_JWT_SECRET is not set", msg)
	}
}
