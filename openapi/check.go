package openapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mcpgw/gateway/catalog"
)

// Finding is one way a catalog tool disagrees with the document.
type Finding struct {
	File      string      `json:"file"`
	Pos       catalog.Pos `json:"-"`
	Line      int         `json:"line"`
	Column    int         `json:"column"`
	Tool      string      `json:"tool"`
	Operation string      `json:"operation"` // "GET /v1/jobs/{id}", or "" when none matched
	Message   string      `json:"message"`
}

func (f Finding) String() string {
	p := catalog.Problem{File: f.File, Pos: f.Pos, Msg: fmt.Sprintf("tool %q", f.Tool)}
	s := p.String()
	if f.Operation != "" {
		s += " (" + f.Operation + ")"
	}
	return s + ": " + f.Message
}

// Check cross-checks every tool of c against d, statically: the operation
// exists, placeholders and query/header names are declared parameters in
// the right place, required parameters are reachable, the kind agrees with
// the method, and select/fields paths and output_schema fit the response.
// Tools of upstreams other than upstream (when it is not "") are left out.
func Check(c *catalog.Catalog, d *Document, upstream string) []Finding {
	var out []Finding
	prefixes := serverPrefixes(d)
	for _, t := range c.Tools {
		if upstream != "" && t.Request.Upstream != upstream {
			continue
		}
		ck := &toolChecker{c: c, t: t, out: &out}
		ck.run(d, prefixes)
	}
	return out
}

type toolChecker struct {
	c   *catalog.Catalog
	t   *catalog.Tool
	op  string
	out *[]Finding
}

func (k *toolChecker) add(pos catalog.Pos, format string, args ...any) {
	file, p := k.c.Locate(catalog.Pos(pos))
	if p == (catalog.Pos{}) {
		file, p = k.c.Locate(k.t.Pos)
	}
	*k.out = append(*k.out, Finding{File: file, Pos: p, Line: p.Line, Column: p.Column, Tool: k.t.Name, Operation: k.op, Message: fmt.Sprintf(format, args...)})
}

