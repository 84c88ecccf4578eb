package proxy_test

import (
	"testing"
)

// filterCatalog posts a query body shaped like Prefect's /flow_runs/filter:
// each optional argument sits deep inside a filter.
const filterCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  up: { base_url: "${UP}", timeout: 2s, workspace: { header: X-Workspace-Id } }
tools:
  - name: filter_runs
    description: Flow runs matching a filter.
    input:
      type: object
      properties:
        id: { type: [string, "null"] }
        state: { type: string }
        tags: { type: array, items: { type: string } }
      additionalProperties: false
    request:
      upstream: up
      method: POST
      path: /flow_runs/filter
      body:
        flow_runs:
          id: { any_: ["{id}"] }
          state: { type: { any_: ["{state}"] } }
          tags: { all_: "{tags}" }
        sort: ID_DESC
        deployments: {}
        exclude: []
        owner: { name: "{workspace}" }
`

func TestAbsentOptionalArgumentsLeaveNoEmptyContainer(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, filterCatalog, rec.srv.URL, nil)
	for _, tc := range []struct{ name, args, want string }{
		{"every-argument-given", `{"id":"r1","state":"FAILED","tags":["prod"]}`,
			`{"deployments":{},"exclude":[],"flow_runs":{"id":{"any_":["r1"]},"state":{"type":{"any_":["FAILED"]}},"tags":{"all_":["prod"]}},"owner":{"name":"acme"},"sort":"ID_DESC"}`},
		{"an-absent-id-drops-its-whole-filter", `{"state":"FAILED"}`,
			`{"deployments":{},"exclude":[],"flow_runs":{"state":{"type":{"any_":["FAILED"]}}},"owner":{"name":"acme"},"sort":"ID_DESC"}`},
		{"nothing-given-drops-every-filter-but-keeps-literal-empties", `{}`,
			`{"deployments":{},"exclude":[],"owner":{"name":"acme"},"sort":"ID_DESC"}`},
		{"an-explicit-null-is-sent", `{"id":null}`,
			`{"deployments":{},"exclude":[],"flow_runs":{"id":{"any_":[null]}},"owner":{"name":"acme"},"sort":"ID_DESC"}`},
		{"an-empty-array-argument-is-the-callers-value", `{"tags":[]}`,
			`{"deployments":{},"exclude":[],"flow_runs":{"tags":{"all_":[]}},"owner":{"name":"acme"},"sort":"ID_DESC"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res := call(t, c, reader, "filter_runs", tc.args); res.IsError {
				t.Fatalf("filter_runs(%s) = %q", tc.args, res.Text)
			}
			reqs := rec.all()
			if got := reqs[len(reqs)-1].Body; got != tc.want {
				t.Errorf("filter_runs(%s) sent\n%s\nwant\n%s", tc.args, got, tc.want)
			}
		})
	}
}
