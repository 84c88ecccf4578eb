package openapi

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
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
	w := &walker{d: d}
	for _, t := range c.Tools {
		if upstream != "" && t.Request.Upstream != upstream {
			continue
		}
		ck := &toolChecker{c: c, t: t, out: &out, w: w}
		ck.run(d, prefixes)
	}
	return out
}

// Operations counts the operations the document describes (one per
// path and method).
func (d *Document) Operations() int {
	n := 0
	if d.doc.Paths != nil {
		for _, item := range d.doc.Paths.Map() {
			if item != nil {
				n += len(item.Operations())
			}
		}
	}
	return n
}

type toolChecker struct {
	c   *catalog.Catalog
	t   *catalog.Tool
	op  string
	out *[]Finding
	w   *walker
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
		u, err := url.Parse(serverDefaults(s))
		if err != nil {
			continue
		}
		if p := strings.TrimSuffix(u.Path, "/"); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// docPlaceholder matches a placeholder of a document path.
var docPlaceholder = regexp.MustCompile(`\{[^{}/]*\}`)

// docSegments splits a document path into segments, each placeholder
// written "{}" ("/v1/jobs/{id}:cancel" → v1, jobs, {}:cancel).
func docSegments(p string) []string {
	p = strings.Trim(p, "/")
	if !strings.Contains(p, "{") {
		return strings.Split(p, "/")
	}
	return strings.Split(docPlaceholder.ReplaceAllString(p, "{}"), "/")
}

// toolSegments splits a tool's path template the same way; its literal
// text is unescaped ("{{" is a brace).
func toolSegments(p string) []string {
	tpl, err := catalog.ParseTemplate(p)
	if err != nil {
		return docSegments(p)
	}
	var b strings.Builder
	for _, pt := range tpl.Parts {
		if pt.Name != "" {
			b.WriteString("{}")
		} else {
			b.WriteString(pt.Text)
		}
	}
	return strings.Split(strings.Trim(b.String(), "/"), "/")
}

// pathFits reports whether a tool's segments fit a document's, and how
// many of the document's placeholders the tool fills with a fixed value
// (an argument an override hid: /orgs/acme/repos fits /orgs/{org}/repos).
func pathFits(tool, doc []string) (bool, int) {
	if len(tool) != len(doc) {
		return false, 0
	}
	fixed := 0
	for i := range tool {
		switch {
		case tool[i] == doc[i]:
		case doc[i] == "{}" && tool[i] != "" && !strings.Contains(tool[i], "{}"):
			fixed++
		default:
			return false, 0
		}
	}
	return true, fixed
}

// findPath returns the document path matching the tool's request: the
// one that matches its path template literally, or failing that the one
// whose placeholders the tool fills with the fewest fixed values. A
// document path may carry a query or a fragment ("/rest?method=get",
// "/tags/{arn}#tagKeys": one path, several operations); among those that
// match, one with the tool's method comes first, then the one whose
// query the tool's fixed query values agree with most (queryFit).
func findPath(d *Document, r *catalog.Request, prefixes []string) (string, *openapi3.PathItem) {
	if d.doc.Paths == nil {
		return "", nil
	}
	pm := d.doc.Paths.Map()
	best, bestRank := "", [3]int{-1}
	better := func(a, b [3]int) bool {
		return b[0] < 0 || a[0] < b[0] || a[0] == b[0] && (a[1] < b[1] || a[1] == b[1] && a[2] < b[2])
	}
	for _, pre := range prefixes {
		if !strings.HasPrefix(r.Path, pre) {
			continue
		}
		want := toolSegments(strings.TrimPrefix(r.Path, pre))
		for _, p := range sortedKeys(pm) {
			base, query := cutPathQuery(p)
			if strings.Count(strings.Trim(base, "/"), "/")+1 != len(want) {
				continue // cheaply: most paths have another length
			}
			ok, fixed := pathFits(want, docSegments(base))
			if !ok || fixed > 0 && !fixedValuesFit(base, pm[p], want) {
				continue
			}
			rank := [3]int{0, 0, fixed}
			if pm[p] == nil || pm[p].Operations()[r.Method] == nil {
				rank[0] = 1
			}
			rank[1] = queryFit(query, r.Query)
			if better(rank, bestRank) {
				best, bestRank = p, rank
			}
		}
		if bestRank[0] == 0 && bestRank[1] < queryMismatch && bestRank[2] == 0 {
			break // a literal match with the tool's method: no other prefix does better
		}
	}
	if bestRank[0] < 0 {
		return "", nil
	}
	return best, pm[best]
}

// queryMismatch is queryFit's rank of a path whose query the tool's
// fixed query contradicts: after every path that fits.
const queryMismatch = 1 << 20

// queryFit ranks a document path's query ("op=LISTAFTERID", or a
// fragment, which is never sent) against the tool's fixed query: lower
// is better, each value the tool sets alike counts -1, and one it sets
// otherwise rules the path out.
func queryFit(query string, tool map[string]string) int {
	fit := 0
	for pair := range strings.SplitSeq(query, "&") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		if got, set := tool[k]; set && got != v {
			return queryMismatch
		} else if set {
			fit--
		}
	}
	return fit
}

