package openapi

import (
	"errors"
	"testing"
)

// A YAML error names several spots, each after "; ": all are mended in
// one pass. A schema reached only through itself is marked, not copied
// into itself forever.
func TestRepair(t *testing.T) {
	root := map[string]any{
		"components": map[string]any{"schemas": map[string]any{
			"A": map[string]any{"type": "string", "pattern": 12},
			"B": map[string]any{"type": "object", "examples": map[string]any{"a": 1}},
		}},
	}
	err := errors.New(`failed to unmarshal data: yaml error: yaml: construct errors: line 9: cannot unmarshal !!int into string field "pattern" in /components/schemas/A; line 12: cannot construct !!map into []interface {} in /components/schemas/B/examples`)
	if !repair(root, err) {
		t.Fatal("repair changed nothing")
	}
	schemas := root["components"].(map[string]any)["schemas"].(map[string]any)
	if _, ok := schemas["A"].(map[string]any)["pattern"]; ok {
		t.Error("A's pattern stayed")
	}
	if _, ok := schemas["B"].(map[string]any)["examples"]; ok {
		t.Error("B's examples stayed")
	}
	if repair(root, err) {
		t.Error("repairing what is mended changed something")
	}
	if repair(root, errors.New(`cannot unmarshal !!int into string field "pattern" in /no/such/place`)) {
		t.Error("a spot that is not there was mended")
	}

	const self = "#/paths/~1a/get/responses/200/content/application~1json/schema/properties/x"
	loop := map[string]any{"type": "object", "properties": map[string]any{"again": map[string]any{"$ref": self}}}
	doc := map[string]any{"paths": map[string]any{"/a": map[string]any{"get": map[string]any{"responses": map[string]any{"200": map[string]any{
		"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"properties": map[string]any{"x": loop}}}},
	}}}}}}
	if !repair(doc, errors.New(`bad data in "`+self+`" (expecting ref to schema object)`)) {
		t.Fatal("repair changed nothing")
	}
	again := loop["properties"].(map[string]any)["again"].(map[string]any)
	if unresolved(again) == "" {
		t.Errorf("a schema holding its own reference became %v, want a marker", again)
	}

	// Two schemas that lead to each other through references the model
	// cannot follow are marked, not copied into each other.
	const a, b = "#/components/schemas/X/definitions/a", "#/components/schemas/X/definitions/b"
	mutual := map[string]any{"components": map[string]any{"schemas": map[string]any{"X": map[string]any{"definitions": map[string]any{
		"a": map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{"$ref": b}}},
		"b": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": a}}},
	}}}}}
	if !repair(mutual, errors.New(`bad data in "`+a+`" (expecting ref to schema object)`)) {
		t.Fatal("repair changed nothing")
	}
	defs := mutual["components"].(map[string]any)["schemas"].(map[string]any)["X"].(map[string]any)["definitions"].(map[string]any)
	if got := defs["b"].(map[string]any)["properties"].(map[string]any)["a"].(map[string]any); unresolved(got) == "" {
		t.Errorf("a reference that leads back to itself became %v, want a marker", got)
	}

	// A response $ref to a schema becomes a response holding it; a
	// schema $ref to the same place stays.
	const bad = "#/components/schemas/Err"
	api := map[string]any{
		"components": map[string]any{"schemas": map[string]any{"Err": map[string]any{"type": "object"}}},
		"paths": map[string]any{"/a": map[string]any{"get": map[string]any{"responses": map[string]any{
			"200": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": bad}}}},
			"400": map[string]any{"$ref": bad},
		}}}},
	}
	if !repair(api, errors.New(`bad data in "`+bad+`" (expecting ref to response object)`)) {
		t.Fatal("repair changed nothing")
	}
	responses := api["paths"].(map[string]any)["/a"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)
	if _, ok := responses["400"].(map[string]any)["content"]; !ok {
		t.Errorf("the 400 response is %v, want one with content", responses["400"])
	}
	ok := responses["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	if ok["$ref"] != bad {
		t.Errorf("the 200 response's schema became %v", ok)
	}
}
