package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// compileCatalogSchema compiles JSONSchema() as an editor would.
func compileCatalogSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatalf("the catalog's JSON Schema does not compile: %v", err)
	}
	return s
}

// yamlAsJSON reads a YAML file as the JSON data model a YAML language
// server validates: mappings with string keys, lists and scalars.
func yamlAsJSON(b []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	var conv func(any) any
	conv = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = conv(e)
			}
			return x
		case map[any]any:
			m := map[string]any{}
			for k, e := range x {
				m[fmt.Sprint(k)] = conv(e)
			}
			return m
		case []any:
			for i, e := range x {
				x[i] = conv(e)
			}
			return x
		}
		return x
	}
	// Round-trip through encoding/json so numbers are what the
	// validator expects.
	j, err := json.Marshal(conv(v))
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(j))
}

// Every catalog the loader accepts is accepted by the schema: the good
// goldens, the bundled catalogs and the examples.
func TestSchemaAcceptsEveryGoodCatalog(t *testing.T) {
	s := compileCatalogSchema(t)
	files, _ := filepath.Glob("testdata/good/*.yaml")
	more, _ := filepath.Glob("../examples/*/*.yaml")
	files = append(files, append(more, "../catalog.yaml")...)
	fragments, _ := filepath.Glob("../demo/openapi/*.yaml")
	files = append(files, fragments...)
	if len(files) < 5 {
		t.Fatalf("found only %d catalogs to check", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := yamlAsJSON(b)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("%s is a good catalog the schema refuses: %v", f, err)
		}
	}
}

// shapeProblem matches the loader's messages about a value's shape: an
// unknown field, or a value that is not what the field takes.
var shapeProblem = regexp.MustCompile(`field "[^"]*" not found in|: want (a mapping|a list|a string|an integer|a boolean|a number)(,| of|$)`)

// A bad golden whose loader messages include a shape problem is refused
// by the schema too, so an editor shows it as it is typed.
func TestSchemaRefusesWhatTheLoaderRefusesForShape(t *testing.T) {
	s := compileCatalogSchema(t)
	goldens, _ := filepath.Glob("testdata/bad/*.golden")
	checked := 0
	for _, g := range goldens {
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if !shapeProblem.Match(want) {
			continue
		}
		checked++
		f := strings.TrimSuffix(g, ".golden") + ".yaml"
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := yamlAsJSON(b)
		if err != nil {
			continue // not even YAML an editor can read: refused
		}
		if err := s.Validate(v); err == nil {
			t.Errorf("%s: the loader refuses its shape (%s) but the schema accepts it", f, firstLine(shapeProblem, want))
		}
	}
	if checked < 5 {
		t.Fatalf("only %d bad goldens have shape problems; the pattern no longer matches the loader's messages", checked)
	}
}

func firstLine(re *regexp.Regexp, b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if re.MatchString(l) {
			return l
		}
	}
	return ""
}

// The published schema is what JSONSchema makes, and every bundled
// catalog points editors at it on its first line.
func TestPublishedSchemaIsCurrent(t *testing.T) {
	b, err := os.ReadFile("../catalog.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, JSONSchema()) {
		t.Errorf("catalog.schema.json is stale: run go run ./cmd/gateway schema > catalog.schema.json")
	}
	files, _ := filepath.Glob("../demo/openapi/*.yaml")
	for _, f := range append(files, "../catalog.yaml", "../examples/prometheus-alertmanager/catalog.yaml") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(b), "\n"); first != SchemaComment {
			t.Errorf("%s: first line %q, want %q", f, first, SchemaComment)
		}
	}
}
