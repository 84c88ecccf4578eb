package authz

import (
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// Reasons a token is refused, as [Reason] reports them. The set is closed so
// that a metric labelled with it stays bounded whatever callers send.
const (
	ReasonMissing    = "missing"     // no bearer token at all
	ReasonMalformed  = "malformed"   // not a parseable token: base64, JSON, header, crit
	ReasonSignature  = "signature"   // signature or algorithm did not verify
	ReasonExpired    = "expired"     // exp (plus leeway) has passed; also an expired API key
	ReasonClaims     = "claims"      // iss, aud, nbf, iat, or the principal mapping failed
	ReasonUnknownKey = "unknown_key" // kid not in the key set, even after a refresh
	ReasonOversize   = "oversize"    // longer than MaxTokenBytes
	ReasonAPIKey     = "api_key"     // an API key that matches no configured hash
	ReasonLifetime   = "lifetime"    // a JWT minted to live longer than auth.max_token_lifetime
)

// Reason classifies a [Verifier] error into one of the Reason constants for
// metrics and logs. It returns "" for a nil error and [ReasonMalformed] for
// an error it does not recognise, so the set stays closed.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, ErrNoToken) {
		return ReasonMissing
	}
	var r *rejection
	if errors.As(err, &r) {
		return r.reason
	}
	return ReasonMalformed
}

// rejection is a refused token: it matches [ErrInvalidToken] for the wire
// and carries a bounded reason for metrics. Its text is for the log only.
type rejection struct {
	reason string
	err    error
}

func (r *rejection) Error() string   { return ErrInvalidToken.Error() + ": " + r.err.Error() }
func (r *rejection) Unwrap() []error { return []error{ErrInvalidToken, r.err} }

func reject(reason string, err error) error { return &rejection{reason: reason, err: err} }

func rejectf(reason, format string, args ...any) error {
	return &rejection{reason: reason, err: fmt.Errorf(format, args...)}
}

// jwtReason classifies an error from golang-jwt's parser.
func jwtReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return ReasonExpired
	case errors.Is(err, jwt.ErrTokenMalformed):
		return ReasonMalformed
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return ReasonSignature
	case errors.Is(err, jwt.ErrTokenInvalidClaims), errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return ReasonClaims
	}
	return ReasonMalformed
}
