package authz

// HMAC secret strength.
//
// Length alone lets through 32 × "a", "abab…" and "0123456789…": long
// enough, guessable in no time. The rule is a floor, not a proof of
// randomness, and errs on the side of refusing:
//
//  1. At least MinHMACSecretBytes bytes (RFC 7518 §3.2: an HS256 key is
//     at least as long as the hash output).
//  2. An estimate of at least MinHMACSecretBits bits, where
//     - a byte counts only if no four-byte run containing it appears
//       earlier in the secret (so repeats, "abab…", "secret-secret-…"
//       count once), and
//     - each counted byte is worth the secret's Shannon entropy per byte,
//       taken over its bytes or over the differences between neighbouring
//       bytes, whichever is lower (so runs like "0123456789abc…", whose
//       differences are all 1, are worth next to nothing).
//
// 32 random bytes in any usual encoding (openssl rand -base64 32, -hex 32)
// estimate at 200 bits or more; 16 random bytes hex-encoded (-hex 16) do
// not reach 128, and are refused.

import (
	"fmt"
	"math"
)

// HMAC secret floor; see [CheckHMACSecret].
const (
	MinHMACSecretBytes = 32
	MinHMACSecretBits  = 128
)

// CheckHMACSecret reports whether secret is fit to sign and verify HS256
// tokens: at least [MinHMACSecretBytes] long and estimated by
// [EstimateSecretBits] at [MinHMACSecretBits] or more. The error says
// why without quoting the secret.
func CheckHMACSecret(secret []byte) error {
	if len(secret) < MinHMACSecretBytes {
		return fmt.Errorf("the secret is %d bytes; want at least %d random bytes, e.g. from `openssl rand -base64 32`", len(secret), MinHMACSecretBytes)
	}
	if bits := EstimateSecretBits(secret); bits < MinHMACSecretBits {
		return fmt.Errorf("the secret is low-entropy (estimated %.0f bits, want at least %d): it repeats itself or follows a pattern; generate one with `openssl rand -base64 32`", bits, MinHMACSecretBits)
	}
	return nil
}

// EstimateSecretBits is the conservative entropy estimate the HMAC secret
// rule uses (see the top of this file): the bytes not repeating an
// earlier four-byte run, times the lower of the Shannon entropy per byte
// of the bytes and of the differences between neighbouring bytes. It
// reads the whole secret once and holds two small tables.
func EstimateSecretBits(secret []byte) float64 {
	n := len(secret)
	if n == 0 {
		return 0
	}
	// fresh: bytes not inside a four-byte window seen at an earlier start.
	// Four, not three: three random bytes recur in 32 often enough (one
	// secret in tens of thousands) to cost a good secret its margin.
	covered := make([]bool, n)
	seen := make(map[[4]byte]struct{}, n)
	for k := 0; k+4 <= n; k++ {
		w := [4]byte(secret[k : k+4])
		if _, ok := seen[w]; ok {
			copy(covered[k:k+4], []bool{true, true, true, true})
		}
		seen[w] = struct{}{}
	}
	fresh := 0
	for _, c := range covered {
		if !c {
			fresh++
		}
	}
	var bytesSeen, deltas [256]int
	for i, b := range secret {
		bytesSeen[b]++
		if i > 0 {
			deltas[b-secret[i-1]]++
		}
	}
	h := shannon(bytesSeen[:], n)
	if n > 1 {
		h = min(h, shannon(deltas[:], n-1))
	}
	return float64(fresh) * h
}

// shannon is the entropy in bits per symbol of the distribution counts
// over total symbols.
func shannon(counts []int, total int) float64 {
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(total)
			h -= p * math.Log2(p)
		}
	}
	return h
}
