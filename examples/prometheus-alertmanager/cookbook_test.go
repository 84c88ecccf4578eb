package example_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpgw/gateway/rendering"
)

// recipeRE finds one recipe of docs/gjson.md: a marker comment, the YAML
// block with select and fields, and the JSON block with the result.
var recipeRE = regexp.MustCompile("(?s)<!-- recipe ([^>]*?) -->\\s*```yaml\\n(.*?)```.*?```json\\n(.*?)```")

// shaping is a response's select and fields as written, fields in order.
type shaping struct {
	Select string    `yaml:"select"`
	Fields yaml.Node `yaml:"fields"`
}

func (s shaping) fields(t *testing.T) []rendering.Field {
	t.Helper()
	if s.Fields.Kind == 0 {
		return nil
	}
	if s.Fields.Kind != yaml.MappingNode {
		t.Fatalf("fields at line %d is not a mapping", s.Fields.Line)
	}
	var out []rendering.Field
	for i := 0; i+1 < len(s.Fields.Content); i += 2 {
		out = append(out, rendering.Field{Name: s.Fields.Content[i].Value, Path: s.Fields.Content[i+1].Value})
	}
	return out
}

// exampleTools reads the example catalog's tools as written.
func exampleTools(t *testing.T) map[string]shaping {
	t.Helper()
	b, err := os.ReadFile(catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Tools []struct {
			Name     string  `yaml:"name"`
			Response shaping `yaml:"response"`
		} `yaml:"tools"`
	}
	if err := yaml.Unmarshal(b, &cat); err != nil {
		t.Fatal(err)
	}
	out := map[string]shaping{}
	for _, tool := range cat.Tools {
		out[tool.Name] = tool.Response
	}
	return out
}

// TestGJSONCookbook runs every recipe of docs/gjson.md through the
// gateway's shaping on the saved answer it names, and checks that a recipe
// naming a tool is what that tool has in catalog.yaml.
func TestGJSONCookbook(t *testing.T) {
	doc, err := os.ReadFile("../../docs/gjson.md")
	if err != nil {
		t.Fatal(err)
	}
	tools := exampleTools(t)
	recipes := recipeRE.FindAllSubmatch(doc, -1)
	if len(recipes) < 10 {
		t.Fatalf("found %d recipes in docs/gjson.md, want at least 10", len(recipes))
	}
	if n := bytes.Count(doc, []byte("<!-- recipe ")); n != len(recipes) {
		t.Fatalf("docs/gjson.md has %d recipe markers but %d parse as marker, yaml block, json block", n, len(recipes))
	}
	for i, m := range recipes {
		attrs := map[string]string{}
		for _, kv := range strings.Fields(string(m[1])) {
			k, v, _ := strings.Cut(kv, "=")
			attrs[k] = v
		}
		name := fmt.Sprintf("%d-%s-%s", i, attrs["tool"], attrs["sample"])
		t.Run(name, func(t *testing.T) {
			var r shaping
			if err := yaml.Unmarshal(m[2], &r); err != nil {
				t.Fatalf("recipe YAML: %v\n%s", err, m[2])
			}
			sample, err := os.ReadFile(filepath.Join("testdata", attrs["sample"]))
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := rendering.Shape(sample, rendering.ShapeOptions{Select: r.Select, Fields: r.fields(t)})
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, m[3]); err != nil {
				t.Fatalf("recipe result is not JSON: %v\n%s", err, m[3])
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("recipe\n%s\non %s gives\n%s\nthe doc says\n%s", m[2], attrs["sample"], got, want.Bytes())
			}
			if tool := attrs["tool"]; tool != "" {
				c, found := tools[tool]
				if !found {
					t.Fatalf("the example catalog has no tool %q", tool)
				}
				if c.Select != r.Select || fmt.Sprint(c.fields(t)) != fmt.Sprint(r.fields(t)) {
					t.Errorf("tool %s has select %q fields %v in catalog.yaml; the doc shows select %q fields %v",
						tool, c.Select, c.fields(t), r.Select, r.fields(t))
				}
			}
		})
	}
}

// TestProjectionsShrinkAnswers measures each read tool's projection on
// the saved answers: the README's table of sizes comes from this.
func TestProjectionsShrinkAnswers(t *testing.T) {
	tools := exampleTools(t)
	for _, c := range []struct{ tool, sample string }{
		{"list_targets", "targets.json"},
		{"list_rules", "rules.json"},
		{"list_firing_alerts", "alerts.json"},
		{"list_silences", "silences.json"},
		{"query", "query.json"},
	} {
		sample, err := os.ReadFile(filepath.Join("testdata", c.sample))
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		json.Compact(&compact, sample)
		r := tools[c.tool]
		got, _, err := rendering.Shape(sample, rendering.ShapeOptions{Select: r.Select, Fields: r.fields(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-20s upstream %5d bytes → result %5d bytes", c.tool, compact.Len(), len(got))
		if len(got) >= compact.Len() {
			t.Errorf("%s: the projection (%d bytes) is not smaller than the answer (%d bytes)", c.tool, len(got), compact.Len())
		}
	}
}
