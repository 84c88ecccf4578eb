package openapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/mcpgw/gateway/catalog"
)

// Options configures [Import]. The zero value imports every read
// operation as a fragment for an upstream that must then be named.
type Options struct {
	// Upstream names the upstream the tools call. Required.
	Upstream string
	// BaseURL is the upstream's base_url; "" takes the document's first
	// server URL, and failing that a ${NAME_URL} placeholder.
	BaseURL string
	// Tags keeps only operations carrying one of these tags, compared
	// case-insensitively; empty keeps all.
	Tags []string
	// Reads are "METHOD PATH" patterns ("POST /*/filter"; METHOD may be
	// "*", PATH is a path.Match glob over the document's path) of
	// operations to import as reads, with no write gate and without
	// IncludeWrites. Without them a POST is still a read when it is named
	// like a query or the document marks it x-mcp-kind: read.
	Reads []string
	// IncludeWrites imports non-GET/HEAD operations as write tools behind
	// a gate the operator must grant; without it they are skipped.
	IncludeWrites bool
	// WorkspaceParam names the parameters bound to the caller's
	// workspace, comma-separated (owner,org,username). Each is matched in
	// any spelling (case, snake_case, camelCase, kebab-case, X- for a
	// header) wherever it appears: in a path it becomes {workspace}, in a
	// query, header or body property the token's workspace (the first
	// query or header spelling becomes the upstream's workspace binding);
	// never an argument. Every operation must then be tenant-bound (see
	// AllowUnbound). "": the upstream is declared tenantless.
	WorkspaceParam string
	// AllowUnbound imports, with a "guess: not tenant-bound" note each,
	// the operations a WorkspaceParam import would leave out because an
	// agent could name or reach another tenant through them: no workspace
	// parameter, a resource id before the workspace in the path, an admin
	// endpoint, an argument that looks like a tenant.
	AllowUnbound bool
	// ActorHeader names a header parameter that carries the acting
	// identity: it becomes the upstream's actor_header (set to the caller's
	// actor on every write), never an argument.
	ActorHeader string
	// Standalone writes a whole catalog (server, placeholder auth, gates)
	// instead of a fragment holding only upstreams and tools.
	Standalone bool
	// Previous is what an earlier import wrote to the file this one
	// replaces (nil: none). A tool keeps its name there when it calls the
	// same method and path, and no other operation takes a name it had:
	// the catalog's overrides name tools, and one written for DELETE
	// /pets/{id} must never move to an operation the document added
	// since. Unreadable, it is ignored.
	Previous []byte
}

// Flagged is a guess the import made about an imported tool that an
// operator should review: a tool marked sensitive, one imported although
// it is not tenant-bound.
type Flagged struct {
	Method, Path, Tool, Note string
}

func (f Flagged) String() string {
	return f.Method + " " + f.Path + " (tool " + f.Tool + "): " + f.Note
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
	// Reads lists the operations of a method other than GET and HEAD
	// imported as reads, and why, in path then method order: they carry
	// no write gate, so each deserves a look.
	Reads []Skipped
	// Flagged lists the guesses about imported tools that decide what a
	// caller can reach (sensitivity, tenant binding), by tool name.
	Flagged []Flagged
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
	im := &importer{ctx: ctx, d: d, opts: opts, names: map[string]int{}, ws: newWorkspaceNames(opts.WorkspaceParam), sorted: map[*openapi3.Schema][]string{}, checked: map[[sha256.Size]byte]string{}}
	if opts.WorkspaceParam != "" && im.ws == nil {
		return nil, fmt.Errorf("--workspace-param %q names no parameter", opts.WorkspaceParam)
	}
	if im.reads, err = parseReads(opts.Reads); err != nil {
		return nil, err
	}
	im.basePath, im.basePathNote = im.relativeServer()
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
	ctx   context.Context
	d     *Document
	share int // each schema's share of the import's nodes (schemaShare)
	// sorted is the converters' shared cache of sorted property names.
	sorted map[*openapi3.Schema][]string
	// checked holds checkSchema's verdicts by the digest of the schema's
	// JSON: the operations on one entity answer the same schema.
	checked map[[sha256.Size]byte]string
	opts    Options
	tools   []*tool
	skipped []Skipped
	names   map[string]int
	// ws matches the --workspace-param names; nil without them.
	ws *workspaceNames
	// wsIn and wsName are the first query or header spelling of the
	// workspace found: the upstream's workspace binding.
	wsIn, wsName string
	// wsSeen is set when any operation binds the workspace.
	wsSeen bool
	// err ends the import: the self-check found what must never be written.
	err error
	// actorSeen is set when an operation declares the ActorHeader header.
	actorSeen bool
	// tagText holds each tag's description as plain words (tagHint),
	// made on first use.
	tagText map[string]string
	// cred is credHeader's answer once credDone.
	cred     string
	credDone bool
	// queryCred maps each API key the document sends in the query to its
	// placeholder, and querySchemes each such scheme to the key's name;
	// both made on first use (queryCredentials).
	queryCred    map[string]string
	querySchemes map[string]string
	queryDone    bool
	// headerKey is each API key header the document declares as a
	// parameter, by headerNorm, made on first use (headerKeys).
	headerKey     map[string]headerKey
	headerKeyDone bool
	// reads are the parsed Options.Reads.
	reads []readPattern
	// basePath is the document's relative server URL ("/api"), which
	// starts every tool path, and basePathNote why it is "" when the
	// document has a relative server URL the import could not use.
	basePath, basePathNote string
}

