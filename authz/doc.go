// Package authz turns a bearer token into a [Principal] (subject,
// workspace, scopes, actor) and decides what that principal may do. It
// knows the catalog's auth section and nothing of HTTP routing or
// upstream calls; where a decision needs an upstream probe, it takes a
// function the wiring supplies.
//
// Verification ([NewVerifier]):
//   - JWTs signed by the identity provider's keys (jwks.go: fetched,
//     cached and rotated from jwks_url only) or an HMAC secret held to a
//     strength rule (secret.go), with an algorithm allowlist, issuer,
//     audience and time checks (jwt.go), and a cache of verified tokens
//     (tokencache.go);
//   - opaque API keys, stored as their SHA-256 (apikey.go);
//   - access tokens the gateway issued itself as an OAuth authorization
//     server, routed by issuer beside the others ([Federated], issued.go).
//
// Claims map to a principal through the catalog's gjson paths
// (claims.go); a refusal names its class, never a secret (reason.go).
//
// Decisions: gates, the sensitive-data triple lock (gate.go) and
// per-workspace prerequisites (prereq.go). assertion.go signs the
// short-lived statement of who is calling that a token exchange
// presents to an upstream's authorization server, in place of the
// caller's own token.
package authz
