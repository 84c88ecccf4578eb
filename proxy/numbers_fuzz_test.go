package proxy

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
)

const fuzzNumbersCatalog = `
version: 1
server: { name: fuzz }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
upstreams:
  up: { base_url: "http://127.0.0.1:1/api" }
tools:
  - name: t
    description: Numbers of every kind.
    input:
      type: object
      properties:
        i: { type: integer, minimum: -5, maximum: 1e300 }
        x: { type: number, multipleOf: 0.5 }
        v: { type: array, items: { type: integer } }
      additionalProperties: { type: [number, array, object, string, boolean, "null"] }
    request: { upstream: up, path: /t }
`

// FuzzDecodeArgs feeds argument JSON through decoding, the number checks
// and canonicalisation, then the schema: no panic; every number that is
// accepted is canonical, finite, short and has the value the caller
// wrote; and the validator only ever sees such numbers (so never takes
// its big.Rat path through a huge exponent).
func FuzzDecodeArgs(f *testing.F) {
	cat, err := catalog.Parse("fuzz.yaml", []byte(fuzzNumbersCatalog), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return strings.Repeat("s", 32), true }})
	if err != nil {
		f.Fatal(err)
	}
	schema := cat.Tool("t").Schema
	for _, s := range []string{
		`{"x":1e999999}`, `{"x":-1e-999999}`, `{"v":[1,2.0,-0,1E2,0.5e1]}`,
		`{"i":9223372036854775807}`, `{"i":9223372036854775808}`, `{"i":1e19}`,
		`{"x":1.7976931348623157e308}`, `{"x":1.8e308}`, `{"x":5e-324}`, `{"x":2e-324}`,
		`{"x":0e999999}`, `{"a":{"b":[{"c":12.5e1}]}}`, `{"x":0.1111111111111111111111111111111111111111111111111111111111111111}`,
		`{}`, `null`, `[1]`, `{"x":"1e999999"}`, `{"x":-0.0,"i":-9223372036854775808}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, err := decodeArgs(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid arguments: ") && err.Error() != "arguments must be a JSON object" {
				t.Fatalf("decodeArgs(%q) = %v, an error of no known kind", raw, err)
			}
			return
		}
		var orig any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&orig) != nil || orig == nil {
			orig = map[string]any{}
		}
		checkCanonical(t, orig, args)
		_ = schema.Validate(args)
	})
}

// checkCanonical walks the caller's value and the accepted one together.
func checkCanonical(t *testing.T, orig, got any) {
	t.Helper()
	switch g := got.(type) {
	case json.Number:
		s := string(g)
		if c, msg := canonicalNumber(s); msg != "" || c != g {
			t.Fatalf("accepted %s is not canonical (%q, %q)", s, c, msg)
		}
		if len(s) > 24 {
			t.Fatalf("canonical %s is %d bytes long", s, len(s))
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			t.Fatalf("accepted %s is not a finite float64", s)
		}
		o := string(orig.(json.Number))
		if !strings.ContainsAny(o, ".eE") {
			if i, err := strconv.ParseInt(o, 10, 64); err != nil || strconv.FormatInt(i, 10) != s {
				t.Fatalf("integer %s became %s", o, s)
			}
			return
		}
		if of, _ := strconv.ParseFloat(o, 64); of != f {
			t.Fatalf("%s became %s, another value", o, s)
		}
	case map[string]any:
		for k, v := range g {
			checkCanonical(t, orig.(map[string]any)[k], v)
		}
	case []any:
		for i, v := range g {
			checkCanonical(t, orig.([]any)[i], v)
		}
	}
}

// BenchmarkDecodeArgsHugeNumbers refuses the 80-element array of 1e999999
// that would take a naive schema validator 2 s.
func BenchmarkDecodeArgsHugeNumbers(b *testing.B) {
	raw := []byte(`{"values":[` + strings.TrimSuffix(strings.Repeat("1e999999,", 80), ",") + `]}`)
	for b.Loop() {
		if _, err := decodeArgs(raw); err == nil {
			b.Fatal("accepted")
		}
	}
}
