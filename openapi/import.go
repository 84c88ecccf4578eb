package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mcpgw/gateway/catalog"
	"gopkg.in/yaml.v3"
)

// Options configures [Import]. The zero value imports every read
// operation as a fragment for an upstream that must then be named.
type Options struct {
	// Upstream names the upstream the tools call. Required.
	Upstream string
	// BaseURL is the upstream's base_url; "" takes the document's first
	// server URL, and failing that a ${NAME_URL} placeholder.
	BaseURL string
	// Tags keeps only operations carrying one of these tags; empty keeps all.
	Tags []string
	// IncludeWrites imports non-GET/HEAD operations as write tools behind
	// a gate the operator must grant; without it they are skipped.
	IncludeWrites bool
	// WorkspaceParam names the parameter bound to the caller's workspace:
	// it becomes the upstream's workspace binding (or {workspace} in a
	// path), never an argument. "": the upstream is declared tenantless.
	WorkspaceParam string
	// ActorHeader names a header parameter that carries the acting
	// identity: it becomes the upstream's actor_header (set to the caller's
	// actor on every write), never an argument.
	ActorHeader string
	// Standalone writes a whole catalog (server, placeholder auth, gates)
	// instead of a fragment holding only upstreams and tools.
	Standalone bool
}

// Skipped is an operation the import left out, and why.
type Skipped struct {
	Method, Path, Reason string
}

func (s Skipped) String() string { return s.Method + " " + s.Path + ": " + s.Reason }

// Result is an import's output.
type Result struct {
	// YAML is the fragment or catalog, deterministic for a given input.
	YAML []byte
	// Tools counts the tools written.
	Tools int
	// Skipped lists the operations left out, in path then method order.
	Skipped []Skipped
}

var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodTrace}

// MaxOperations bounds the operations one import maps (after --tags): a
// 64 MiB document can hold a million one-line operations, which would cost
// minutes and gigabytes. The largest real descriptions have a few
// thousand.
const MaxOperations = 50000

var upstreamName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Import maps d's operations to tools, one per operation, sorted by name.
// It is [ImportContext] without a deadline.
func Import(d *Document, opts Options) (*Result, error) {
	return ImportContext(context.Background(), d, opts)
}

// ImportContext maps d's operations to tools, one per operation, sorted
// by name, and stops with ctx's error when ctx ends. The work is bounded
// whatever the document: at most [MaxOperations] operations, and schemas
// within [MaxSchemaNodes] each and [MaxImportSchemaNodes] in all.
func ImportContext(ctx context.Context, d *Document, opts Options) (res *Result, err error) {
	if !upstreamName.MatchString(opts.Upstream) {
		return nil, fmt.Errorf("upstream name %q must match %s", opts.Upstream, upstreamName)
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("cannot import document: %v", r)
		}
	}()
	im := &importer{ctx: ctx, d: d, opts: opts, names: map[string]int{}}
	n := im.operations()
	if n > MaxOperations {
		return nil, fmt.Errorf("the document has %d operations to import, more than the %d one import maps; choose some with --tags", n, MaxOperations)
	}
	im.share = schemaShare(n)
	if err := im.run(); err != nil {
		return nil, err
	}
	return im.result()
}

type importer struct {
	ctx     context.Context
	d       *Document
	share   int // each schema's share of the import's nodes (schemaShare)
	opts    Options
	tools   []*tool
	skipped []Skipped
	names   map[string]int
	// workspace is where --workspace-param was found: "path", "query" or "header".
	wsIn, wsName string
	// actorSeen is set when an operation declares the ActorHeader header.
	actorSeen bool
	// cred is credHeader's answer once credDone.
	cred     string
	credDone bool
}

type tool struct {
	name, title, description, kind string
	method, path                   string
	opPath                         string // the path as the document writes it
	tags                           []string
	input                          map[string]any
	query, headers                 map[string]string
	body                           any
	notFound                       bool
	pageSize, cursor               string
	output                         map[string]any
	payload                        bool
	destructive, idempotent        *bool
	notes                          []string // comments on guesses
	nameNote                       string
}

// gatewayHeaders are header parameters never imported as arguments: the
// upstream's credentials and what the gateway's HTTP client sets.
var gatewayHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Content-Type", "Accept", "Content-Length", "Host", "Transfer-Encoding", "Connection"}