// fixedValuesFit reports whether each literal segment of the tool that
// fills a placeholder of docPath is a value the path parameter's schema
// allows (its type, enum and pattern), so /pets/mine is not taken for
// /pets/{petId} when petId is an integer: a literal path the document
// dropped is still reported.
func fixedValuesFit(docPath string, item *openapi3.PathItem, tool []string) bool {
	if item == nil {
		return false
	}
	schemaOf := func(name string) *openapi3.Schema {
		lists := []openapi3.Parameters{item.Parameters}
		for _, op := range item.Operations() {
			lists = append(lists, op.Parameters)
		}
		for _, list := range lists {
			for _, p := range list {
				if p != nil && p.Value != nil && p.Value.In == "path" && p.Value.Name == name && p.Value.Schema != nil {
					return p.Value.Schema.Value
				}
			}
		}
		return nil
	}
	for i, seg := range strings.Split(strings.Trim(docPath, "/"), "/") {
		if !strings.HasPrefix(seg, "{") || !strings.HasSuffix(seg, "}") || i >= len(tool) || tool[i] == seg {
			continue
		}
		sc := schemaOf(seg[1 : len(seg)-1])
		if sc == nil {
			continue
		}
		v := tool[i]
		if sc.Type.Is("integer") {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return false
			}
		}
		if sc.Type.Is("number") {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return false
			}
		}
		if sc.Type.Is("boolean") && v != "true" && v != "false" {
			return false
		}
		if len(sc.Enum) > 0 && !slices.ContainsFunc(sc.Enum, func(e any) bool { return fmt.Sprint(e) == v }) {
			return false
		}
		if sc.Pattern != "" {
			if re, err := regexp.Compile(sc.Pattern); err == nil && !re.MatchString(v) {
				return false
			}
		}
	}
	return true
}

