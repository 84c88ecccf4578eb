package catalog

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The fast path of the load's schema check: a schema plainSchema passes
// is one the compiler accepts, and every schema the compiler refuses is
// left to it (so its error, with its location, is what the operator
// reads).
func TestPlainSchemaAgreesWithTheCompiler(t *testing.T) {
	for _, c := range []struct {
		schema string
		plain  bool // whether plainSchema vouches for it
		valid  bool // whether the compiler accepts it
	}{
		// What imports write: plain and valid.
		{`{"type":"object","properties":{"id":{"type":"string","minLength":1,"pattern":"^[a-z0-9-]+$","description":"the id"}},"required":["id"],"additionalProperties":false}`, true, true},
		{`{"type":"object","properties":{"state":{"type":"string","enum":["queued","running"]},"limit":{"type":"integer","minimum":1,"maximum":500},"tags":{"type":"array","items":{"type":"string"},"maxItems":10,"uniqueItems":true},"force":{"type":"boolean","default":false}}}`, true, true},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]},"b":{"oneOf":[{"const":1},{"const":"x"}]},"c":{"allOf":[true]},"d":{"not":{"type":"null"}}}}`, true, true},
		{`{"type":["object","null"],"properties":{"x":true,"y":false},"additionalProperties":{"type":"string","format":"date-time"}}`, true, true},
		{`{"type":"object","properties":{"n":{"type":"number","multipleOf":0.5,"exclusiveMinimum":0,"exclusiveMaximum":1e3}}}`, true, true},
		{`{"type":"object","properties":{"l":{"type":"array","prefixItems":[{"type":"string"}],"items":false,"contains":{"const":1},"minContains":1,"maxContains":2.0}}}`, true, true},
		{`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]},"else":{},"propertyNames":{"maxLength":8},"minProperties":0,"maxProperties":9}`, true, true},
		{`{"type":"object","title":"t","deprecated":true,"readOnly":false,"writeOnly":false,"examples":[{}],"example":{"any":"thing"},"nullable":true,"x-vendor":[1,2]}`, true, true},
		{`{"type":"object","properties":{"s":{"type":"string","format":"no-such-format"}}}`, true, true},
		// Valid, but left to the compiler: references, other drafts,
		// keywords not checked here.
		{`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`, false, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, false, true},
		{`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`, false, true},
		{`{"type":"object","dependentRequired":{"a":["b"]}}`, false, true},
		{`{"type":"object","unevaluatedProperties":false}`, false, true},
		// Invalid: never vouched for.
		{`{"type":"strin"}`, false, false},
		{`{"type":[]}`, false, false},
		{`{"type":["string","string"]}`, false, false},
		{`{"type":["string","text"]}`, false, false},
		{`{"type":5}`, false, false},
		{`{"type":"object","required":["a","a"]}`, false, false},
		{`{"type":"object","required":"a"}`, false, false},
		{`{"type":"object","required":[1]}`, false, false},
		{`{"type":"string","minLength":-1}`, false, false},
		{`{"type":"string","minLength":1.5}`, false, false},
		{`{"type":"string","maxLength":"3"}`, false, false},
		{`{"type":"number","multipleOf":0}`, false, false},
		{`{"type":"number","multipleOf":-2}`, false, false},
		{`{"type":"number","minimum":"1"}`, false, false},
		{`{"type":"string","pattern":"("}`, false, false},
		{`{"type":"string","pattern":5}`, false, false},
		{`{"type":"object","properties":[]}`, false, false},
		{`{"type":"object","properties":{"a":5}}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"nope"}}}}}`, false, false},
		{`{"type":"array","items":[{"type":"string"}]}`, false, false},
		{`{"anyOf":[]}`, false, false},
		{`{"anyOf":{}}`, false, false},
		{`{"oneOf":[5]}`, false, false},
		{`{"enum":"a"}`, false, false},
		{`{"examples":"a"}`, false, false},
		{`{"description":5}`, false, false},
		{`{"format":5}`, false, false},
		{`{"uniqueItems":"yes"}`, false, false},
		{`{"deprecated":"no"}`, false, false},
		{`{"not":"x"}`, false, false},
		{`{"additionalProperties":"x"}`, false, false},
		{`{"$ref":5}`, false, false},
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.schema), &m); err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		js, err := marshalJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		valid := checkSchema(js, "catalog:///plain/input.json") == nil
		if valid != c.valid {
			t.Errorf("%s: the compiler says valid=%v, the table %v", c.schema, valid, c.valid)
		}
		if got := plainSchema(m); got != c.plain {
			t.Errorf("%s: plainSchema = %v, want %v", c.schema, got, c.plain)
		}
	}
}

// The catalog's own number kinds (YAML decodes integers as int, int64
// or uint64) are numbers to plainSchema too.
func TestPlainSchemaTakesDecodedIntegers(t *testing.T) {
	m := map[string]any{"type": "object", "minProperties": int64(1), "maxProperties": uint64(9),
		"properties": map[string]any{"s": map[string]any{"type": "string", "minLength": 2, "maxLength": int64(8)}}}
	if !plainSchema(m) {
		t.Fatal("plainSchema refused integer bounds decoded as int, int64 and uint64")
	}
	m["minProperties"] = -1
	if plainSchema(m) {
		t.Fatal("plainSchema took minProperties: -1")
	}
	deep := map[string]any{"type": "string"}
	for range maxPlainDepth + 2 {
		deep = map[string]any{"type": "array", "items": deep}
	}
	if plainSchema(deep) {
		t.Fatal("plainSchema followed a schema nested deeper than its bound")
	}
}

// FuzzPlainSchema holds plainSchema to the compiler: whatever it vouches
// for compiles against the metaschema.
func FuzzPlainSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"id":{"type":"string","minLength":1,"pattern":"^a"}},"required":["id"],"additionalProperties":false}`,
		`{"type":["integer","null"],"minimum":-5,"multipleOf":3,"enum":[1,null]}`,
		`{"anyOf":[{"type":"string"},{"items":{"type":"array","prefixItems":[true]}}],"not":false}`,
		`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]},"x-a":{"$ref":"nowhere"}}`,
		`{"type":"string","pattern":"\\p{L}+","format":"uri"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		if len(schema) > 4096 || !bytes.HasPrefix(bytes.TrimSpace(schema), []byte("{")) {
			return
		}
		var m map[string]any
		if json.Unmarshal(schema, &m) != nil || m == nil || !plainSchema(m) {
			return
		}
		js, err := marshalJSON(m)
		if err != nil {
			return
		}
		if errs := checkSchema(js, "catalog:///plain/input.json"); errs != nil {
			t.Fatalf("plainSchema vouched for %s, which the compiler refuses: %s", js, errs[0].msg)
		}
	})
}