func serverPrefixes(d *Document) []string {
	out := []string{""}
	for _, s := range d.doc.Servers {
		if s == nil {
			continue
		}
		u, err := url.Parse(s.URL)
		if err != nil {
			continue
		}
		if p := strings.TrimSuffix(u.Path, "/"); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// segments splits a path into literal segments and "{}" for placeholders.
func segments(p string) []string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range parts {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && !strings.HasPrefix(s, "{{") {
			parts[i] = "{}"
		}
	}
	return parts
}

// findPath returns the document path matching the tool's path template.
func findPath(d *Document, path string, prefixes []string) (string, *openapi3.PathItem) {
	if d.doc.Paths == nil {
		return "", nil
	}
	pm := d.doc.Paths.Map()
	for _, pre := range prefixes {
		if !strings.HasPrefix(path, pre) {
			continue
		}
		want := segments(strings.TrimPrefix(path, pre))
		for _, p := range sortedKeys(pm) {
			if slices.Equal(segments(p), want) {
				return p, pm[p]
			}
		}
	}
	return "", nil
}

func (k *toolChecker) run(d *Document, prefixes []string) {
	t, r := k.t, &k.t.Request
	docPath, item := findPath(d, r.Path, prefixes)
	if item == nil {
		k.add(r.At("path"), "no path in the document matches %s", r.Path)
		return
	}
	ops := item.Operations()
	op := ops[r.Method]
	if op == nil {
		k.add(r.At("method"), "the document's %s has no %s operation (it has %s)", docPath, r.Method, strings.Join(sortedKeys(ops), ", "))
		return
	}
	k.op = r.Method + " " + docPath
	switch read := r.Method == http.MethodGet || r.Method == http.MethodHead; {
	case t.Kind == catalog.KindWrite && read:
		k.add(t.At("kind"), "a write tool is bound to %s, which does not change anything", r.Method)
	case t.Kind == catalog.KindRead && !read:
		k.add(t.At("kind"), "a read tool is bound to %s, which may change state: make it kind: write behind a gate", r.Method)
	}

	params := map[string]*openapi3.Parameter{}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, p := range list {
			if p != nil && p.Value != nil {
				params[p.Value.In+"\x00"+strings.ToLower(p.Value.Name)] = p.Value
			}
		}
	}
	declared := func(in, name string) bool { _, ok := params[in+"\x00"+strings.ToLower(name)]; return ok }

	// Path placeholders line up with the document's by position.
	docSegs := strings.Split(strings.Trim(docPath, "/"), "/")
	for _, s := range docSegs {
		if strings.HasPrefix(s, "{") {
			name := strings.Trim(s, "{}")
			if !declared("path", name) {
				k.add(r.At("path"), "path placeholder {%s} of the document is not a declared path parameter", name)
			}
		}
	}
	u := k.c.Upstreams[r.Upstream]
	for _, q := range slices.Sorted(mapKeys(r.Query)) {
		if !declared("query", q) {
			k.add(r.At("query"), "query parameter %q is not declared for the operation%s", q, elsewhere(params, q, "query"))
		}
	}
	for _, h := range slices.Sorted(mapKeys(r.Headers)) {
		if !declared("header", h) {
			k.add(r.At("headers"), "header %q is not a declared header parameter%s", h, elsewhere(params, h, "header"))
		}
	}
	if r.Body != nil && (op.RequestBody == nil || op.RequestBody.Value == nil) {
		k.add(r.At("body"), "the tool sends a body, but the operation declares no request body")
	}
	// Required parameters must be reachable.
	for _, key := range sortedKeys(params) {
		p := params[key]
		if !p.Required || p.In == "path" {
			continue
		}
		reach := false
		switch p.In {
		case "query":
			reach = hasKeyFold(r.Query, p.Name) || u != nil && u.Workspace != nil && strings.EqualFold(u.Workspace.Query, p.Name)
		case "header":
			reach = hasKeyFold(r.Headers, p.Name) || u != nil && (hasKeyFold(u.Headers, p.Name) ||
				u.Workspace != nil && strings.EqualFold(u.Workspace.Header, p.Name) || strings.EqualFold(u.ActorHeader, p.Name))
		default:
			reach = true // cookies are out of the gateway's reach, and of this check's
		}
		if !reach {
			k.add(r.At("path"), "required %s parameter %q is sent by neither an argument nor a binding", p.In, p.Name)
		}
	}
	if body, ok := r.Body.(map[string]any); ok && op.RequestBody != nil && op.RequestBody.Value != nil && op.RequestBody.Value.Required {
		if mt, _ := jsonMedia(op.RequestBody.Value.Content); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
			for _, req := range mt.Schema.Value.Required {
				if _, has := body[req]; !has {
					if p := mt.Schema.Value.Properties[req]; p != nil && p.Value != nil && p.Value.ReadOnly {
						continue
					}
					k.add(r.At("body"), "required body property %q is not in the body template", req)
				}
			}
		}
	}
	k.response(op)
}

func elsewhere(params map[string]*openapi3.Parameter, name, not string) string {
	for _, in := range []string{"path", "query", "header", "cookie"} {
		if _, ok := params[in+"\x00"+strings.ToLower(name)]; ok && in != not {
			return fmt.Sprintf(" (the document has it in %s)", in)
		}
	}
	return ""
}

