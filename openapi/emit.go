package openapi

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mcpgw/gateway/catalog"
	"gopkg.in/yaml.v3"
)

// envName is the upstream's name as an environment variable prefix.
func (im *importer) envName() string {
	return strings.ToUpper(strings.ReplaceAll(im.opts.Upstream, "-", "_"))
}

// writeGate is the gate every imported write carries.
func (im *importer) writeGate() string { return im.opts.Upstream + "_write" }

func (im *importer) emit() *yaml.Node {
	root := mapping()
	info := im.d.doc.Info
	title := "an OpenAPI document"
	if info != nil && info.Title != "" {
		title = fmt.Sprintf("%q", bound(info.Title, 80))
		if info.Version != "" {
			title += " version " + bound(info.Version, 40)
		}
	}
	// The first line points YAML-language-server editors at the catalog's
	// JSON Schema, so an operator curating the file gets completion.
	root.HeadComment = strings.TrimPrefix(catalog.SchemaComment, "# ") + "\n" + fmt.Sprintf("Imported from %s (OpenAPI %s) by gateway import openapi.\n"+
		"Re-running the import rewrites this file: put hand edits in the catalog's overrides.\n"+
		"Comments mark what the import guessed; review them.", title, im.d.Version)
	if im.opts.Standalone {
		add(root, "version", 1)
		server := mapping("name", im.opts.Upstream+"-gateway")
		add(root, "server", server)
		jwt := mapping(
			"jwks_url", "${IDP_JWKS_URL}",
			"algorithms", []string{"RS256", "ES256"},
			"issuer", "${IDP_ISSUER}",
			"audience", "${GATEWAY_AUDIENCE}",
		)
		auth := add(root, "auth", mapping("jwt", jwt))
		auth.HeadComment = "placeholders: set IDP_JWKS_URL, IDP_ISSUER and GATEWAY_AUDIENCE for your identity provider"
		if im.opts.IncludeWrites {
			gates := mapping(im.writeGate(), mapping("scopes", []string{im.opts.Upstream + ":write"}))
			add(root, "gates", gates).HeadComment = "every imported write needs this gate; grant its scope only to callers who may write"
		}
	}
	add(root, "upstreams", mapping(im.opts.Upstream, im.upstream()))
	// The tools are written one at a time by result: a large document's
	// tools as nodes all at once would be most of the import's memory.
	add(root, "tools", &yaml.Node{Kind: yaml.SequenceNode})
	return root
}

func (im *importer) upstream() *yaml.Node {
	u := mapping()
	env := im.envName()
	if im.opts.BaseURL != "" {
		add(u, "base_url", im.opts.BaseURL)
	} else {
		def, where := im.serverURL()
		if def != "" {
			add(u, "base_url", "${"+env+"_URL:-"+literal(def)+"}").LineComment = "guess: " + where
		} else if im.basePath != "" {
			add(u, "base_url", "${"+env+"_URL}").LineComment = fmt.Sprintf("placeholder: set %s_URL to the service's origin; the document's server URL %s is relative, so each tool path starts with it", env, im.basePath)
		} else if im.basePathNote != "" {
			add(u, "base_url", "${"+env+"_URL}").LineComment = "placeholder: " + im.basePathNote
		} else {
			add(u, "base_url", "${"+env+"_URL}").LineComment = "placeholder: the document names no absolute server URL"
		}
	}
	hdr, val, note := im.credentials()
	if keys := im.headerKeys(); hdr != "" || len(keys) > 0 {
		h := mapping()
		if hdr != "" {
			add(h, hdr, val).LineComment = note
		}
		for _, n := range sortedKeys(keys) {
			add(h, keys[n].name, keys[n].value).LineComment = keys[n].note
		}
		add(u, "headers", h)
	} else if note != "" {
		u.HeadComment = note
	}
	if note := im.queryCredentialsNote(); note != "" {
		u.HeadComment = strings.TrimPrefix(u.HeadComment+"\n"+note, "\n")
	}
	if im.actorSeen {
		add(u, "actor_header", im.opts.ActorHeader).LineComment = "from --actor-header"
	}
	switch {
	case im.wsIn == openapi3.ParameterInHeader:
		add(u, "workspace", mapping("header", im.wsName)).LineComment = "from --workspace-param"
	case im.wsIn == openapi3.ParameterInQuery:
		add(u, "workspace", mapping("query", im.wsName)).LineComment = "from --workspace-param"
	case im.wsSeen:
		// {workspace} in the tools' paths, queries, headers or bodies binds it.
	case im.opts.WorkspaceParam != "":
		add(u, "workspace", "none").LineComment = fmt.Sprintf("--workspace-param %q matched no parameter: review", im.opts.WorkspaceParam)
	default:
		add(u, "workspace", "none").LineComment = "guess: no --workspace-param, so the service is taken to have no tenants"
	}
	return u
}

