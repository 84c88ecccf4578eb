package openapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The tenant fence of an import. With a shared upstream credential (one
// service account for every caller, which is what an import suggests) the
// upstream cannot tell tenants apart: the gateway's binding is the only
// fence. So with --workspace-param every operation must be bound to the
// caller's workspace, wherever the document names the tenant, or it is
// left out: a free argument that looks like a tenant, a resource id that is
// not under the bound path segment, an admin or instance-wide endpoint
// would each let an agent holding an acme token name or reach globex.

// workspaceNames matches parameter and property names against the
// --workspace-param names, in any spelling: case-insensitively, across
// snake_case, camelCase and kebab-case, and for headers with or without
// an X- prefix (workspace_id = workspaceId = workspace-id = X-Workspace-Id).
type workspaceNames struct {
	list  []string        // as given, for messages
	exact map[string]bool // normalized spellings that bind
	words map[string]bool // words that make a name look like a tenant
}

// tenantWords make a name look like a tenant's whatever --workspace-param
// says: a parameter called tenant_id or new_owner may pick another tenant
// even when the workspace is called something else.
var tenantWords = []string{"tenant", "workspace", "org", "organization", "organisation", "owner", "account", "namespace", "username"}

// genericWords are parts of a name that say nothing about tenancy: the
// "id" of workspace_id must not make every *_id look like a tenant.
var genericWords = []string{"x", "id", "ids", "uuid", "name", "key", "slug", "ref", "code", "no", "number"}

func newWorkspaceNames(param string) *workspaceNames {
	w := &workspaceNames{exact: map[string]bool{}, words: map[string]bool{}}
	for _, p := range strings.Split(param, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		w.list = append(w.list, p)
		w.exact[normName(p)] = true
		w.exact[normName(trimX(p))] = true
		w.words[normName(trimX(p))] = true
		for _, word := range strings.Split(snake(trimX(p)), "_") {
			if word != "" && !slices.Contains(genericWords, word) {
				w.words[word] = true
			}
		}
	}
	if len(w.list) == 0 {
		return nil
	}
	for _, word := range tenantWords {
		w.words[word] = true
	}
	return w
}

// normName is name in lower case with only its letters and digits.
func normName(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// trimX drops the X- of an X-Workspace-Id header name.
func trimX(name string) string {
	if len(name) > 2 && (name[0] == 'x' || name[0] == 'X') && (name[1] == '-' || name[1] == '_') {
		return name[2:]
	}
	return name
}

// binds reports whether name, a parameter in in ("body" for a body
// property), is one of the workspace names.
func (w *workspaceNames) binds(in, name string) bool {
	if w == nil {
		return false
	}
	if w.exact[normName(name)] {
		return true
	}
	return in == "header" && w.exact[normName(trimX(name))]
}

// looksLike reports whether name looks like a tenant (workspace,
// organisation, owner...) without being one of the workspace names: a
// look-alike the import cannot decide.
func (w *workspaceNames) looksLike(name string) bool {
	if w == nil {
		return false
	}
	if w.exact[normName(name)] || w.exact[normName(trimX(name))] {
		return true
	}
	for _, word := range strings.Split(snake(trimX(name)), "_") {
		if w.words[word] || len(word) > 3 && strings.HasSuffix(word, "s") && w.words[word[:len(word)-1]] {
			return true
		}
	}
	return false
}

func (w *workspaceNames) String() string { return strings.Join(w.list, ",") }

// maxPropertyWalk bounds the schema nodes one search of a schema walks.
const maxPropertyWalk = 2000

// propertyNamed returns the first property name under schema s (depth
// first, in name order) for which match is true, or "".
func propertyNamed(s map[string]any, match func(string) bool) string {
	budget := maxPropertyWalk
	var walk func(s map[string]any) string
	walk = func(s map[string]any) string {
		if budget--; budget < 0 || s == nil {
			return ""
		}
		var subs []any
		if props, ok := s["properties"].(map[string]any); ok {
			for _, name := range sortedKeys(props) {
				if match(name) {
					return name
				}
				subs = append(subs, props[name])
			}
		}
		subs = append(subs, s["items"], s["additionalProperties"])
		for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
			list, _ := s[k].([]any)
			subs = append(subs, list...)
		}
		for _, sub := range subs {
			if m, _ := sub.(map[string]any); m != nil {
				if n := walk(m); n != "" {
					return n
				}
			}
		}
		return ""
	}
	return walk(s)
}

// maxRawWalk bounds the distinct schemas one search of an operation's
// own schemas visits; a request past it is too large to clear.
const maxRawWalk = 20000

// rawPropertyNamed is propertyNamed over the operation's own schemas, the
// request body's and the parameters', before the import cuts them to its
// depth, width and node bounds: a tenant property the cut dropped (seven
// levels down, or the 201st of an object) would otherwise be passed
// through an open object unseen. The body's top-level names that bind the
// workspace are skipped (they become {workspace}). over is true when the
// walk ran out of budget before it could clear the request.
func rawPropertyNamed(item *openapi3.PathItem, op *openapi3.Operation, w *workspaceNames) (name string, over bool) {
	seen := map[*openapi3.Schema]bool{}
	budget := maxRawWalk
	var walk func(r *openapi3.SchemaRef, top bool) string
	walk = func(r *openapi3.SchemaRef, top bool) string {
		if r == nil || r.Value == nil || seen[r.Value] {
			return ""
		}
		if budget--; budget < 0 {
			over = true
			return ""
		}
		s := r.Value
		seen[s] = true
		for _, n := range sortedKeys(s.Properties) {
			if w.looksLike(n) && !(top && w.binds("body", n)) {
				return n
			}
		}
		subs := []*openapi3.SchemaRef{s.Items, s.AdditionalProperties.Schema, s.Not}
		for _, n := range sortedKeys(s.Properties) {
			subs = append(subs, s.Properties[n])
		}
		for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range list {
				// A branch's top-level properties are the body's own.
				if n := walk(sub, top); n != "" {
					return n
				}
			}
		}
		for _, sub := range subs {
			if n := walk(sub, false); n != "" {
				return n
			}
		}
		return ""
	}
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		for _, mime := range sortedKeys(rb.Value.Content) {
			if mt := rb.Value.Content[mime]; mt != nil {
				if n := walk(mt.Schema, true); n != "" {
					return n, over
				}
			}
		}
	}
	for _, p := range mergedParameters(item, op) {
		if n := walk(p.Schema, false); n != "" {
			return n, over
		}
	}
	return "", over
}

