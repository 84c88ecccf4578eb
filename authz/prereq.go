package authz

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcpgw/gateway/catalog"
)

// ProbeFunc asks an upstream whether a prerequisite holds for a workspace.
// The wiring supplies it (proxy owns upstream calls); an error counts as
// not met.
type ProbeFunc func(ctx context.Context, pr *catalog.Prerequisite, workspace string) (bool, error)

const (
	// DefaultProbeCacheEntries bounds the probe answers a [Prerequisites]
	// keeps, one per (prerequisite, workspace): past it, the least
	// recently used answer is dropped and probed again when next asked,
	// so memory stays bounded however many workspaces call.
	DefaultProbeCacheEntries = 10000
	// ProbeFailureCache is how long a probe that failed for a transport
	// reason (refused, timed out, breaker open: the probe function
	// returned an error) is cached, or the probe's own cache if shorter.
	// A transient outage then hides a tool for seconds, not a full cache
	// period. An answer, even "no" or a non-2xx status, keeps the full one.
	ProbeFailureCache = 5 * time.Second
)

// Prerequisites decides the catalog's per-workspace conditions. Probe
// answers are cached per workspace for the probe's cache duration (a
// failed probe for at most [ProbeFailureCache]), at most
// [DefaultProbeCacheEntries] of them, least recently used dropped first;
// concurrent askers of the same missing answer share one probe. A nil
// *Prerequisites meets nothing.
type Prerequisites struct {
	defs  map[string]*catalog.Prerequisite
	probe ProbeFunc
	now   func() time.Time
	max   int

	mu    sync.Mutex
	cache map[probeKey]*list.Element // of *probeEntry
	lru   list.List                  // most recently used first
}

type probeKey struct{ name, workspace string }

type probeEntry struct {
	key     probeKey
	done    chan struct{} // closed when met and expires are set
	met     bool
	expires time.Time
}

// NewPrerequisites builds the decider for defs. probe may be nil when no
// prerequisite uses a probe; a probe prerequisite then fails closed. now
// is the clock for the cache; nil means time.Now.
func NewPrerequisites(defs map[string]*catalog.Prerequisite, probe ProbeFunc, now func() time.Time) *Prerequisites {
	if now == nil {
		now = time.Now
	}
	return &Prerequisites{defs: defs, probe: probe, now: now, max: DefaultProbeCacheEntries, cache: make(map[probeKey]*list.Element)}
}

// Met reports whether p's workspace meets the prerequisite called name.
func (ps *Prerequisites) Met(ctx context.Context, p *Principal, name string) bool {
	if ps == nil || p == nil {
		return false
	}
	def := ps.defs[name]
	switch {
	case def == nil:
		return false
	case def.Claim != "":
		return truthy(gjson.GetBytes(p.Claims, def.Claim))
	case def.Probe != nil && ps.probe != nil:
		return ps.probed(ctx, def, p.Workspace)
	}
	return false
}

func (ps *Prerequisites) probed(ctx context.Context, def *catalog.Prerequisite, ws string) bool {
	key := probeKey{def.Name, ws}
	ps.mu.Lock()
	el := ps.cache[key]
	if el != nil {
		ps.lru.MoveToFront(el)
		e := el.Value.(*probeEntry)
		select {
		case <-e.done:
			if ps.now().Before(e.expires) {
				ps.mu.Unlock()
				return e.met
			}
			// expired: probe again below
		default: // a probe is in flight: wait for it
			ps.mu.Unlock()
			select {
			case <-e.done:
				return e.met
			case <-ctx.Done():
				return false
			}
		}
	}
	e := &probeEntry{key: key, done: make(chan struct{})}
	if el != nil {
		el.Value = e
	} else {
		ps.cache[key] = ps.lru.PushFront(e)
		for ps.lru.Len() > ps.max {
			// An evicted probe in flight still releases its waiters,
			// which hold the entry itself.
			old := ps.lru.Remove(ps.lru.Back()).(*probeEntry)
			delete(ps.cache, old.key)
		}
	}
	ps.mu.Unlock()

	ttl := def.Probe.Cache.D()
	if ttl <= 0 {
		ttl = 60 * time.Second
	}
	failed := true
	// Waiters are released whatever happens, a panicking probe included
	// (the answer is then "not met", which fails closed, and cached as a
	// failure).
	defer func() {
		if failed {
			ttl = min(ttl, ProbeFailureCache)
		}
		e.expires = ps.now().Add(ttl)
		close(e.done)
	}()
	// The probe outlives the asker, since others may be waiting on it; the
	// probe function bounds it with the upstream's timeout.
	met, err := ps.probe(context.WithoutCancel(ctx), def, ws)
	failed = err != nil
	e.met = err == nil && met
	return e.met
}

// truthy is the one reading of "met" for every prerequisite, claim or
// probe: present and not false, null, 0, "", "false", "0", [] or {}.
func truthy(r gjson.Result) bool {
	switch r.Type {
	case gjson.True:
		return true
	case gjson.String:
		return r.Str != "" && r.Str != "false" && r.Str != "0"
	case gjson.Number:
		return r.Num != 0
	case gjson.JSON:
		return r.Raw != "[]" && r.Raw != "{}"
	}
	return false
}

// TruthyAt reports whether the JSON value at path counts as met.
func TruthyAt(json []byte, path string) bool { return truthy(gjson.GetBytes(json, path)) }
