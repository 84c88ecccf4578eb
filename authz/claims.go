package authz

import "github.com/mcpgw/gateway/catalog"

// PrincipalFromClaims maps claims verified elsewhere (the ID token of an
// approver signing in to the approval page) to a principal with
// the catalog's auth.principal paths, exactly as a bearer JWT's claims
// are mapped: the same subject, workspace (and its pattern), scopes and
// actor rules, and the same errors (wrapping ErrInvalidToken).
func PrincipalFromClaims(pr catalog.Principal, claims []byte) (*Principal, error) {
	m, err := newMapper(pr)
	if err != nil {
		return nil, err
	}
	return m.principal(claims)
}
