package openapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpgw/gateway/internal/text"
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
	// MaxPattern bounds a pattern kept, in bytes; a longer one is dropped.
	MaxPattern = 1024
)

// Bounds on the schemas of one import, in nodes: a node is one schema
// value written (an object, a property, an item, a branch of anyOf), and
// every 256 bytes of text or values it carries (descriptions, enums,
// defaults, examples, patterns) count as one more.
//
// Depth alone does not bound a schema: a document of a few kilobytes
// whose schemas each refer to the next one twenty times describes 20^6
// nodes within six levels, gigabytes once written out. A schema that
// would pass its share is written to fewer levels, as many as fit, and
// failing that, cut to any value ({}) past its share, with a note.
const (
	// MaxSchemaNodes bounds one schema: an operation's input (its
	// parameters and body together) or its output.
	MaxSchemaNodes = 1000
	// MaxImportSchemaNodes bounds the schemas of a whole import. It is
	// shared evenly by the operations the import maps (two schemas each),
	// so a large document gets shallower schemas, not a larger catalog,
	// and no operation's share depends on the order of the others.
	MaxImportSchemaNodes = 200_000
)

// schemaShare is each schema's share of the import's nodes for a
// document with ops operations to map.
func schemaShare(ops int) int {
	return max(1, min(MaxSchemaNodes, MaxImportSchemaNodes/max(1, 2*ops)))
}

// converter turns kin-openapi schemas into JSON Schema 2020-12 values
// (map[string]any trees), noting what it had to guess or drop.
type converter struct {
	notes []string
	// forInput leaves out readOnly properties (they are never sent).
	forInput bool
	// limit is the nodes this converter may write over all its calls
	// (see [MaxSchemaNodes]); 0 means MaxSchemaNodes.
	limit int
	// spent is what earlier calls of convert wrote.
	spent int
	// unresolved is why a schema that was converted could not be read
	// (a $ref Read could not follow), or "".
	unresolved string
	// sorted holds the sorted property names of the schemas met, shared
	// by the converters of one import; nil sorts them at every meeting.
	sorted map[*openapi3.Schema][]string

	// The state of one convert call.
	room, used, maxDepth int
	over, hard           bool
}

// convert converts ref found at depth within the converter's limit: at
// full depth when that fits, else at the greatest depth that fits, else
// with every node past the limit cut to any value.
func (c *converter) convert(ref *openapi3.SchemaRef, depth int) map[string]any {
	if c.limit == 0 {
		c.limit = MaxSchemaNodes
	}
	c.room = max(0, c.limit-c.spent)
	defer func() { c.maxDepth = 0 }() // the next call from outside starts afresh
	for maxDepth := MaxSchemaDepth; maxDepth > depth; maxDepth-- {
		c.maxDepth, c.used, c.over, c.hard = maxDepth, 0, false, false
		mark, why := len(c.notes), c.unresolved
		out := c.schema(ref, depth, nil)
		if !c.over {
			c.spent += c.used
			if maxDepth < MaxSchemaDepth {
				c.note("schema cut to %d level%s to stay within %d nodes", maxDepth-depth, plural(maxDepth-depth), c.limit)
			}
			return out
		}
		// Each try stops as soon as it passes the limit, so the tries
		// together cost at most MaxSchemaDepth times the limit.
		c.notes, c.unresolved = c.notes[:mark], why
	}
	c.maxDepth, c.used, c.over, c.hard = depth+1, 0, false, true
	out := c.schema(ref, depth, nil)
	c.spent += c.used
	c.note("schema larger than %d nodes: the part past them cut to any value", c.limit)
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// spend counts n nodes, reporting false once the room is used up.
func (c *converter) spend(n int) bool {
	if c.used+n > c.room {
		if !c.hard {
			c.over = true
		}
		return false
	}
	c.used += n
	return true
}

// weight is the extra nodes out's text and values count for.
func weight(out map[string]any) int {
	n := 0
	for _, k := range []string{"description", "pattern", "format", "enum", "const", "default", "examples"} {
		if v, ok := out[k]; ok {
			n += valueSize(v)
		}
	}
	return n / 256
}

// valueSize approximates the bytes v takes written as JSON.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x) + 2
	case []any:
		n := 2
		for _, e := range x {
			n += valueSize(e) + 1
		}
		return n
	case map[string]any:
		n := 2
		for k, e := range x {
			n += len(k) + 4 + valueSize(e)
		}
		return n
	}
	return 8
}

