package main

// Waiting for the identity provider at start.
//
// With a jwks_url, the first catalog cannot be installed until the key
// set is fetched. An identity provider may be slow or down when the
// gateway starts (both start together after an outage, say); exiting then
// would only have an orchestrator restart the gateway in a loop. So the
// listener answers at once, the MCP routes say 503 "mcp
// server not initialised" and /readyz 503, and the install is retried
// with jittered exponential backoff until a fetch succeeds or
// auth.jwt.start_deadline passes; then the gateway exits non-zero with
// the host and the last error. A reload never waits: it keeps the
// verifier it has (see runtime.reload).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// Backoff between attempts to fetch the key set at start: the first wait
// is about startRetryFirst, each next one doubles up to startRetryMax, and
// each is jittered down to half so gateways started together do not
// call the identity provider in step.
const (
	startRetryFirst = 250 * time.Millisecond
	startRetryMax   = 5 * time.Second
)

// installFirst installs the first catalog, retrying while its key set is
// unavailable ([authz.ErrJWKSUnavailable]) until auth.jwt.start_deadline
// has passed since the first attempt. Any other error is returned at
// once; so is ctx's error when ctx ends first. The deadline is checked
// between attempts, and one attempt takes at most [authz.JWKSFetchTimeout].
func (rt *runtime) installFirst(ctx context.Context, cat *catalog.Catalog) error {
	start := time.Now()
	err := rt.install(cat)
	if err == nil || !errors.Is(err, authz.ErrJWKSUnavailable) || cat.Auth.JWT == nil {
		return err
	}
	limit := cat.Auth.JWT.StartDeadline
	if limit <= 0 {
		limit = catalog.DefaultStartDeadline
	}
	deadline := start.Add(limit.D())
	host := cat.Auth.JWT.JWKSURL
	if u, perr := url.Parse(host); perr == nil && u.Host != "" {
		host = u.Host
	}
	delay := startRetryFirst
	for attempts := 1; ; attempts++ {
		left := time.Until(deadline)
		if left <= 0 {
			tries := "attempts"
			if attempts == 1 {
				tries = "attempt"
			}
			return fmt.Errorf("auth.jwt.start_deadline %s passed without a key set from %s (%d %s); last error: %w", limit, host, attempts, tries, err)
		}
		wait := min(delay/2+rand.N(delay/2+1), left)
		rt.logger.Warn("identity provider unavailable at start; answering 503 and retrying",
			"jwks_host", host, "attempts", attempts, "retry_in", wait.Round(time.Millisecond).String(),
			"deadline_in", left.Round(time.Millisecond).String(), "error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if err = rt.install(cat); err == nil {
			rt.logger.Info("identity provider reachable; catalog installed", "jwks_host", host, "attempts", attempts+1, "waited", time.Since(start).Round(time.Millisecond).String())
			return nil
		}
		if !errors.Is(err, authz.ErrJWKSUnavailable) {
			return err
		}
		delay = min(2*delay, startRetryMax)
	}
}