type tool struct {
	name, title, description, kind string
	kindNote                       string // why kind is what it is
	method, path                   string
	docPath                        string            // the path as the document writes it
	opPath                         string            // docPath less a query or fragment in it
	fromQuery                      map[string]string // a parameter the document's path puts in its query: its query key
	fixed                          map[string]string // a query key the document's path sets: its value
	tags                           []string
	searchHint                     string // what the document says of its tags
	input                          map[string]any
	query, headers                 map[string]string
	body                           any
	bodyFormat                     string   // "" (JSON) or "form"
	brackets                       []string // query parameters and form fields sent in the deepObject style
	notFound                       bool
	pageSize, cursor               string
	output                         map[string]any
	payload                        bool
	destructive, idempotent        *bool
	notes                          []string // comments on guesses
	nameNote                       string
	// bound is set when the operation names the caller's workspace.
	bound bool
	// sensitive puts the tool behind the triple lock, for sensitiveWhy.
	sensitive    bool
	sensitiveWhy []string
	// flags are the guesses also reported in Result.Flagged.
	flags []string
	// yaml is the tool written out (toolYAML), once the self-check has.
	yaml []byte
}

// flag notes a guess that decides what a caller can reach: in the tool's
// comments and in Result.Flagged.
func (t *tool) flag(note string) {
	t.notes = append(t.notes, note)
	t.flags = append(t.flags, note)
}

// gatewayHeaders are header parameters never imported as arguments: the
// upstream's credentials and what the gateway's HTTP client sets.
var gatewayHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Content-Type", "Accept", "Content-Length", "Host", "Transfer-Encoding", "Connection"}

// overrideParam reports a parameter that would let an argument change
// how the upstream, or a proxy in front of it, reads the request rather
// than what it asks: its method (X-HTTP-Method-Override, ?_method=), the
// client's address or host (X-Forwarded-*, Forwarded), its path
// (X-Original-URL), or the connection (hop-by-hop headers). The catalog
// refuses an argument in those headers; the import leaves them out.
func overrideParam(in, name string) bool {
	switch in {
	case openapi3.ParameterInQuery:
		return name == "_method"
	case openapi3.ParameterInHeader:
		return catalog.SteeringHeader(name) || slices.Contains(catalog.HopByHopHeaders, http.CanonicalHeaderKey(name))
	}
	return false
}

// credHeader is the canonical name of the header the upstream's
// credentials go in (see credentials), or "".
func (im *importer) credHeader() string {
	if !im.credDone {
		h, _, _ := im.credentials()
		im.cred, im.credDone = http.CanonicalHeaderKey(h), true
	}
	return im.cred
}

// queryCredentials are the API keys the document sends in the query
// (apiKey schemes "in: query", as Trello's key and token): each
// parameter's name and the ${VAR} placeholder the import sets it to. The
// upstream's credential is the gateway's, never an argument's: an agent
// must not be asked for it, nor a tool marked as revealing it.
//
// The variables are named by the import alone (NAME_QUERY_KEY,
// NAME_QUERY_KEY_2, ... by the schemes' sorted names), never from the
// document's text, which would let a document pick the variable read
// (a key named "jwt_secret" of upstream "gateway"). Only a name the
// gateway recognises as a credential (catalog.CredentialQuery) is mapped,
// as only those are kept out of what an upstream echoes; any other stays
// an argument, as before. A name that would steer the request (_method)
// or that the workspace binding sets is left alone, and so is every key
// when a header scheme is mapped.
func (im *importer) queryCredentials() map[string]string {
	if im.queryDone {
		return im.queryCred
	}
	im.queryDone = true
	c := im.d.doc.Components
	if c == nil {
		return nil
	}
	// A header the upstream sets already authenticates: a query key is
	// then another way to the same (Directus takes a bearer token or an
	// access_token), and asking for both would only add a variable to set.
	if h, _, _ := im.headerCredential(); h != "" {
		return nil
	}
	for _, name := range sortedKeys(c.SecuritySchemes) {
		ref := c.SecuritySchemes[name]
		if ref == nil || ref.Value == nil || !strings.EqualFold(ref.Value.Type, "apiKey") || !strings.EqualFold(ref.Value.In, "query") {
			continue
		}
		key := ref.Value.Name
		if !catalog.CredentialQuery(key) || overrideParam(openapi3.ParameterInQuery, key) || im.ws.binds(openapi3.ParameterInQuery, key) {
			continue
		}
		if im.queryCred == nil {
			im.queryCred, im.querySchemes = map[string]string{}, map[string]string{}
		}
		if _, seen := im.queryCred[key]; !seen {
			v := im.envName() + "_QUERY_KEY"
			if n := len(im.queryCred); n > 0 {
				v += fmt.Sprintf("_%d", n+1)
			}
			im.queryCred[key] = "${" + v + "}"
		}
		im.querySchemes[name] = key
	}
	return im.queryCred
}

