// Package approval owns what a human's yes to a write needs:
// the sealed requestState of a confirmation, which carries its own state
// through the client so any node can serve the retry; the pending
// approvals of four-eyes calls; and the stores that keep them, embedded
// (one file) or shared between replicas (Redis).
//
// Every state change a store makes is one atomic compare-and-set: a
// pending request is created only when its call has none pending and its
// requester and workspace are under their caps, it is decided once, an
// approved one is claimed for execution once, and a confirmation's nonce
// is spent once, in the store epoch it was issued in (a store that loses
// its data starts a new epoch, so a nonce whose spending was lost is
// refused, not spent again). That is what makes "executes exactly once"
// hold across retries, across nodes that share a store, and across a lost
// store. The rules about who may decide (workspace, gate, not the
// requester) are in [CheckDecider]; the gate itself is the caller's
// (authz), passed in as a boolean.
//
// The package leaves the wire (elicitation, isError texts) to mcp and the
// call path (when to ask, what to send upstream, the audit trail) to
// proxy.
package approval
