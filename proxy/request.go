package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpgw/gateway/catalog"

	"github.com/mcpgw/gateway/internal/text"
)

// argError is a tool error caused by the caller's arguments: nothing was
// sent upstream.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func argErrorf(format string, a ...any) error { return &argError{fmt.Sprintf(format, a...)} }

// binding is what the principal contributes to a request. It comes from
// the verified token, never from arguments.
type binding struct {
	workspace string
	actor     string
	// subject is the person a token exchange names; never a placeholder.
	subject string
	// queryBound: the workspace travels in the query, so a path value
	// may hold no "?" or "#" (see segmentProblem).
	queryBound bool
}

// expandReserved is the principal's value for a reserved name.
func expandReserved(name string, b binding) string { v, _ := b.reserved(name); return v }

func (b binding) reserved(name string) (string, bool) {
	switch name {
	case catalog.ReservedWorkspace:
		return b.workspace, true
	case catalog.ReservedActor:
		return b.actor, true
	}
	return "", false
}

// scalarString renders an argument for a path, query or header. ok is
// false for an absent or null value.
func scalarString(v any) (s string, ok bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		if v {
			return "true", true
		}
		return "false", true
	case float64:
		return json.Number(fmt.Sprint(v)).String(), true
	default:
		b, _ := json.Marshal(v)
		return string(b), true
	}
}

// expandText expands t for a query value or header. ok is false when a
// placeholder's argument is absent (the parameter is then dropped).
func expandText(t catalog.Template, args map[string]any, b binding) (string, bool) {
	if name, whole := t.Whole(); whole {
		if v, ok := b.reserved(name); ok {
			return v, true
		}
		return scalarString(args[name])
	}
	var sb strings.Builder
	for _, p := range t.Parts {
		if p.Name == "" {
			sb.WriteString(p.Text)
			continue
		}
		if v, ok := b.reserved(p.Name); ok {
			sb.WriteString(v)
			continue
		}
		s, ok := scalarString(args[p.Name])
		if !ok {
			return "", false
		}
		sb.WriteString(s)
	}
	return sb.String(), true
}

// pathPart is one piece of a compiled path template: literal text,
// escaped once at load, or a placeholder.
type pathPart struct {
	lit   string // escaped literal, when name is ""
	name  string // placeholder
	multi bool   // its value may span segments (request.multi_segment)
}

// compilePath escapes a path template's literal parts once, at load.
// Placeholders named in multi may take values that span segments.
func compilePath(t catalog.Template, multi []string) []pathPart {
	parts := make([]pathPart, len(t.Parts))
	for i, p := range t.Parts {
		if p.Name == "" {
			parts[i] = pathPart{lit: (&url.URL{Path: p.Text}).EscapedPath()}
		} else {
			parts[i] = pathPart{name: p.Name, multi: slices.Contains(multi, p.Name)}
		}
	}
	return parts
}

// builtPath is an expanded path: escaped, and how much of it the catalog
// and the principal fixed before the first argument went in.
type builtPath struct {
	escaped string
	fixed   int  // escaped[:fixed] comes from the template and the token alone
	whole   bool // no argument went in: fixed is the whole path
}

// valueSpan is where one placeholder's value landed in the escaped path.
type valueSpan struct {
	start, end int
	name       string
}

