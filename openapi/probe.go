package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mcpgw/gateway/catalog"
)

// Probing (gateway check --probe) calls read tools against the live
// upstream; cmd/gateway does the calling through the proxy core, this
// file chooses the arguments and the shape to hold the answer to.

// operation returns the document's operation for t, or nil.
func (d *Document) operation(t *catalog.Tool) (string, *openapi3.PathItem, *openapi3.Operation) {
	path, item := findPath(d, &t.Request, serverPrefixes(d))
	if item == nil {
		return "", nil, nil
	}
	return path, item, item.Operations()[t.Request.Method]
}

// ProbeArguments returns arguments for calling t: the tool's probe.args
// when it has them (checked against its input schema at load), else for
// each property the first of its schema's examples, its default, its
// const or first enum value, and failing those the example the document
// gives the parameter the property fills. missing lists the required
// arguments with no value.
func ProbeArguments(d *Document, t *catalog.Tool) (args map[string]any, missing []string) {
	if t.Probe != nil {
		if args = maps.Clone(t.Probe.Args); args == nil {
			args = map[string]any{}
		}
		return args, nil
	}
	args = map[string]any{}
	props, _ := t.Input["properties"].(map[string]any)
	docExamples := d.parameterExamples(t)
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(map[string]any)
		switch ex, _ := p["examples"].([]any); {
		case len(ex) > 0:
			args[name] = ex[0]
		case p["default"] != nil:
			args[name] = p["default"]
		case p["const"] != nil:
			args[name] = p["const"]
		default:
			if enum, _ := p["enum"].([]any); len(enum) > 0 {
				args[name] = enum[0]
			} else if v, ok := docExamples[name]; ok {
				args[name] = v
			}
		}
	}
	for _, r := range t.Required {
		if _, ok := args[r]; !ok {
			missing = append(missing, r)
		}
	}
	// Optional arguments are sent only when the schema itself suggests a
	// value, so the probe stays the smallest call that can answer.
	for name := range args {
		if !contains(t.Required, name) {
			p, _ := props[name].(map[string]any)
			if ex, _ := p["examples"].([]any); len(ex) == 0 && p["default"] == nil {
				delete(args, name)
			}
		}
	}
	return args, missing
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parameterExamples maps t's argument names to the examples the document
// gives the parameters they fill (path placeholders by position, query
// and header parameters by name).
func (d *Document) parameterExamples(t *catalog.Tool) map[string]any {
	out := map[string]any{}
	docPath, item, op := d.operation(t)
	if op == nil {
		return out
	}
	example := func(in, name string) (any, bool) {
		for _, list := range []openapi3.Parameters{op.Parameters, item.Parameters} {
			for _, p := range list {
				if p == nil || p.Value == nil || p.Value.In != in || !strings.EqualFold(p.Value.Name, name) {
					continue
				}
				if p.Value.Example != nil {
					return p.Value.Example, true
				}
				for _, k := range sortedKeys(p.Value.Examples) {
					if e := p.Value.Examples[k]; e != nil && e.Value != nil && e.Value.Value != nil {
						return e.Value.Value, true
					}
				}
				if s := p.Value.Schema; s != nil && s.Value != nil {
					if len(s.Value.Examples) > 0 {
						return s.Value.Examples[0], true
					}
					if s.Value.Example != nil {
						return s.Value.Example, true
					}
				}
			}
		}
		return nil, false
	}
	whole := func(tpl string) string {
		if strings.HasPrefix(tpl, "{") && strings.HasSuffix(tpl, "}") && strings.Count(tpl, "{") == 1 {
			return tpl[1 : len(tpl)-1]
		}
		return ""
	}
	docSegs := strings.Split(strings.Trim(docPath, "/"), "/")
	toolSegs := strings.Split(strings.Trim(t.Request.Path, "/"), "/")
	if len(toolSegs) >= len(docSegs) {
		toolSegs = toolSegs[len(toolSegs)-len(docSegs):]
		for i, s := range docSegs {
			if a := whole(toolSegs[i]); a != "" && strings.HasPrefix(s, "{") {
				if v, ok := example("path", strings.Trim(s, "{}")); ok {
					out[a] = v
				}
			}
		}
	}
	for k, tpl := range t.Request.Query {
		if a := whole(tpl); a != "" {
			if v, ok := example("query", k); ok {
				out[a] = v
			}
		}
	}
	for k, tpl := range t.Request.Headers {
		if a := whole(tpl); a != "" {
			if v, ok := example("header", k); ok {
				out[a] = v
			}
		}
	}
	return out
}