// headerKeys are the API keys a document with no query key sends as
// header parameters on at least half of its operations, as VictorOps's
// X-VO-Api-Key with its X-VO-Api-Id does on all of them, and Trakt's
// trakt-api-key (its app's client id) beside its OAuth scheme's bearer
// token: by each header's words
// (headerNorm), the ${VAR} placeholder the upstream's headers set it
// to. Made arguments, they would put the gateway's credential in the
// agent's hands, ask for it on every call, and mark every tool as
// revealing secrets, so that the whole service is hidden.
//
// A key is a header named as one (keyHeader: an API, auth, access, app
// or client key, token or secret, or a whole credential name) and
// described as one in some declaration (keyDescribed: "Your API Key",
// "authentication token"); the key's id beside it ("X-VO-Api-Id" for
// "X-VO-Api-Key", the same words with id last) goes with it, as the
// account the key is for. So is an Authorization header declared as a
// parameter, set whole from NAME_AUTHORIZATION. Spellings of one header
// (X-Api-Key, X_API_KEY) count as one, sent as the spelling most
// operations use. The variables are named by the import alone,
// NAME_API_KEY, NAME_API_KEY_2, ... by the keys' sorted words and
// NAME_API_ID (with the same number) for an id, never from the
// document's text. A header the workspace binding sets, one that looks
// like a tenant (which an argument would be refused for), the actor
// header, and one that steers the request stay out. Beside a security
// scheme the import maps to a header, that header and Authorization
// stay out too, as does another way to send a bearer scheme's token
// (credentialAgain's parameters: DRACOON's X-Sds-Auth-Token), which the
// scheme's header already carries.
func (im *importer) headerKeys() map[string]headerKey {
	if im.headerKeyDone {
		return im.headerKey
	}
	im.headerKeyDone = true
	if len(im.queryCredentials()) > 0 {
		return nil
	}
	mapped, mappedValue, _ := im.headerCredential()
	type declared struct {
		ops       int            // operations declaring it
		spellings map[string]int // canonical spelling: operations declaring it so
		described bool           // some declaration describes it as a credential
	}
	decls := map[string]*declared{}
	// A header an API-key scheme names is a key however it is described
	// (envoice's x-auth-secret beside its mapped x-auth-key).
	schemeKeys := map[string]bool{}
	for name := range apiKeyNames(im.d, openapi3.ParameterInHeader) {
		schemeKeys[headerNorm(name)] = true
	}
	ops := 0
	eachOperation(im.d.doc, func(params []*openapi3.Parameter) {
		ops++
		seen, seenSpelling := map[string]bool{}, map[string]bool{}
		for _, p := range params {
			if p.In != openapi3.ParameterInHeader {
				continue
			}
			n := headerNorm(p.Name)
			d := decls[n]
			if d == nil {
				d = &declared{spellings: map[string]int{}}
				decls[n] = d
			}
			d.described = d.described || keyDescribed(p.Description) || schemeKeys[n]
			if s := http.CanonicalHeaderKey(p.Name); !seenSpelling[s] {
				seenSpelling[s] = true
				d.spellings[s]++
			}
			if !seen[n] {
				seen[n] = true
				d.ops++
			}
		}
	})
	// spelling is the one most operations use, the first in order of a tie.
	spelling := func(d *declared) string {
		best := ""
		for _, s := range sortedKeys(d.spellings) {
			if best == "" || d.spellings[s] > d.spellings[best] {
				best = s
			}
		}
		return best
	}
	usable := func(n string) bool {
		d := decls[n]
		if d == nil || 2*d.ops < ops || n == headerNorm(im.opts.ActorHeader) {
			return false
		}
		if mapped != "" && (n == headerNorm(mapped) || n == headerNorm("Authorization")) {
			return false
		}
		for s := range d.spellings {
			if im.ws.binds(openapi3.ParameterInHeader, s) || im.ws.looksLike(s) || overrideParam(openapi3.ParameterInHeader, s) {
				return false
			}
			if bearerValue(mappedValue) && im.d.credentialSpread()[strings.ToLower(s)] {
				return false
			}
		}
		s := spelling(d)
		return catalog.ValidHeaderName(s) && (s == "Authorization" || !slices.Contains(gatewayHeaders, s))
	}
	var keys []string
	for n, d := range decls {
		if d.described && keyHeader(n) && usable(n) {
			keys = append(keys, n)
		}
	}
	auth := headerNorm("Authorization")
	withAuth := usable(auth)
	if len(keys) > maxHeaderKeys {
		// No service takes that many keys at once: what the document
		// declares is not its credential, and each would be a variable
		// the operator must set.
		keys = nil
	}
	if len(keys) == 0 && !withAuth {
		return nil
	}
	slices.Sort(keys)
	im.headerKey = map[string]headerKey{}
	env := im.envName()
	set := func(n, v, note string) {
		name := spelling(decls[n])
		im.headerKey[n] = headerKey{name: name, value: "${" + v + "}",
			note: fmt.Sprintf("guess: the header parameter %q, on %d of %d operations, %s; set %s", name, decls[n].ops, ops, note, v)}
	}
	if withAuth {
		set(auth, env+"_AUTHORIZATION", `is the service's credential`)
		k := im.headerKey[auth]
		k.note += ` to the whole value ("Bearer ...")`
		im.headerKey[auth] = k
	}
	// An API-key scheme's header holds NAME_API_KEY already: the keys
	// beside it are numbered from 2.
	first := 0
	if mappedValue == "${"+env+"_API_KEY}" {
		first = 1
	}
	for i, n := range keys {
		num := ""
		if i+first > 0 {
			num = fmt.Sprintf("_%d", i+first+1)
		}
		set(n, env+"_API_KEY"+num, "is the service's API key")
		w := headerWords(n)
		id := strings.Join(append(w[:len(w)-1:len(w)-1], "id"), "-")
		if _, taken := im.headerKey[id]; !taken && usable(id) {
			set(id, env+"_API_ID"+num, fmt.Sprintf("is the account of the API key %q", spelling(decls[n])))
		}
	}
	return im.headerKey
}

