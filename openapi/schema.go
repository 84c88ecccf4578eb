package openapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
)

// Bounds on what one schema may become in the catalog.
const (
	// MaxSchemaDepth is how deep a schema is followed; deeper (or recursive)
	// parts become {} (any value).
	MaxSchemaDepth = 6
	// MaxEnum is the longest enum kept; a longer one is dropped and the
	// description says how many values there were.
	MaxEnum = 64
	// MaxDescription bounds a tool's description, in bytes.
	MaxDescription = 1024
	// MaxPropertyDescription bounds a property's description, in bytes.
	MaxPropertyDescription = 300
	// MaxProperties bounds the properties kept in one object schema.
	MaxProperties = 200
)

// converter turns kin-openapi schemas into JSON Schema 2020-12 values
// (map[string]any trees), noting what it had to guess or drop.
type converter struct {
	notes []string
	// forInput leaves out readOnly properties (they are never sent).
	forInput bool
}

func (c *converter) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(c.notes, n) {
		c.notes = append(c.notes, n)
	}
}

// schema converts ref; stack holds the schemas being converted above it,
// so a recursive schema ends in {} instead of looping.
func (c *converter) schema(ref *openapi3.SchemaRef, depth int, stack []*openapi3.Schema) map[string]any {
	out := map[string]any{}
	if ref == nil || ref.Value == nil {
		return out
	}
	s := ref.Value
	if slices.Contains(stack, s) {
		c.note("recursive schema %s cut to any value", refName(ref))
		return out
	}
	if depth >= MaxSchemaDepth {
		c.note("schema nested deeper than %d levels cut to any value", MaxSchemaDepth)
		return out
	}
	if s.Always != nil {
		if !*s.Always {
			out["not"] = map[string]any{}
		}
		return out
	}
	stack = append(stack, s)
	if s.Type != nil && len(*s.Type) > 0 {
		types := slices.Clone([]string(*s.Type))
		if s.Nullable && !slices.Contains(types, "null") {
			types = append(types, "null")
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			out["type"] = anySlice(types)
		}
	}
	if d := bound(s.Description, MaxPropertyDescription); d != "" {
		out["description"] = d
	} else if s.Title != "" {
		out["description"] = bound(s.Title, MaxPropertyDescription)
	}
	if len(s.Enum) > 0 {
		if len(s.Enum) > MaxEnum {
			c.note("enum of %d values dropped (more than %d)", len(s.Enum), MaxEnum)
			d, _ := out["description"].(string)
			out["description"] = strings.TrimSpace(fmt.Sprintf("%s (one of %d values)", d, len(s.Enum)))
		} else if enum, ok := jsonValues(s.Enum); ok {
			if s.Nullable && !slices.Contains(enum, any(nil)) {
				enum = append(enum, nil)
			}
			out["enum"] = enum
		}
	}
	if s.Const != nil {
		if v, ok := jsonValue(s.Const); ok {
			out["const"] = v
		}
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if s.Default != nil {
		if v, ok := jsonValue(s.Default); ok {
			out["default"] = v
		}
	}
	switch {
	case len(s.Examples) > 0:
		if ex, ok := jsonValues(s.Examples[:min(len(s.Examples), 3)]); ok {
			out["examples"] = ex
		}
	case s.Example != nil:
		if v, ok := jsonValue(s.Example); ok {
			out["examples"] = []any{v}
		}
	}
	setBound(out, "minimum", "exclusiveMinimum", s.Min, s.ExclusiveMin)
	setBound(out, "maximum", "exclusiveMaximum", s.Max, s.ExclusiveMax)
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		out["multipleOf"] = *s.MultipleOf
	}
	if s.MinLength > 0 {
		out["minLength"] = s.MinLength
	}
	if s.MaxLength != nil {
		out["maxLength"] = *s.MaxLength
	}
	if s.Pattern != "" {
		// JSON Schema patterns are ECMA-262; the gateway validates with Go's
		// RE2. A pattern RE2 cannot read is dropped rather than refused.
		if _, err := regexp.Compile(s.Pattern); err == nil {
			out["pattern"] = s.Pattern
		} else {
			c.note("pattern %q dropped: not an RE2 expression", clipString(s.Pattern, 40))
		}
	}
	if s.MinItems > 0 {
		out["minItems"] = s.MinItems
	}
	if s.MaxItems != nil {
		out["maxItems"] = *s.MaxItems
	}
	if s.Items != nil {
		out["items"] = c.schema(s.Items, depth+1, stack)
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		names := sortedKeys(s.Properties)
		if len(names) > MaxProperties {
			c.note("object with %d properties cut to %d", len(names), MaxProperties)
			names = names[:MaxProperties]
		}
		for _, name := range names {
			if p := s.Properties[name]; p != nil && p.Value != nil && p.Value.ReadOnly && c.forInput {
				continue
			}
			props[name] = c.schema(s.Properties[name], depth+1, stack)
		}
		out["properties"] = props
	}
	if len(s.Required) > 0 {
		var req []any
		for _, r := range s.Required {
			if c.forInput {
				if p := s.Properties[r]; p != nil && p.Value != nil && p.Value.ReadOnly {
					continue
				}
			}
			if !slices.Contains(req, any(r)) {
				req = append(req, r)
			}
		}
		if len(req) > 0 {
			out["required"] = req
		}
	}
	if ap := s.AdditionalProperties; ap.Has != nil && !*ap.Has {
		out["additionalProperties"] = false
	} else if ap.Schema != nil {
		out["additionalProperties"] = c.schema(ap.Schema, depth+1, stack)
	}
	for kw, list := range map[string]openapi3.SchemaRefs{"oneOf": s.OneOf, "anyOf": s.AnyOf, "allOf": s.AllOf} {
		if len(list) == 0 {
			continue
		}
		var xs []any
		for _, e := range list[:min(len(list), MaxEnum)] {
			xs = append(xs, c.schema(e, depth+1, stack))
		}
		out[kw] = xs
	}
	if s.Not != nil {
		out["not"] = c.schema(s.Not, depth+1, stack)
	}
	return out
}

func refName(ref *openapi3.SchemaRef) string {
	if ref.Ref != "" {
		return ref.Ref
	}
	return "(inline)"
}

// bound trims s to at most n bytes on a rune boundary, marking the cut.
func bound(s string, n int) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

func clipString(s string, n int) string { return bound(s, n) }

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// setBound writes one numeric bound in JSON Schema 2020-12 terms: OpenAPI
// 3.0 marks the bound exclusive with a boolean beside it, 3.1 gives the
// exclusive bound as a number of its own.
func setBound(out map[string]any, inclusive, exclusive string, v *float64, ex openapi3.ExclusiveBound) {
	if v != nil {
		if ex.Bool != nil && *ex.Bool {
			out[exclusive] = *v
		} else {
			out[inclusive] = *v
		}
	}
	if ex.Value != nil {
		out[exclusive] = *ex.Value
	}
}