// fence returns why t, with its arguments props, is not bound to the
// caller's workspace; none when it is, or when the import has no
// --workspace-param.
func (im *importer) fence(t *tool, props map[string]any, item *openapi3.PathItem, op *openapi3.Operation) []string {
	w := im.ws
	if w == nil {
		return nil
	}
	var why []string
	if !t.bound {
		why = append(why, fmt.Sprintf("no parameter or body property of the operation is one of --workspace-param %s, so nothing binds it to the caller's workspace", w))
	}
	segs := strings.Split(t.path, "/")
	if i := slices.IndexFunc(segs, func(s string) bool { return strings.EqualFold(s, "admin") }); i >= 0 {
		why = append(why, "an admin endpoint reaches every tenant")
	}
	if ws := strings.Index(t.path, "{workspace}"); ws >= 0 {
		for _, m := range pathParam.FindAllStringSubmatch(t.path[:ws], -1) {
			why = append(why, fmt.Sprintf("path argument %q comes before the workspace in the path, so it can name another tenant's resource", m[1]))
		}
	}
	for _, k := range t.pathQueryKeys() {
		if w.looksLike(k) {
			// ?org=globex sends one tenant's name whoever calls.
			why = append(why, fmt.Sprintf("the path's query sets %q, which looks like a tenant but is not one of --workspace-param %s", k, w))
		}
	}
	for _, a := range sortedKeys(props) {
		if w.looksLike(a) {
			why = append(why, fmt.Sprintf("argument %q looks like a tenant but is not one of --workspace-param %s", a, w))
			continue
		}
		if sub, _ := props[a].(map[string]any); sub != nil {
			if n := propertyNamed(sub, w.looksLike); n != "" {
				why = append(why, fmt.Sprintf("argument %q holds a property %q that looks like a tenant", a, n))
			}
		}
	}
	if len(why) == 0 {
		// What the import keeps of the schemas is clear; what it cut must
		// be too.
		switch n, over := rawPropertyNamed(item, op, w); {
		case n != "":
			why = append(why, fmt.Sprintf("the request holds a property %q that looks like a tenant, past what the import keeps of its schema", n))
		case over:
			why = append(why, fmt.Sprintf("the request's schema is larger than the %d schemas the import checks for a tenant property", maxRawWalk))
		}
	}
	return why
}