// maxHeaderKeys is the most API key headers headerKeys maps; a document
// that declares more on most operations maps none.
const maxHeaderKeys = 4

// headerKey is an API key header the upstream sets (headerKeys): the
// spelling sent, its ${VAR} placeholder, and the guess comment saying
// which variable to set.
type headerKey struct{ name, value, note string }

// headerWords are a header name's words in lower case: "X-VO-Api-Key"
// is x, vo, api, key; "app_key" is app, key.
func headerWords(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' || r == '.' })
}

// headerNorm is a header name's words joined by hyphens: X-Api-Key,
// x_api_key and X-API-KEY are one header, x-api-key.
func headerNorm(name string) string { return strings.Join(headerWords(name), "-") }

// keyHeader reports a header named as an API key: a key, token or
// secret of an API, auth, access, app, client, subscription, user or
// private kind (X-Api-Key, X-RapidAPI-Key, X-Auth-Token,
// Ocp-Apim-Subscription-Key, PRIVATE-TOKEN, app_key), or a whole
// credential name (apikey, token). A page token, a CSRF token, an
// idempotency key or a WebSocket key is none.
func keyHeader(name string) bool {
	if catalog.CredentialQuery(name) {
		return true
	}
	w := headerWords(name)
	if len(w) < 2 {
		return false
	}
	switch w[len(w)-1] {
	case "apikey", "apitoken":
		return true
	case "key", "token", "secret":
	default:
		return false
	}
	for _, x := range w[:len(w)-1] {
		switch x {
		case "api", "auth", "access", "app", "application", "client", "subscription", "user", "private":
			return true
		}
		if strings.HasSuffix(x, "api") { // X-RapidAPI-Key, X-ListenAPI-Key
			return true
		}
	}
	return false
}

// keyDescribed reports a parameter description that says it is a
// credential.
func keyDescribed(d string) bool {
	d = strings.ToLower(d)
	for _, w := range []string{"authenticat", "authoriz", "authoris", "api key", "apikey", "api token", "access token", "auth token", "secret", "credential", "your key", "your token", "client id", "client_id"} {
		if strings.Contains(d, w) {
			return true
		}
	}
	return false
}

// securedBy reports the query keys op's security (or the document's)
// names, in any of its alternatives; an operation with "security: []"
// names none.
func (im *importer) securedBy(op *openapi3.Operation) map[string]bool {
	if len(im.queryCredentials()) == 0 {
		return nil
	}
	reqs := im.d.doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	keys := map[string]bool{}
	for _, req := range reqs {
		for scheme := range req {
			if key, ok := im.querySchemes[scheme]; ok {
				keys[key] = true
			}
		}
	}
	return keys
}

// requiredQueryCredentials sets in t's query each API key that op's
// security asks for in the query and that t does not set yet (op does not
// declare it as a parameter).
func (im *importer) requiredQueryCredentials(t *tool, op *openapi3.Operation) {
	for key := range im.securedBy(op) {
		if _, set := t.query[key]; !set {
			t.query[key] = im.queryCred[key]
		}
	}
}

func (im *importer) skip(method, path, format string, args ...any) {
	im.skipped = append(im.skipped, Skipped{Method: method, Path: path, Reason: fmt.Sprintf(format, args...)})
}

