package catalog

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The output schema a tool publishes and enforces is the operator's
// output_schema plus the members the gateway itself may add to a result
//. Without them, a list the gateway trimmed to fit its bounds,
// or a result whose sensitive fields it withheld, would break the tool's
// own advertised shape, and an MCP client that checks structuredContent
// against outputSchema (the official Go SDK does) would reject it.

// TruncatedMember is the member the gateway adds to a result whose list it
// trimmed to fit the output bounds (rendering's marker).
const TruncatedMember = "transportTruncated"

// DepartureMember is the member the gateway adds to a write's result whose
// answer departs from the output schema (or from the tool's response
// paths): the upstream performed the write, so the answer is returned as
// it came, and this member says where it departs.
const DepartureMember = "outputSchemaDeparture"

// departureSchema is the alternative a write's advertised outputSchema
// offers beside the strict one: any object carrying DepartureMember.
var departureSchema = map[string]any{
	"type":        "object",
	"description": "A write the upstream performed whose answer departs from the output schema: the answer as it came, with " + DepartureMember + " saying where it departs.",
	"properties": map[string]any{
		DepartureMember: map[string]any{"type": "string"},
	},
	"required": []any{DepartureMember},
}

// truncatedSchema describes the TruncatedMember marker: {list, dropped}
// for a trimmed list, {list: null, dropped: null, reason} for a write
// whose whole answer could not fit.
var truncatedSchema = map[string]any{
	"type":        "object",
	"description": "Added by the gateway when it trimmed the result to fit its output bounds.",
	"properties": map[string]any{
		"list":    map[string]any{"type": []any{"string", "null"}},
		"dropped": map[string]any{"type": []any{"integer", "null"}},
		"reason":  map[string]any{"type": "string"},
	},
}

// publishedOutput returns the schema t publishes and enforces: a copy of
// OutputSchema whose root properties gain TruncatedMember (replacing an
// operator's own: the name is the gateway's) and, for a tool with
// response.sensitive paths, the note field (a string) and null as an
// allowed value at each sensitive path the schema spells out with
// properties and items, since a withheld value is null. The operator's
// map is not modified.
func publishedOutput(t *Tool) map[string]any {
	s := maps.Clone(t.OutputSchema)
	props, _ := s["properties"].(map[string]any)
	props = maps.Clone(props)
	if props == nil {
		props = map[string]any{}
	}
	props[TruncatedMember] = truncatedSchema
	if len(t.Response.Sensitive) > 0 {
		note := t.Response.SensitiveNoteField
		if note == "" {
			note = DefaultSensitiveNote
		}
		props[note] = map[string]any{"type": "string", "description": "Added by the gateway when it withheld sensitive values (shown as null)."}
		s["properties"] = props
		for _, p := range t.Response.Sensitive {
			s = allowNull(s, strings.Split(p, "."))
		}
		return s
	}
	s["properties"] = props
	return s
}

