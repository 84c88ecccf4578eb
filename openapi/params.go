package openapi

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mcpgw/gateway/catalog"
)

// arguments collects one operation's tool arguments as its parameters and
// body properties are mapped.
type arguments struct {
	conv     *converter
	props    map[string]any // argument name → schema
	required []any
	taken    map[string]bool
	// names are the document's names of the parameters and body
	// properties that became arguments or bindings.
	names []string
}

// free returns a free argument name for the document's name: arg(name),
// or arg(prefix+"_"+name) when that is taken, with a note saying so; ""
// when both are taken.
func (as *arguments) free(name, prefix string) (a, note string) {
	a = arg(name)
	if !as.taken[a] {
		return a, ""
	}
	first := a
	if a = arg(prefix + "_" + name); as.taken[a] {
		return "", ""
	}
	return a, fmt.Sprintf("%q would be argument %q, which another parameter is: it is %q", name, first, a)
}

// add makes a, for the document's name, an argument with schema sch.
func (as *arguments) add(t *tool, a, name, note string, sch any) {
	as.taken[a] = true
	as.props[a] = sch
	as.names = append(as.names, name)
	if note != "" {
		t.notes = append(t.notes, note)
	}
}

// mergedParameters returns the operation's parameters, the operation's
// overriding the path item's by (in, name), sorted by in then name.
func mergedParameters(item *openapi3.PathItem, op *openapi3.Operation) []*openapi3.Parameter {
	params := map[string]*openapi3.Parameter{}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, pr := range list {
			if pr != nil && pr.Value != nil {
				params[pr.Value.In+"\x00"+pr.Value.Name] = pr.Value
			}
		}
	}
	var out []*openapi3.Parameter
	for _, key := range sortedKeys(params) {
		out = append(out, params[key])
	}
	return out
}

// maxParameters is the most parameters an imported operation may have.
const maxParameters = 500

// parameters maps the operation's parameters to t's arguments, bindings
// and templates, and sets t.path; false (after im.skip) when the
// operation cannot be imported.
func (im *importer) parameters(t *tool, as *arguments, method, path string, item *openapi3.PathItem, op *openapi3.Operation) bool {
	// Path placeholders are replaced in one pass over the document's
	// path at the end: replacing them one by one would let a placeholder
	// written for one parameter ({org_id} for orgId) be taken again by
	// another of the same argument name, and two parameters would become
	// one argument used twice.
	params := mergedParameters(item, op)
	if len(params) > maxParameters {
		// Each is an argument and a schema node: a document with 100,000
		// of them would cost minutes to compile, for a tool no agent can
		// fill in anyway.
		im.skip(method, path, "%d parameters; at most %d are mapped", len(params), maxParameters)
		return false
	}
	for _, k := range t.pathQueryKeys() {
		// What the document's path puts in the query is the document's
		// word, sent with every call: never the caller's workspace, the
		// upstream's API key or the request's method.
		switch _, cred := im.queryCredentials()[k]; {
		case im.ws.binds(openapi3.ParameterInQuery, k):
			im.skip(method, path, "the path's query sets %q, which --workspace-param %s binds: only the caller's workspace may", k, im.ws)
			return false
		case cred:
			im.skip(method, path, "the path's query sets %q, the upstream's API key, which only the gateway sets", k)
			return false
		case catalog.CredentialQuery(k) && t.fixed[k] != "":
			// A credential the document writes would authenticate as
			// whoever wrote it; the import writes only its own
			// placeholders where credentials go.
			im.skip(method, path, "the path's query sets credential %q to a value of the document's", k)
			return false
		case overrideParam(openapi3.ParameterInQuery, k):
			im.skip(method, path, "the path's query sets %q, which frameworks read as the request's method", k)
			return false
		}
	}
	for _, p := range params {
		// A parameter behind a reference the import cannot follow costs
		// this operation only.
		if why := unresolved(p.Extensions); why != "" {
			im.skip(method, path, "%s", why)
			return false
		}
	}
	inPath := map[string]string{}
	wsPath := ""
	for _, p := range params {
		if im.ws.binds(p.In, p.Name) {
			switch p.In {
			case openapi3.ParameterInPath:
				if wsPath != "" {
					im.skip(method, path, "path parameters %q and %q both read as --workspace-param %s: which one is the caller's workspace is unclear", wsPath, p.Name, im.ws)
					return false
				}
				wsPath = p.Name
				inPath[p.Name] = "{workspace}"
			case openapi3.ParameterInQuery, openapi3.ParameterInHeader:
				if im.wsIn == "" {
					im.wsIn, im.wsName = p.In, p.Name
				}
				switch {
				case p.In == im.wsIn && (p.Name == im.wsName || p.In == openapi3.ParameterInHeader && strings.EqualFold(p.Name, im.wsName)):
					// The upstream's binding sets it.
				case p.In == openapi3.ParameterInQuery:
					t.query[p.Name] = "{workspace}"
				default:
					t.headers[p.Name] = "{workspace}"
				}
			default:
				im.skip(method, path, "workspace parameter %q is in %s, where the gateway cannot set it", p.Name, p.In)
				return false
			}
			im.wsSeen, t.bound = true, true
			as.names = append(as.names, p.Name)
			continue
		}
		if im.opts.ActorHeader != "" && p.In == openapi3.ParameterInHeader && strings.EqualFold(p.Name, im.opts.ActorHeader) {
			im.actorSeen = true
			continue // the upstream's actor_header sets it
		}
		if !im.parameter(t, as, method, path, op, p, inPath) {
			return false
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.fromQuery)) {
		if _, set := t.query[t.fromQuery[name]]; !set {
			im.skip(method, path, "parameter {%s} of the path's query is not declared", name)
			return false
		}
	}
	var undeclared string
	tpath := pathParam.ReplaceAllStringFunc(t.opPath, func(m string) string {
		if ph, ok := inPath[m[1:len(m)-1]]; ok {
			return ph
		}
		if undeclared == "" {
			undeclared = m[1 : len(m)-1]
		}
		return m
	})
	if undeclared != "" {
		im.skip(method, path, "path parameter {%s} is not declared", undeclared)
		return false
	}
	if strings.ContainsAny(pathParam.ReplaceAllString(tpath, ""), "{}") {
		im.skip(method, path, "path has unbalanced braces")
		return false
	}
	t.path = tpath
	im.requiredQueryCredentials(t, op)
	return true
}

