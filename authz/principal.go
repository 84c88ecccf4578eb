package authz

import (
	"context"
	"errors"
	"log/slog"
)

// Principal is the verified identity behind a request. It is built only by
// a [Verifier] from a verified token; nothing else the caller sends can
// change it. A Principal is immutable and safe to share.
type Principal struct {
	Subject   string
	Workspace string
	Scopes    []string
	Actor     string // audit identity; the subject when the claims name none
	// Claims is the verified claim set as JSON, for prerequisite queries.
	Claims []byte

	scopeSet map[string]struct{}
}

// NewPrincipal builds a principal. Verifiers call it; tests may too.
func NewPrincipal(subject, workspace, actor string, scopes []string, claims []byte) *Principal {
	p := &Principal{Subject: subject, Workspace: workspace, Actor: actor, Scopes: scopes, Claims: claims}
	if p.Actor == "" {
		p.Actor = subject
	}
	p.scopeSet = make(map[string]struct{}, len(scopes))
	for _, s := range scopes {
		p.scopeSet[s] = struct{}{}
	}
	return p
}

// HasScope reports whether p holds scope. A nil principal holds nothing.
func (p *Principal) HasScope(scope string) bool {
	if p == nil {
		return false
	}
	_, ok := p.scopeSet[scope]
	return ok
}

// LogValue keeps logs to the identity, never the claims.
func (p *Principal) LogValue() slog.Value {
	if p == nil {
		return slog.StringValue("anonymous")
	}
	return slog.GroupValue(slog.String("subject", p.Subject), slog.String("workspace", p.Workspace))
}

// Sentinel errors a surface maps to HTTP 401.
var (
	// ErrNoToken: the request carried no bearer token.
	ErrNoToken = errors.New("no bearer token")
	// ErrInvalidToken: a token was present but did not verify or map to a
	// principal. Wrapped errors carry the reason for the log only.
	ErrInvalidToken = errors.New("invalid token")
)

// Verifier verifies a bearer token and returns its principal. Errors wrap
// ErrInvalidToken (or ErrNoToken for an empty token).
type Verifier interface {
	Verify(ctx context.Context, token string) (*Principal, error)
}

// ClosableVerifier is a [Verifier] that owns resources, such as the
// goroutine refreshing a JWKS. Every verifier [NewVerifier] returns
// implements it: whoever builds one closes it when replacing it (on
// reload) or at shutdown. Close is idempotent, and Verify keeps working
// after it with what the verifier last knew.
type ClosableVerifier interface {
	Verifier
	Close() error
}