// buildPath expands a compiled path into its escaped form. Every
// placeholder's value is escaped as one segment's content, so "/", "?", "#"
// and "%" can never change the path's shape; a multi_segment value is split
// at "/" and each piece escaped as one segment's content.
//
// Escaping is not enough on its own: many servers decode the path
// before routing or cleaning it (Go's ServeMux before 1.22, httprouter's
// RedirectFixedPath, IIS and some Java servers, which also take "\" for
// "/"), some decode it twice, and the gateway cannot know which. So every
// segment a value helped make is decoded again and again, as such a server
// would, and refused before anything is sent if any decoding of it is
// empty, "." or "..", holds "/" or "\", or NUL, CR or LF; see
// checkSegment. This holds whether a value fills its segment alone
// ("/{id}") or shares it ("/{name}.{ext}", "/{a}{b}").
func buildPath(parts []pathPart, args map[string]any, b binding) (builtPath, error) {
	var esc strings.Builder
	var spans []valueSpan
	fixed := -1
	for _, p := range parts {
		if p.name == "" {
			esc.WriteString(p.lit)
			continue
		}
		v, ok := b.reserved(p.name)
		if !ok {
			if fixed < 0 {
				fixed = esc.Len()
			}
			v, ok = scalarString(args[p.name])
			if !ok {
				return builtPath{}, argErrorf("argument %q is required", p.name)
			}
		}
		start := esc.Len()
		if p.multi {
			for i, seg := range strings.Split(v, "/") {
				if i > 0 {
					esc.WriteByte('/')
				}
				esc.WriteString(url.PathEscape(seg))
			}
		} else {
			esc.WriteString(url.PathEscape(v))
		}
		spans = append(spans, valueSpan{start, esc.Len(), p.name})
	}
	path := esc.String()
	segStart := 0
	for i := 0; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		if segStart > 0 {
			var names []string
			for _, sp := range spans {
				if sp.start <= i && sp.end >= segStart && !slices.Contains(names, sp.name) {
					names = append(names, sp.name)
				}
			}
			if len(names) > 0 {
				if err := checkSegment(path[segStart:i], names, b.queryBound); err != nil {
					return builtPath{}, err
				}
			}
		}
		segStart = i + 1
	}
	bp := builtPath{escaped: path, fixed: fixed}
	if fixed < 0 {
		bp.fixed, bp.whole = len(path), true
	}
	return bp, nil
}

// maxDecodes is how many times a path segment is percent-decoded when
// checked. A value still changing after that many decodings is refused:
// no real identifier is encoded so deep, and the check stays linear.
const maxDecodes = 8

// checkSegment refuses an escaped segment that some server, decoding it
// any number of times, could take for something else than one segment:
// empty, a dot segment ("." or "..", also before a ";" parameter, which
// Tomcat strips), a separator ("/", or "\" for IIS and some Java
// servers), or NUL, CR or LF; and, when queryBound (the upstream takes
// the workspace in its query), a query or fragment mark ("?", "#"). names are the placeholders whose values made
// it, for the message.
func checkSegment(seg string, names []string, queryBound bool) error {
	asWritten, _ := percentDecode(seg) // the segment as the template and values wrote it
	s := seg
	for level := 0; ; level++ {
		why := segmentProblem(s)
		if why == "" && queryBound && strings.ContainsAny(s, "?#") {
			// Sent escaped, but a hop that decodes the path before routing
			// (nginx's $uri, a double decoder) would read a query or a
			// fragment here: "1?workspace_id=globex#" would choose the
			// workspace, or drop the gateway's.
			why = `holds "?" or "#", which a server that decodes the path would take for a query or fragment, before the workspace this upstream takes in its query`
		}
		if why != "" {
			decoded := ""
			if level >= 2 {
				decoded = fmt.Sprintf(" decodes to %q, which", shorten(s))
			}
			return argErrorf("%s cannot be sent: the path segment %q%s %s (a path value must stay in its own segment)",
				placeholders(names), shorten(asWritten), decoded, why)
		}
		d, changed := percentDecode(s)
		if !changed {
			return nil
		}
		if level == maxDecodes {
			return argErrorf("%s cannot be sent: the path segment %q is percent-encoded more than %d levels deep",
				placeholders(names), shorten(asWritten), maxDecodes-1)
		}
		s = d
	}
}

// segmentProblem says what is wrong with one decoding of a segment, or "".
func segmentProblem(s string) string {
	switch {
	case s == "":
		return "is empty"
	case strings.ContainsAny(s, "/\\"):
		return `holds "/" or "\"`
	case strings.ContainsAny(s, "\x00\r\n"):
		return "holds NUL, CR or LF"
	}
	if s == "." || s == ".." {
		return "is a dot segment"
	}
	if i := strings.IndexByte(s, ';'); i >= 0 && (s[:i] == "." || s[:i] == "..") {
		return `is a dot segment once its ";" parameter is dropped`
	}
	return ""
}

