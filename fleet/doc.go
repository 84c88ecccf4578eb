// Package fleet keeps the counters that the replicas of a gateway share:
// rate limits, daily quotas and upstream concurrency leases. With a Redis
// server configured they are counted there, so twenty replicas enforce
// one limit, not twenty; without one, in this process. It knows nothing
// of principals, tools or catalogs: callers name counters and leases, and
// read refusals back.
//
// Rates are GCRA (the generic cell rate algorithm, a token bucket kept as
// one timestamp per counter: the theoretical arrival time). A call is
// admitted when the counter's TAT is at most (burst-1) intervals ahead of
// now, and moves it one interval on. Quotas count calls per UTC day. One
// Take checks every counter it is given and takes from them only when all
// admit, so a refusal costs nothing; in Redis that is one Lua script, and
// the clock is Redis's (TIME), so replicas whose clocks drift still agree.
// The scripts are our own rather than go-redis/redis_rate's: that module
// is not among the gateway's dependencies, limits one key per call, and
// has no daily quota or all-or-nothing take over several keys.
//
// Leases cap calls in flight to an upstream, in all and per workspace:
// each is a member of a sorted set scored by its expiry, which is the
// upstream's timeout plus a margin. A call never outlives its upstream's
// timeout, so a replica that dies holding leases gives them back when
// they expire, without anyone cleaning up after it.
//
// Redis down or slow. Every Redis operation has a small deadline
// (Options.OpTimeout, 100 ms by default). One that fails or times out is
// done locally instead and counted (a lease Redis adds when it runs a
// late acquire anyway is removed when the call ends). After an error
// that is not a timeout,
// or three timeouts in a row, the store counts locally for a second
// (logged once per outage) before it tries Redis again; when Redis
// answers, shared counting resumes by itself. Local counting while Redis
// is away is scaled to this replica's share of the fleet: each replica
// announces itself in Redis every two seconds, and the last fleet size
// seen (N) divides every rate, burst, quota and concurrency cap (rounded
// up, at least 1), so a fleet that loses Redis stays near its limits
// instead of multiplying them by N. A quota counted locally starts from
// the count Redis last gave this replica for it. Calls already in flight
// count toward the local caps, whichever way they were admitted. Nothing
// waits on Redis longer than OpTimeout per operation.
package fleet
