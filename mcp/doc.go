// Package mcp is the gateway's wire: JSON-RPC 2.0 framing, Streamable HTTP
// for both protocol eras on one endpoint, the REST mirror under
// {admin_path}, RFC 9728 resource metadata, and one table per surface
// mapping errors to statuses (errors.go). It is a thin adapter over
// [proxy.Core], which decides what a principal may list and call; token
// verification is [authz.Verifier]'s.
//
// [NewHandler] serves HTTP. [ServeStdio] serves the MCP stdio transport
// (newline-delimited JSON-RPC) for local agent harnesses. Every surface
// runs one pipeline (pipeline.go): verify the caller, rate limit,
// in-flight slot, request id, [proxy.Core.Call], one outcome; a surface
// only frames its input and renders the outcome. What the wire reads of
// the catalog comes resolved, once per core, as [proxy.Config]; every
// answer is a typed value written by one encoder (encode.go).
//
// The server is stateless and tools-only. A request is modern (2026-07-28)
// when params._meta carries io.modelcontextprotocol/protocolVersion, legacy
// (2025-11-25 back to 2024-11-05) otherwise; both are answered on the same
// POST endpoint, always with application/json, never with a session.
//
// Policies where the spec leaves room (mcp-spec-notes.md):
//   - Accept is lenient: absent, or allowing application/json, passes; only
//     an Accept that excludes JSON gets 406.
//   - Unknown methods are -32601 with HTTP 404 for modern requests (the
//     spec's rule) and HTTP 200 for legacy ones, whose clients may read a 404
//     as a lost session.
//   - tools/list pages hold [ListPageSize] tools; the cursor is opaque
//     base64url of a format tag, the catalog hash prefix and an offset
//     (cursor.go).
//   - Batches (2025-03-26 only) are refused with 400 -32600, whatever the
//     revision.
//   - subscriptions/listen is -32601 (404): no notification types are
//     offered, and listChanged is false.
//   - Internal errors are HTTP 500 with -32603 and a request id.
//   - Top-level members other than jsonrpc, id, method, params, result and
//     error are refused (-32600). Duplicate member names at the top level
//     of tools/call arguments are -32602 (REST: 400 invalid_request).
//   - The 401 challenge names the view gate's scopes
//     (scope="…", AUTH §Scope Selection Strategy) when a view gate with
//     scopes is declared.
//   - limits.max_in_flight makes requests wait for a slot (up to
//     [DefaultInFlightWait], then they are served anyway), never fail;
//     limits.rate applies to tools/call only, per principal and per
//     (principal, tool), and so do limits.rules (rates and daily quotas
//     keyed by workspace, subject, tool, upstream), counted through a
//     fleet.Limiter (in Redis when the replicas share one); a refusal is
//     429 with Retry-After, RateLimit and RateLimit-Policy (limits.go).
//   - stdio answers requests one at a time, in order, verifies the token on
//     every request, and reports what HTTP would answer before JSON-RPC as
//     application codes: -31401 unauthorized, -31503 unavailable
//     (stdio.go, errors.go).
//
// Every request gets an id (X-Request-Id over HTTP), carried into the
// core's context for audit records, and one access log line at Info with
// the message "request" and request_id, surface, method, tool (tools/call),
// status, rpc_code (JSON-RPC errors), duration, subject and workspace;
// never a token, a credential or a body. [Metrics] receives the same
// observations with bounded labels.
package mcp
