package openapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

// A YAML error names several spots: all are mended in
// one pass. A schema reached only through itself is marked, not copied
// into itself forever.
func TestRepair(t *testing.T) {
	root := map[string]any{
		"components": map[string]any{"schemas": map[string]any{
			"A": map[string]any{"type": "string", "pattern": 12},
			"B": map[string]any{"type": "object", "examples": map[string]any{"a": 1}},
		}},
	}
	err := loadErr(t, root)
	if !strings.Contains(err.Error(), `field "pattern" in /components/schemas/A; `) {
		t.Fatalf("the load error is %v, want one naming both spots", err)
	}
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

	// The error names each spot by its JSON pointer: a key holding "/"
	// (a path, a media type) is written "~1", one holding spaces as it
	// is, and one holding "; " is not a second spot.
	inline := map[string]any{
		"openapi": "3.0.3", "info": map[string]any{"title": "t", "version": "1"},
		"components": map[string]any{"schemas": map[string]any{
			"Foo Bar":                              map[string]any{"type": "string", "pattern": 12},
			"Foo":                                  map[string]any{"type": "string", "pattern": "^a$"},
			"x; cannot construct !!seq into y in ": map[string]any{"type": "object", "properties": map[string]any{"servers": map[string]any{"type": "string", "pattern": 12}}},
		}},
		"servers": []any{map[string]any{"url": "https://api.example.com"}},
		"paths": map[string]any{"/a": map[string]any{"get": map[string]any{"responses": map[string]any{"200": map[string]any{
			"description": "ok",
			"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "string", "pattern": 12}}},
		}}}}},
	}
	if !repair(inline, loadErr(t, inline)) {
		t.Fatal("repair changed nothing")
	}
	if err := loadErrOrNil(inline); err != nil {
		t.Errorf("mended, the document still does not load: %v", err)
	}
	if _, ok := inline["servers"]; !ok {
		t.Error("a key reading like a second spot had servers dropped")
	}
	if p, _ := at(inline, []string{"components", "schemas", "Foo", "pattern"}); p != "^a$" {
		t.Errorf("Foo's pattern is %v, want it kept: the bad one was Foo Bar's", p)
	}

	// Only a schema's member is dropped: a document whose servers,
	// security or parameters the model refuses stays refused.
	for _, bad := range []map[string]any{
		{"servers": map[string]any{"url": 7}},
		{"security": "none"},
		{"security": map[string]any{"a": 1}},
		{"components": map[string]any{"securitySchemes": map[string]any{"k": map[string]any{"type": "apiKey", "name": "api_key", "in": map[string]any{}}}}},
		{"components": map[string]any{"parameters": map[string]any{"schema": map[string]any{"name": "w", "in": map[string]any{}}}}},
		{"paths": 7},
	} {
		doc := map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "t", "version": "1"}, "paths": map[string]any{}}
		for k, v := range bad {
			doc[k] = v
		}
		if repair(doc, loadErr(t, doc)) {
			t.Errorf("repair mended %v, which is no schema's", bad)
		}
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

// loadErr is kin-openapi's error loading doc, as ReadContext loads it.
func loadErr(t *testing.T, doc map[string]any) error {
	t.Helper()
	err := loadErrOrNil(doc)
	if err == nil {
		t.Fatal("the document loads")
	}
	return err
}

func loadErrOrNil(doc map[string]any) error {
	src, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	loader := openapi3.NewLoader()
	_, err = loader.LoadFromData(src)
	return err
}

// A reference the model cannot follow is named by the resolver of the
// JSON model as by a YAML load (which costs seconds for a large
// document, each of up to 20 times), so mending does not load again to
// learn which one it is.
func TestResolveModelNamesTheReference(t *testing.T) {
	doc := []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/responses/R"}}}}}}}},"components":{"responses":{"R":{"description":"r","content":{"application/json":{"schema":{"type":"object"}}}}}}}`)
	m, err := resolveModel(context.Background(), doc)
	if m != nil || err == nil {
		t.Fatalf("resolveModel = %v, %v; want the resolver's error", m, err)
	}
	if !strings.Contains(err.Error(), `bad data in "#/components/responses/R"`) || !repairable(err) {
		t.Errorf("the resolver's error %q does not name the reference as a load does", err)
	}
}

// A schema $ref to a response with two JSON media types takes the same
// schema every time: application/json's.
func TestRepairTakesOneSchemaOfAResponse(t *testing.T) {
	for range 20 {
		const ref = "#/components/responses/R"
		doc := map[string]any{
			"components": map[string]any{"responses": map[string]any{"R": map[string]any{"description": "r", "content": map[string]any{
				"application/problem+json": map[string]any{"schema": map[string]any{"title": "problem"}},
				"application/json":         map[string]any{"schema": map[string]any{"title": "json"}},
			}}}},
			"paths": map[string]any{"/a": map[string]any{"get": map[string]any{"responses": map[string]any{"200": map[string]any{
				"description": "ok", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": ref}}},
			}}}}},
		}
		if !repair(doc, fmt.Errorf("bad data in %q (expecting ref to schema object)", ref)) {
			t.Fatal("repair changed nothing")
		}
		got, _ := at(doc, []string{"paths", "/a", "get", "responses", "200", "content", "application/json", "schema", "title"})
		if got != "json" {
			t.Fatalf("the schema taken is %v's, want application/json's", got)
		}
	}
}