// serverURL returns the document's first absolute http(s) server URL,
// with its variables set to their defaults.
func (im *importer) serverURL() (string, string) {
	for _, s := range im.d.doc.Servers {
		if s == nil {
			continue
		}
		raw := serverDefaults(s)
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || strings.ContainsAny(raw, "{}") {
			continue
		}
		if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "" {
			// A password or an API key in the URL must not reach the
			// catalog, and the catalog refuses a base_url holding them:
			// the credentials go under the upstream's headers.
			u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
			return strings.TrimSuffix(u.String(), "/"), "the document's first server URL, without the credentials, query or fragment it held"
		}
		return strings.TrimSuffix(raw, "/"), "the document's first server URL"
	}
	return "", ""
}

// relativePath is a relative server URL the import can put in front of
// each tool path: absolute-path segments of unreserved and sub-delims
// characters, nothing the catalog would read as a placeholder or expand.
var relativePath = regexp.MustCompile(`^(/[A-Za-z0-9._~!&()*+,;=:@-]+)+$`)

// relativeServer returns the path of the document's first server URL
// when no server URL is absolute and that one is relative ("/api", or a
// Swagger 2.0 basePath without a host), variables set to their defaults:
// the tools' paths start with it, and ${NAME_URL} is the service's
// origin. note says why a relative server URL was not used.
func (im *importer) relativeServer() (prefix, note string) {
	if def, _ := im.serverURL(); def != "" || len(im.d.doc.Servers) == 0 {
		return "", ""
	}
	s := im.d.doc.Servers[0]
	if s == nil {
		return "", ""
	}
	raw := serverDefaults(s)
	if u, err := url.Parse(raw); err != nil || u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Sprintf("the document's server URL %q is neither absolute nor a path", bound(s.URL, 80))
	}
	p := strings.TrimRight(raw, "/")
	switch {
	case p == "" || p == ".":
		return "", ""
	case !relativePath.MatchString(p) || strings.Contains(p, "/./") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/.."):
		return "", fmt.Sprintf("the document's relative server URL %q cannot start the tool paths: prefix them by hand", bound(s.URL, 80))
	}
	return p, ""
}