// parameter maps one parameter that is not a binding to an argument.
func (im *importer) parameter(t *tool, as *arguments, method, path string, op *openapi3.Operation, p *openapi3.Parameter, inPath map[string]string) bool {
	a, renamed := as.free(p.Name, p.In)
	if a == "" {
		im.skip(method, path, "parameters %q collide as argument %q", p.Name, arg(p.In+"_"+p.Name))
		return false
	}
	var sch map[string]any
	switch {
	case p.Schema != nil:
		sch = as.conv.schema(p.Schema, 1, nil)
	case p.Content != nil:
		if mt := p.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			sch = as.conv.schema(mt.Schema, 1, nil)
		} else {
			sch = map[string]any{"type": "string"}
		}
	default:
		sch = map[string]any{"type": "string"}
	}
	if d := bound(p.Description, MaxPropertyDescription); d != "" {
		sch["description"] = d
	}
	// A query parameter in the deepObject style (created[gte]=…) is sent
	// so: request.brackets.
	deep := p.In == openapi3.ParameterInQuery && p.Style == openapi3.SerializationDeepObject
	if typ, _ := sch["type"].(string); typ == "object" && p.In != openapi3.ParameterInPath && !deep {
		if p.Required {
			im.skip(method, path, "required %s parameter %q is an object (style %q is not mapped)", p.In, p.Name, p.Style)
			return false
		}
		t.notes = append(t.notes, fmt.Sprintf("object %s parameter %q left out", p.In, p.Name))
		return true
	}
	if overrideParam(p.In, p.Name) {
		t.notes = append(t.notes, fmt.Sprintf("%s parameter %q left out: an argument must not steer the request's method, origin or path", p.In, p.Name))
		return true
	}
	ph := "{" + a + "}"
	switch p.In {
	case openapi3.ParameterInPath:
		if key, ok := t.fromQuery[p.Name]; ok && !strings.Contains(t.opPath, "{"+p.Name+"}") {
			t.query[key] = ph // "/alerts?lat={lat}": sent in the query
			as.required = append(as.required, a)
			break
		}
		if !strings.Contains(t.opPath, "{"+p.Name+"}") {
			return true // declared but not in the path: nothing to fill
		}
		inPath[p.Name] = ph
		as.required = append(as.required, a)
	case openapi3.ParameterInQuery:
		if _, fixed := t.fixed[p.Name]; fixed {
			// The document's path sets it ("/rest?method=x"): the
			// path's value is the operation's.
			t.notes = append(t.notes, fmt.Sprintf("query parameter %q left out: the document's path sets it", p.Name))
			return true
		}
		if v, ok := im.queryCredentials()[p.Name]; ok && im.securedBy(op)[p.Name] {
			t.query[p.Name] = v // the upstream's API key: set from the environment
			return true
		}
		if im.credentialAgain(op, p) {
			t.notes = append(t.notes, im.credentialAgainNote(p))
			return true
		}
		key := p.Name
		if k, ok := t.fromQuery[p.Name]; ok {
			key = k // "?q={search}": sent as q
		}
		if deep && crosses(key, t.query, t.fixed) {
			// "/items?filter[type]=invoice": the operation sets a field
			// the argument's spread could set again (or under which it
			// would sit).
			if p.Required {
				im.skip(method, path, "required query parameter %q is a deepObject over or under a field the operation sets", p.Name)
				return false
			}
			t.notes = append(t.notes, fmt.Sprintf("query parameter %q left out: the operation sets a field over or under it", p.Name))
			return true
		}
		t.query[key] = ph
		if deep && !slices.Contains(t.brackets, key) {
			t.brackets = append(t.brackets, key)
		}
		if p.Required {
			as.required = append(as.required, a)
		}
	case openapi3.ParameterInHeader:
		switch h := http.CanonicalHeaderKey(p.Name); {
		case slices.Contains(gatewayHeaders, h), h == im.credHeader(), im.headerKeys()[headerNorm(p.Name)].value != "":
			// Credentials and framing are the upstream's and the
			// HTTP client's: an argument must never choose them.
			t.notes = append(t.notes, fmt.Sprintf("header parameter %q left to the upstream's own headers", p.Name))
			return true
		case im.credentialAgain(op, p):
			t.notes = append(t.notes, im.credentialAgainNote(p))
			return true
		}
		if !catalog.ValidHeaderName(p.Name) {
			im.skip(method, path, "header parameter %q is not a valid header name", p.Name)
			return false
		}
		t.headers[p.Name] = ph
		if p.Required {
			as.required = append(as.required, a)
		}
	default:
		if p.Required {
			im.skip(method, path, "required %s parameter %q cannot be mapped", p.In, p.Name)
			return false
		}
		t.notes = append(t.notes, fmt.Sprintf("%s parameter %q left out", p.In, p.Name))
		return true
	}
	as.add(t, a, p.Name, renamed, sch)
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
	return true
}

