package openapi

import (
	"context"
	"strings"
	"testing"
)

// The import never writes document text into a field the loader expands;
// the self-check is the net under that rule. A tool whose fixed query or
// header value would expand a variable the import did not write ends the
// import with an error naming the variable, even when the variable has a
// default, so a mapping bug cannot quietly publish a secret.
func TestSelfCheckRefusesAnExpansion(t *testing.T) {
	d, err := Read([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		baseURL        string
		query, headers map[string]string
		want           string // in the error; "" for none
	}{
		{"query-value", "", map[string]string{"q": "${GATEWAY_JWT_SECRET}"}, nil, "environment variable GATEWAY_JWT_SECRET, which the import did not write"},
		{"header-value-with-default", "", nil, map[string]string{"X-Mode": "${GATEWAY_APPROVAL_KEYS:-x}"}, "environment variable GATEWAY_APPROVAL_KEYS"},
		{"own-placeholders", "", map[string]string{"q": "{q}"}, nil, ""},
		{"operator-base-url", "${MY_BASE}/api", map[string]string{"q": "{q}"}, nil, ""},
		{"operator-base-url-host", "https://${MY_HOST:-api.example.com}/v1", map[string]string{"q": "{q}"}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			im := &importer{ctx: context.Background(), d: d, opts: Options{Upstream: "up", BaseURL: c.baseURL}, names: map[string]int{}}
			tl := &tool{name: "t", description: "d", kind: "read", method: "GET", path: "/x", opPath: "/x", query: c.query, headers: c.headers,
				input: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}
			im.tools = []*tool{tl}
			im.selfCheck()
			switch {
			case c.want == "" && im.err != nil:
				t.Fatalf("selfCheck = %v, want none", im.err)
			case c.want == "" && len(im.tools) != 1:
				t.Fatalf("selfCheck skipped the tool: %v", im.skipped)
			case c.want != "" && (im.err == nil || !strings.Contains(im.err.Error(), c.want)):
				t.Fatalf("selfCheck = %v, want an error with %q", im.err, c.want)
			}
		})
	}
}
