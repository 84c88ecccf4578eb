package authz_test

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// TestMaxTokenLifetime: auth.max_token_lifetime refuses a token whose
// lifetime (exp − iat, else exp − nbf, else exp − now) is over it, as an
// invalid token with its own reason; a lifetime equal to it is accepted.
func TestMaxTokenLifetime(t *testing.T) {
	clk := newClock()
	now := clk.Now()
	const max = time.Hour
	at := func(d time.Duration) int64 { return now.Add(d).Unix() }
	base := func() jwt.MapClaims {
		c := good()
		delete(c, "iat")
		delete(c, "nbf")
		delete(c, "exp")
		return c
	}
	set := func(kv ...any) jwt.MapClaims {
		c := base()
		for i := 0; i < len(kv); i += 2 {
			c[kv[i].(string)] = kv[i+1]
		}
		return c
	}
	cases := []struct {
		name   string
		claims jwt.MapClaims
		reason string
	}{
		{"iat-exp-one-second-under", set("iat", at(0), "exp", at(max-time.Second)), ""},
		{"iat-exp-equal-to-max", set("iat", at(0), "exp", at(max)), ""},
		{"iat-exp-one-second-over", set("iat", at(0), "exp", at(max+time.Second)), "lifetime"},
		{"issued-earlier-still-valid", set("iat", at(-30*time.Minute), "exp", at(30*time.Minute)), ""},
		{"issued-earlier-one-second-over", set("iat", at(-30*time.Minute-time.Second), "exp", at(30*time.Minute)), "lifetime"},
		{"iat-wins-over-nbf", set("iat", at(-30*time.Minute-time.Second), "nbf", at(0), "exp", at(30*time.Minute)), "lifetime"},
		{"nbf-exp-one-second-under", set("nbf", at(-10*time.Second), "exp", at(max-11*time.Second)), ""},
		{"nbf-exp-equal-to-max", set("nbf", at(-10*time.Second), "exp", at(max-10*time.Second)), ""},
		{"nbf-exp-one-second-over", set("nbf", at(-10*time.Second), "exp", at(max-9*time.Second)), "lifetime"},
		{"exp-only-one-second-under", set("exp", at(max-time.Second)), ""},
		{"exp-only-equal-to-max", set("exp", at(max)), ""},
		{"exp-only-one-second-over", set("exp", at(max+time.Second)), "lifetime"},
		{"ten-years", set("iat", at(0), "exp", at(10*365*24*time.Hour)), "lifetime"},
	}
	auth := hsAuth()
	auth.MaxTokenLifetime = catalog.Duration(max)
	v := newVerifier(t, auth, &authz.VerifierOptions{Getenv: func(string) string { return secret }, Now: clk.Now})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := sign(t, jwt.SigningMethodHS256, []byte(secret), "", tc.claims, nil)
			_, err := v.Verify(t.Context(), tok)
			if got := authz.Reason(err); got != tc.reason {
				t.Fatalf("Verify(lifetime case) reason = %q (%v), want %q", got, err, tc.reason)
			}
			if err != nil && !errors.Is(err, authz.ErrInvalidToken) {
				t.Errorf("Verify error %v is not ErrInvalidToken, so it would not get the usual 401", err)
			}
			// A second call is answered from the cache when accepted; a
			// refused token must stay refused.
			if _, err2 := v.Verify(t.Context(), tok); (err == nil) != (err2 == nil) {
				t.Errorf("second Verify = %v, first = %v", err2, err)
			}
		})
	}

	// Zero means no ceiling.
	v0 := newVerifier(t, hsAuth(), &authz.VerifierOptions{Getenv: func(string) string { return secret }, Now: clk.Now})
	if r := verify(v0, sign(t, jwt.SigningMethodHS256, []byte(secret), "", set("iat", at(0), "exp", at(10*365*24*time.Hour)), nil)); r != "" {
		t.Errorf("without max_token_lifetime, a ten-year token was refused: %s", r)
	}
}
