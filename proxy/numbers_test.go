package proxy_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/gateway/proxy"
)

// numbersCatalog puts numbers in a path, a query and a JSON body, nested
// too, under integer and number schemas.
const numbersCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  up: { base_url: "${UP}", workspace: { header: X-Workspace-Id }, actor_header: X-Actor }
tools:
  - name: get_point
    description: A point.
    input:
      type: object
      properties:
        id: { type: integer }
        x: { type: number }
        n: { type: integer }
        values: { type: array, items: { type: integer } }
        floats: { type: array, items: { type: number } }
        meta: { type: object }
      required: [id]
      additionalProperties: false
    request:
      upstream: up
      path: /points/{id}
      query: { x: "{x}", n: "{n}", v: "{values}", f: "{floats}" }
  - name: set_point
    description: Set a point.
    kind: write
    gate: write
    input:
      type: object
      properties:
        id: { type: integer }
        x: { type: number }
        values: { type: array, items: { type: integer } }
        meta: { type: object }
      required: [id]
      additionalProperties: false
    request:
      upstream: up
      method: POST
      path: /points/{id}
      body: { x: "{x}", values: "{values}", meta: "{meta}", label: "p{id}" }
`

func TestNumbersOutOfRangeAreRefusedWithTheirPath(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, numbersCatalog, rec.srv.URL, nil)
	long := "0." + strings.Repeat("1", 63) // 65 bytes: one over the cap
	cases := []struct{ args, want string }{
		{`{"id":1,"x":1e999999}`, `invalid arguments: argument "x": number 1e999999 is out of range`},
		{`{"id":1,"x":-1e999999}`, `argument "x": number -1e999999 is out of range`},
		{`{"id":1,"x":1e-999999}`, `argument "x": number 1e-999999 is out of range`},
		{`{"id":1,"x":1.8e308}`, `argument "x": number 1.8e308 is out of range`},
		{`{"id":1,"x":2e-324}`, `argument "x": number 2e-324 is out of range`},
		// Underflow is told by the mantissa's digits, each of 1 to 9.
		{`{"id":1,"x":9e-400}`, `argument "x": number 9e-400 is out of range`},
		{`{"id":1,"x":0.09E-400}`, `argument "x": number 0.09E-400 is out of range`},
		{`{"id":1,"x":1e-400}`, `argument "x": number 1e-400 is out of range`},
		{`{"id":1,"values":[1,2,3,1e999999]}`, `invalid arguments: argument "values[3]": number 1e999999 is out of range`},
		{`{"id":1,"meta":{"a":[{"b":1E+999999}]}}`, `argument "meta.a[0].b": number 1E+999999 is out of range`},
		{`{"id":9223372036854775808}`, `argument "id": integer 9223372036854775808 is outside the 64-bit range`},
		{`{"id":-9223372036854775809}`, `argument "id": integer -9223372036854775809 is outside the 64-bit range`},
		{`{"id":1,"x":123456789012345678901234567890}`, `argument "x": integer 123456789012345678901234567890 is outside the 64-bit range`},
		{`{"id":1,"x":` + long + `}`, `argument "x": number literal of 65 bytes is longer than the 64-byte limit`},
		// Integral in value but spelt as a float: JSON Schema counts it an
		// integer, so an integer argument must still fit 64 bits.
		{`{"id":1e19}`, `argument "id": must be an integer from -9223372036854775808 to 9223372036854775807`},
		{`{"id":1,"values":[-9.3e18]}`, `argument "values[0]": must be an integer from`},
	}
	for _, tc := range cases {
		res := call(t, c, reader, "get_point", tc.args)
		if !res.IsError || !strings.Contains(res.Text, tc.want) {
			t.Errorf("get_point(%.80s) = %q, want an error containing %q", tc.args, res.Text, tc.want)
		}
		res = call(t, c, writer, "set_point", tc.args)
		if !res.IsError {
			t.Errorf("set_point(%.80s) = %q, want an error", tc.args, res.Text)
		}
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("the upstream received %d requests: %+v", n, rec.all())
	}
}

func TestNumbersAtTheirLimitsAreAccepted(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, numbersCatalog, rec.srv.URL, nil)
	exact := "0." + strings.Repeat("1", 62) // 64 bytes: exactly the cap
	cases := []struct{ args, path, query string }{
		{`{"id":9223372036854775807}`, "/points/9223372036854775807", ""},
		{`{"id":-9223372036854775808}`, "/points/-9223372036854775808", ""},
		{`{"id":1,"x":1.7976931348623157e308}`, "/points/1", "x=1.7976931348623157e%2B308"},
		{`{"id":1,"x":-1.7976931348623157e308}`, "/points/1", "x=-1.7976931348623157e%2B308"},
		{`{"id":1,"x":5e-324}`, "/points/1", "x=5e-324"},
		{`{"id":1,"x":0e999999}`, "/points/1", "x=0"},
		{`{"id":1,"x":9223372036854775807}`, "/points/1", "x=9223372036854775807"},
		{`{"id":1,"x":1e19}`, "/points/1", "x=1e%2B19"},
		{`{"id":1,"x":` + exact + `}`, "/points/1", "x=0.1111111111111111"},
		{`{"id":9.223372036854775e18}`, "/points/9223372036854774784", ""},
	}
	for _, tc := range cases {
		before := rec.count()
		res := call(t, c, reader, "get_point", tc.args)
		if res.IsError {
			t.Errorf("get_point(%s) = %q, want success", tc.args, res.Text)
			continue
		}
		got := rec.all()[before]
		if got.Path != tc.path || got.Query != tc.query {
			t.Errorf("get_point(%s) sent %s?%s, want %s?%s", tc.args, got.Path, got.Query, tc.path, tc.query)
		}
	}
}

func TestNumbersReachTheUpstreamInCanonicalForm(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, numbersCatalog, rec.srv.URL, nil)
	res := call(t, c, reader, "get_point", `{"id":1e3,"x":20.0,"n":-0,"values":[1E2,-0.0,7],"floats":[2.50,0.1e1,1.5e-7,1e21]}`)
	if res.IsError {
		t.Fatalf("get_point: %s", res.Text)
	}
	got := rec.all()[0]
	if want := "/points/1000"; got.Path != want {
		t.Errorf("path = %q, want %q", got.Path, want)
	}
	if want := "f=2.5&f=1&f=1.5e-07&f=1e%2B21&n=0&v=100&v=0&v=7&x=20"; got.Query != want {
		t.Errorf("query = %q, want %q", got.Query, want)
	}

	res = call(t, c, writer, "set_point", `{"id":0.5e1,"x":-2.000,"values":[3e0,4.0E+1],"meta":{"deep":[{"n":12.5e1,"m":1e-3}]}}`)
	if res.IsError {
		t.Fatalf("set_point: %s", res.Text)
	}
	got = rec.all()[1]
	if want := "/points/5"; got.Path != want {
		t.Errorf("path = %q, want %q", got.Path, want)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got.Body), &body); err != nil {
		t.Fatalf("body %q: %v", got.Body, err)
	}
	for k, want := range map[string]string{
		"x":      `-2`,
		"values": `[3,40]`,
		"meta":   `{"deep":[{"m":0.001,"n":125}]}`,
		"label":  `"p5"`,
	} {
		if string(body[k]) != want {
			t.Errorf("body %s = %s, want %s (body %s)", k, body[k], want, got.Body)
		}
	}
}

func TestEightyHugeNumbersAreRefusedQuickly(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, numbersCatalog, rec.srv.URL, nil)
	args := `{"id":1,"values":[` + strings.TrimSuffix(strings.Repeat("1e999999,", 80), ",") + `]}`
	start := time.Now()
	res := call(t, c, reader, "get_point", args)
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing 80 huge numbers took %s, want well under 1s", d)
	}
	if !res.IsError || !strings.Contains(res.Text, `argument "values[0]"`) {
		t.Errorf("result = %q, want the first huge number refused", res.Text)
	}
	if n := rec.count(); n != 0 {
		t.Errorf("the upstream received %d requests", n)
	}
}

// exchanges counts upstream exchanges the core reports.
type exchanges struct {
	mu sync.Mutex
	n  int
}

func (e *exchanges) ToolCall(string, string, time.Duration) {}
func (e *exchanges) Upstream(string, int, time.Duration) {
	e.mu.Lock()
	e.n++
	e.mu.Unlock()
}

func TestCallOfAClientThatLeftDoesNoWork(t *testing.T) {
	rec := newRecorder(t, nil)
	m := &exchanges{}
	cat := parseCore(t, numbersCatalog, rec.srv.URL, nil).Catalog()
	c, err := proxy.New(cat, &proxy.Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct{ tool, args string }{
		{"get_point", `{"id":1,"x":2}`},
		{"set_point", `{"id":1,"x":2}`},
	} {
		res, err := c.Call(ctx, writer, tc.tool, []byte(tc.args))
		if err != nil {
			t.Fatalf("Call: %v", err)
		}
		if !res.IsError || !strings.Contains(res.Text, "client went away") {
			t.Errorf("%s with a cancelled context = %q, want an error saying the client went away", tc.tool, res.Text)
		}
	}
	if n := rec.count(); n != 0 {
		t.Errorf("the upstream received %d requests", n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n != 0 {
		t.Errorf("%d upstream exchanges were attempted for calls whose client had left", m.n)
	}
}

// The int64 edges of the canonical form: -2⁶³ spelt as a float is an
// integer within int64 and sent as one; 2⁶³ is past it and keeps its float
// spelling (never wrapped round to a negative integer).
func TestCanonicalFormAtTheInt64Edges(t *testing.T) {
	rec := newRecorder(t, nil)
	c := parseCore(t, numbersCatalog, rec.srv.URL, nil)
	for x, want := range map[string]string{
		"-9223372036854775808.0": "x=-9223372036854775808",
		"-9.223372036854775e18":  "x=-9223372036854774784",
		"9223372036854775808.0":  "x=9.223372036854776e%2B18",
		"9.223372036854775e18":   "x=9223372036854774784",
	} {
		before := rec.count()
		if res := call(t, c, reader, "get_point", `{"id":1,"x":`+x+`}`); res.IsError {
			t.Fatalf("get_point(x=%s): %s", x, res.Text)
		}
		if got := rec.all()[before].Query; got != want {
			t.Errorf("x=%s sent %q, want %q", x, got, want)
		}
	}
}
