package catalog

// Defaults, exported so that docs, flags and tests name the same numbers.
const (
	DefaultListen           = "127.0.0.1:8080"
	DefaultMCPPath          = "/mcp"
	DefaultAdminPath        = "/admin/mcp"
	DefaultTimeout          = Duration(10e9)
	DefaultMaxResponseBytes = Size(8 << 20)
	DefaultStructuredBytes  = Size(64 << 10)
	DefaultTextBytes        = Size(80 << 10)
	DefaultInlineBytes      = Size(16 << 10)
	DefaultRequestBytes     = Size(1 << 20)
	DefaultPageSize         = 20
	DefaultMaxPageSize      = 100
	DefaultMaxInFlight      = 1024
	DefaultKillSwitchEnv    = "GATEWAY_DISABLE_SENSITIVE_DATA"
	DefaultSensitiveNote    = "historyNote"
	DefaultWorkspacePattern = `^[A-Za-z0-9._-]{1,128}$`
	DefaultMaxLeeway        = Duration(60e9)
	DefaultStartDeadline    = Duration(60e9)
	DefaultMaxArgumentBytes = Size(8 << 10)

	ErrorDetailMessage = "message"
	ErrorDetailStatus  = "status"

	// ViewGate is the gate that fronts the whole surface.
	ViewGate = "view"

	KindRead  = "read"
	KindWrite = "write"

	RenderJSON    = "json"
	RenderPayload = "payload"

	// Request body formats (request.body_format).
	BodyJSON = "json"
	BodyForm = "form"
	BodyText = "text"

	// WorkspaceNone, written as "workspace: none" on an upstream, says the
	// upstream has no tenants: no workspace is bound on its requests.
	WorkspaceNone = "none"

	// Reserved placeholder names: they come from the verified principal,
	// never from arguments.
	ReservedWorkspace = "workspace"
	ReservedActor     = "actor"
)

// Pos is a 1-based position in the catalog file. The zero Pos means unknown.
type Pos struct{ Line, Column int }

// Meta records where a mapping and each of its keys' values stood in the
// file. The loader fills it; validation uses it to point at problems, and
// defaults use it to tell an absent key from a zero value.
type Meta struct {
	Pos  Pos
	Keys map[string]Pos
}

// Has reports whether key was written in the mapping.
func (m Meta) Has(key string) bool { _, ok := m.Keys[key]; return ok }

// At returns the position of key's value, or of the mapping when key is absent.
func (m Meta) At(key string) Pos {
	if p, ok := m.Keys[key]; ok {
		return p
	}
	return m.Pos
}

// Catalog is a loaded, validated catalog. After [Load] returns it is never
// modified, so it is safe for concurrent use.
type Catalog struct {
	Meta          `yaml:"-"`
	Version       int                      `yaml:"version"`
	Server        Server                   `yaml:"server"`
	Auth          Auth                     `yaml:"auth"`
	Gates         map[string]*Gate         `yaml:"gates"`
	SensitiveData SensitiveData            `yaml:"sensitive_data"`
	Upstreams     map[string]*Upstream     `yaml:"upstreams"`
	Prerequisites map[string]*Prerequisite `yaml:"prerequisites"`
	Limits        Limits                   `yaml:"limits"`
	Audit         Audit                    `yaml:"audit"`
	Tools         []*Tool                  `yaml:"tools"`
	// ApprovalPage is the approval web page; nil: off.
	ApprovalPage *ApprovalPage `yaml:"approval_page"`
	// ApprovalSettings are the catalog-wide approval settings (the
	// top-level approval section): caps on pending approvals.
	ApprovalSettings ApprovalSettings `yaml:"approval"`
	// Include lists fragment files (globs, relative to the catalog's
	// directory) whose upstreams and tools join this catalog's.
	Include []string `yaml:"include"`
	// Overrides change tools by name without editing them (an imported
	// fragment is rewritten on every import; its overrides live here).
	Overrides map[string]*Override `yaml:"overrides"`
	// Toolsets name subsets of the tools, each served at
	// {mcp_path}/{name} (see [Toolset]).
	Toolsets map[string]*Toolset `yaml:"toolsets"`
	// Discovery turns on search_tools and call_tool for callers who may
	// see many tools (see [Discovery]); nil: off.
	Discovery *Discovery `yaml:"discovery"`

	// Files lists the included fragment files that were read, sorted.
	Files []string `yaml:"-"`

	// File is the name the catalog was loaded from, as given to Load.
	File string `yaml:"-"`
	// Hash is the hex SHA-256 of the file's bytes.
	Hash string `yaml:"-"`
	// Warnings are problems that do not stop loading (tool names outside
	// the portable [A-Za-z0-9_-]{1,64}, for example), formatted like errors.
	Warnings []string `yaml:"-"`

	byName map[string]*Tool
}

