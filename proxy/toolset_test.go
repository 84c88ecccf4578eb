package proxy_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

const toolsetCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  up: { base_url: "${UP}", actor_header: X-Actor }
toolsets:
  reads: { kinds: [read] }
  one: { tools: [get_job] }
tools:
  - name: get_job
    description: Get a job.
    request: { upstream: up, path: /jobs/1 }
  - name: list_jobs
    description: List jobs.
    request: { upstream: up, path: /jobs }
  - name: delete_job
    description: Delete a job.
    kind: write
    gate: write
    request: { upstream: up, method: DELETE, path: /jobs/1 }
`

// A toolset serves only the tools it selects: another tool of the
// catalog is listed nowhere in it and called through it is an unknown
// tool, exactly as a name no tool has, and nothing is sent. An unknown
// toolset is an error of its own; "" is the whole catalog.
func TestToolsetServesOnlyItsTools(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, toolsetCatalog, rec.srv.URL, nil)
	p := authz.NewPrincipal("alice", "acme", "alice", []string{"write"}, nil)
	ctx := context.Background()
	for set, want := range map[string]string{"": "get_job,list_jobs,delete_job", "reads": "get_job,list_jobs", "one": "get_job"} {
		l, err := c.ListIn(ctx, p, set)
		var names []string
		for _, t := range l {
			names = append(names, t.Tool.Name)
		}
		if err != nil || strings.Join(names, ",") != want {
			t.Errorf("toolset %q lists %v, %v; want %s", set, names, err, want)
		}
	}
	for _, tc := range []struct{ set, tool string }{{"one", "list_jobs"}, {"one", "delete_job"}, {"reads", "delete_job"}} {
		if res, err := c.CallIn(ctx, p, tc.set, tc.tool, nil); !errors.Is(err, proxy.ErrUnknownTool) {
			t.Errorf("%s called through toolset %q = %+v, %v; want an unknown tool", tc.tool, tc.set, res, err)
		}
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("the upstream received %d requests for tools outside the toolset, want 0", n)
	}
	if res, err := c.CallIn(ctx, p, "one", "get_job", nil); err != nil || res.IsError {
		t.Errorf("get_job through toolset one = %+v, %v; want it served", res, err)
	}
	if _, err := c.CallIn(ctx, p, "nope", "get_job", nil); !errors.Is(err, proxy.ErrUnknownToolset) {
		t.Errorf("a call through an undeclared toolset = %v, want ErrUnknownToolset", err)
	}
	if _, err := c.ListIn(ctx, p, "nope"); !errors.Is(err, proxy.ErrUnknownToolset) {
		t.Errorf("the list of an undeclared toolset = %v, want ErrUnknownToolset", err)
	}
	for set, want := range map[string]bool{"": true, "one": true, "nope": false} {
		if got := c.HasToolset(set); got != want {
			t.Errorf("HasToolset(%q) = %v, want %v", set, got, want)
		}
	}
}
