package openapi

import (
	"errors"
	"fmt"
	"strings"
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

// A schema that points at the next from several places, each through a
// reference the model cannot follow, would be copied exponentially
// often (4 places, 9 deep: 4^9 copies of the last from a few
// kilobytes): mending copies at most maxCopiedNodes values in all and
// marks the references past that, so only the operations needing them
// are skipped.
func TestRepairBoundsCopies(t *testing.T) {
	const depth, breadth = 9, 4
	responses := map[string]any{}
	for i := range depth {
		props := map[string]any{}
		for j := range breadth {
			if i == depth-1 {
				props[fmt.Sprintf("p%d", j)] = map[string]any{"type": "string"}
			} else {
				props[fmt.Sprintf("p%d", j)] = map[string]any{"$ref": fmt.Sprintf("#/components/responses/R%d", i+1)}
			}
		}
		responses[fmt.Sprintf("R%d", i)] = map[string]any{"description": "r", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "properties": props}}}}
	}
	root := map[string]any{
		"components": map[string]any{"responses": responses},
		"paths": map[string]any{"/a": map[string]any{"get": map[string]any{"responses": map[string]any{"200": map[string]any{
			"description": "ok", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/responses/R0"}}},
		}}}}},
	}
	before := countNodes(root, 1<<30)
	md := newMender()
	for i := range depth {
		// The order kin-openapi names them in: each copy holds the
		// references mended next.
		md.repair(root, fmt.Errorf("bad data in %q (expecting ref to schema object)", fmt.Sprintf("#/components/responses/R%d", i)))
	}
	if after := countNodes(root, 1<<30); after > before+maxCopiedNodes+1000 {
		t.Errorf("mending grew the document from %d values to %d, more than the %d it may copy", before, after, maxCopiedNodes)
	}
	marked := false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if strings.Contains(unresolved(x), "more than the import copies") {
				marked = true
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(root)
	if !marked {
		t.Error("no reference was marked as too large to copy")
	}
}