// selected reports whether --tags selects op.
func (im *importer) selected(op *openapi3.Operation) bool {
	return len(im.opts.Tags) == 0 || slices.ContainsFunc(op.Tags, func(t string) bool {
		return slices.ContainsFunc(im.opts.Tags, func(want string) bool { return strings.EqualFold(t, want) })
	})
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
			kind, _ := im.kindOf(m, path, op)
			if kind == "write" && !im.opts.IncludeWrites {
				im.skip(m, path, "write operation (pass --include-writes to import it behind a gate)")
				continue
			}
			if t := im.operation(m, path, item, op); t != nil {
				t.path = im.basePath + t.path
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
	// The discovery meta tools' names are the gateway's: a tool taking
	// one would be refused once discovery is on.
	for _, meta := range []string{catalog.SearchToolsName, catalog.CallToolName} {
		if im.names[meta] == 0 {
			im.names[meta] = 1
		}
	}
	// A previous import's names first: each stays with its operation,
	// and is taken for any other.
	prior := previousNames(im.opts.Previous)
	named := map[*tool]bool{}
	claimed := map[string]bool{}
	for _, name := range slices.Sorted(maps.Values(prior)) {
		im.names[name]++
	}
	for _, t := range im.tools {
		if name, ok := prior[t.method+" "+t.path]; ok && !claimed[name] {
			claimed[name] = true
			if name != t.name {
				t.nameNote = fmt.Sprintf("the name an earlier import gave %s %s", t.method, t.path)
			}
			t.name, named[t] = name, true
		}
	}
	next := map[string]int{} // base → the next suffix to try, so that n equal names cost n, not n²
	for _, t := range im.tools {
		if named[t] {
			continue
		}
		base := t.name
		if len(base) > maxName {
			base = cutName(base)
			t.nameNote = fmt.Sprintf("name cut to %d characters", maxName)
		}
		name := base
		if im.names[name] > 0 {
			n := max(next[base], 2)
			for name = base + "_" + strconv.Itoa(n); im.names[name] > 0; n++ {
				name = base + "_" + strconv.Itoa(n+1)
			}
			next[base] = n + 1
			if im.names[base] > 0 && (base == catalog.SearchToolsName || base == catalog.CallToolName) {
				t.nameNote = fmt.Sprintf("%q is the name of a discovery meta tool", base)
			} else {
				t.nameNote = fmt.Sprintf("%q was taken by another operation", base)
			}
		}
		im.names[name]++
		t.name = name
	}
}

// priorName is a name the import could have written.
var priorName = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// previousNames reads the tools of an earlier import's output: "METHOD
// path" → name.
func previousNames(prev []byte) map[string]string {
	var doc struct {
		Tools []struct {
			Name    string `yaml:"name"`
			Request struct {
				Method string `yaml:"method"`
				Path   string `yaml:"path"`
			} `yaml:"request"`
		} `yaml:"tools"`
	}
	if len(prev) == 0 || yaml.Unmarshal(prev, &doc) != nil {
		return nil
	}
	out := map[string]string{}
	taken := map[string]bool{}
	for _, t := range doc.Tools {
		key := strings.ToUpper(t.Request.Method) + " " + t.Request.Path
		if !priorName.MatchString(t.Name) || t.Name == catalog.SearchToolsName || t.Name == catalog.CallToolName || t.Request.Path == "" || taken[t.Name] {
			continue
		}
		if _, dup := out[key]; !dup {
			out[key], taken[t.Name] = t.Name, true
		}
	}
	return out
}

// pathName names an operation that has no operationId from its method
// and path: GET /pets/{pet_id} is get_pets_by_pet_id. A name that would
// be longer than maxName leaves out the parameters that lead to the last
// segment, then the leading segments, so that what tells it from its
// siblings, the end of its path, stays: GET
// /repositories/{workspace}/{repo_slug}/pullrequests/{id}/commits is
// get_repositories_pullrequests_commits, not the 60 characters of
// get_repositories_by_workspace_by_repo_slug_pullrequests_by that its
// nine siblings would share but for a suffix.
func pathName(method, path string) string {
	method = strings.ToLower(method)
	full := snake(method + " " + pathParam.ReplaceAllString(path, "by $1"))
	if len(full) <= maxName {
		return full
	}
	var parts []string
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, seg := range segs {
		if pathParam.MatchString(seg) && i < len(segs)-1 {
			continue
		}
		if p := snake(pathParam.ReplaceAllString(seg, "by $1")); p != "" {
			parts = append(parts, p)
		}
	}
	// The name's length: the method, and each part after an underscore.
	// Kept as parts go rather than joined again for each, which for a
	// hostile path of many segments took time of their number squared.
	n := len(method) + len(parts)
	for _, p := range parts {
		n += len(p)
	}
	for len(parts) > 1 && n > maxName {
		n -= 1 + len(parts[0])
		parts = parts[1:]
	}
	return snake(method + " " + strings.Join(parts, " "))
}

// maxName is the longest tool name the import proposes, leaving room
// under MCP's portable 64 for a "_2" suffix.
const maxName = 60

// cutName cuts a snake_case name to at most maxName bytes at a word
// boundary (list_flow_run_notification_policies_… loses whole words,
// never half of one); a single word longer than that is cut where it must.
func cutName(s string) string {
	if len(s) <= maxName {
		return s
	}
	if i := strings.LastIndexByte(s[:maxName+1], '_'); i > 0 {
		return strings.TrimRight(s[:i], "_")
	}
	return s[:maxName]
}

var pathParam = regexp.MustCompile(`\{([^{}]*)\}`)

var argName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// arg turns a parameter or property name into an argument name.
func arg(name string) string {
	a := snake(name)
	if a == "" || a[0] >= '0' && a[0] <= '9' {
		a = "p_" + a
	}
	if a == "workspace" || a == "actor" || a == "now" { // the catalog's own placeholders
		a += "_"
	}
	return a
}

// operation turns one operation into a tool, or skips it with a reason
// (im.skip) and returns nil. Each step below may skip.
func (im *importer) operation(method, path string, item *openapi3.PathItem, op *openapi3.Operation) *tool {
	t := &tool{method: method, docPath: path, opPath: path, query: map[string]string{}, headers: map[string]string{}}
	if !strings.HasPrefix(path, "/") {
		im.skip(method, path, "path does not start with /")
		return nil
	}
	if why := t.splitQuery(); why != "" {
		im.skip(method, path, "%s", why)
		return nil
	}
	if catalog.DotSegment(path) {
		// It would leave the base URL's path (another tenant's, say) at
		// whichever server normalises it; the catalog refuses it too.
		im.skip(method, path, `path holds a "." or ".." segment`)
		return nil
	}
	im.classify(t, op)
	if len(op.Callbacks) > 0 {
		im.skip(method, path, "callbacks are not mapped")
		return nil
	}
	describe(t, op)
	t.searchHint = im.tagHint(t.tags)
	conv, names, ok := im.input(t, item, op)
	if !ok || !im.output(t, op, conv) {
		return nil
	}
	for _, n := range conv.notes {
		t.notes = append(t.notes, n)
	}
	if why := sensitivity(t, names); len(why) > 0 {
		t.sensitive, t.sensitiveWhy = true, why
		for _, w := range why {
			t.flags = append(t.flags, "sensitive: "+w)
		}
	}
	return t
}

// splitQuery takes out of t.opPath a query or a fragment the document
// wrote into its path, which a path must not hold: "/rest?method=x"
// (Flickr) sends method=x with every call; "/alerts?lat={lat}" (Weatherbit)
// sends the parameter lat, declared in the path, in the query; a fragment
// that only tells two operations on one path apart ("#name", Azure's
// "#disambiguation_dummy") is never sent, so it goes. A fragment that
// says more ("#X-Amz-Target=...", AWS's header of the operation) or a
// query value that is neither a constant nor one parameter cannot be
// sent as meant: it returns why.
func (t *tool) splitQuery() string {
	path, frag, hasFrag := strings.Cut(t.opPath, "#")
	if hasFrag && strings.ContainsAny(frag, "=/&?") {
		return fmt.Sprintf("the path's fragment %q says what a request cannot carry (a fragment is never sent)", bound(frag, 100))
	}
	path, raw, hasQuery := strings.Cut(path, "?")
	t.opPath = path
	if hasFrag {
		t.notes = append(t.notes, fmt.Sprintf("fragment #%s of the document's path left out: it is never sent", bound(frag, 100)))
	}
	if !hasQuery {
		return ""
	}
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if k == "" || !validQueryKey.MatchString(k) {
			return fmt.Sprintf("the path's query %q cannot be mapped", bound(raw, 100))
		}
		switch m := pathParam.FindAllStringSubmatchIndex(v, -1); {
		case len(m) == 0 && !strings.ContainsAny(v, "{}"):
			// The value as the document's URL encodes it ("a%20b",
			// "a+b"): the gateway encodes what it sends. A brace it
			// decodes to would read as a placeholder, and "$" in
			// request.query expands, so it is written "$$".
			dv, err := url.QueryUnescape(v)
			if err != nil || strings.ContainsAny(dv, "{}") {
				return fmt.Sprintf("the path's query %q cannot be mapped", bound(raw, 100))
			}
			if t.fixed == nil {
				t.fixed = map[string]string{}
			}
			t.query[k], t.fixed[k] = literal(dv), dv
		case len(m) == 1 && m[0][0] == 0 && m[0][1] == len(v):
			if t.fromQuery == nil {
				t.fromQuery = map[string]string{}
			}
			t.fromQuery[v[1:len(v)-1]] = k
		default:
			return fmt.Sprintf("the path's query %q cannot be mapped", bound(raw, 100))
		}
	}
	t.notes = append(t.notes, fmt.Sprintf("query %s of the document's path sent as the request's query", bound(raw, 100)))
	return ""
}

