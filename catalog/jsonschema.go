package catalog

import (
	"encoding/json"
	"reflect"
	"sort"
)

// SchemaURL is where the published JSON Schema of catalog.yaml lives, for
// the "# yaml-language-server: $schema=…" line that `gateway import` and
// the bundled catalogs carry; `gateway schema` prints the same document.
const SchemaURL = "https://raw.githubusercontent.com/mcpgw/gateway/main/catalog.schema.json"

// SchemaComment is the first line of a catalog or fragment that points
// YAML-language-server editors (VS Code's YAML extension and others) at
// the schema.
const SchemaComment = "# yaml-language-server: $schema=" + SchemaURL

// JSONSchema returns a JSON Schema (draft 2020-12) of what Load accepts
// as a catalog or as an included fragment, made from the same Go types
// the loader decodes into, so the two cannot drift: unknown fields are
// refused, values have the shapes the decoder wants. It describes shape
// only; the loader's cross-checks (a gate that exists, a placeholder with
// an argument, a valid gjson path) stay the loader's. Scalars are written
// as the decoder reads them: every configuration scalar may be a ${VAR}
// expansion, so a boolean or a number may also be a string.
func JSONSchema() []byte {
	g := &schemaGen{defs: map[string]any{}}
	root := g.structSchema(reflect.TypeFor[Catalog]())
	fragment := map[string]any{
		"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"upstreams": g.of(reflect.TypeFor[map[string]*Upstream]()),
			"tools":     g.of(reflect.TypeFor[[]*Tool]()),
		},
	}
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         SchemaURL,
		"title":       "MCP gateway catalog (catalog.yaml) or included fragment",
		"description": "Tools, upstreams, auth and limits of the MCP gateway. Reference: docs/catalog.md. Run `gateway validate` for the checks a schema cannot make.",
		"anyOf":       []any{ref("Catalog"), ref("Fragment")},
		"$defs":       g.defs,
	}
	g.defs["Catalog"] = root
	g.defs["Fragment"] = fragment
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err) // maps of strings, bools and slices only
	}
	return append(b, '\n')
}

type schemaGen struct{ defs map[string]any }

func ref(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }

// expandable is a string that holds a ${VAR} expansion: the loader reads
// its value from the environment, so its shape is checked at load.
var expandable = map[string]any{"type": "string", "pattern": `\$\{`}

// nullable allows null beside s: the loader reads a null value as absent.
func nullable(s map[string]any) map[string]any {
	return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, s}}
}

// of is the schema of a value of type t.
func (g *schemaGen) of(t reflect.Type) map[string]any {
	switch t {
	case fieldsType:
		return map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"},
			"description": "output names mapped to gjson paths into the upstream's answer"}
	case workspaceBindingType:
		return map[string]any{"anyOf": []any{map[string]any{"const": WorkspaceNone}, expandable, g.named(t)}}
	case outputOverrideType:
		return map[string]any{"anyOf": []any{
			map[string]any{"const": WorkspaceNone},
			map[string]any{"type": "object", "required": []any{"keep"}, "additionalProperties": false,
				"properties": map[string]any{"keep": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}},
			map[string]any{"type": "object", "description": "a JSON Schema that replaces the tool's output schema"},
		}}
	case approvalType:
		return map[string]any{"anyOf": []any{map[string]any{"enum": []any{ApprovalConfirm, WorkspaceNone}}, expandable, g.named(t)}}
	case reflect.TypeFor[Size]():
		return map[string]any{"anyOf": []any{
			map[string]any{"type": "integer", "minimum": 0},
			map[string]any{"type": "string", "pattern": `^\s*[0-9]+\s*([KMGT]i?B|B)?\s*$|\$\{`},
		}, "description": "a size: bytes, or a number with a unit such as 64KiB or 8MiB"}
	case reflect.TypeFor[Duration]():
		return map[string]any{"type": "string", "pattern": `^\s*([0-9.]+(ns|us|µs|ms|s|m|h))+\s*$|^\s*0\s*$|\$\{`,
			"description": "a duration such as 500ms, 10s or 1m"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.of(t.Elem())
	case reflect.Struct:
		return g.named(t)
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.of(t.Elem())}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return map[string]any{"type": "object"}
		}
		return map[string]any{"type": "object", "additionalProperties": nullable(g.of(t.Elem()))}
	case reflect.Interface:
		return map[string]any{}
	case reflect.String:
		// The decoder reads a scalar's text: name: 123 is the name "123".
		return map[string]any{"type": []any{"string", "number", "boolean"}}
	case reflect.Bool:
		return map[string]any{"anyOf": []any{
			map[string]any{"type": "boolean"},
			map[string]any{"enum": []any{0, 1}},
			map[string]any{"type": "string", "pattern": `^\s*(?i:true|false|yes|no|on|off|1|0)\s*$|\$\{`},
		}}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"anyOf": []any{map[string]any{"type": "integer"},
			map[string]any{"type": "string", "pattern": `^\s*-?[0-9]+\s*$|\$\{`}}}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"anyOf": []any{map[string]any{"type": "number"},
			map[string]any{"type": "string", "pattern": `^\s*-?[0-9.eE+-]+\s*$|\$\{`}}}
	}
	return map[string]any{}
}

// named is a $ref to t's struct schema, defined once under its Go name.
func (g *schemaGen) named(t reflect.Type) map[string]any {
	name := t.Name()
	if _, ok := g.defs[name]; !ok {
		g.defs[name] = true // placeholder: a type that contains itself
		g.defs[name] = g.structSchema(t)
	}
	return ref(name)
}

// structSchema lists the fields the decoder maps for t (infoOf), and no
// other: an unknown field is refused, as the loader refuses it.
func (g *schemaGen) structSchema(t reflect.Type) map[string]any {
	si := infoOf(t)
	props := map[string]any{}
	names := append([]string(nil), si.names...)
	sort.Strings(names)
	for _, key := range names {
		f := t.Field(si.fields[key])
		props[key] = nullable(g.of(f.Type))
	}
	s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	return s
}
