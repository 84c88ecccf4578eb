package proxy_test

import (
	"strings"
	"testing"
)

// A catalog whose schema is open (no additionalProperties: false), with
// placeholders that share segments and a workspace placeholder in a query.
const openCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  up: { base_url: "${UP}/api", workspace: { header: X-Workspace-Id } }
limits: { page_size: { default: 20, max: 50 } }
tools:
  - name: get_file
    description: A file by name and extension.
    input:
      type: object
      properties: { name: { type: string }, ext: { type: string }, a: { type: string }, b: { type: string } }
      required: [name, ext, a, b]
    request:
      upstream: up
      path: "/ws/{workspace}/files/{name}.{ext}/{a}{b}/x"
      query: { tenant: "{workspace}" }
  - name: search
    description: Paged search.
    input:
      type: object
      properties: { page_size: { type: integer, minimum: 1 } }
    request: { upstream: up, path: /search, query: { limit: "{page_size}" } }
    paging: { page_size_argument: page_size }
`

func TestSharedSegmentsCannotMakeDotSegments(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, openCatalog, rec.srv.URL, nil)
	for _, args := range []string{
		`{"name":".","ext":"","a":"x","b":"y"}`,
		`{"name":"","ext":".","a":"x","b":"y"}`,
		`{"name":"a","ext":"b","a":".","b":"."}`,
		`{"name":"a","ext":"b","a":"","b":""}`,
		`{"name":"a","ext":"b","a":"","b":"."}`,
	} {
		if res := call(t, c, reader, "get_file", args); !res.IsError {
			t.Errorf("get_file(%s) = %s, want a tool error", args, res.Text)
		}
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("the upstream received %d requests: %+v", n, rec.all())
	}
	if res := call(t, c, reader, "get_file", `{"name":"report","ext":"pdf","a":".","b":"x"}`); res.IsError {
		t.Fatalf("a legitimate call failed: %s", res.Text)
	}
	if got := rec.all()[0].Path; got != "/api/ws/acme/files/report.pdf/.x/x" {
		t.Errorf("path = %q", got)
	}
}

func TestArgumentsNamedLikeReservedPlaceholdersAreIgnored(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, openCatalog, rec.srv.URL, nil)
	for _, forged := range []string{`"victim"`, `["victim"]`, `["acme","victim"]`, `{"x":"victim"}`} {
		res := call(t, c, reader, "get_file", `{"name":"r","ext":"t","a":"x","b":"y","workspace":`+forged+`,"actor":`+forged+`}`)
		if res.IsError {
			t.Fatalf("call: %s", res.Text)
		}
	}
	for _, r := range rec.all() {
		if strings.Contains(r.Path+r.Query+r.Header.Get("X-Workspace-Id"), "victim") {
			t.Errorf("a forged workspace reached the upstream: %s?%s %v", r.Path, r.Query, r.Header)
		}
		if r.Query != "tenant=acme" {
			t.Errorf("query = %q, want the token's workspace", r.Query)
		}
	}
}

func TestPageSizeClampedWhateverItsSpelling(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, openCatalog, rec.srv.URL, nil)
	cases := map[string]string{
		`{}`:                      "limit=20",
		`{"page_size":7}`:         "limit=7",
		`{"page_size":7.0}`:       "limit=7",
		`{"page_size":1e9}`:       "limit=50",
		`{"page_size":1000000.0}`: "limit=50",
	}
	for args, want := range cases {
		before := rec.count()
		if res := call(t, c, reader, "search", args); res.IsError {
			t.Fatalf("search(%s): %s", args, res.Text)
		}
		if got := rec.all()[before].Query; got != want {
			t.Errorf("search(%s) sent %q, want %q", args, got, want)
		}
	}
	// Past int64 an integer is refused, not clamped: its value
	// is not one the gateway can forward faithfully.
	for _, args := range []string{`{"page_size":99999999999999999999999}`, `{"page_size":1e23}`} {
		before := rec.count()
		if res := call(t, c, reader, "search", args); !res.IsError || !strings.Contains(res.Text, `argument "page_size"`) {
			t.Errorf("search(%s) = %q, want an invalid-arguments error", args, res.Text)
		}
		if rec.count() != before {
			t.Errorf("search(%s) reached the upstream", args)
		}
	}
}

func TestPayloadOverTheCapIsRefusedNotSized(t *testing.T) {
	rec := outputUpstream(t)
	p := authzPrincipalWithSensitive()
	c := newOutputCore(t, rec.srv.URL, nil)
	res := call(t, c, p, "get_payload", `{"n":"5242880"}`) // 5 MiB against a 4 MiB cap
	if !res.IsError || !strings.Contains(res.Text, "max_response_bytes") {
		t.Errorf("a payload over max_response_bytes = %.200s, want the over-cap tool error", res.Text)
	}
}