// credHeader is the canonical name of the header the upstream's
// credentials go in (see credentials), or "".
func (im *importer) credHeader() string {
	if !im.credDone {
		h, _, _ := im.credentials()
		im.cred, im.credDone = http.CanonicalHeaderKey(h), true
	}
	return im.cred
}

func (im *importer) skip(method, path, format string, args ...any) {
	im.skipped = append(im.skipped, Skipped{Method: method, Path: path, Reason: fmt.Sprintf(format, args...)})
}

// selected reports whether --tags selects op.
func (im *importer) selected(op *openapi3.Operation) bool {
	return len(im.opts.Tags) == 0 || slices.ContainsFunc(op.Tags, func(t string) bool { return slices.Contains(im.opts.Tags, t) })
}

// operations counts the operations --tags selects.
func (im *importer) operations() int {
	n := 0
	if im.d.doc.Paths == nil {
		return 0
	}
	for _, item := range im.d.doc.Paths.Map() {
		if item == nil {
			continue
		}
		for _, op := range item.Operations() {
			if op != nil && im.selected(op) {
				n++
			}
		}
	}
	return n
}

func (im *importer) run() error {
	if im.d.doc.Paths == nil {
		return nil
	}
	pm := im.d.doc.Paths.Map()
	for _, path := range sortedKeys(pm) {
		item := pm[path]
		if item == nil {
			continue
		}
		if err := im.ctx.Err(); err != nil {
			return err
		}
		if why := unresolved(item.Extensions); why != "" {
			im.skip("*", path, "%s", why)
			continue
		}
		ops := item.Operations()
		for _, m := range methods {
			op := ops[m]
			if op == nil {
				continue
			}
			if !im.selected(op) {
				continue
			}
			write := m != http.MethodGet && m != http.MethodHead
			if write && !im.opts.IncludeWrites {
				im.skip(m, path, "write operation (pass --include-writes to import it behind a gate)")
				continue
			}
			if t := im.operation(m, path, item, op); t != nil {
				im.tools = append(im.tools, t)
			}
		}
	}
	im.name()
	if err := im.selfCheck(); err != nil {
		return err
	}
	slices.SortFunc(im.tools, func(a, b *tool) int { return strings.Compare(a.name, b.name) })
	return nil
}

var (
	nonWord   = regexp.MustCompile(`[^a-z0-9]+`)
	camelEdge = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	acronym   = regexp.MustCompile(`([A-Z]+)([A-Z][a-z])`)
)

// snake turns an operationId or a path into a snake_case tool name part.
func snake(s string) string {
	s = acronym.ReplaceAllString(s, "${1}_${2}")
	s = camelEdge.ReplaceAllString(s, "${1}_${2}")
	s = nonWord.ReplaceAllString(strings.ToLower(s), "_")
	return strings.Trim(s, "_")
}

// name gives each tool a unique name within MCP's rules.
func (im *importer) name() {
	// Sort first by the proposed name, then by method and path, so that
	// suffixes are stable.
	slices.SortStableFunc(im.tools, func(a, b *tool) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.method+" "+a.path, b.method+" "+b.path)
	})
	for _, t := range im.tools {
		base := t.name
		if len(base) > 60 {
			base = strings.TrimRight(base[:60], "_")
			t.nameNote = "name cut to 60 characters"
		}
		name := base
		for n := 2; im.names[name] > 0; n++ {
			name = base + "_" + strconv.Itoa(n)
			t.nameNote = fmt.Sprintf("%q was taken by another operation", base)
		}
		im.names[name]++
		t.name = name
	}
}

var pathParam = regexp.MustCompile(`\{([^{}]*)\}`)

var argName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// arg turns a parameter or property name into an argument name.
func arg(name string) string {
	a := snake(name)
	if a == "" || a[0] >= '0' && a[0] <= '9' {
		a = "p_" + a
	}
	if a == "workspace" || a == "actor" {
		a += "_"
	}
	return a
}