// requestBody maps the operation's JSON request body to t's body
// template: each property of an object body an argument, or the whole
// body one argument "body"; a property named like the workspace is bound
// to it instead. False (after im.skip) when it cannot be mapped.
func (im *importer) requestBody(t *tool, as *arguments, method, path string, op *openapi3.Operation) bool {
	rb := op.RequestBody
	if rb != nil && rb.Value != nil && unresolved(rb.Value.Extensions) != "" {
		im.skip(method, path, "%s", unresolved(rb.Value.Extensions))
		return false
	}
	if rb == nil || rb.Value == nil || len(rb.Value.Content) == 0 {
		return true
	}
	if !rb.Value.Required {
		// An optional body that may hold nothing ({type: object,
		// properties: {}, additionalProperties: false}, which Stripe
		// declares on every GET and DELETE) is no body: nothing to ask
		// the agent for, nothing to send.
		if holdsNothing(rb.Value.Content) {
			return true
		}
		// The gateway sends no body with a GET: an optional one is left
		// out, and the operation still reads.
		if method == http.MethodGet || method == http.MethodHead {
			t.notes = append(t.notes, "optional request body left out: the gateway sends no body with "+method)
			return true
		}
	}
	// JSON (of any spelling), else a URL-encoded form.
	mt, mime := jsonMedia(rb.Value.Content)
	if mt == nil {
		mt, mime = formMedia(rb.Value.Content)
	}
	if mt == nil {
		if kinds := textMedia(rb.Value.Content); len(kinds) > 0 {
			return im.textBody(t, as, method, path, rb.Value.Required, rb.Value.Content, kinds)
		}
		im.skip(method, path, "request body is %s, not JSON, a URL-encoded form or text", strings.Join(sortedKeys(rb.Value.Content), ", "))
		return false
	}
	bs := as.conv.schema(mt.Schema, 0, nil)
	bprops, isObj := bs["properties"].(map[string]any)
	if typ, _ := bs["type"].(string); !isObj || (typ != "object" && typ != "") || len(bprops) == 0 {
		if as.taken["body"] {
			im.skip(method, path, "a parameter is called body")
			return false
		}
		as.add(t, "body", "body", "", bs)
		t.body = "{body}"
		if rb.Value.Required {
			as.required = append(as.required, "body")
		}
		return im.media(t, as, method, path, mt, mime)
	}
	body := map[string]any{}
	breq, _ := bs["required"].([]any)
	for _, name := range sortedKeys(bprops) {
		if im.ws.binds("body", name) {
			as.names = append(as.names, name)
			// The token's workspace, never the agent's choice.
			body[name] = "{workspace}"
			im.wsSeen, t.bound = true, true
			continue
		}
		a, renamed := as.free(name, "body")
		if a == "" {
			im.skip(method, path, "body property %q collides with a parameter", name)
			return false
		}
		as.add(t, a, name, renamed, bprops[name])
		body[name] = "{" + a + "}"
		if rb.Value.Required && slices.Contains(breq, any(name)) {
			as.required = append(as.required, a)
		}
	}
	t.body = body
	return im.media(t, as, method, path, mt, mime)
}

