package main

import (
	"fmt"
	"strings"

	"github.com/mcpgw/gateway/fleet"
)

// stateStoreEnv names the Redis server where the replicas of a fleet
// count their limits together: limits.rules, limits.rate, the upstreams'
// max_concurrent caps and the authorization server's registrations. Unset, a Redis approval store
// (GATEWAY_APPROVAL_STORE=redis://…) serves for both; otherwise each
// process counts alone.
const stateStoreEnv = "GATEWAY_STATE_STORE"

// openFleet makes the process's limiter once, before the first catalog
// is installed, and logs where limits are counted. A URL that does not
// parse is an error; a Redis that does not answer is not: limits are
// counted locally until it does.
func (rt *runtime) openFleet() (*fleet.Limiter, error) {
	rt.fleetOnce.Do(func() {
		url, from := rt.env.get(stateStoreEnv), stateStoreEnv
		if url == "" {
			if a := rt.env.get(approvalStoreEnv); isRedisURL(a) {
				url, from = a, approvalStoreEnv
			}
		}
		if url != "" && !isRedisURL(url) {
			rt.fleetErr = fmt.Errorf("%s: %q is not a redis://, rediss:// or unix:// URL", from, url)
			return
		}
		fl, err := fleet.New(&fleet.Options{Redis: url, Logger: rt.logger, Metrics: rt.metrics.fleet()})
		if err != nil {
			rt.fleetErr = fmt.Errorf("%s: %w", from, err)
			return
		}
		rt.fleet = fl
		if url == "" {
			rt.logger.Info("limits are counted in this process (no "+stateStoreEnv+"): each replica enforces rate limits, quotas and max_concurrent on its own", "mode", fleet.ModeLocal)
		} else {
			rt.logger.Info("limits are counted in Redis, shared by every replica", "mode", fleet.ModeRedis, "from", from)
		}
	})
	return rt.fleet, rt.fleetErr
}

func isRedisURL(s string) bool {
	return strings.HasPrefix(s, "redis://") || strings.HasPrefix(s, "rediss://") || strings.HasPrefix(s, "unix://")
}

// closeFleet stops the limiter's heartbeat, so the fleet stops counting
// this replica.
func (rt *runtime) closeFleet() {
	if rt.fleet != nil {
		rt.fleet.Close()
	}
}