func (im *importer) operation(method, path string, item *openapi3.PathItem, op *openapi3.Operation) *tool {
	t := &tool{method: method, opPath: path, query: map[string]string{}, headers: map[string]string{}}
	if !strings.HasPrefix(path, "/") {
		im.skip(method, path, "path does not start with /")
		return nil
	}
	t.kind = "read"
	if method != http.MethodGet && method != http.MethodHead {
		t.kind = "write"
		switch method {
		case http.MethodDelete:
			t.destructive, t.idempotent = ptr(true), ptr(true)
		case http.MethodPut:
			t.destructive, t.idempotent = ptr(true), ptr(true)
		default:
			t.destructive, t.idempotent = ptr(false), ptr(false)
		}
		t.notes = append(t.notes, "annotations guessed from the method "+method)
	}
	if len(op.Callbacks) > 0 {
		im.skip(method, path, "callbacks are not mapped")
		return nil
	}
	if op.OperationID != "" {
		t.name = snake(op.OperationID)
	}
	if t.name == "" {
		t.name = snake(strings.ToLower(method) + " " + pathParam.ReplaceAllString(path, "by $1"))
		t.notes = append(t.notes, "no operationId: name made from the method and path")
	}
	if t.name == "" || t.name[0] >= '0' && t.name[0] <= '9' {
		t.name = "op_" + t.name
	}
	t.title = bound(op.Summary, 120)
	desc := strings.TrimSpace(op.Summary)
	if d := strings.TrimSpace(op.Description); d != "" && d != desc {
		if desc != "" {
			desc += "\n\n"
		}
		desc += d
	}
	if desc == "" {
		desc = method + " " + path
	}
	t.description = bound(desc, MaxDescription)
	t.tags = slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(op.Tags)))))

	conv := &converter{forInput: true, limit: im.share}
	props := map[string]any{}
	var required []any
	taken := map[string]bool{}

	// Parameters: the operation's override the path item's by (in, name).
	params := map[string]*openapi3.Parameter{}
	var order []string
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, pr := range list {
			if pr == nil || pr.Value == nil {
				continue
			}
			if why := unresolved(pr.Value.Extensions); why != "" {
				im.skip(method, path, "%s", why)
				return nil
			}
			key := pr.Value.In + "\x00" + pr.Value.Name
			if _, seen := params[key]; !seen {
				order = append(order, key)
			}
			params[key] = pr.Value
		}
	}
	slices.Sort(order)
	tpath := path
	for _, key := range order {
		p := params[key]
		ws := im.opts.WorkspaceParam != "" && p.Name == im.opts.WorkspaceParam
		if ws {
			if im.wsIn == "" {
				im.wsIn, im.wsName = p.In, p.Name
			}
			switch {
			case p.In == openapi3.ParameterInPath:
				tpath = strings.ReplaceAll(tpath, "{"+p.Name+"}", "{workspace}")
				continue
			case p.In == im.wsIn && p.Name == im.wsName && p.In != openapi3.ParameterInCookie:
				continue // the upstream's binding sets it
			}
			im.skip(method, path, "workspace parameter %q is in %s here but in %s elsewhere", p.Name, p.In, im.wsIn)
			return nil
		}
		if im.opts.ActorHeader != "" && p.In == openapi3.ParameterInHeader && strings.EqualFold(p.Name, im.opts.ActorHeader) {
			im.actorSeen = true
			continue // the upstream's actor_header sets it
		}
		a := arg(p.Name)
		if taken[a] {
			a = arg(p.In + "_" + p.Name)
		}
		if taken[a] {
			im.skip(method, path, "parameters %q collide as argument %q", p.Name, a)
			return nil
		}
		var sch map[string]any
		switch {
		case p.Schema != nil:
			sch = conv.schema(p.Schema, 1, nil)
		case p.Content != nil:
			if mt := p.Content.Get("application/json"); mt != nil && mt.Schema != nil {
				sch = conv.schema(mt.Schema, 1, nil)
			} else {
				sch = map[string]any{"type": "string"}
			}
		default:
			sch = map[string]any{"type": "string"}
		}
		if d := bound(p.Description, MaxPropertyDescription); d != "" {
			sch["description"] = d
		}
		if typ, _ := sch["type"].(string); typ == "object" && p.In != openapi3.ParameterInPath {
			if p.Required {
				im.skip(method, path, "required %s parameter %q is an object (style %q is not mapped)", p.In, p.Name, p.Style)
				return nil
			}
			t.notes = append(t.notes, fmt.Sprintf("object %s parameter %q left out", p.In, p.Name))
			continue
		}
		ph := "{" + a + "}"
		switch p.In {
		case openapi3.ParameterInPath:
			if !strings.Contains(tpath, "{"+p.Name+"}") {
				continue // declared but not in the path: nothing to fill
			}
			tpath = strings.ReplaceAll(tpath, "{"+p.Name+"}", ph)
			required = append(required, a)
		case openapi3.ParameterInQuery:
			t.query[p.Name] = ph
			if p.Required {
				required = append(required, a)
			}
		case openapi3.ParameterInHeader:
			switch h := http.CanonicalHeaderKey(p.Name); {
			case slices.Contains(gatewayHeaders, h), h == im.credHeader():
				// Credentials and framing are the upstream's and the
				// HTTP client's: an argument must never choose them.
				t.notes = append(t.notes, fmt.Sprintf("header parameter %q left to the upstream's own headers", p.Name))
				continue
			}
			if !catalog.ValidHeaderName(p.Name) {
				im.skip(method, path, "header parameter %q is not a valid header name", p.Name)
				return nil
			}
			t.headers[p.Name] = ph
			if p.Required {
				required = append(required, a)
			}
		default:
			if p.Required {
				im.skip(method, path, "required %s parameter %q cannot be mapped", p.In, p.Name)
				return nil
			}
			t.notes = append(t.notes, fmt.Sprintf("%s parameter %q left out", p.In, p.Name))
			continue
		}
		taken[a] = true
		props[a] = sch
		switch strings.ToLower(p.Name) {
		case "cursor", "after", "after_cursor", "page_token", "pagetoken", "next_token", "nexttoken", "starting_after", "continuation_token", "continuationtoken", "marker":
			if p.In == openapi3.ParameterInQuery && t.cursor == "" {
				t.cursor = a
			}
		case "limit", "page_size", "pagesize", "per_page", "perpage", "max_results", "maxresults", "top", "size":
			if p.In == openapi3.ParameterInQuery && t.pageSize == "" {
				if typ, _ := sch["type"].(string); typ == "integer" {
					t.pageSize = a
				}
			}
		}
	}
	if m := pathParam.FindAllStringSubmatch(tpath, -1); m != nil {
		for _, x := range m {
			if x[1] != "workspace" && !taken[x[1]] {
				im.skip(method, path, "path parameter {%s} is not declared", x[1])
				return nil
			}
		}
	}
	if strings.ContainsAny(pathParam.ReplaceAllString(tpath, ""), "{}") {
		im.skip(method, path, "path has unbalanced braces")
		return nil
	}
	t.path = tpath

	// Request body: JSON only.
	if rb := op.RequestBody; rb != nil && rb.Value != nil && unresolved(rb.Value.Extensions) != "" {
		im.skip(method, path, "%s", unresolved(rb.Value.Extensions))
		return nil
	}
	if rb := op.RequestBody; rb != nil && rb.Value != nil && len(rb.Value.Content) > 0 {
		mt, mime := jsonMedia(rb.Value.Content)
		if mt == nil {
			im.skip(method, path, "request body is %s, not JSON", strings.Join(sortedKeys(rb.Value.Content), ", "))
			return nil
		}
		_ = mime
		bs := conv.schema(mt.Schema, 0, nil)
		bprops, isObj := bs["properties"].(map[string]any)
		if typ, _ := bs["type"].(string); isObj && (typ == "object" || typ == "") && len(bprops) > 0 {
			body := map[string]any{}
			breq, _ := bs["required"].([]any)
			for _, name := range sortedKeys(bprops) {
				a := arg(name)
				if taken[a] {
					a = arg("body_" + name)
				}
				if taken[a] {
					im.skip(method, path, "body property %q collides with a parameter", name)
					return nil
				}
				taken[a] = true
				props[a] = bprops[name]
				body[name] = "{" + a + "}"
				if rb.Value.Required && slices.Contains(breq, any(name)) {
					required = append(required, a)
				}
			}
			t.body = body
		} else {
			a := "body"
			if taken[a] {
				im.skip(method, path, "a parameter is called body")
				return nil
			}
			taken[a] = true
			props[a] = bs
			t.body = "{body}"
			if rb.Value.Required {
				required = append(required, a)
			}
		}
	}

	if conv.unresolved != "" {
		im.skip(method, path, "%s", conv.unresolved)
		return nil
	}
	input := map[string]any{"type": "object", "additionalProperties": false}
	if len(props) > 0 {
		input["properties"] = props
	}
	if len(required) > 0 {
		slices.SortFunc(required, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		input["required"] = slices.Compact(required)
	}
	if msg := checkSchema(input); msg != "" {
		im.skip(method, path, "input schema does not compile: %s", msg)
		return nil
	}
	dropBadDefaults(props, conv)
	t.input = input

	// Responses.
	if op.Responses != nil {
		rm := op.Responses.Map()
		if rm["404"] != nil {
			t.notFound = true
		}
		for _, code := range sortedKeys(rm) {
			if !strings.HasPrefix(code, "2") {
				continue
			}
			r := rm[code]
			if r != nil && r.Value != nil && unresolved(r.Value.Extensions) != "" {
				im.skip(method, path, "%s", unresolved(r.Value.Extensions))
				return nil
			}
			if r == nil || r.Value == nil || len(r.Value.Content) == 0 {
				continue
			}
			mt, _ := jsonMedia(r.Value.Content)
			if mt == nil {
				if t.kind == "read" {
					t.payload = true
					t.notes = append(t.notes, fmt.Sprintf("the %s answer is %s, rendered as a payload", code, strings.Join(sortedKeys(r.Value.Content), ", ")))
				}
				break
			}
			if mt.Schema == nil {
				break
			}
			oc := &converter{limit: im.share}
			out := oc.schema(mt.Schema, 0, nil)
			if oc.unresolved != "" {
				im.skip(method, path, "%s", oc.unresolved)
				return nil
			}
			if _, typed := out["type"]; !typed && allObjects(out["allOf"]) {
				out["type"] = "object" // every allOf member is an object, so the whole is
			}
			switch typ, _ := out["type"].(string); typ {
			case "array":
				out = map[string]any{"type": "object", "properties": map[string]any{"items": out}, "required": []any{"items"}}
				t.notes = append(t.notes, "output_schema: the array answer wrapped as {items: ...}")
			case "object":
			default:
				out = nil
			}
			if out != nil && checkSchema(out) == "" {
				t.output = out
				for _, n := range oc.notes {
					conv.note("%s", n)
				}
			}
			break
		}
	}
	for _, n := range conv.notes {
		t.notes = append(t.notes, n)
	}
	return t
}