// media fits the body to its media type (bodyMedia), skipping the
// operation when it cannot be sent.
func (im *importer) media(t *tool, as *arguments, method, path string, mt *openapi3.MediaType, mime string) bool {
	required, msg := im.bodyMedia(t, mime, mt.Encoding, as.props, as.required)
	if msg != "" {
		im.skip(method, path, "%s", msg)
		return false
	}
	as.required = required
	return true
}

// credentialAgain reports a query or header parameter that sends the
// upstream's credential another way than the bearer token the import
// maps (from an OAuth, OpenID Connect or HTTP bearer scheme): named as a
// credential (catalog.CredentialQuery: "token", "key", "access_token")
// and described as one (Slack's "token: Authentication token. Requires
// scope: chat:write" on each operation, Google's "access_token: OAuth
// access token", "oauth_token: OAuth 2.0 token for the current user"
// and "key: API key ... Required unless you provide an OAuth 2.0
// token"), on an operation the bearer scheme secures
// (bearerSecured). The gateway authenticates with its own header;
// asking an agent for the credential would put it in the agent's hands,
// and mark every tool as revealing secrets. A "token" that is what the
// operation acts on ("the token to revoke") is described otherwise and
// stays an argument, as does a key beside a basic or API-key scheme
// (MarketCheck's api_key, "Mandatory with all API calls", is no bearer
// token's other way), and every body property: a body's "token" or
// "password" is as often what is set (a SCIM provider's token for the
// remote server, a user's password).
func (im *importer) credentialAgain(op *openapi3.Operation, p *openapi3.Parameter) bool {
	if _, v, _ := im.headerCredential(); !bearerValue(v) {
		return false
	}
	return credentialParameter(im.d, op, p)
}

// credentialAgainNote says why p, which credentialAgain reports, is no
// argument.
func (im *importer) credentialAgainNote(p *openapi3.Parameter) string {
	return fmt.Sprintf("%s parameter %q left out: another way to send the credential the upstream's %s header carries", p.In, p.Name, im.credHeader())
}

// tokenHeader reports a header named as a token of its own kind
// (keyHeader): X-Auth-Token, X-Sds-Auth-Token, but not X-Api-Key.
func tokenHeader(name string) bool {
	w := headerWords(name)
	return keyHeader(name) && len(w) > 0 && w[len(w)-1] == "token"
}

// bearerValue reports an Authorization value that carries a bearer
// token ("Bearer ${U_TOKEN}").
func bearerValue(v string) bool { return len(v) > 7 && strings.EqualFold(v[:7], "Bearer ") }

// bearerScheme reports a security scheme whose credential is a bearer
// token: OAuth 2.0, OpenID Connect or HTTP bearer. headerCredential maps
// each to Authorization: Bearer.
func bearerScheme(s *openapi3.SecurityScheme) bool {
	switch strings.ToLower(s.Type) {
	case "oauth2", "openidconnect":
		return true
	case "http":
		return strings.EqualFold(s.Scheme, "bearer")
	}
	return false
}

// credentialParameter reports a parameter of op named and described as
// a credential (credentialLike), on an operation a bearer scheme
// secures, that the document declares so on at least half of its
// operations (credentialSpread): another way to send the token an
// Authorization: Bearer header carries, as Slack's token is on 155 of
// its 174 operations. A credential that one operation acts on ("the
// access token to revoke") is no such pattern, and stays an argument.
// The import leaves it out; the check takes it as sent by that header.
func credentialParameter(d *Document, op *openapi3.Operation, p *openapi3.Parameter) bool {
	if !credentialLike(p) || !bearerSecured(d.doc, op) {
		return false
	}
	return d.credentialSpread()[credentialKey(p)]
}

