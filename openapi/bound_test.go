package openapi_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
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