// ResultSchemas returns the JSON Schemas a successful result of t should
// fit, by name: "output_schema" when the tool declares one, and "the
// document's response schema" (the operation's 2xx JSON response, wrapped
// as {items} for an array, with null allowed where a member is not
// required and no assertion on values, as the import writes output
// schemas) when the tool does not reshape the answer with select or
// fields.
func ResultSchemas(d *Document, t *catalog.Tool) map[string]map[string]any {
	out := map[string]map[string]any{}
	if t.OutputSchema != nil {
		out["output_schema"] = t.OutputSchema
	}
	if t.Response.Select != "" || len(t.Response.Fields) > 0 || t.Response.Render == catalog.RenderPayload {
		return out
	}
	_, _, op := d.operation(t)
	if op == nil || op.Responses == nil {
		return out
	}
	rm := op.Responses.Map()
	for _, code := range sortedKeys(rm) {
		r := rm[code]
		if !strings.HasPrefix(code, "2") || r == nil || r.Value == nil {
			continue
		}
		mt, _ := jsonMedia(r.Value.Content)
		if mt == nil || mt.Schema == nil {
			return out
		}
		// Held to the shape the document declares, read as the import
		// reads it (looseOutput): documents under-declare null and
		// values, and an answer the imported tool takes as a result is
		// not drift.
		s := (&converter{}).schema(mt.Schema, 0, nil)
		looseOutput(s)
		out["the document's response schema"] = asResult(s)
		return out
	}
	return out
}

// asResult turns the schema of an upstream answer into the schema of the
// result the gateway makes of it: an object as it is, an array as
// {items: [...]}, any other value (true, 42, "ok", null) as {value: ...}.
// When the schema admits several kinds, the result may be any of them.
func asResult(s map[string]any) map[string]any {
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			if e, ok := e.(string); ok {
				types = append(types, e)
			}
		}
	}
	known := len(types) > 0
	wrap := func(name string) map[string]any {
		return map[string]any{"type": "object", "required": []any{name}, "properties": map[string]any{name: s}}
	}
	var alts []any
	if !known || slices.Contains(types, "object") {
		alts = append(alts, s)
	}
	if !known || slices.Contains(types, "array") {
		alts = append(alts, wrap("items"))
	}
	if !known || slices.ContainsFunc(types, func(t string) bool { return t != "object" && t != "array" }) {
		alts = append(alts, wrap("value"))
	}
	if len(alts) == 1 {
		return alts[0].(map[string]any)
	}
	return map[string]any{"anyOf": alts}
}

// CheckShape returns why structured (a tool's JSON result) does not fit
// schema, or "". The transportTruncated marker the gateway may add is
// taken out first.
func CheckShape(schema map[string]any, structured []byte) string {
	var v any
	if err := json.Unmarshal(structured, &v); err != nil {
		return "the result is not JSON: " + err.Error()
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "transportTruncated")
	}
	sch, err := compile(schema)
	if err != nil {
		return "the schema does not compile: " + err.Error()
	}
	if err := sch.Validate(v); err != nil {
		return bound(strings.ReplaceAll(fmt.Sprint(err), "\n", "; "), 400)
	}
	return ""
}

// OperationOf names the document's operation t calls ("GET /v1/jobs"),
// or "" when the document has none.
func OperationOf(d *Document, t *catalog.Tool) string {
	path, _, op := d.operation(t)
	if op == nil {
		return ""
	}
	return t.Request.Method + " " + path
}

// NewFinding makes a finding about t at pos (a position of c's model).
func NewFinding(c *catalog.Catalog, t *catalog.Tool, pos catalog.Pos, operation, format string, args ...any) Finding {
	file, p := c.Locate(pos)
	if p == (catalog.Pos{}) {
		file, p = c.Locate(t.Pos)
	}
	return Finding{File: file, Pos: p, Line: p.Line, Column: p.Column, Tool: t.Name, Operation: operation, Message: fmt.Sprintf(format, args...)}
}