// Tool returns the enabled tool called name, or nil.
func (c *Catalog) Tool(name string) *Tool { return c.byName[name] }

// Server is the identity and mount points of the gateway.
type Server struct {
	Meta           `yaml:"-"`
	Name           string   `yaml:"name"`
	Title          string   `yaml:"title"`
	Version        string   `yaml:"version"`
	Instructions   string   `yaml:"instructions"`
	Listen         string   `yaml:"listen"`
	MCPPath        string   `yaml:"mcp_path"`
	AdminPath      string   `yaml:"admin_path"` // "" disables the REST surface
	AllowedOrigins []string `yaml:"allowed_origins"`
	Enabled        bool     `yaml:"enabled"` // default true
	// PublicURL is the gateway's own URL as clients reach it; its origin is
	// the one the Origin check allows, and its host is allowed as Host.
	PublicURL string `yaml:"public_url"`
	// AllowedHosts lists the Host header values (host or host:port) the
	// gateway answers; empty: any on a non-loopback listener.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// TLS serves HTTPS natively; nil serves plain HTTP.
	TLS *TLS `yaml:"tls"`
}

// TLS names a certificate chain and its key, PEM files reloaded on SIGHUP.
type TLS struct {
	Meta     `yaml:"-"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Auth says how bearer tokens are verified and mapped to a principal.
type Auth struct {
	Meta             `yaml:"-"`
	JWT              *JWT              `yaml:"jwt"`
	APIKeysFile      string            `yaml:"api_keys_file"`
	Principal        Principal         `yaml:"principal"`
	ResourceMetadata *ResourceMetadata `yaml:"resource_metadata"`
	// MaxTokenLifetime refuses tokens whose exp - iat (or exp - nbf, or
	// exp - now without either) exceeds it; 0: no ceiling.
	MaxTokenLifetime Duration `yaml:"max_token_lifetime"`
	// OAuthServer makes the gateway an authorization server for MCP
	// clients, federated to an OpenID provider; nil: off.
	OAuthServer *OAuthServer `yaml:"oauth_server"`
}

// JWT configures JSON Web Token verification. Exactly one key source is set.
type JWT struct {
	Meta          `yaml:"-"`
	JWKSURL       string   `yaml:"jwks_url"`
	PublicKeyFile string   `yaml:"public_key_file"`
	HMACSecretEnv string   `yaml:"hmac_secret_env"`
	Algorithms    []string `yaml:"algorithms"`
	Issuer        string   `yaml:"issuer"`
	Audience      string   `yaml:"audience"`
	Leeway        Duration `yaml:"leeway"`
	// AllowInsecureJWKS allows an http:// jwks_url on a non-loopback host.
	AllowInsecureJWKS bool `yaml:"allow_insecure_jwks_url"`
	// StartDeadline is how long the gateway keeps retrying the first JWKS
	// fetch at start (answering 503 meanwhile) before it exits.
	StartDeadline Duration `yaml:"start_deadline"`
}

// Principal holds gjson paths into the verified claims.
type Principal struct {
	Meta             `yaml:"-"`
	Subject          string `yaml:"subject"`           // default "sub"
	Workspace        string `yaml:"workspace"`         // default "ws"
	Scopes           string `yaml:"scopes"`            // default "scope"
	Actor            string `yaml:"actor"`             // default: the subject
	WorkspacePattern string `yaml:"workspace_pattern"` // default DefaultWorkspacePattern

	// WorkspaceOptional is set by Load when the catalog is tenantless:
	// every upstream declares "workspace: none". A token without a
	// workspace claim is then accepted, with the workspace "". A token
	// that has one is still held to WorkspacePattern.
	WorkspaceOptional bool `yaml:"-"`
}

// ResourceMetadata is served as RFC 9728 protected resource metadata.
type ResourceMetadata struct {
	Meta                 `yaml:"-"`
	Resource             string   `yaml:"resource"`
	AuthorizationServers []string `yaml:"authorization_servers"`
	ScopesSupported      []string `yaml:"scopes_supported"`
}

// Gate is a named permission: a caller passes when it holds every scope.
type Gate struct {
	Meta   `yaml:"-"`
	Scopes []string `yaml:"scopes"`
	OnDeny string   `yaml:"on_deny"` // "" (hide + isError) or "challenge" (HTTP 403)
}

// SensitiveData is the triple lock.
type SensitiveData struct {
	Meta          `yaml:"-"`
	Gate          string `yaml:"gate"`            // lock 1; "" keeps it closed for everyone
	Expose        bool   `yaml:"expose"`          // lock 2; default true
	KillSwitchEnv string `yaml:"kill_switch_env"` // lock 3; default DefaultKillSwitchEnv
}

// Upstream is a named REST service the tools call.
type Upstream struct {
	Meta             `yaml:"-"`
	Name             string            `yaml:"-"`
	BaseURL          string            `yaml:"base_url"`
	Timeout          Duration          `yaml:"timeout"`
	Headers          map[string]string `yaml:"headers"`
	Workspace        *WorkspaceBinding `yaml:"workspace"`
	ActorHeader      string            `yaml:"actor_header"`
	MaxResponseBytes Size              `yaml:"max_response_bytes"`
	MaxConcurrent    int               `yaml:"max_concurrent"` // 0: no cap
	// MaxConcurrentPerWorkspace caps one workspace's share of concurrent
	// calls to this upstream; 0: no per-workspace cap.
	MaxConcurrentPerWorkspace int `yaml:"max_concurrent_per_workspace"`
	// FollowRedirects lets reads follow same-origin redirects that stay
	// under the tool's path prefix. Writes never follow redirects.
	FollowRedirects bool `yaml:"follow_redirects"`
	// ErrorDetail says what of a failed answer reaches the agent:
	// ErrorDetailMessage (status and the upstream's own short message,
	// URL credentials stripped) or ErrorDetailStatus (the status alone).
	ErrorDetail string `yaml:"error_detail"`
	// IdempotencyHeader names the header that carries the key derived
	// from an approval on an approved write; default
	// DefaultIdempotencyHeader.
	IdempotencyHeader string `yaml:"idempotency_header"`
	// Credentials choose the credential sent by the caller's workspace;
	// nil: the upstream's headers alone.
	Credentials *Credentials `yaml:"credentials"`
	// Auth says how the gateway authenticates to the upstream: static
	// headers (nil, or type headers) or OAuth 2.0 tokens it obtains.
	Auth *UpstreamAuth `yaml:"auth"`
}

// WorkspaceBinding says where the principal's workspace goes on every
// request to an upstream: a header or a query parameter (or a {workspace}
// placeholder in a tool's path, which needs no binding here). Written as
// the scalar "none", it says the upstream has no tenants: None is set,
// Header and Query are empty, and no tool or probe of the upstream may use
// {workspace}.
type WorkspaceBinding struct {
	Meta   `yaml:"-"`
	Header string `yaml:"header"`
	Query  string `yaml:"query"`
	None   bool   `yaml:"-"`
}

// Prerequisite is a per-workspace condition for tool visibility.
type Prerequisite struct {
	Meta  `yaml:"-"`
	Name  string `yaml:"-"`
	Probe *Probe `yaml:"probe"`
	Claim string `yaml:"claim"` // gjson query on the claims; met when it yields a truthy value
}

// Probe is an upstream call whose answer decides a prerequisite.
type Probe struct {
	Meta     `yaml:"-"`
	Upstream string   `yaml:"upstream"`
	Method   string   `yaml:"method"` // default GET
	Path     string   `yaml:"path"`
	TrueWhen string   `yaml:"true_when"` // gjson path; met when truthy. "" means a 2xx answer is enough
	Cache    Duration `yaml:"cache"`     // default 60s

	// PathTemplate is Path compiled by Load; its only placeholder is
	// {workspace}.
	PathTemplate Template `yaml:"-"`
}

// Limits bound requests and responses.
type Limits struct {
	Meta            `yaml:"-"`
	StructuredBytes Size     `yaml:"structured_bytes"`
	TextBytes       Size     `yaml:"text_bytes"`
	InlineBytes     Size     `yaml:"inline_bytes"`
	PageSize        PageSize `yaml:"page_size"`
	RequestBytes    Size     `yaml:"request_bytes"`
	Rate            *Rate    `yaml:"rate"`
	MaxInFlight     int      `yaml:"max_in_flight"`
	// Rules are rate limits and daily quotas keyed by any combination of
	// workspace, subject, tool and upstream; see [LimitRule].
	Rules []*LimitRule `yaml:"rules"`
}

// PageSize is the default and the ceiling of a paged tool's page size.
type PageSize struct {
	Meta    `yaml:"-"`
	Default int `yaml:"default"`
	Max     int `yaml:"max"`
}

// Rate configures token buckets. A nil *Rate means no rate limit.
type Rate struct {
	Meta         `yaml:"-"`
	PerPrincipal *Bucket            `yaml:"per_principal"`
	PerTool      map[string]*Bucket `yaml:"per_tool"`
}

// Bucket is a token bucket: RPS tokens a second, up to Burst.
type Bucket struct {
	Meta  `yaml:"-"`
	RPS   float64 `yaml:"rps"`
	Burst int     `yaml:"burst"`
}

// LimitRule is one rate limit or daily quota (or both) that tools/call
// takes from: one counter per distinct value of the Per dimensions, for
// the calls Match selects. With a shared store (Redis) the counters are
// the fleet's; otherwise each process's.
type LimitRule struct {
	Meta `yaml:"-"`
	// Name names the rule in refusals, logs and metrics.
	Name string `yaml:"name"`
	// Per lists the dimensions that key the counter: workspace, subject,
	// tool, upstream. Empty: one counter for every call the rule matches.
	Per []string `yaml:"per"`
	// Match selects the calls the rule applies to; empty: every call.
	Match LimitMatch `yaml:"match"`
	// Rate is a GCRA limit: RPS calls a second, Burst at once. Burst
	// defaults to RPS rounded up (at least 1).
	Rate *Bucket `yaml:"rate"`
	// Quota caps calls per UTC day.
	Quota *Quota `yaml:"quota"`
}

// LimitMatch selects calls: each list that is set must hold the call's
// value. Tool and upstream name catalog tools and upstreams.
type LimitMatch struct {
	Meta      `yaml:"-"`
	Workspace []string `yaml:"workspace"`
	Subject   []string `yaml:"subject"`
	Tool      []string `yaml:"tool"`
	Upstream  []string `yaml:"upstream"`
}

// Quota caps calls per UTC day.
type Quota struct {
	Meta   `yaml:"-"`
	PerDay int64 `yaml:"per_day"`
}

// Limit rule dimensions, as LimitRule.Per names them.
const (
	DimWorkspace = "workspace"
	DimSubject   = "subject"
	DimTool      = "tool"
	DimUpstream  = "upstream"
)

// Audit says where write records go.
type Audit struct {
	Meta `yaml:"-"`
	Path string `yaml:"path"` // "" sends records to the log stream
	// Fsync syncs the file after each record, before the reply.
	Fsync bool `yaml:"fsync"`
	// MaxArgumentBytes caps the arguments kept in a record; larger ones are
	// recorded as their SHA-256 and byte count.
	MaxArgumentBytes Size `yaml:"max_argument_bytes"`
}

// Tool is one MCP tool: a projection of one upstream REST call.
type Tool struct {
	Meta        `yaml:"-"`
	Name        string         `yaml:"name"`
	Title       string         `yaml:"title"`
	Description string         `yaml:"description"`
	Enabled     bool           `yaml:"enabled"` // default true
	Kind        string         `yaml:"kind"`    // KindRead (default) or KindWrite
	Gate        string         `yaml:"gate"`    // default ViewGate
	Sensitive   bool           `yaml:"sensitive"`
	Requires    []string       `yaml:"requires"`
	Annotations *Annotations   `yaml:"annotations"`
	Input       map[string]any `yaml:"input"` // JSON Schema 2020-12; default {type: object, additionalProperties: false}
	Request     Request        `yaml:"request"`
	Paging      *Paging        `yaml:"paging"`
	Response    Response       `yaml:"response"`
	// Approval asks a human before a write is sent; nil: none.
	Approval *Approval `yaml:"approval"`
	// Tags group tools (imported from OpenAPI tags); free-form names.
	Tags []string `yaml:"tags"`
	// SearchHint is words that help a search find the tool without being
	// part of what the agent reads as its description: the words users
	// say for it ("new hire", "super admin"), or, imported, what the
	// document says of its tags. search_tools reads it at a low weight;
	// a full listing sends it in _meta's anthropic/searchHint. At most
	// MaxSearchHint bytes.
	SearchHint string `yaml:"search_hint"`
	// OutputSchema is the JSON Schema (type: object) of the tool's
	// structured result, as shaped by response.select and fields (an array
	// result is {items: [...]}). Load checks it compiles.
	OutputSchema map[string]any `yaml:"output_schema"`
	// Probe is how `gateway check --probe` calls the tool; nil: with
	// arguments taken from the schemas' and the document's examples.
	Probe *ToolProbe `yaml:"probe"`
	// Discovery is DiscoveryAlways to list the tool even when discovery
	// is on, or "".
	Discovery string `yaml:"discovery"`

	// Compiled by Load; read-only afterwards.

	// Output validates a shaped result against OutputSchema plus the
	// members the gateway may add (transportTruncated, the sensitive note;
	// see outputcheck.go); nil without one. Its errors are *OutputError.
	Output Validator `yaml:"-"`
	// OutputJSON is the outputSchema the tool advertises, as compact JSON:
	// what Output checks, or, for a read with response.not_found, that or
	// exactly the not_found result, or, for a write, that or an answer
	// carrying DepartureMember. Nil without an output_schema.
	OutputJSON []byte `yaml:"-"`

	// Schema validates arguments. Never nil after Load.
	Schema Validator `yaml:"-"`
	// InputJSON is Input as compact JSON, the published inputSchema.
	InputJSON []byte `yaml:"-"`
	// Required lists the schema's required argument names.
	Required []string `yaml:"-"`
	// Defaults holds the JSON Schema default of each top-level property
	// that has one, as encoding/json decodes it (numbers as json.Number),
	// checked against the property's schema at load. A call applies them
	// to absent arguments after validation; nil when there are none.
	Defaults map[string]any `yaml:"-"`
}

// Validator checks a decoded JSON value (from encoding/json, with
// json.Number or float64 numbers) against a compiled schema.
type Validator interface {
	Validate(v any) error
}

// Annotations override the hints derived from kind.
type Annotations struct {
	Meta        `yaml:"-"`
	Title       string `yaml:"title"`
	Destructive *bool  `yaml:"destructive"`
	Idempotent  *bool  `yaml:"idempotent"`
	OpenWorld   *bool  `yaml:"open_world"`
}

// Request is the upstream call a tool makes, as templates.
type Request struct {
	Meta     `yaml:"-"`
	Upstream string            `yaml:"upstream"`
	Method   string            `yaml:"method"` // default GET for reads, POST for writes
	Path     string            `yaml:"path"`
	Query    map[string]string `yaml:"query"`
	Headers  map[string]string `yaml:"headers"`
	Body     any               `yaml:"body"` // template; nil sends no body
	// BodyFormat is how Body is encoded: BodyJSON (default), BodyForm
	// (a mapping sent as application/x-www-form-urlencoded) or BodyText
	// (one string template sent as text/plain; charset=utf-8).
	BodyFormat string `yaml:"body_format"`
	// Brackets names query parameters and form fields whose argument, an
	// object or a list, is spread over bracketed fields as Stripe, Rails
	// and PHP read them (address[city]=Paris, items[0][price]=p_1,
	// expand[]=a), not sent as JSON text or a repeated field.
	Brackets []string `yaml:"brackets"`
	// MultiSegment lists path placeholders whose value may span segments
	// ("a/b"); each segment is still escaped and checked on its own.
	MultiSegment []string `yaml:"multi_segment"`

	// Compiled by Load.
	PathTemplate Template `yaml:"-"`
	QueryParams  []Param  `yaml:"-"` // sorted by name
	HeaderParams []Param  `yaml:"-"` // sorted by canonical name
	// BodyTemplate mirrors Body with every string compiled into a
	// Template (map[string]any, []any, Template and JSON scalars); nil
	// when Body is nil. A Template that is exactly "{arg}" (see
	// [Template.Whole]) stands for the argument's JSON value.
	BodyTemplate any `yaml:"-"`
	// Times lists every computed time placeholder of the path, query,
	// headers and body, once each by name, in order of appearance.
	Times []TimeRef `yaml:"-"`
}

// Param is one compiled query parameter or header.
type Param struct {
	Name     string
	Template Template
}

// Paging states a paged tool's conventions.
type Paging struct {
	Meta             `yaml:"-"`
	PageSizeArgument string `yaml:"page_size_argument"`
	CursorArgument   string `yaml:"cursor_argument"` // "" for top-N tools
	Max              int    `yaml:"max"`             // the upstream's own ceiling; 0: limits.page_size.max
}

// Response shapes the upstream answer.
type Response struct {
	Meta               `yaml:"-"`
	Select             string    `yaml:"select"`
	Fields             Fields    `yaml:"fields"`
	List               string    `yaml:"list"`
	Untrusted          []string  `yaml:"untrusted"`
	Sensitive          []string  `yaml:"sensitive"`
	SensitiveNoteField string    `yaml:"sensitive_note_field"`
	NotFound           *NotFound `yaml:"not_found"`
	Render             string    `yaml:"render"` // RenderJSON (default) or RenderPayload
	// ErrorMessage is a gjson path to the reason in this upstream's error
	// bodies, tried before the common shapes. "" means the common shapes.
	ErrorMessage string `yaml:"error_message"`
	// Optional names what may match nothing in a 2xx answer without
	// making the call a tool error: "select", "list", or a field name.
	Optional []string `yaml:"optional"`
}

// Fields maps output names to gjson paths, in the order written.
type Fields []Field

// Field is one output field.
type Field struct {
	Name string
	Path string
}

// NotFound maps upstream statuses to a normal result.
type NotFound struct {
	Meta   `yaml:"-"`
	Status []int          `yaml:"status"`
	Result map[string]any `yaml:"result"` // default {found: false}
}
