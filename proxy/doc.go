// Package proxy is the core every surface shares: it lists the tools a
// principal may see, and calls one. The wire (JSON-RPC, HTTP status codes,
// the REST mirror's framing) belongs to package mcp; who the caller is
// belongs to package authz.
//
// A call is one pipeline, the same from every surface ([Core.Call]):
//
//   - Visibility, re-checked on every call: gates, the sensitive-data
//     lock, per-workspace prerequisites, toolsets, and discovery's
//     search_tools and call_tool (listing.go, toolset.go, discovery.go,
//     search.go). A tool the caller may not see answers as an unknown one.
//   - Arguments: decoded strictly, numbers kept exact (numbers.go), the
//     schema's defaults applied, validated against the tool's JSON Schema
//     (arguments.go).
//   - Approval: a confirmation asked of the user, or a four-eyes approval
//     that must be decided before anything is sent (approval.go,
//     approvallist.go, elicit.go).
//   - The upstream request, built from the catalog's templates: path
//     arguments kept in their segment, the workspace bound from the
//     principal and never from arguments, the upstream's own credential
//     (static, per workspace, or an OAuth token it obtains: upstreamauth.go)
//     and never the caller's token (request.go, bodyformat.go).
//   - The exchange: per-workspace shares of max_concurrent (share.go), a
//     circuit breaker (breaker.go), writes sent at most once, redirects
//     kept to the upstream, bounded reads (upstream.go).
//   - The answer: shaped with select and fields, held to the output schema
//     (outputschema.go), bounded and fenced by package rendering.
//   - Audit: every write recorded under the actor before it is sent and
//     after it is answered (audit.go).
//
// Settings are resolved once, when a catalog is installed ([Config]);
// request paths read only the resolved config. A [Core] serves one
// installed catalog, is immutable, and is safe for concurrent use; a
// reload builds a new one.
package proxy