func hasKeyFold(m map[string]string, k string) bool {
	for x := range m {
		if strings.EqualFold(x, k) {
			return true
		}
	}
	return false
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// response checks select/fields paths and output_schema against the first
// 2xx JSON response schema.
func (k *toolChecker) response(op *openapi3.Operation) {
	t := k.t
	if op.Responses == nil || t.Response.Render == catalog.RenderPayload {
		return
	}
	var schema *openapi3.Schema
	rm := op.Responses.Map()
	for _, code := range sortedKeys(rm) {
		if r := rm[code]; strings.HasPrefix(code, "2") && r != nil && r.Value != nil {
			if mt, _ := jsonMedia(r.Value.Content); mt != nil && mt.Schema != nil {
				schema = mt.Schema.Value
				break
			}
		}
	}
	if schema == nil {
		if t.OutputSchema != nil {
			k.add(t.At("output_schema"), "output_schema is declared, but the operation declares no 2xx JSON response")
		}
		return
	}
	shaped := &shape{schema: schema}
	if t.Response.Select != "" {
		s, ok := walk(schema, t.Response.Select)
		if !ok {
			k.add(t.Response.At("select"), "response.select %q is not in the response schema", t.Response.Select)
			return
		}
		shaped = &shape{schema: s}
	}
	if len(t.Response.Fields) > 0 {
		fields := map[string]*openapi3.Schema{}
		for _, f := range t.Response.Fields {
			s, ok := walk(shaped.schema, f.Path)
			if !ok {
				k.add(t.Response.At("fields"), "response.fields %s: path %q is not in the response schema", f.Name, f.Path)
				continue
			}
			fields[f.Name] = s
		}
		shaped = &shape{fields: fields}
	}
	if t.OutputSchema == nil {
		return
	}
	props, _ := t.OutputSchema["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		got, known := shaped.property(name)
		if !known {
			k.add(t.At("output_schema"), "output_schema property %q is not in the shaped response", name)
			continue
		}
		want, _ := props[name].(map[string]any)
		if msg := typeClash(want, got); msg != "" {
			k.add(t.At("output_schema"), "output_schema property %q: %s", name, msg)
		}
	}
}

// shape is the shaped result: a schema, or fields each with its schema.
type shape struct {
	schema *openapi3.Schema
	fields map[string]*openapi3.Schema
}

// property returns the schema of a top-level result key, and whether the
// key can be there at all (nil: anything).
func (s *shape) property(name string) (*openapi3.Schema, bool) {
	if s.fields != nil {
		f, ok := s.fields[name]
		return f, ok
	}
	sc := s.schema
	if sc == nil {
		return nil, true
	}
	if sc.Type != nil && sc.Type.Is("array") {
		if name == "items" {
			return sc, true
		}
		return nil, name == "transportTruncated"
	}
	if p := sc.Properties[name]; p != nil {
		return p.Value, true
	}
	if name == "transportTruncated" {
		return nil, true
	}
	open := len(sc.Properties) == 0 || sc.AdditionalProperties.Has == nil || *sc.AdditionalProperties.Has || sc.AdditionalProperties.Schema != nil
	if len(sc.AllOf)+len(sc.AnyOf)+len(sc.OneOf) > 0 {
		return nil, true
	}
	return nil, open && len(sc.Properties) == 0
}

// walk follows a simple gjson path (dotted keys, # for every element)
// through a schema. Paths with modifiers, queries or wildcards are taken
// as found: this check only reports what it can be sure of.
func walk(s *openapi3.Schema, path string) (*openapi3.Schema, bool) {
	if strings.ContainsAny(path, "@*?|()=!<>\\") {
		return nil, true
	}
	for _, seg := range strings.Split(path, ".") {
		if s == nil {
			return nil, true
		}
		if len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 && len(s.Properties) == 0 {
			return nil, true
		}
		switch {
		case seg == "#" || isIndex(seg):
			if s.Type == nil || !s.Type.Is("array") {
				return nil, s.Type == nil
			}
			if s.Items == nil {
				return nil, true
			}
			s = s.Items.Value
		default:
			p := s.Properties[seg]
			if p == nil {
				return nil, len(s.Properties) == 0 && (s.Type == nil || s.Type.Is("object"))
			}
			s = p.Value
		}
	}
	return s, true
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// typeClash says why a declared output type cannot hold what the document
// says comes back, or "".
func typeClash(want map[string]any, got *openapi3.Schema) string {
	if got == nil || got.Type == nil || len(*got.Type) == 0 {
		return ""
	}
	var wantTypes []string
	switch x := want["type"].(type) {
	case string:
		wantTypes = []string{x}
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				wantTypes = append(wantTypes, s)
			}
		}
	}
	if len(wantTypes) == 0 {
		return ""
	}
	for _, g := range *got.Type {
		if g == "null" && got.Nullable {
			continue
		}
		if !slices.Contains(wantTypes, g) && !(g == "integer" && slices.Contains(wantTypes, "number")) {
			return fmt.Sprintf("type %v does not admit the document's %s", wantTypes, g)
		}
	}
	return ""
}