// jsonMedia picks the JSON media type of content: application/json first,
// then any other */json or */*+json, by name.
func jsonMedia(content openapi3.Content) (*openapi3.MediaType, string) {
	if mt := content["application/json"]; mt != nil {
		return mt, "application/json"
	}
	for _, k := range sortedKeys(content) {
		base, _, _ := strings.Cut(strings.ToLower(k), ";")
		base = strings.TrimSpace(base)
		if strings.HasSuffix(base, "/json") || strings.HasSuffix(base, "+json") {
			return content[k], k
		}
	}
	return nil, ""
}

func ptr[T any](v T) *T { return &v }

func (im *importer) result() (*Result, error) {
	root := im.emit()
	// yaml.v3's emitter keeps every event of a document until it is
	// closed, so a large document is written as its head and then one
	// small document per tool, indented under "tools:"; the bytes are the
	// same as one Encode would write, at a fraction of the peak memory.
	root.Content = root.Content[:len(root.Content)-2] // "tools", written below
	var buf bytes.Buffer
	if err := encodeYAML(&buf, root, ""); err != nil {
		return nil, err
	}
	if len(im.tools) == 0 {
		buf.WriteString("tools: []\n")
	} else {
		buf.WriteString("tools:\n")
	}
	for _, t := range im.tools {
		if err := im.ctx.Err(); err != nil {
			return nil, err
		}
		item := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{im.toolNode(t)}}
		if err := encodeYAML(&buf, item, "  "); err != nil {
			return nil, err
		}
	}
	if len(im.tools) == 0 && len(im.skipped) == 0 {
		return nil, errors.New("the document has no operations")
	}
	slices.SortStableFunc(im.skipped, func(a, b Skipped) int {
		return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method)
	})
	return &Result{YAML: buf.Bytes(), Tools: len(im.tools), Skipped: im.skipped}, nil
}

// encodeYAML writes n to buf, each non-empty line prefixed with indent.
func encodeYAML(buf *bytes.Buffer, n *yaml.Node, indent string) error {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return fmt.Errorf("cannot write YAML: %v", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("cannot write YAML: %v", err)
	}
	if indent == "" {
		buf.Write(b.Bytes())
		return nil
	}
	for _, line := range bytes.SplitAfter(b.Bytes(), []byte("\n")) {
		if len(bytes.TrimRight(line, "\n")) > 0 {
			buf.WriteString(indent)
		}
		buf.Write(line)
	}
	return nil
}

// allOf reports whether x is a non-empty list of object schemas.
func allObjects(x any) bool {
	list, _ := x.([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		if typ, _ := m["type"].(string); typ != "object" {
			return false
		}
	}
	return len(list) > 0
}