// percentDecode decodes %XX escapes, and IIS's %uXXXX, once. A "%" that
// starts no valid escape stays as it is, and decoded bytes are kept as
// they are, valid UTF-8 or not (an overlong "%c0%ae" is not "."). changed
// reports whether anything was decoded.
func percentDecode(s string) (out string, changed bool) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, false
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
				b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
				i += 2
				changed = true
				continue
			}
			if i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') && ishex(s[i+2]) && ishex(s[i+3]) && ishex(s[i+4]) && ishex(s[i+5]) {
				r := rune(unhex(s[i+2]))<<12 | rune(unhex(s[i+3]))<<8 | rune(unhex(s[i+4]))<<4 | rune(unhex(s[i+5]))
				b = utf8.AppendRune(b, r)
				i += 5
				changed = true
				continue
			}
		}
		b = append(b, c)
	}
	return string(b), changed
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// shorten bounds a caller's value quoted back in a message.
func shorten(s string) string { return text.Clip(s, 80) }

// placeholders names the placeholders a message is about.
func placeholders(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return "path argument " + q[0]
	}
	return "path arguments " + strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// buildBody expands a compiled JSON body template (catalog
// Request.BodyTemplate). A template that is exactly "{arg}" keeps the
// argument's JSON type; an absent optional argument omits its object key
// (or array element); an explicit null stays null.
//
// A container that absent arguments leave empty is absent too, up to the
// body itself: a filter {id: {any_: ["{id}"]}} without id must not reach
// the upstream as any_: [], which matches nothing, where leaving the
// filter out matches everything. A container written empty in the
// template is the catalog's own value and stays.
func buildBody(tmpl any, args map[string]any, b binding) (v any, present bool) {
	switch t := tmpl.(type) {
	case catalog.Template:
		if name, whole := t.Whole(); whole {
			if r, ok := b.reserved(name); ok {
				return r, true
			}
			a, present := args[name]
			return a, present
		}
		return expandText(t, args, b)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if x, present := buildBody(e, args, b); present {
				out[k] = x
			}
		}
		return out, len(out) > 0 || len(t) == 0
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if x, present := buildBody(e, args, b); present {
				out = append(out, x)
			}
		}
		return out, len(out) > 0 || len(t) == 0
	}
	return tmpl, true
}

// validHeaderValue reports whether v may be sent as a header value: no
// control character (0x00-0x1F, 0x7F) except horizontal tab, the rule
// net/http's transport applies (httpguts.ValidHeaderFieldValue). CR, LF and
// NUL could split or smuggle headers; any of them makes the transport refuse
// the request, which must be the caller's error and never count against the
// upstream. Bytes from 0x80 up (obs-text, UTF-8) are allowed.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// bindingError is a value from the verified token (workspace or actor)
// that cannot be sent: the token is at fault, not the arguments. Nothing
// was sent upstream.
type bindingError struct{ msg string }

func (e *bindingError) Error() string { return e.msg }

// checkReserved refuses a workspace or actor that cannot go in a header.
func (b binding) checkReserved(name, upstream string) error {
	v, _ := b.reserved(name)
	if validHeaderValue(v) {
		return nil
	}
	return &bindingError{fmt.Sprintf("the token's %s contains a control character and cannot be sent to upstream %s in a header", name, upstream)}
}

// headerValue expands a header template and checks the result before
// anything is sent. A control character from the token's workspace or
// actor is a bindingError; one from the caller's arguments is the
// caller's argError, naming the header but not the bytes. (The template's
// own text was checked when the catalog was loaded.) ok is false when a
// placeholder's argument is absent.
func headerValue(name string, t catalog.Template, args map[string]any, b binding, upstream string) (s string, ok bool, err error) {
	for _, p := range t.Parts {
		if _, reserved := b.reserved(p.Name); p.Name != "" && reserved {
			if err := b.checkReserved(p.Name, upstream); err != nil {
				return "", false, err
			}
		}
	}
	s, ok = expandText(t, args, b)
	if ok && !validHeaderValue(s) {
		return "", false, argErrorf("header %s: the value from the arguments contains a control character, which cannot be sent", name)
	}
	return s, ok, nil
}