// pathQueryKeys are the query keys the document's path sets, to a
// constant or to a parameter's value, sorted.
func (t *tool) pathQueryKeys() []string {
	keys := slices.Collect(maps.Keys(t.fixed))
	for _, k := range t.fromQuery {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// validQueryKey is a query key a path's query may set.
var validQueryKey = regexp.MustCompile(`^[A-Za-z0-9_.\-\[\]]+$`)

// classify decides read or write, and a write's annotations from its
// method.
func (im *importer) classify(t *tool, op *openapi3.Operation) {
	t.kind, t.kindNote = im.kindOf(t.method, t.docPath, op)
	if t.kind != "write" {
		return
	}
	switch {
	case t.method == http.MethodDelete || t.method == http.MethodPut:
		t.destructive, t.idempotent = ptr(true), ptr(true)
		t.notes = append(t.notes, "annotations guessed from the method "+t.method)
	case t.method == http.MethodPatch:
		// It changes what exists: not only additive (MCP's reading of
		// destructive: false).
		t.destructive, t.idempotent = ptr(true), ptr(false)
		t.notes = append(t.notes, "annotations guessed from the method "+t.method)
	case t.destroyVerb(op) != "":
		t.destructive, t.idempotent = ptr(true), ptr(false)
		t.notes = append(t.notes, fmt.Sprintf("annotations guessed from the method %s and the word %q", t.method, t.destroyVerb(op)))
	default:
		t.destructive, t.idempotent = ptr(false), ptr(false)
		t.notes = append(t.notes, "annotations guessed from the method "+t.method)
	}
}

// destroyVerbs in a POST's name say it removes or undoes rather than adds
// (POST /repos/{id}/delete, purgeAllAccounts).
var destroyVerbs = []string{"delete", "destroy", "drop", "purge", "remove", "revoke", "reset", "clear", "wipe", "erase", "truncate", "terminate", "uninstall", "kill"}

// destroys returns the first destroy verb in the path's last segment or
// the operationId, or "".
func destroys(p, operationID string) string {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	words := slices.Concat(strings.Split(snake(segs[len(segs)-1]), "_"), strings.Split(snake(operationID), "_"))
	for _, w := range words {
		if slices.Contains(destroyVerbs, w) {
			return w
		}
	}
	return ""
}

// destroyVerb is destroys over t's path and operationId, or else over
// the constants its document's path sets in the query
// (/rest?method=photos.delete).
func (t *tool) destroyVerb(op *openapi3.Operation) string {
	if w := destroys(t.opPath, op.OperationID); w != "" {
		return w
	}
	for _, k := range slices.Sorted(maps.Keys(t.fixed)) {
		if w := destroys("/"+t.fixed[k], ""); w != "" {
			return w
		}
	}
	return ""
}

// maxTags and maxTagBytes bound an imported tool's tags.
const (
	maxTags     = 20
	maxTagBytes = 100
)

// describe names the tool and writes what an agent reads about it: the
// operationId (or the method and path), summary, description and tags.
func describe(t *tool, op *openapi3.Operation) {
	if op.OperationID != "" {
		t.name = snake(op.OperationID)
	}
	if t.name == "" {
		named := t.opPath // and what its query sets: /rest?method=a and ?method=b are two
		for _, k := range slices.Sorted(maps.Keys(t.fixed)) {
			named += "/" + t.fixed[k]
		}
		t.name = pathName(t.method, named)
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
		desc = t.method + " " + t.opPath
	}
	t.description = bound(desc, MaxDescription)
	// Tags are search words and listing hints: empty ones (which the
	// catalog refuses) and ones past a word's length are dropped, and an
	// operation keeps its first maxTags.
	var tags []string
	dropped := 0
	for _, tag := range op.Tags {
		switch tag = strings.TrimSpace(tag); {
		case slices.Contains(tags, tag):
		case tag == "" || len(tag) > maxTagBytes || len(tags) == maxTags:
			dropped++
		default:
			tags = append(tags, tag)
		}
	}
	if dropped > 0 {
		t.notes = append(t.notes, fmt.Sprintf("%d tags left out: empty, over %d bytes, or past the first %d", dropped, maxTagBytes, maxTags))
	}
	t.tags = slices.Sorted(slices.Values(tags))
}

// maxHintBytes bounds the search_hint an import writes: what the
// document says of a tool's tags, a sentence or two each.
const maxHintBytes = 300

// tagHint is a tool's search_hint: the descriptions the document gives
// its tags ("Items are individual pieces of data in your database. They
// can be anything, from articles, to IoT status checks."), as plain
// words, in the order of the tool's tags, within maxHintBytes. They are words a search may
// meet that the tool's own text lacks; the agent never reads them as the
// tool's description.
func (im *importer) tagHint(tags []string) string {
	if len(tags) == 0 || len(im.d.doc.Tags) == 0 {
		return ""
	}
	if im.tagText == nil {
		im.tagText = map[string]string{}
		for _, tag := range im.d.doc.Tags {
			if tag == nil {
				continue
			}
			if _, seen := im.tagText[tag.Name]; !seen {
				im.tagText[tag.Name] = plainWords(tag.Description)
			}
		}
	}
	var hint []string
	for _, tag := range tags {
		if d := im.tagText[tag]; d != "" && !slices.Contains(hint, d) {
			hint = append(hint, d)
		}
	}
	return bound(strings.Join(hint, " "), maxHintBytes)
}

// mdLink is a Markdown link or image: its text stays, its target goes.
var mdLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// htmlHidden is HTML a page shows nothing of: a comment, or a style or
// script element (DocuSign's tags open with "<!-- ... --> <style>h1 {
// margin-top: 1em; }</style>"). One left open hides the rest. The
// element's name ends as a tag's does, at a space, "/" or ">": a
// <style-guide> or <scripts> is no style or script.
var htmlHidden = regexp.MustCompile(`(?is)<!--.*?(?:-->|$)|<style(?:[\s/>]|$).*?(?:</style\s*>|$)|<script(?:[\s/>]|$).*?(?:</script\s*>|$)`)

// htmlTag is an HTML tag (<br>, <p class="x">, </b>): its element's text
// stays.
var htmlTag = regexp.MustCompile(`</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>`)

// maxTagText bounds how much of a tag's description plainWords reads: a
// hint keeps maxHintBytes of its words, and a hostile document may hold
// megabytes in one description (read whole, 27 MiB took seconds and
// hundreds of megabytes).
const maxTagText = 16 << 10

// plainWords is s without what search has no use for: HTML's tags,
// comments, styles and scripts, Markdown links' targets, bare URLs,
// markup characters, runs of white space, and control and invisible
// format characters (escape sequences, bidi overrides, zero-width
// spaces), which part words as white space does.
func plainWords(s string) string {
	if len(s) > maxTagText {
		n := maxTagText
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
		if i := strings.LastIndexFunc(s, unicode.IsSpace); i > 0 {
			s = s[:i] // not a word (or a link) cut in two
		}
	}
	s = htmlHidden.ReplaceAllString(s, " ")
	s = htmlTag.ReplaceAllString(s, " ")
	s = mdLink.ReplaceAllString(s, "$1")
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
	})
	out := fields[:0]
	for _, f := range fields {
		if strings.Contains(f, "://") {
			continue
		}
		if f = strings.Trim(f, "*_`#>|"); f != "" {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// input builds the tool's input schema from the operation's parameters
// and request body, binds the tenant (or skips an operation that is not
// tenant-bound), and checks the schema compiles. It returns the converter,
// whose notes the tool keeps, and the argument names.
func (im *importer) input(t *tool, item *openapi3.PathItem, op *openapi3.Operation) (*converter, []string, bool) {
	method, path := t.method, t.docPath
	conv := &converter{forInput: true, limit: im.share, sorted: im.sorted}
	as := &arguments{conv: conv, props: map[string]any{}, taken: map[string]bool{}}
	if !im.parameters(t, as, method, path, item, op) || !im.requestBody(t, as, method, path, op) {
		return nil, nil, false
	}
	props, required := as.props, as.required
	if why := im.fence(t, props, item, op); len(why) > 0 {
		if !im.opts.AllowUnbound {
			im.skip(method, path, "not tenant-bound: %s (--allow-unbound imports it with a note)", strings.Join(why, "; "))
			return nil, nil, false
		}
		for _, w := range why {
			t.flag("not tenant-bound: " + w)
		}
	}
	if conv.unresolved != "" {
		im.skip(method, path, "%s", conv.unresolved)
		return nil, nil, false
	}
	input := map[string]any{"type": "object", "additionalProperties": false}
	if len(props) > 0 {
		input["properties"] = props
	}
	if len(required) > 0 {
		slices.SortFunc(required, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		input["required"] = slices.Compact(required)
	}
	inputFormats(input)
	if msg := im.checkSchema(input); msg != "" {
		im.skip(method, path, "input schema does not compile: %s", msg)
		return nil, nil, false
	}
	dropBadDefaults(props, conv)
	t.input = input
	return conv, as.names, true
}

// output reads the first 2xx answer that has content: a JSON schema
// becomes the tool's (loose) output schema, an answer of another media
// type makes a read a payload read, and a 404 makes a read's not-found an
// answer. A reference it cannot follow skips the operation.
func (im *importer) output(t *tool, op *openapi3.Operation, conv *converter) bool {
	if op.Responses == nil {
		return true
	}
	rm := op.Responses.Map()
	// A 404 is an answer only to a read ("no such thing"); a write
	// answered 404 did not happen and must stay an error.
	if rm["404"] != nil && t.kind == "read" {
		t.notFound = true
	}
	for _, code := range sortedKeys(rm) {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		r := rm[code]
		if r != nil && r.Value != nil && unresolved(r.Value.Extensions) != "" {
			im.skip(t.method, t.docPath, "%s", unresolved(r.Value.Extensions))
			return false
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
			return true
		}
		if mt.Schema == nil {
			return true
		}
		oc := &converter{limit: im.share, sorted: im.sorted}
		out := oc.schema(mt.Schema, 0, nil)
		if oc.unresolved != "" {
			im.skip(t.method, t.docPath, "%s", oc.unresolved)
			return false
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
		if out != nil {
			looseOutput(out)
		}
		if out != nil && im.checkSchema(out) == "" {
			t.output = out
			for _, n := range oc.notes {
				conv.note("%s", n)
			}
		}
		return true
	}
	return true
}

// jsonMedia picks the JSON media type of content: application/json first,
// then any other spelling of JSON (see isJSONMedia), by name; of those,
// the first that gives a schema (Zuora answers with an application/json
// of examples only beside the schema of "application/json;
// charset=utf-8"), else the first. A body so taken is sent as that
// media type says (application/merge-patch+json beside a bare
// application/json), as its schema describes it.
func jsonMedia(content openapi3.Content) (*openapi3.MediaType, string) {
	var first *openapi3.MediaType
	firstName := ""
	for _, k := range append([]string{"application/json"}, sortedKeys(content)...) {
		mt := content[k]
		if mt == nil || !isJSONMedia(k) {
			continue
		}
		if mt.Schema != nil {
			return mt, k
		}
		if first == nil {
			first, firstName = mt, k
		}
	}
	return first, firstName
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
		y, err := im.toolYAML(t)
		if err != nil {
			return nil, err
		}
		buf.Write(y)
		t.yaml = nil
	}
	if len(im.tools) == 0 && len(im.skipped) == 0 {
		return nil, errors.New("the document has no operations")
	}
	slices.SortStableFunc(im.skipped, func(a, b Skipped) int {
		return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method)
	})
	var reads []Skipped
	var flagged []Flagged
	for _, t := range im.tools {
		if t.kind == "read" && t.method != http.MethodGet && t.method != http.MethodHead {
			reads = append(reads, Skipped{Method: t.method, Path: t.docPath, Reason: t.kindNote})
		}
		for _, f := range t.flags {
			flagged = append(flagged, Flagged{Method: t.method, Path: t.docPath, Tool: t.name, Note: f})
		}
	}
	slices.SortFunc(reads, func(a, b Skipped) int { return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method) })
	return &Result{YAML: buf.Bytes(), Tools: len(im.tools), Skipped: im.skipped, Reads: reads, Flagged: flagged}, nil
}

// toolYAML is t as an item of the catalog's tools list, indented under
// "tools:", written once for the self-check and the result.
func (im *importer) toolYAML(t *tool) ([]byte, error) {
	if t.yaml == nil {
		var buf bytes.Buffer
		item := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{im.toolNode(t)}}
		if err := encodeYAML(&buf, item, "  "); err != nil {
			return nil, err
		}
		t.yaml = buf.Bytes()
	}
	return t.yaml, nil
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

// checkSchema is checkSchema, once per distinct schema of the import.
func (im *importer) checkSchema(s map[string]any) string {
	js, err := json.Marshal(s) // map keys sorted: one text per schema
	if err != nil {
		return checkSchema(s)
	}
	key := sha256.Sum256(js)
	if msg, ok := im.checked[key]; ok {
		return msg
	}
	msg := checkSchema(s)
	im.checked[key] = msg
	return msg
}
