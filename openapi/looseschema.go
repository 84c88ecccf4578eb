package openapi

import "slices"

// The gateway holds every result to the tool's output_schema and every
// call to its input schema, asserting formats. Documents under-declare:
// Swagger 2.0 cannot say nullable, services answer null for an optional
// member declared a string and "" for one declared format: email, and add
// enum values and members as they grow. An imported schema that asserted
// all that would turn real answers into errors (a write the upstream
// performed reported as failed), so the import writes:
//
//   - output schemas that describe shape, not values: types, properties,
//     required and items, with null allowed for every member that is not
//     required, at every depth; no format, enum, const, pattern, bounds,
//     not, or additionalProperties: false; oneOf read as anyOf (two
//     alternatives an answer both fits would fail oneOf);
//   - input schemas whose formats are asserted only where the assertion
//     means what the service means (assertedFormats): date, uuid, ipv4,
//     ipv6. The others the validator knows are moved into the
//     description, where the model still reads them: date-time asserts
//     RFC 3339 with an offset, which many services do not require; email,
//     hostname and uri assert more than most services check.

// keptInputFormats are the formats an input schema keeps asserted.
var keptInputFormats = []string{"date", "uuid", "ipv4", "ipv6"}

// assertedFormats are the formats the gateway's validator
// (santhosh-tekuri/jsonschema with AssertFormat) checks; others are
// annotations.
var assertedFormats = []string{
	"date", "date-time", "duration", "email", "hostname", "idn-email", "ipv4", "ipv6", "iri",
	"iri-reference", "json-pointer", "period", "regex", "relative-json-pointer", "semver",
	"time", "uri", "uri-reference", "uri-template", "uuid",
}

// valueKeywords assert values rather than shape; an output schema drops them.
var valueKeywords = []string{
	"format", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "not",
}

// looseOutput rewrites an output schema tree in place (see above).
func looseOutput(s map[string]any) {
	for _, k := range valueKeywords {
		delete(s, k)
	}
	if ap, ok := s["additionalProperties"]; ok {
		if m, isSchema := ap.(map[string]any); isSchema {
			looseOutput(m)
		} else {
			delete(s, "additionalProperties")
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		delete(s, "oneOf")
		if _, both := s["anyOf"]; both {
			s["allOf"] = append(anyList(s["allOf"]), map[string]any{"anyOf": one})
		} else {
			s["anyOf"] = one
		}
	}
	for _, k := range []string{"allOf", "anyOf"} {
		for _, e := range anyList(s[k]) {
			if m, ok := e.(map[string]any); ok {
				looseOutput(m)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		looseOutput(items)
	}
	props, _ := s["properties"].(map[string]any)
	req := anyList(s["required"])
	for _, name := range sortedKeys(props) {
		p, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		looseOutput(p)
		if !slices.Contains(req, any(name)) {
			props[name] = nullable(p)
		}
	}
}

// nullable returns s widened to admit null.
func nullable(s map[string]any) map[string]any {
	if len(s) == 0 {
		return s
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "enum", "const"} {
		if _, ok := s[k]; ok {
			// A composition could refuse null whatever the type says.
			return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, s}}
		}
	}
	switch t := s["type"].(type) {
	case string:
		if t != "null" {
			s["type"] = []any{t, "null"}
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(t, "null")
		}
	}
	return s
}

func anyList(x any) []any {
	l, _ := x.([]any)
	return l
}

// inputFormats moves the formats an input schema should not assert into
// the description, throughout the tree s.
func inputFormats(s map[string]any) {
	if f, ok := s["format"].(string); ok && slices.Contains(assertedFormats, f) && !slices.Contains(keptInputFormats, f) {
		delete(s, "format")
		d, _ := s["description"].(string)
		if d != "" {
			d += " "
		}
		s["description"] = bound(d+"(format: "+f+")", MaxPropertyDescription)
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if m, ok := s[k].(map[string]any); ok {
			inputFormats(m)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		for _, e := range anyList(s[k]) {
			if m, ok := e.(map[string]any); ok {
				inputFormats(m)
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		if m, ok := props[name].(map[string]any); ok {
			inputFormats(m)
		}
	}
}
