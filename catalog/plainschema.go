package catalog

import (
	"math"
	"regexp"
	"strings"
)

// plainSchema reports whether s is a JSON Schema 2020-12 whose validity
// shows on its face: it uses only keywords checked here, each with a
// value of the shape the 2020-12 metaschema requires, and nothing that
// names another document or draft ($ref, $schema, $defs…). Such a schema
// is what an import writes for most operations, and checkSchema, which
// compiles it against the metaschema, would accept it; the compile costs
// a catalog of thousands of tools most of its start. Only true means
// anything: false sends the schema to checkSchema, which decides and
// words the error.
//
// Members that are not 2020-12 keywords ("example", "nullable", "x-…")
// are annotations to the metaschema and pass with any value.
func plainSchema(s any) bool { return plainAt(s, 0) }

// maxPlainDepth bounds the nesting plainSchema follows; a deeper schema
// goes to the compiler.
const maxPlainDepth = 64

func plainAt(s any, depth int) bool {
	if _, ok := s.(bool); ok {
		return true
	}
	m, ok := s.(map[string]any)
	if !ok || depth > maxPlainDepth {
		return false
	}
	for k, v := range m {
		var good bool
		switch k {
		case "type":
			good = plainType(v)
		case "properties":
			props, ok := v.(map[string]any)
			good = ok
			for _, p := range props {
				if good = plainAt(p, depth+1); !good {
					break
				}
			}
		case "items", "additionalProperties", "contains", "propertyNames", "not", "if", "then", "else":
			good = plainAt(v, depth+1)
		case "allOf", "anyOf", "oneOf", "prefixItems":
			list, ok := v.([]any)
			good = ok && len(list) > 0
			for _, e := range list {
				if good = plainAt(e, depth+1); !good {
					break
				}
			}
		case "required":
			good = uniqueStrings(v, false)
		case "enum", "examples":
			_, good = v.([]any)
		case "default", "const":
			good = true
		case "title", "description", "format":
			_, good = v.(string)
		case "deprecated", "readOnly", "writeOnly", "uniqueItems":
			_, good = v.(bool)
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			_, good = plainNumber(v)
		case "multipleOf":
			f, ok := plainNumber(v)
			good = ok && f > 0
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
			f, ok := plainNumber(v)
			good = ok && f >= 0 && f == math.Trunc(f)
		case "pattern":
			p, ok := v.(string)
			good = ok && compiles(p)
		default:
			// Every other keyword the metaschema constrains
			// (patternProperties, dependentSchemas, unevaluated*,
			// content*, the $ keywords…) is the compiler's to judge.
			good = !strings.HasPrefix(k, "$") && !otherKeywords[k]
		}
		if !good {
			return false
		}
	}
	return true
}

// otherKeywords are the 2020-12 metaschema's keywords plainSchema leaves
// to the compiler.
var otherKeywords = map[string]bool{
	"patternProperties": true, "dependentRequired": true, "dependentSchemas": true, "dependencies": true,
	"definitions": true, "unevaluatedItems": true, "unevaluatedProperties": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true,
}

// plainType reports whether v is a simple type's name, or a non-empty
// list of distinct ones.
func plainType(v any) bool {
	if s, ok := v.(string); ok {
		return kindNames[s] != 0
	}
	return uniqueStrings(v, true)
}

// uniqueStrings reports whether v is a list of distinct strings (type
// names only, when types is set; then at least one).
func uniqueStrings(v any, types bool) bool {
	list, ok := v.([]any)
	if !ok || types && len(list) == 0 {
		return false
	}
	seen := make(map[string]bool, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok || seen[s] || types && kindNames[s] == 0 {
			return false
		}
		seen[s] = true
	}
	return true
}

// plainNumber is a number of the kinds the catalog decodes, as float64.
func plainNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	}
	return 0, false
}

// compiles reports whether a pattern is a regular expression the
// validator's engine (Go's regexp, the library's default) accepts.
func compiles(p string) bool {
	_, err := regexp.Compile(p)
	return err == nil
}
