package authz

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims the gateway's own authorization server writes into the access
// tokens it issues: the principal the person's ID token mapped to at
// sign-in, so no mapping is needed (or possible) on the way back in.
const (
	IssuedWorkspaceClaim = "mcpgw_ws"
	IssuedScopesClaim    = "mcpgw_scopes"
	IssuedActorClaim     = "mcpgw_actor"
	// IssuedGrantClaim names the grant (the sign-in and every token
	// refreshed from it); revoking the grant refuses all of them.
	IssuedGrantClaim = "mcpgw_grant"
)

// IssuedOptions configures [NewIssuedVerifier].
type IssuedOptions struct {
	// Issuer and Audience must be the token's iss and one of its aud.
	Issuer, Audience string
	// Keys verify the signature, by kid (EdDSA).
	Keys map[string]ed25519.PublicKey
	// Revoked reports whether a grant was revoked; an error refuses the
	// token (a store that cannot answer must not let a revoked grant in).
	Revoked func(ctx context.Context, grant string) (bool, error)
	// Now: nil is time.Now.
	Now func() time.Time
}

// issuedVerifier verifies the gateway's own access tokens. It keeps no
// cache: each call asks Revoked, so a revocation holds at once on every
// node that shares the store.
type issuedVerifier struct {
	o      IssuedOptions
	parser *jwt.Parser
}

// NewIssuedVerifier returns a verifier of the access tokens the gateway's
// authorization server issues: EdDSA under one of Keys, iss and aud as
// configured, exp required (no leeway: the issuer's clock is ours), and
// the grant not revoked.
func NewIssuedVerifier(o IssuedOptions) Verifier {
	if o.Now == nil {
		o.Now = time.Now
	}
	p := jwt.NewParser(jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithExpirationRequired(),
		jwt.WithIssuer(o.Issuer), jwt.WithAudience(o.Audience), jwt.WithIssuedAt(), jwt.WithTimeFunc(o.Now))
	return &issuedVerifier{o: o, parser: p}
}

func (v *issuedVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	if len(token) > MaxTokenBytes {
		return nil, rejectf(ReasonOversize, "token longer than %d bytes", MaxTokenBytes)
	}
	if err := duplicateHeader(token); err != nil {
		return nil, err
	}
	var c claims
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if _, ok := t.Header["crit"]; ok {
			return nil, rejectd(ReasonMalformed, "the token has a crit header this gateway does not implement", "unsupported crit header")
		}
		kid, _ := t.Header["kid"].(string)
		k, ok := v.o.Keys[kid]
		if !ok {
			return nil, rejectf(ReasonUnknownKey, "no key for kid %.64q", kid)
		}
		return k, nil
	})
	if err != nil {
		var r *rejection
		if errors.As(err, &r) {
			return nil, r
		}
		return nil, &rejection{reason: jwtReason(err), desc: jwtDescription(err), err: err}
	}
	var pc struct {
		Workspace string   `json:"mcpgw_ws"`
		Scopes    []string `json:"mcpgw_scopes"`
		Actor     string   `json:"mcpgw_actor"`
		Grant     string   `json:"mcpgw_grant"`
	}
	if err := json.Unmarshal(c.raw, &pc); err != nil || c.Subject == "" || pc.Grant == "" {
		return nil, rejectd(ReasonClaims, "the token lacks the claims this gateway issues", "issued token without subject or grant")
	}
	revoked, err := v.o.Revoked(ctx, pc.Grant)
	switch {
	case err != nil:
		return nil, rejectd(ReasonClaims, "the token's grant cannot be checked now", "checking revocation: %v", err)
	case revoked:
		return nil, rejectd(ReasonClaims, "the token was revoked", "grant %s revoked", pc.Grant)
	}
	return NewPrincipal(c.Subject, pc.Workspace, pc.Actor, pc.Scopes, c.raw), nil
}

// IssuerOf returns the iss claim of a JWT without verifying anything, to
// choose which verifier should verify it; "" when token is not a JWT with
// a string iss.
func IssuerOf(token string) string {
	if len(token) > MaxTokenBytes {
		return ""
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(b, &c) != nil {
		return ""
	}
	return c.Iss
}

// Federated verifies tokens of the gateway's own authorization server
// (by their iss) with Issued and every other token with Other (the
// catalog's JWT or API key verifier; nil refuses them).
type Federated struct {
	Issuer string
	Issued Verifier
	Other  ClosableVerifier
}

// Verify dispatches on the token's unverified issuer: a token that names
// the gateway's issuer is held to the gateway's keys only, so a token
// another issuer signed can never pass as the gateway's, or the reverse.
func (f *Federated) Verify(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	if IssuerOf(token) == f.Issuer {
		return f.Issued.Verify(ctx, token)
	}
	if f.Other == nil {
		return nil, rejectd(ReasonClaims, "this gateway accepts only the tokens it issues", "token not issued by %s", f.Issuer)
	}
	return f.Other.Verify(ctx, token)
}

// Close closes Other.
func (f *Federated) Close() error {
	if f.Other != nil {
		return f.Other.Close()
	}
	return nil
}
