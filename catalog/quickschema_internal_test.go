package catalog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// quickCase compiles a schema given as JSON the way a tool's input schema
// is, and returns it with its quick form (nil when it has none).
func quickCase(t testing.TB, schema string) (inputSchema, *quick, bool) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(schema), &m); err != nil || m == nil {
		return inputSchema{}, nil, false
	}
	v, _, errs := compileSchema(m, "catalog:///quick/input.json")
	if errs != nil {
		return inputSchema{}, nil, false
	}
	is := v.(inputSchema)
	if _, err := is.schema(); err != nil {
		return inputSchema{}, nil, false
	}
	return is, is.q, true
}

func decodeNumbers(t testing.TB, value string) (any, bool) {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(value))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

// The shapes tool schemas usually have get a quick form; anything it does
// not check leaves the schema to the validator alone.
func TestQuickSchemaForms(t *testing.T) {
	for _, c := range []struct {
		schema string
		quick  bool
	}{
		{`{"type":"object","properties":{"id":{"type":"string","minLength":1,"pattern":"^[a-z0-9-]+$","description":"the id"}},"required":["id"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"state":{"type":"string","enum":["queued","running"]},"limit":{"type":"integer","minimum":1,"maximum":500},"tags":{"type":"array","items":{"type":"string"},"maxItems":10},"force":{"type":"boolean","default":false}}}`, true},
		{`{"type":"object","additionalProperties":{"type":["string","null"]}}`, true},
		{`{"type":"object","properties":{"x":true}}`, true},
		{`{"type":"object","properties":{"when":{"type":"string","format":"date-time"}}}`, false},
		{`{"type":"object","properties":{"n":{"type":"number","multipleOf":0.5}}}`, false},
		{`{"type":"object","properties":{"n":{"enum":[1,2]}}}`, false},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, false},
		{`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`, false},
		{`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, false},
		{`{"type":"object","properties":{"n":{"type":"number","maximum":0.1}}}`, false}, // 0.1 is not exact in float64
	} {
		_, q, ok := quickCase(t, c.schema)
		if !ok {
			t.Fatalf("%s: does not compile", c.schema)
		}
		if (q != nil) != c.quick {
			t.Errorf("%s: quick form %v, want %v", c.schema, q != nil, c.quick)
		}
	}
}

// Where the quick form answers, it answers as the validator does; where it
// cannot be sure, the validator decides and its words reach the caller.
func TestQuickSchemaAgreesWithTheValidator(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"id":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-z]+$"},
		"state":{"type":"string","enum":["queued","running"]},
		"limit":{"type":"integer","minimum":1,"exclusiveMaximum":500},
		"ratio":{"type":"number"},
		"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2},
		"meta":{"type":"object","additionalProperties":{"type":"boolean"}}},
		"required":["id"],"additionalProperties":false}`
	is, q, _ := quickCase(t, schema)
	if q == nil {
		t.Fatal("no quick form")
	}
	for _, c := range []struct {
		value string
		quick bool   // the quick form is sure it is valid
		err   string // the validator's error; "" when valid
	}{
		{`{"id":"ab"}`, true, ""},
		{`{"id":"abcd","state":"running","limit":499,"ratio":0.25,"tags":["a","b"],"meta":{"x":true}}`, true, ""},
		{`{"id":"ab","ratio":1e300}`, true, ""},
		{`{"id":"ab","limit":1.0}`, false, ""}, // an integer, written so; the validator reads it
		{`{"id":"ab","limit":5e1}`, false, ""}, // likewise
		{`{"id":"ab","limit":500}`, false, `argument "limit": must be less than 500`},
		{`{"id":"ab","limit":0}`, false, `argument "limit": must be at least 1`},
		{`{"id":"ab","limit":1.5}`, false, `argument "limit": want integer, got number`},
		{`{"id":"ab","limit":12345678901234567890}`, false, `argument "limit"`},
		{`{"id":"a"}`, false, `argument "id": must be at least 2 characters long`},
		{`{"id":"abcde"}`, false, `argument "id": must be at most 4 characters long`},
		{`{"id":"AB"}`, false, `argument "id": must match the pattern`},
		{`{"id":"ab","state":"done"}`, false, `argument "state": value must be one of "queued", "running"`},
		{`{"id":"ab","tags":[]}`, false, `argument "tags": must have at least 1 items`},
		{`{"id":"ab","tags":[1]}`, false, `argument "tags[0]": want string, got number`},
		{`{"id":"ab","meta":{"x":"yes"}}`, false, `argument "meta.x": want boolean, got string`},
		{`{"id":"ab","extra":1}`, false, `unexpected argument "extra"`},
		{`{}`, false, `argument "id": missing required argument`},
		{`{"id":null}`, false, `argument "id": want string, got null`},
	} {
		v, ok := decodeNumbers(t, c.value)
		if !ok {
			t.Fatalf("%s: not JSON", c.value)
		}
		if got := q.valid(v); got != c.quick {
			t.Errorf("%s: quick %v, want %v", c.value, got, c.quick)
		}
		err := is.Validate(v)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v, want valid", c.value, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.value, err, c.err)
		}
	}
}

// FuzzQuickSchema holds the quick form to the validator: it may say it is
// unsure of a valid value, never that an invalid one is valid.
func FuzzQuickSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"id":{"type":"string","minLength":1,"maxLength":3,"pattern":"^a"}},"required":["id"],"additionalProperties":false}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":-5,"maximum":9007199254740992},"f":{"type":["number","null"],"exclusiveMinimum":0}}}`,
		`{"type":"object","properties":{"e":{"enum":["a",true,null]},"l":{"type":"array","items":{"type":"integer"},"maxItems":2}},"additionalProperties":{"type":"string"}}`,
		`{"type":"object","properties":{"o":{"type":"object","properties":{"x":false},"required":["y"]}}}`,
	} {
		for _, v := range []string{`{}`, `{"id":"a"}`, `{"n":-5,"f":null}`, `{"n":9007199254740993}`, `{"e":"a","l":[1,2]}`, `{"o":{"y":1}}`, `{"z":"ü"}`, `{"n":-0}`, `{"n":1E400}`} {
			f.Add([]byte(s), []byte(v))
		}
	}
	f.Fuzz(func(t *testing.T, schema, value []byte) {
		if len(schema) > 4096 || len(value) > 4096 || !json.Valid(schema) || !bytes.HasPrefix(bytes.TrimSpace(schema), []byte("{")) {
			return
		}
		is, q, ok := quickCase(t, string(schema))
		if !ok || q == nil {
			return
		}
		v, ok := decodeNumbers(t, string(value))
		if !ok {
			return
		}
		s, _ := is.schema()
		if q.valid(v) {
			if err := s.Validate(v); err != nil {
				t.Fatalf("schema %s, value %s: quick says valid, the validator: %v", schema, value, err)
			}
		}
	})
}