// credentialLike reports a query or header parameter named as a
// credential (catalog.CredentialQuery), or a header named as a token of
// its own kind (keyHeader, its last word token: DRACOON's
// X-Sds-Auth-Token beside its OAuth scheme), and described as one. A
// header key of its own kind (X-Api-Key, Ocp-Apim-Subscription-Key) is
// not: many APIs ask for one beside the bearer token, not instead.
func credentialLike(p *openapi3.Parameter) bool {
	if p == nil || p.In != openapi3.ParameterInQuery && p.In != openapi3.ParameterInHeader {
		return false
	}
	if !catalog.CredentialQuery(p.Name) && !(p.In == openapi3.ParameterInHeader && tokenHeader(p.Name)) {
		return false
	}
	d := strings.ToLower(p.Description)
	return strings.Contains(d, "authenticat") || strings.Contains(d, "authoriz") || strings.Contains(d, "authorisation") ||
		strings.Contains(d, "access token") || strings.Contains(d, "api key") ||
		strings.Contains(d, "oauth") && strings.Contains(d, "token") // Google's "OAuth 2.0 token for the current user"
}

// eachOperation calls fn once for each operation of doc with the
// parameters it declares, its path's first: what a census of the
// document's parameters (how many operations take one) reads.
func eachOperation(doc *openapi3.T, fn func(params []*openapi3.Parameter)) {
	if doc.Paths == nil {
		return
	}
	for _, item := range doc.Paths.Map() {
		if item == nil {
			continue
		}
		for _, op := range item.Operations() {
			if op == nil {
				continue
			}
			var params []*openapi3.Parameter
			for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, ref := range list {
					if ref != nil && ref.Value != nil {
						params = append(params, ref.Value)
					}
				}
			}
			fn(params)
		}
	}
}

// credentialKey is a parameter's name in lower case: Slack sends its token
// in the header on some operations and in the query on others.
func credentialKey(p *openapi3.Parameter) string { return strings.ToLower(p.Name) }

// credentialSpread is, by credentialKey, each credential-like parameter
// (credentialLike) that at least half of the document's operations
// declare, at their own level or their path's; counted once per
// document.
func (d *Document) credentialSpread() map[string]bool {
	d.credOnce.Do(func() {
		d.credSpread = map[string]bool{}
		if d.doc == nil {
			return
		}
		count := map[string]int{}
		ops := 0
		eachOperation(d.doc, func(params []*openapi3.Parameter) {
			ops++
			seen := map[string]bool{}
			for _, p := range params {
				if credentialLike(p) && !seen[credentialKey(p)] {
					seen[credentialKey(p)] = true
					count[credentialKey(p)]++
				}
			}
		})
		for k, n := range count {
			if 2*n >= ops {
				d.credSpread[k] = true
			}
		}
	})
	return d.credSpread
}

// bearerSecured reports whether op's security (or, without its own, the
// document's) accepts a bearer token: an OAuth, OpenID Connect or HTTP
// bearer scheme in any of its alternatives. An operation with
// "security: []" asks for no credential, and one secured by a basic or
// API-key scheme alone for another: a credential parameter there is what
// the operation takes, not another way to send the bearer token. Where
// neither the operation nor the document says, the document's scheme is
// taken, as the upstream's header is sent on every call.
func bearerSecured(doc *openapi3.T, op *openapi3.Operation) bool {
	reqs := doc.Security
	if op != nil && op.Security != nil {
		reqs = *op.Security
	} else if len(reqs) == 0 {
		return true
	}
	var schemes openapi3.SecuritySchemes
	if doc.Components != nil {
		schemes = doc.Components.SecuritySchemes
	}
	for _, req := range reqs {
		for name := range req {
			if ref := schemes[name]; ref != nil && ref.Value != nil && bearerScheme(ref.Value) {
				return true
			}
		}
	}
	return false
}

// holdsNothing reports whether every media type of a body declares an
// object that can have no member: no properties, and no others allowed.
func holdsNothing(content openapi3.Content) bool {
	for _, mt := range content {
		if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
			return false
		}
		s := mt.Schema.Value
		if !s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0 || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 ||
			s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
			return false
		}
	}
	return true
}

// crosses reports whether a key of the maps is a bracketed field under
// name (name[type]) or name one under it: a spread of one could set the
// other again.
func crosses[V any](name string, maps ...map[string]V) bool {
	for _, m := range maps {
		for k := range m {
			if catalog.FieldUnder(k, name) || catalog.FieldUnder(name, k) {
				return true
			}
		}
	}
	return false
}
