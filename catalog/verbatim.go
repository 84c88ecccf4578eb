package catalog

import "strings"

// Where ${VAR} is expanded. Expansion exists so that secrets and
// deployment settings stay out of the file: base URLs, credentials,
// timeouts, flags. Text an agent reads (a tool's title, description,
// tags, argument schemas with their enums, defaults and examples) and the
// bodies and paths the gateway sends are another matter: they are often
// written by `gateway import openapi` from a document nobody vetted, and
// an expansion there would publish the gateway's own secrets
// (description: ${GATEWAY_JWT_SECRET} in tools/list, default:
// ${GATEWAY_APPROVAL_KEYS} in every upstream request). Those values are
// taken as written, "$" and all.

// verbatimToolFields are the fields of a tool that are never expanded;
// request.path and request.body below a tool are not either.
var verbatimToolFields = map[string]bool{
	"name": true, "title": true, "description": true, "tags": true,
	"search_hint": true, "input": true, "output_schema": true, "probe": true,
}

// verbatimOverrideFields are the fields of an override that are never
// expanded (its arguments hold descriptions, defaults, values and schemas).
var verbatimOverrideFields = map[string]bool{
	"rename": true, "title": true, "description": true, "tags": true,
	"search_hint": true, "arguments": true, "output_schema": true, "probe": true,
}

// verbatim reports whether the scalar at path (as the decoder names it:
// tools[3].input.properties.state.enum[0], overrides.list_pets.description)
// is taken as written.
func verbatim(path string) bool {
	switch {
	case byWorkspaceField(path):
		return true
	case strings.HasPrefix(path, "tools["):
		_, rest, ok := strings.Cut(path, "]")
		if !ok {
			return false
		}
		field, sub := firstSegment(strings.TrimPrefix(rest, "."))
		if field == "request" {
			field, _ = firstSegment(strings.TrimPrefix(sub, "."))
			return field == "path" || field == "body"
		}
		return verbatimToolFields[field]
	case strings.HasPrefix(path, "overrides."), strings.HasPrefix(path, "overrides["):
		rest := path[len("overrides"):]
		if rest[0] == '[' {
			// A quoted name: overrides["a.b"].description.
			end := strings.Index(rest, `"]`)
			if end < 0 {
				return false
			}
			rest = rest[end+2:]
		} else {
			_, rest = firstSegment(rest[1:])
		}
		field, _ := firstSegment(strings.TrimPrefix(rest, "."))
		return verbatimOverrideFields[field]
	}
	return false
}

// firstSegment splits a path at its first "." or "[".
func firstSegment(path string) (head, rest string) {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i], path[i:]
	}
	return path, ""
}