// allowNull returns s with the subschema at path (gjson segments, '#' for
// every array entry) widened to accept null, copying what it changes.
// A path the schema does not spell out as properties/items is left alone:
// a value there is checked as the operator wrote it.
func allowNull(s map[string]any, path []string) map[string]any {
	if len(path) == 0 {
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	s = maps.Clone(s)
	if path[0] == "#" {
		items, ok := s["items"].(map[string]any)
		if ok {
			s["items"] = allowNull(items, path[1:])
		}
		return s
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return s
	}
	sub, ok := props[path[0]].(map[string]any)
	if !ok {
		return s
	}
	props = maps.Clone(props)
	props[path[0]] = allowNull(sub, path[1:])
	s["properties"] = props
	return s
}

// advertisedOutput is the outputSchema clients are shown: strict (see
// publishedOutput); for a read with response.not_found, either strict
// or exactly the not_found result, which the gateway answers in place of
// the upstream's ({found: false} unless not_found.result says otherwise);
// for a write, either strict or an answer carrying DepartureMember.
// The root stays type: object, as revisions before 2026-07-28 require.
func advertisedOutput(t *Tool, strict map[string]any) map[string]any {
	if t.Kind == KindWrite {
		// A write's not_found is ignored (its 404 is an upstream error),
		// and its answer is never refused for its shape.
		return map[string]any{"type": "object", "anyOf": []any{strict, departureSchema}}
	}
	nf := t.Response.NotFound
	if nf == nil {
		return strict
	}
	res := nf.Result
	if res == nil {
		res = map[string]any{"found": false}
	}
	props := make(map[string]any, len(res))
	required := make([]any, 0, len(res))
	for _, k := range slices.Sorted(maps.Keys(res)) {
		props[k] = map[string]any{"const": res[k]}
		required = append(required, k)
	}
	notFound := map[string]any{
		"type":                 "object",
		"description":          "The gateway's answer when the upstream says the item does not exist.",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
	return map[string]any{"type": "object", "anyOf": []any{strict, notFound}}
}

// OutputError says where a result breaks its tool's output schema and
// which rule it breaks. Neither part holds a value from the result: Path
// names members and indexes (member names bounded and limited to
// [A-Za-z0-9_.-], others shown as "?"), Rule words the schema's rule.
type OutputError struct {
	Path string // "" for the result as a whole; "jobs[3].state"
	Rule string
}

func (e *OutputError) Error() string {
	if e.Path == "" {
		return "at the top level: " + e.Rule
	}
	return "at " + e.Path + ": " + e.Rule
}

// outputSchema is a compiled published output schema.
type outputSchema struct{ *lazySchema }

// Validate checks a result decoded by encoding/json against the strict
// schema (not the not_found alternative: the core never validates its own
// not_found result, which matches the alternative by construction). The
// error, when there is one, is an *[OutputError] for the deepest failure.
func (v outputSchema) Validate(result any) error {
	s, err := v.schema()
	if err != nil {
		return &OutputError{Rule: "cannot be checked: the output schema does not compile (" + oneLine(err.Error()) + ")"}
	}
	if v.q.valid(result) {
		return nil
	}
	err = s.Validate(result)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &OutputError{Rule: "does not match the output schema"}
	}
	leaf := deepest(ve)
	loc := leaf.InstanceLocation
	rule := outputRule(leaf.ErrorKind)
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		// The missing name is the schema's own.
		rule = fmt.Sprintf("missing required member %q", clip(k.Missing[0]))
	case *kind.AdditionalProperties:
		return &OutputError{Path: safePath(append(loc[:len(loc):len(loc)], k.Properties[0])), Rule: "member not allowed by the output schema"}
	}
	return &OutputError{Path: safePath(loc), Rule: rule}
}

// deepest returns the deepest leaf under e, the first when several tie.
func deepest(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	best := e
	for _, c := range e.Causes {
		if d := deepest(c); best == e || len(d.InstanceLocation) > len(best.InstanceLocation) {
			best = d
		}
	}
	return best
}

// outputRule words a failed rule from the schema alone, never from the
// value that broke it (a format or pattern failure would otherwise quote
// upstream text, unfenced, into the error the model reads).
func outputRule(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type, *kind.Enum, *kind.Const, *kind.FalseSchema, *kind.MinLength, *kind.MaxLength, *kind.Pattern,
		*kind.Minimum, *kind.Maximum, *kind.ExclusiveMinimum, *kind.ExclusiveMaximum, *kind.MinItems, *kind.MaxItems:
		return ruleText(k)
	case *kind.Format:
		return fmt.Sprintf("must be a valid %s", clip(k.Want))
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d members", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d members", k.Want)
	case *kind.UniqueItems:
		return "items must be unique"
	case *kind.AnyOf, *kind.OneOf:
		return "matches none of the allowed shapes"
	}
	kp := k.KeywordPath()
	if len(kp) == 0 {
		return "does not match the output schema"
	}
	return fmt.Sprintf("breaks the output schema's %q rule", clip(kp[0]))
}

// safePath renders an instance location as jobs[3].state, each member
// name cut at 64 bytes and shown as "?" when it holds anything outside
// [A-Za-z0-9_.-] (member names of a failing result are upstream data).
func safePath(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		if b.Len() > 256 {
			b.WriteString("…")
			break
		}
		if _, err := strconv.Atoi(tok); err == nil && len(tok) < 12 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if len(tok) > 64 || strings.IndexFunc(tok, func(r rune) bool {
			return !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) >= 0 || tok == "" {
			tok = "?"
		}
		b.WriteString(tok)
	}
	return b.String()
}
