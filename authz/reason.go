package authz

import (
	"errors"
	"fmt"
	"strings"

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

// Description is a short public sentence saying why err refused a token,
// for the error_description of a 401's WWW-Authenticate challenge (RFC 6750
// §3) and the JSON body beside it. It names the class of the
// problem (expired, not valid yet, wrong audience or issuer, bad signature
// or unknown key, malformed, a claim the principal mapping needs, the
// workspace pattern, the lifetime ceiling) and never the token, key
// material, or the issuer and audience the gateway expects. It returns ""
// for nil and for [ErrNoToken] (RFC 6750 §3.1: a request without a token
// gets no error code), and otherwise a text in printable ASCII with no '"'
// or '\', as error_description allows.
func Description(err error) string {
	if err == nil || errors.Is(err, ErrNoToken) {
		return ""
	}
	var r *rejection
	if !errors.As(err, &r) {
		return descInvalid
	}
	d := r.desc
	if d == "" {
		d = reasonDescriptions[r.reason]
	}
	if d == "" {
		d = descInvalid
	}
	return headerSafe(d)
}

const descInvalid = "the token is invalid"

// reasonDescriptions describe a reason when the rejection carries no
// finer description.
var reasonDescriptions = map[string]string{
	ReasonMalformed:  "the token is not a well-formed JWT",
	ReasonSignature:  "the token's signature does not verify, or its algorithm is not accepted",
	ReasonExpired:    "the token has expired",
	ReasonClaims:     "the token's claims are not accepted",
	ReasonUnknownKey: "the token is signed with a key this gateway does not know (kid)",
	ReasonOversize:   fmt.Sprintf("the token is longer than %d bytes", MaxTokenBytes),
	ReasonAPIKey:     "the API key is not recognised",
	ReasonLifetime:   "the token lives longer than auth.max_token_lifetime allows",
}

// headerSafe keeps s inside RFC 6750's error_description characters
// (%x20-21 / %x23-5B / %x5D-7E) and at most 200 bytes: a claim path
// from the catalog may hold anything.
func headerSafe(s string) string {
	const maxLen = 200
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxLen; i++ {
		switch c := s[i]; {
		case c == '"':
			b.WriteByte('\'')
		case c < 0x20 || c > 0x7e || c == '\\':
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// rejection is a refused token: it matches [ErrInvalidToken] for the wire
// and carries a bounded reason for metrics and a public description for
// the 401 (see [Description]). Its text is for the log only.
type rejection struct {
	reason string
	desc   string // "": the reason's description
	err    error
}

func (r *rejection) Error() string   { return ErrInvalidToken.Error() + ": " + r.err.Error() }
func (r *rejection) Unwrap() []error { return []error{ErrInvalidToken, r.err} }

func rejectf(reason, format string, args ...any) error {
	return &rejection{reason: reason, err: fmt.Errorf(format, args...)}
}

// rejectd is rejectf with a public description finer than the reason's.
func rejectd(reason, desc, format string, args ...any) error {
	return &rejection{reason: reason, desc: desc, err: fmt.Errorf(format, args...)}
}

// jwtDescription describes an error from golang-jwt's parser; "" leaves
// it to the reason.
func jwtDescription(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "the token is not valid yet (nbf)"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token was issued in the future (iat)"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token's audience (aud) does not include this resource"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the token's issuer (iss) is not the one this gateway trusts"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		// golang-jwt names the claim only in its text: "aud claim is required".
		msg := err.Error()
		switch {
		case strings.Contains(msg, "exp claim"):
			return "the token has no expiry (exp)"
		case strings.Contains(msg, "aud claim"):
			return "the token has no audience (aud)"
		case strings.Contains(msg, "iss claim"):
			return "the token has no issuer (iss)"
		}
		return "the token lacks a required claim"
	}
	return ""
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