func (k *toolChecker) run(d *Document, prefixes []string) {
	t, r := k.t, &k.t.Request
	docPath, item := findPath(d, r, prefixes)
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
	k.kind(op)

	params := map[string]*openapi3.Parameter{}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, p := range list {
			if p != nil && p.Value != nil {
				params[p.Value.In+"\x00"+strings.ToLower(p.Value.Name)] = p.Value
			}
		}
	}
	// The document's path may set query parameters itself
	// ("/rest?method=flickr.photos.getInfo").
	_, pathQuery := cutPathQuery(docPath)
	for pair := range strings.SplitSeq(pathQuery, "&") {
		if k, _, ok := strings.Cut(pair, "="); ok && k != "" {
			params["query\x00"+strings.ToLower(k)] = &openapi3.Parameter{In: "query", Name: k}
		}
	}
	declared := func(in, name string) bool { _, ok := params[in+"\x00"+strings.ToLower(name)]; return ok }

	// Path placeholders line up with the document's by position.
	for _, ph := range docPlaceholder.FindAllString(docPath, -1) {
		if name := strings.Trim(ph, "{}"); !declared("path", name) {
			k.add(r.At("path"), "path placeholder {%s} of the document is not a declared path parameter", name)
		}
	}
	apiKeys, queryKeys := apiKeyNames(d, "header"), apiKeyNames(d, "query")
	u := k.c.Upstreams[r.Upstream]
	for _, q := range slices.Sorted(mapKeys(r.Query)) {
		// An API key the document sends in the query is the gateway's to
		// send, declared by its security scheme rather than a parameter.
		if !declared("query", q) && !queryKeys[strings.ToLower(q)] {
			k.add(r.At("query"), "query parameter %q is not declared for the operation%s", q, elsewhere(params, q, "query"))
		}
	}
	for _, h := range slices.Sorted(mapKeys(r.Headers)) {
		if !declared("header", h) && !ignoredHeader(h) && !apiKeys[strings.ToLower(h)] {
			k.add(r.At("headers"), "header %q is not a declared header parameter%s", h, elsewhere(params, h, "header"))
		}
	}
	if r.Body != nil && (op.RequestBody == nil || op.RequestBody.Value == nil) {
		k.add(r.At("body"), "the tool sends a body, but the operation declares no request body")
	}
	// Required parameters must be reachable.
	for _, key := range sortedKeys(params) {
		p := params[key]
		if !p.Required || p.In == "path" || p.In == "header" && ignoredHeader(p.Name) {
			continue
		}
		reach := false
		switch p.In {
		case "query":
			reach = hasKeyFold(r.Query, p.Name) || u != nil && u.Workspace != nil && strings.EqualFold(u.Workspace.Query, p.Name)
		case "header":
			reach = hasKeyFold(r.Headers, p.Name) || u != nil && (hasKeyFold(u.Headers, p.Name) ||
				u.Workspace != nil && strings.EqualFold(u.Workspace.Header, p.Name) || strings.EqualFold(u.ActorHeader, p.Name) ||
				t.Approval != nil && strings.EqualFold(u.IdempotencyHeader, p.Name))
		default:
			reach = true // cookies are out of the gateway's reach, and of this check's
		}
		if !reach && credentialParameter(d, op, p) && sendsBearer(u) {
			// Another way to send the token the upstream's
			// Authorization header carries: the import leaves it out.
			reach = true
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

// kind holds the tool's kind to the method. GET and HEAD are safe by
// definition (RFC 9110, 9.2.1), so a write bound to one is drift, unless
// the document says the operation changes state (x-mcp-kind: write). A
// read bound to POST is a query when the catalog says so in words (kind:
// read written on the tool, or set by an override) or the document does
// (x-mcp-kind: read): POST /flow_runs/filter changes nothing, and making
// it a write would hide it behind the gate that also deletes. A read
// with kind left to its default is not taken as that decision: a
// forgotten "kind: write" on a POST would make a write ungated. PUT,
// PATCH and DELETE replace or remove by definition: a read bound to one
// is always a problem.
func (k *toolChecker) kind(op *openapi3.Operation) {
	t, method := k.t, k.t.Request.Method
	docKind, _ := op.Extensions["x-mcp-kind"].(string)
	switch safe := method == http.MethodGet || method == http.MethodHead; {
	case t.Kind == catalog.KindWrite && safe && docKind != catalog.KindWrite:
		k.add(t.At("kind"), "a write tool is bound to %s, which does not change anything", method)
	case t.Kind == catalog.KindRead && method == http.MethodPost:
		if !t.Has("kind") && docKind != catalog.KindRead {
			k.add(t.At("kind"), "a read tool is bound to POST, which may change state: if the operation only queries, write kind: read on the tool (or in its override); if it changes anything, make it kind: write behind a gate")
		}
	case t.Kind == catalog.KindRead && !safe:
		k.add(t.At("kind"), "a read tool is bound to %s, which may change state: make it kind: write behind a gate", method)
	}
}

// ignoredHeader reports the header parameters OpenAPI tells readers to
// ignore (3.0 and 3.1, Parameter Object: Accept, Content-Type and
// Authorization are described elsewhere), so a document cannot declare
// them and the check does not ask it to, and the framing headers the
// HTTP client sends itself (Content-Length, Host, Transfer-Encoding,
// Connection), which the import leaves out.
func ignoredHeader(name string) bool {
	return slices.ContainsFunc([]string{"Accept", "Content-Type", "Authorization", "Content-Length", "Host", "Transfer-Encoding", "Connection"},
		func(h string) bool { return strings.EqualFold(name, h) })
}

// sendsBearer reports whether the gateway sends u a bearer token in its
// Authorization header: a static header, a workspace's credential in that
// format, or an OAuth 2.0 token the gateway obtains.
func sendsBearer(u *catalog.Upstream) bool {
	if u == nil {
		return false
	}
	for h, v := range u.Headers {
		if strings.EqualFold(h, "Authorization") && bearerValue(v) {
			return true
		}
	}
	if c := u.Credentials; c != nil && strings.EqualFold(cmp.Or(c.Header, catalog.DefaultCredentialHeader), "Authorization") && bearerValue(c.Format) {
		return true
	}
	return u.Auth != nil && (u.Auth.Type == catalog.AuthClientCredentials || u.Auth.Type == catalog.AuthTokenExchange)
}

// apiKeyNames returns the headers or query parameters (in) that the
// document's API key security schemes name, lower case: a tool may set
// them (a fixed credential, or one from the environment). The scheme's
// type and place are read in any case, as the import maps them.
func apiKeyNames(d *Document, in string) map[string]bool {
	out := map[string]bool{}
	if d.doc.Components == nil {
		return out
	}
	for _, s := range d.doc.Components.SecuritySchemes {
		if s != nil && s.Value != nil && strings.EqualFold(s.Value.Type, "apiKey") && strings.EqualFold(s.Value.In, in) {
			out[strings.ToLower(s.Value.Name)] = true
		}
	}
	return out
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
// 2xx JSON response schema, or, when the operation answers without a
// body or with text, against the result the gateway makes of that.
func (k *toolChecker) response(op *openapi3.Operation) {
	t := k.t
	if op.Responses == nil || t.Response.Render == catalog.RenderPayload {
		return
	}
	schema, implicit := successSchema(op)
	if schema == nil {
		if t.OutputSchema != nil {
			k.add(t.At("output_schema"), "output_schema is declared, but the operation declares no 2xx JSON response")
		}
		return
	}
	shaped := &shape{schema: schema}
	if implicit {
		// No path applies to an empty or text answer: the result is
		// the gateway's own.
		k.outputSchema(shaped)
		return
	}
	if t.Response.Select != "" {
		s, ok, missing := k.w.walk(schema, t.Response.Select)
		if !ok {
			k.add(t.Response.At("select"), "response.select %q is not in the response schema%s", t.Response.Select, part(missing, t.Response.Select))
			return
		}
		shaped = &shape{schema: s}
	}
	if len(t.Response.Fields) > 0 {
		fields := map[string]*openapi3.Schema{}
		for _, f := range t.Response.Fields {
			s, ok, missing := k.w.walk(shaped.schema, f.Path)
			if !ok {
				k.add(t.Response.At("fields"), "response.fields %s: path %q is not in the response schema%s", f.Name, f.Path, part(missing, f.Path))
				continue
			}
			fields[f.Name] = s
		}
		shaped = &shape{fields: fields}
	}
	k.outputSchema(shaped)
}

// part names the component of path that is missing, when the path has
// more than that one.
func part(missing, path string) string {
	if missing == "" || missing == path || !strings.ContainsAny(path, "{[") {
		return ""
	}
	return fmt.Sprintf(" (%q is not there)", missing)
}

// successSchema returns the schema of the first 2xx response: its JSON
// schema, or, for an answer with no body or a text body, the result the
// gateway makes of it ({ok, upstreamStatus}, {text, truncated,
// byteCount}; implicit is then set). Nil when the operation declares
// neither.
func successSchema(op *openapi3.Operation) (schema *openapi3.Schema, implicit bool) {
	rm := op.Responses.Map()
	var first *openapi3.Response
	for _, code := range sortedKeys(rm) {
		r := rm[code]
		if !strings.HasPrefix(code, "2") || r == nil || r.Value == nil {
			continue
		}
		if mt, _ := jsonMedia(r.Value.Content); mt != nil && mt.Schema != nil {
			return mt.Schema.Value, false
		}
		if first == nil {
			first = r.Value
		}
	}
	object := func(props map[string]string) *openapi3.Schema {
		s := &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: openapi3.Schemas{}}
		for name, typ := range props {
			s.Properties[name] = openapi3.NewSchemaRef("", typed(typ))
		}
		return s
	}
	switch {
	case first == nil:
		return nil, false
	case len(first.Content) == 0:
		return object(map[string]string{"ok": "boolean", "upstreamStatus": "integer"}), true
	}
	for mt := range first.Content {
		base, _, _ := strings.Cut(strings.ToLower(mt), ";")
		if base = strings.TrimSpace(base); strings.HasPrefix(base, "text/") && base != "text/html" {
			return object(map[string]string{"text": "string", "truncated": "boolean", "byteCount": "integer"}), true
		}
	}
	return nil, false
}

// outputSchema holds each top-level property of output_schema to the
// shaped result.
func (k *toolChecker) outputSchema(shaped *shape) {
	t := k.t
	if t.OutputSchema == nil {
		return
	}
	props, _ := t.OutputSchema["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		got, known := shaped.property(k.w, name, t)
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
// key can be there at all (nil: anything). The gateway's own members
// (transportTruncated; the sensitive note of a tool that withholds) can
// always be there; an array is wrapped as {items}, any other value that
// is not an object as {value}.
func (s *shape) property(w *walker, name string, t *catalog.Tool) (*openapi3.Schema, bool) {
	note := t.Response.SensitiveNoteField
	if note == "" {
		note = catalog.DefaultSensitiveNote
	}
	switch {
	case name == "transportTruncated":
		return nil, true
	case name == note && len(t.Response.Sensitive) > 0:
		return typed("string"), true
	case s.fields != nil:
		f, ok := s.fields[name]
		return f, ok
	case s.schema == nil:
		return nil, true
	}
	if types, known := typesOf(s.schema, 0); known {
		if name == "items" && slices.Contains(types, "array") {
			return s.schema, true
		}
		if name == "value" && slices.ContainsFunc(types, func(t string) bool { return t != "object" && t != "array" }) {
			return s.schema, true
		}
		if !slices.Contains(types, "object") {
			return nil, false
		}
	}
	return either(w.member(s.schema, name, 0, nil))
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
	gotTypes, known := typesOf(got, 0)
	if !known {
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
	for _, g := range gotTypes {
		if g == "null" && got.Nullable {
			continue
		}
		if !slices.Contains(wantTypes, g) && !(g == "integer" && slices.Contains(wantTypes, "number")) {
			return fmt.Sprintf("type %v does not admit the document's %s", wantTypes, g)
		}
	}
	return ""
}