// bind binds the principal onto an outbound request: its workspace as
// the query parameter and the header the upstream declares, on writes its
// actor header, and its workspace's credential when the upstream chooses
// credentials by workspace. It runs after every template, so the token
// always wins over the arguments. Every request the core sends upstream
// is bound here, tool calls and prerequisite probes alike; q is the
// request's query before it is encoded into r.URL.
func (u *upstream) bind(r *http.Request, q url.Values, b binding, write bool) error {
	if w := u.def.Workspace; w != nil && w.Query != "" {
		dropField(q, w.Query)
		q.Set(w.Query, b.workspace)
	}
	if err := fieldCount(q, "query parameters"); err != nil {
		return err
	}
	if len(q) > 0 {
		r.URL.RawQuery = q.Encode()
	}
	if w := u.def.Workspace; w != nil && w.Header != "" {
		if err := b.checkReserved(catalog.ReservedWorkspace, u.name); err != nil {
			return err
		}
		r.Header.Set(w.Header, b.workspace)
	}
	if write && u.def.ActorHeader != "" {
		if err := b.checkReserved(catalog.ReservedActor, u.name); err != nil {
			return err
		}
		r.Header.Set(u.def.ActorHeader, b.actor)
	}
	if u.credHeader != "" {
		// The upstream fences its tenants by credential: a workspace
		// without its own is never sent another's, or none.
		cred, ok := u.creds[b.workspace]
		if !ok {
			return &bindingError{fmt.Sprintf("upstream %s has no credential for this token's workspace %q (credentials.by_workspace), so nothing was sent", u.name, shorten(b.workspace))}
		}
		r.Header.Set(u.credHeader, cred.Reveal())
	}
	return nil
}

// newUpstreamRequest starts a request to target (the upstream's prefix
// and an escaped path, no query) with the upstream's own headers.
func (u *upstream) newUpstreamRequest(method, target string, body []byte) (*http.Request, error) {
	r, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		r.Body, r.ContentLength = http.NoBody, 0
	}
	// One backing array for the values; each slice's capacity is its
	// length, so an Add reallocates rather than overwrite a neighbour.
	v := make([]string, 1+len(u.headers))
	v[0] = "application/json"
	r.Header["Accept"] = v[0:1:1]
	for i, h := range u.headers {
		v[i+1] = h[1]
		r.Header[h[0]] = v[i+1 : i+2 : i+2]
	}
	return r, nil
}

// buildRequest makes the upstream request for one call, fresh from the
// catalog: nothing of the inbound request is copied.
func (u *upstream) buildRequest(t *tool, args map[string]any, b binding) (*http.Request, redirectPolicy, error) {
	req := t.def.Request
	path, err := buildPath(t.path, args, b)
	if err != nil {
		return nil, redirectPolicy{}, err
	}
	q := url.Values{}
	var bud *bracketBudget // made when a bracketed argument is spread
	for _, p := range req.QueryParams {
		if name, whole := p.Template.Whole(); whole {
			if _, reserved := b.reserved(name); reserved {
				q.Set(p.Name, expandReserved(name, b))
				continue
			}
			if len(req.Brackets) > 0 && slices.Contains(req.Brackets, p.Name) {
				if bud == nil {
					bud = newBracketBudget()
				}
				spread, err := spreadArgument(q, p.Name, p.Template, args, b, bud)
				if err != nil {
					return nil, redirectPolicy{}, err
				}
				if spread {
					continue
				}
			}
			if list, ok := args[name].([]any); ok {
				for _, e := range list {
					if s, ok := scalarString(e); ok {
						q.Add(p.Name, s)
					}
				}
				continue
			}
		}
		if s, ok := expandText(p.Template, args, b); ok {
			q.Set(p.Name, s)
		}
	}
	if bud == nil && len(req.Brackets) > 0 {
		bud = newBracketBudget()
	}
	body, contentType, err := u.buildBodyBytes(req, args, b, bud)
	if err != nil {
		return nil, redirectPolicy{}, err
	}
	// The URL is assembled as text and parsed once, so the escaped path is
	// kept exactly as built (url.URL would re-escape a Path whose RawPath it
	// judged inconsistent, turning an escaped "/" back into a separator).
	r, err := u.newUpstreamRequest(req.Method, u.prefix+path.escaped, body)
	if err != nil {
		return nil, redirectPolicy{}, argErrorf("cannot build the upstream request: %v", err)
	}
	if body != nil {
		r.Header.Set("Content-Type", contentType)
	}
	for _, p := range req.HeaderParams {
		s, ok, err := headerValue(p.Name, p.Template, args, b, u.name)
		if err != nil {
			return nil, redirectPolicy{}, err
		}
		if ok {
			r.Header.Set(p.Name, s)
		}
	}
	if err := u.bind(r, q, b, t.def.Kind == catalog.KindWrite); err != nil {
		return nil, redirectPolicy{}, err
	}
	return r, u.redirects(t.def.Kind == catalog.KindWrite, path), nil
}