func (c *converter) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(c.notes, n) {
		c.notes = append(c.notes, n)
	}
}

// schema converts ref; stack holds the schemas being converted above it,
// so a recursive schema ends in {} instead of looping. A call from outside
// the converter (stack nil) goes through convert, within the limit.
func (c *converter) schema(ref *openapi3.SchemaRef, depth int, stack []*openapi3.Schema) map[string]any {
	if c.maxDepth == 0 {
		return c.convert(ref, depth)
	}
	out := map[string]any{}
	if c.over || !c.spend(1) || ref == nil || ref.Value == nil {
		return out
	}
	s := ref.Value
	if why := unresolved(s.Extensions); why != "" {
		if c.unresolved == "" {
			c.unresolved = why
		}
		return out
	}
	if slices.Contains(stack, s) {
		c.note("recursive schema %s cut to any value", refName(ref))
		return out
	}
	if depth >= c.maxDepth {
		if c.maxDepth == MaxSchemaDepth {
			c.note("schema nested deeper than %d levels cut to any value", MaxSchemaDepth)
		}
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
	if len(s.Pattern) > MaxPattern {
		c.note("pattern of %d bytes dropped (more than %d)", len(s.Pattern), MaxPattern)
	} else if s.Pattern != "" {
		// JSON Schema patterns are ECMA-262; the gateway validates with Go's
		// RE2. A pattern RE2 cannot read is dropped rather than refused.
		if _, err := regexp.Compile(s.Pattern); err == nil {
			out["pattern"] = s.Pattern
		} else {
			c.note("pattern %q dropped: not an RE2 expression", bound(s.Pattern, 40))
		}
	}
	// What this node carries counts before what lies below it.
	if w := weight(out); w > 0 && !c.spend(w) {
		return map[string]any{}
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
	// Past the limit, a try's answer is thrown away (see convert), so
	// what is left of it need not be written.
	if c.over {
		return out
	}
	if len(s.Properties) > 0 {
		names := c.propertyNames(s)
		props := make(map[string]any, len(names))
		if len(names) > MaxProperties {
			c.note("object with %d properties cut to %d", len(names), MaxProperties)
			names = names[:MaxProperties]
		}
		for _, name := range names {
			if p := s.Properties[name]; p != nil && p.Value != nil && p.Value.ReadOnly && c.forInput {
				continue
			}
			props[name] = c.schema(s.Properties[name], depth+1, stack)
			if c.over {
				return out
			}
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
	// A fixed order: past the limit, what comes first is what is kept.
	for i, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		kw := [...]string{"allOf", "anyOf", "oneOf"}[i]
		if len(list) == 0 {
			continue
		}
		var xs []any
		for _, e := range list[:min(len(list), MaxEnum)] {
			xs = append(xs, c.schema(e, depth+1, stack))
			if c.over {
				return out
			}
		}
		out[kw] = xs
	}
	if s.Not != nil {
		out["not"] = c.schema(s.Not, depth+1, stack)
	}
	return out
}

// propertyNames returns the names of s's properties in order, sorted once
// per schema for all the converters that share c.sorted.
func (c *converter) propertyNames(s *openapi3.Schema) []string {
	if names, ok := c.sorted[s]; ok {
		return names
	}
	names := sortedKeys(s.Properties)
	if c.sorted != nil {
		c.sorted[s] = names
	}
	return names
}

func refName(ref *openapi3.SchemaRef) string {
	if ref.Ref != "" {
		return ref.Ref
	}
	return "(inline)"
}

// bound trims s to at most n bytes, the mark of a cut included.
func bound(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return text.Clip(s, n)
	}
	return text.Clip(s, n-len(text.Ellipsis))
}

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
