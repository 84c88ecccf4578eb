package openapi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
	"gopkg.in/yaml.v3"
)

// schemaNodes counts the schema objects in a JSON Schema.
func schemaNodes(t *testing.T, js []byte) int {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	var count func(v any) int
	count = func(v any) int {
		n := 0
		switch x := v.(type) {
		case map[string]any:
			n++
			for _, e := range x {
				n += count(e)
			}
		case []any:
			for _, e := range x {
				n += count(e)
			}
		}
		return n
	}
	return count(v)
}

// Documents of a few kilobytes whose schemas fan out by $ref import into
// schemas within the budget, with a note saying they were cut, and the
// catalog loads.
func TestImportBoundsSchemasOfHostileDocuments(t *testing.T) {
	for _, name := range []string{"fan-out.yaml", "any-of.yaml", "wide.yaml"} {
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "hostile", name))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := openapi.Read(data)
			if err != nil {
				t.Fatalf("Read = %v", err)
			}
			res, err := openapi.Import(doc, openapi.Options{Upstream: "u", IncludeWrites: true, Standalone: true})
			if err != nil {
				t.Fatalf("Import = %v", err)
			}
			if !strings.Contains(string(res.YAML), "nodes") {
				t.Errorf("no comment says a schema was cut to its budget:\n%.3000s", res.YAML)
			}
			cat, err := catalog.Parse(name, res.YAML, &catalog.LoadOptions{Getenv: placeholders})
			if err != nil {
				t.Fatalf("the imported catalog does not load: %v", err)
			}
			if len(cat.Tools) == 0 {
				t.Fatalf("no tool imported; skipped %v", res.Skipped)
			}
			total := 0
			for _, tool := range cat.Tools {
				// The input schema is the budgeted parameters and body
				// wrapped in one object.
				in, out := schemaNodes(t, tool.InputJSON), 0
				if tool.OutputJSON != nil {
					out = schemaNodes(t, tool.OutputJSON)
				}
				if in > openapi.MaxSchemaNodes+1 || out > openapi.MaxSchemaNodes+1 {
					t.Errorf("tool %s: input schema of %d nodes, output of %d; want at most %d each", tool.Name, in, out, openapi.MaxSchemaNodes)
				}
				total += in + out
			}
			if total > openapi.MaxImportSchemaNodes+2*len(cat.Tools) {
				t.Errorf("the import wrote %d schema nodes, more than its budget of %d", total, openapi.MaxImportSchemaNodes)
			}
		})
	}
}

// The budget is shared evenly: with many operations each schema gets a
// smaller share, so the catalog does not grow with the operation count
// times the schema size.
func TestImportSharesTheSchemaBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString(fanOutDoc(8, 6))
	doc0 := b.String()
	// Many operations all answering the fan-out schema.
	ops := 300 // each schema's share is then a third of MaxSchemaNodes
	var p strings.Builder
	for i := range ops {
		p.WriteString("  /t" + itoa(i) + ":\n    get:\n      responses:\n        '200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/S0'}}}}\n")
	}
	doc0 = strings.Replace(doc0, "paths:\n", "paths:\n"+p.String(), 1)
	doc, err := openapi.Read([]byte(doc0))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(doc, openapi.Options{Upstream: "u", Standalone: true})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Parse("shared.yaml", res.YAML, &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatalf("the imported catalog does not load: %v", err)
	}
	if len(cat.Tools) != ops+1 {
		t.Fatalf("imported %d tools, want %d (skipped %v)", len(cat.Tools), ops+1, res.Skipped)
	}
	total := 0
	for _, tool := range cat.Tools {
		total += schemaNodes(t, tool.InputJSON)
		if tool.OutputJSON != nil {
			total += schemaNodes(t, tool.OutputJSON)
		}
	}
	if total > openapi.MaxImportSchemaNodes+2*len(cat.Tools) {
		t.Errorf("the import wrote %d schema nodes, more than its budget of %d", total, openapi.MaxImportSchemaNodes)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// chainDocument is a document whose n component schemas each only refer
// to the next, the last holding the schema, with an operation reading
// each of the first ops; with loop, the last refers back to the first
// and no schema is ever reached. Swagger 2.0 when swagger.
func chainDocument(n, ops int, loop, swagger bool) []byte {
	prefix := "#/components/schemas/"
	if swagger {
		prefix = "#/definitions/"
	}
	schemas := map[string]any{}
	for i := range n {
		schemas["A"+strconv.Itoa(i)] = map[string]any{"$ref": prefix + "A" + strconv.Itoa(i+1)}
	}
	schemas["A"+strconv.Itoa(n)] = map[string]any{"type": "object", "properties": map[string]any{"chained": map[string]any{"type": "string"}}}
	if loop {
		schemas["A"+strconv.Itoa(n)] = map[string]any{"$ref": prefix + "A0"}
	}
	paths := map[string]any{}
	for i := range ops {
		ref := map[string]any{"$ref": prefix + "A" + strconv.Itoa(i)}
		ok := map[string]any{"description": "ok", "content": map[string]any{"application/json": map[string]any{"schema": ref}}}
		if swagger {
			ok = map[string]any{"description": "ok", "schema": ref}
		}
		paths["/p"+strconv.Itoa(i)] = map[string]any{"get": map[string]any{"operationId": "p" + strconv.Itoa(i), "responses": map[string]any{"200": ok}}}
	}
	doc := map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "t", "version": "1"}, "paths": paths,
		"components": map[string]any{"schemas": schemas}}
	if swagger {
		doc = map[string]any{"swagger": "2.0", "info": map[string]any{"title": "t", "version": "1"}, "paths": paths, "definitions": schemas}
	}
	b, _ := json.Marshal(doc)
	return b
}

