package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/tidwall/gjson"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/rendering"
)

// This file calls a prerequisite's probe for authz: the same request
// builder and upstream exchange as a tool call, for one workspace.

// probeFunc answers prerequisite probes with real upstream calls carrying
// the workspace binding and the upstream's own credentials.
func (c *Core) probeFunc(ups map[string]*upstream) func(ctx context.Context, pr *catalog.Prerequisite, ws string) (bool, error) {
	// Compiled once: the path, and the method with its default applied.
	type probe struct {
		path   []pathPart
		method string
	}
	probes := make(map[string]probe, len(c.cat.Prerequisites))
	for name, pr := range c.cat.Prerequisites {
		if pr.Probe != nil {
			probes[name] = probe{compilePath(pr.Probe.PathTemplate, nil), or(pr.Probe.Method, http.MethodGet)}
		}
	}
	return func(ctx context.Context, pr *catalog.Prerequisite, ws string) (bool, error) {
		u := ups[pr.Probe.Upstream]
		if u == nil {
			return false, fmt.Errorf("unknown upstream %q", pr.Probe.Upstream)
		}
		method := probes[pr.Name].method
		b := binding{workspace: ws}
		path, err := buildPath(probes[pr.Name].path, nil, b)
		if err != nil {
			return false, err
		}
		req, err := u.newUpstreamRequest(method, u.prefix+path.escaped, nil)
		if err != nil {
			return false, err
		}
		if err := u.bind(req, url.Values{}, b, false); err != nil {
			return false, err
		}
		write := method != http.MethodGet && method != http.MethodHead
		resp, err := u.do(ctx, req, u.redirects(write, path), ws, 64<<10)
		if err != nil {
			c.logger.Warn("prerequisite probe failed", "prerequisite", pr.Name, "upstream", u.name, "error", err)
			return false, err
		}
		switch {
		case resp.status == http.StatusTooManyRequests || resp.status >= 500:
			// An outage, not an answer about the workspace: kept only
			// briefly, like a transport failure.
			return false, fmt.Errorf("upstream %s answered %d to the probe", u.name, resp.status)
		case resp.status < 200 || resp.status > 299:
			return false, nil
		}
		if pr.Probe.TrueWhen == "" {
			return true, nil
		}
		return rendering.Readable(resp.body) == nil && gjson.ValidBytes(resp.body) && authz.TruthyAt(resp.body, pr.Probe.TrueWhen), nil
	}
}
