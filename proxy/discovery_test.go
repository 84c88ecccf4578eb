package proxy_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// discoveryCatalog has six gated reads, two tags each, behind one gate.
const discoveryCatalog = `version: 1
server: { name: discovery }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  view: { scopes: [view] }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
discovery: { mode: %s }
tools:
  - { name: list_jobs, description: Lists the jobs., gate: view, tags: [jobs, ops], request: { upstream: up, method: GET, path: /jobs } }
  - { name: get_job, description: Returns a job., gate: view, tags: [jobs, ops], request: { upstream: up, method: GET, path: /job } }
  - { name: list_job_runs, description: Lists the runs of the jobs., gate: view, tags: [jobs, runs], request: { upstream: up, method: GET, path: /runs } }
  - { name: list_job_logs, description: Lists the logs of the jobs., gate: view, tags: [jobs, logs], request: { upstream: up, method: GET, path: /logs } }
  - { name: list_job_queues, description: Lists the queues of the jobs., gate: view, tags: [jobs, queues], request: { upstream: up, method: GET, path: /queues } }
  - { name: list_job_workers, description: Lists the workers of the jobs., gate: view, tags: [jobs, workers], request: { upstream: up, method: GET, path: /workers } }
`

func discoveryCore(t *testing.T, mode string) *proxy.Core {
	t.Helper()
	return searchCore(t, "discovery.yaml", strings.Replace(discoveryCatalog, "%s", mode, 1))
}

func listedNames(ls []*proxy.Listed) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Tool.Name)
	}
	return out
}

// With discovery on, a caller who may see tools is listed the two meta
// tools; a caller who may see none is listed nothing, not the meta tools.
func TestDiscoveryListsMetaToolsOnlyToACallerWithTools(t *testing.T) {
	core := discoveryCore(t, "on")
	ctx := context.Background()
	viewer := authz.NewPrincipal("v", "acme", "", []string{"view"}, nil)
	if got, want := listedNames(core.List(ctx, viewer)), []string{catalog.SearchToolsName, catalog.CallToolName}; !slices.Equal(got, want) {
		t.Errorf("a viewer is listed %v, want %v", got, want)
	}
	nobody := authz.NewPrincipal("n", "acme", "", nil, nil)
	if got := listedNames(core.List(ctx, nobody)); len(got) != 0 {
		t.Errorf("a caller who may see no tool is listed %v, want nothing", got)
	}
	off := discoveryCore(t, "off")
	full := off.List(ctx, viewer)
	if len(full) != 6 {
		t.Fatalf("discovery off lists %v, want the six tools", listedNames(full))
	}
	// A full listing carries each tool's search hint, title and tags.
	if !strings.Contains(string(full[0].MCP), `"anthropic/searchHint":"jobs, ops"`) {
		t.Errorf("list_jobs is listed as %s, want its tags as the search hint", full[0].MCP)
	}
}

// A search may name tags or a kind instead of words; with neither it is
// refused. An absent limit is the default, a given one is kept.
func TestSearchFiltersAndLimits(t *testing.T) {
	core := discoveryCore(t, "on")
	search := func(q proxy.SearchQuery) ([]string, error) {
		found, err := core.SearchCatalog(q)
		return listedNames(found), err
	}
	if got, err := search(proxy.SearchQuery{Tags: []string{"logs"}}); err != nil || !slices.Equal(got, []string{"list_job_logs"}) {
		t.Errorf("tags alone found %v, %v; want list_job_logs", got, err)
	}
	if got, err := search(proxy.SearchQuery{Kind: catalog.KindRead, Limit: 20}); err != nil || len(got) != 6 {
		t.Errorf("a kind alone found %v, %v; want the six reads", got, err)
	}
	if _, err := search(proxy.SearchQuery{Query: "   "}); !errors.Is(err, proxy.ErrBadSearch) {
		t.Errorf("a query with no words, tags or kind: %v, want ErrBadSearch", err)
	}
	if got, err := search(proxy.SearchQuery{Query: "jobs"}); err != nil || len(got) != proxy.DefaultSearchLimit {
		t.Errorf("no limit found %d tools (%v), want the default %d", len(got), err, proxy.DefaultSearchLimit)
	}
	if got, err := search(proxy.SearchQuery{Query: "jobs", Limit: 2}); err != nil || len(got) != 2 {
		t.Errorf("limit 2 found %d tools (%v), want 2", len(got), err)
	}
}