// A chain of thousands of components that each only name the next is
// read as what it stands for, the schema at its end, in JSON, in YAML
// and in Swagger 2.0; a chain that loops without reaching a schema skips
// the operations that need it, saying so. Neither walks the chain once
// per link (which took over a minute here, alone): each document gets its
// own deadline of half a minute, under what the walk per link takes and
// some six times the five seconds a document took at worst on a busy
// machine running every package at once (a deadline shared by the four
// once ran out there with nothing wrong).
func TestImportReadsLongChainsOfReferences(t *testing.T) {
	deadline := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	js := chainDocument(8000, 200, false, false)
	var tree any
	json.Unmarshal(js, &tree)
	yml, _ := yaml.Marshal(tree)
	for name, data := range map[string][]byte{"json": js, "yaml": yml, "swagger": chainDocument(8000, 200, false, true)} {
		t.Run(name, func(t *testing.T) {
			ctx := deadline(t)
			doc, err := openapi.ReadContext(ctx, data)
			if err != nil {
				t.Fatalf("Read = %v", err)
			}
			res, err := openapi.ImportContext(ctx, doc, openapi.Options{Upstream: "u", Standalone: true})
			if err != nil {
				t.Fatalf("Import = %v", err)
			}
			cat, err := catalog.Parse(name, res.YAML, &catalog.LoadOptions{Getenv: placeholders})
			if err != nil {
				t.Fatalf("the imported catalog does not load: %v", err)
			}
			if len(cat.Tools) != 200 {
				t.Fatalf("%d tools, want 200; skipped %v", len(cat.Tools), res.Skipped)
			}
			if out := string(cat.Tools[0].OutputJSON); !strings.Contains(out, `"chained"`) {
				t.Errorf("tool %s's output schema is %s; want the schema at the chain's end", cat.Tools[0].Name, out)
			}
		})
	}
	t.Run("loop", func(t *testing.T) {
		for _, swagger := range []bool{false, true} {
			ctx := deadline(t)
			doc, err := openapi.ReadContext(ctx, chainDocument(8000, 200, true, swagger))
			if err != nil {
				t.Fatalf("Read = %v", err)
			}
			res, err := openapi.ImportContext(ctx, doc, openapi.Options{Upstream: "u", Standalone: true})
			if err != nil || len(res.Skipped) != 200 {
				t.Fatalf("Import of a looping chain = %v, %d skipped; want every operation skipped", err, len(res.Skipped))
			}
			if why := res.Skipped[0].Reason; !strings.Contains(why, "loop of references") {
				t.Errorf("skipped because %q; want the loop named", why)
			}
		}
	})
}