// literal escapes s, text from the document, for a field the catalog
// loader expands: "$" becomes "$$", so ${GATEWAY_JWT_SECRET} in a
// server URL stays text and never becomes the gateway's secret.
func literal(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// serverDefaults is s's URL with its variables set to their defaults, in
// name order, so the same document always gives the same URL.
func serverDefaults(s *openapi3.Server) string {
	raw := s.URL
	for _, name := range sortedKeys(s.Variables) {
		if v := s.Variables[name]; v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	return raw
}

// credentials maps the document's security scheme to an upstream header
// holding a ${VAR} placeholder; with none, the API keys it sends in the
// query are set on the tools instead (queryCredentials).
func (im *importer) credentials() (header, value, note string) {
	if c := im.d.doc.Components; c == nil || len(c.SecuritySchemes) == 0 {
		return "", "", ""
	}
	if header, value, note = im.headerCredential(); header != "" || len(im.queryCredentials()) > 0 {
		return header, value, note
	}
	return "", "", "the document's security schemes could not be mapped to a header: add the upstream's credentials by hand"
}

// headerCredential is the first of the document's security schemes that
// maps to an upstream header, or "".
func (im *importer) headerCredential() (header, value, note string) {
	c := im.d.doc.Components
	if c == nil || len(c.SecuritySchemes) == 0 {
		return "", "", ""
	}
	var names []string
	for _, req := range im.d.doc.Security {
		names = append(names, sortedKeys(req)...)
	}
	names = append(names, sortedKeys(c.SecuritySchemes)...)
	env := im.envName()
	for _, name := range names {
		ref := c.SecuritySchemes[name]
		if ref == nil || ref.Value == nil {
			continue
		}
		s := ref.Value
		from := fmt.Sprintf("guess: from security scheme %q; set %s", name, "%s")
		switch strings.ToLower(s.Type) {
		case "http":
			switch strings.ToLower(s.Scheme) {
			case "bearer":
				return "Authorization", "Bearer ${" + env + "_TOKEN}", fmt.Sprintf(from, env+"_TOKEN")
			case "basic":
				return "Authorization", "Basic ${" + env + "_BASIC_AUTH}", fmt.Sprintf(from, env+"_BASIC_AUTH to base64(user:password)")
			}
		case "oauth2", "openidconnect":
			return "Authorization", "Bearer ${" + env + "_TOKEN}", fmt.Sprintf(from, env+"_TOKEN to a token the gateway holds")
		case "apikey":
			h := http.CanonicalHeaderKey(s.Name)
			if strings.EqualFold(s.In, "header") && catalog.ValidHeaderName(s.Name) &&
				!slices.Contains([]string{"Host", "Content-Length", "Transfer-Encoding", "Connection"}, h) && !slices.Contains(catalog.HopByHopHeaders, h) {
				// (A key "sent" in a framing header is no key: the
				// gateway's client sets those, and the catalog refuses
				// them, which would cost every operation.)
				return s.Name, "${" + env + "_API_KEY}", fmt.Sprintf(from, env+"_API_KEY")
			}
		}
	}
	return "", "", ""
}

// queryCredentialsNote says which variables hold the API keys the
// document sends in the query, or "".
func (im *importer) queryCredentialsNote() string {
	q := im.queryCredentials()
	if len(q) == 0 {
		return ""
	}
	var vars []string
	for _, key := range sortedKeys(q) {
		vars = append(vars, fmt.Sprintf("%s (query parameter %q)", strings.Trim(q[key], "${}"), bound(key, 64)))
	}
	return "guess: the document's API keys go in the query, set on every tool whose security names them; set " + strings.Join(vars, ", ")
}

func (im *importer) toolNode(t *tool) *yaml.Node {
	n := mapping()
	var head []string
	if t.nameNote != "" {
		head = append(head, "name: "+t.nameNote)
	}
	for _, note := range t.notes {
		head = append(head, "guess: "+note)
	}
	n.HeadComment = strings.Join(head, "\n")
	add(n, "name", t.name)
	if t.title != "" {
		add(n, "title", t.title)
	}
	add(n, "description", t.description)
	add(n, "kind", t.kind).LineComment = t.kindNote
	if t.kind == "write" {
		add(n, "gate", im.writeGate()).LineComment = "the operator must grant this gate"
		add(n, "annotations", mapping("destructive", *t.destructive, "idempotent", *t.idempotent))
	}
	if t.sensitive {
		add(n, "sensitive", true).LineComment = "guess: it may reveal secrets: " + strings.Join(t.sensitiveWhy, "; ")
	}
	if len(t.tags) > 0 {
		add(n, "tags", t.tags)
	}
	if t.searchHint != "" {
		add(n, "search_hint", t.searchHint).LineComment = "from the descriptions of its tags"
	}
	add(n, "input", valueNode(t.input))
	req := mapping("upstream", im.opts.Upstream, "method", t.method, "path", t.path)
	if len(t.query) > 0 {
		add(req, "query", t.query)
	}
	if len(t.headers) > 0 {
		add(req, "headers", t.headers)
	}
	if t.bodyFormat != "" {
		add(req, "body_format", t.bodyFormat)
	}
	if len(t.brackets) > 0 {
		slices.Sort(t.brackets)
		add(req, "brackets", valueNode(anySlice(t.brackets)))
	}
	if t.body != nil {
		add(req, "body", valueNode(t.body))
	}
	add(n, "request", req)
	if t.pageSize != "" || t.cursor != "" {
		pg := mapping()
		if t.pageSize != "" {
			add(pg, "page_size_argument", t.pageSize)
		}
		if t.cursor != "" {
			add(pg, "cursor_argument", t.cursor)
		}
		add(n, "paging", pg).HeadComment = "review: paging guessed from parameter names"
	}
	resp := mapping()
	if t.notFound {
		add(resp, "not_found", mapping("status", []any{404})).LineComment = "the operation declares 404"
	}
	if t.payload {
		add(resp, "render", "payload")
	}
	if len(resp.Content) > 0 {
		add(n, "response", resp)
	}
	if t.output != nil {
		add(n, "output_schema", valueNode(t.output)).HeadComment = "from the first 2xx JSON response"
	}
	return n
}
