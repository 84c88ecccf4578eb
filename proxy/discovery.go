package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/internal/strictjson"
)

// Discovery: with thousands of tools no agent can hold the listing, so
// tools/list offers the always-listed tools and two meta tools instead.
// search_tools ranks the caller's visible tools (search.go); call_tool
// calls one of them through exactly the pipeline a direct tools/call
// takes, and is unwrapped before anything else looks at the call, so
// rate limits, approval, confirmation and the audit record all see the
// real tool. Every visible tool stays callable by its own name. Nothing
// is kept between requests: any node serves any step.

// view is one caller's tools in one toolset, computed once per
// authorization signature and toolset and cached (see ListIn).
type view struct {
	tools  []*tool   // visible, catalog order
	listed []*Listed // what tools/list shows

	searchOnce sync.Once
	search     *searchView // built on the first search
}

// searchView returns the view's search statistics, computing them once.
func (v *view) searchView(ix *searchIndex) *searchView {
	v.searchOnce.Do(func() { v.search = ix.view(v.tools) })
	return v.search
}

// view returns p's view of set.
func (c *Core) view(ctx context.Context, p *authz.Principal, set string) (*view, error) {
	members, err := c.toolset(set)
	if err != nil {
		return nil, err
	}
	sig, ok := c.policy.Signature(ctx, p)
	key := listKey{set: set, sig: sig}
	if ok {
		if v, hit := c.lists.Load(key); hit {
			return v.(*view), nil
		}
	}
	v := &view{}
	for _, t := range c.order {
		if (members == nil || members[t]) && c.policy.Decide(ctx, p, t.def).Allowed {
			v.tools = append(v.tools, t)
		}
	}
	d := c.cat.DiscoveryFor(set)
	if len(v.tools) > 0 && d.On(len(v.tools)) {
		for _, t := range v.tools {
			if d.AlwaysListed(t.def) {
				v.listed = append(v.listed, t.listed)
			}
		}
		v.listed = append(v.listed, c.meta...)
	} else {
		v.listed = make([]*Listed, len(v.tools))
		for i, t := range v.tools {
			v.listed[i] = t.listed
		}
	}
	// Equal signatures get equal decisions, so the view is computed once
	// per signature and toolset. The number of signatures is bounded by
	// the catalog, and the cache by maxListSignatures besides.
	if ok && c.listCount.Load() < maxListSignatures {
		if _, loaded := c.lists.LoadOrStore(key, v); !loaded {
			c.listCount.Add(1)
		}
	}
	return v, nil
}

// discoveryEnabled reports whether the meta tools exist under d (they may
// still be unlisted for a caller with few tools, under auto).
func discoveryEnabled(d *catalog.Discovery) bool {
	return d != nil && d.Mode != catalog.DiscoveryOff
}

// anyDiscovery reports whether any endpoint of cat has discovery.
func anyDiscovery(cat *catalog.Catalog) bool {
	if discoveryEnabled(cat.Discovery) {
		return true
	}
	for _, ts := range cat.Toolsets {
		if discoveryEnabled(ts.Discovery) {
			return true
		}
	}
	return false
}

const searchToolsSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","maxLength":1024,"description":"What you want to do, in your own words (\"cancel the run that is stuck\")."},` +
	`"tags":{"type":"array","items":{"type":"string"},"maxItems":20,"description":"Only tools carrying one of these tags."},` +
	`"kind":{"type":"string","enum":["read","write"],"description":"Only reads, or only writes."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":20,"default":5,"description":"How many tools to return."}},` +
	`"required":["query"],"additionalProperties":false}`

const callToolSchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","description":"The tool's name, as search_tools returned it."},` +
	`"arguments":{"type":"object","description":"The tool's arguments, matching its inputSchema."}},` +
	`"required":["name"],"additionalProperties":false}`

// metaTools encodes the two meta tools once, at load.
func metaTools() []*Listed {
	search := &catalog.Tool{
		Name:        catalog.SearchToolsName,
		Title:       "Search tools",
		Description: "Find this gateway's tools by what you want to do. Returns the best matches, each with its inputSchema; then call one with call_tool, or directly by its name. Only tools you may use are ever returned.",
		Kind:        catalog.KindRead,
		InputJSON:   []byte(searchToolsSchema),
	}
	call := &catalog.Tool{
		Name:        catalog.CallToolName,
		Title:       "Call a tool",
		Description: "Call a tool that search_tools found: {name, arguments}. It runs exactly as calling the tool by its name would, with the same permissions, confirmations and limits.",
		Kind:        catalog.KindWrite,
		InputJSON:   []byte(callToolSchema),
	}
	return []*Listed{
		{Tool: search, MCP: encodeMCPTool(search, false, true), REST: encodeRESTTool(search)},
		{Tool: call, MCP: encodeMCPTool(call, false, true), REST: encodeRESTTool(call)},
	}
}

// CallToolName is the discovery meta tool that calls another tool; a
// surface unwraps it with [Core.CallTarget].
const CallToolName = catalog.CallToolName

// CallTarget returns the tool a tools/call of name with args calls: for
// call_tool on an endpoint with discovery, the named tool and its
// arguments (ok true); otherwise name and args unchanged (ok false). A
// malformed call_tool is left as it is: the core answers it with a tool
// error. Surfaces unwrap first, so that rate limits, logs and metrics
// name the real tool.
func (c *Core) CallTarget(set, name string, args []byte) (string, []byte, bool) {
	if name != catalog.CallToolName || !discoveryEnabled(c.cat.DiscoveryFor(set)) {
		return name, args, false
	}
	inner, innerArgs, err := unwrapCallTool(args)
	if err != nil {
		return name, args, false
	}
	return inner, innerArgs, true
}

// unwrapCallTool reads call_tool's arguments: {name, arguments?}.
func unwrapCallTool(raw []byte) (string, []byte, error) {
	var a struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if decodeExact(raw, &a, "name", "arguments") != nil {
		return "", nil, errors.New("call_tool takes {name, arguments}: name a string, arguments an object")
	}
	if a.Name == nil || *a.Name == "" {
		return "", nil, errors.New("call_tool needs name: the tool to call")
	}
	if *a.Name == catalog.CallToolName || *a.Name == catalog.SearchToolsName {
		return "", nil, fmt.Errorf("call_tool calls a tool, not %s", *a.Name)
	}
	args := bytes.TrimSpace(a.Arguments)
	if len(args) == 0 {
		args = nil
	} else if args[0] != '{' { // null too, as a direct call's arguments
		return "", nil, errors.New("call_tool's arguments must be an object")
	}
	return *a.Name, args, nil
}

// decodeExact decodes the JSON object raw into v, whose fields are
// names, refusing any other member. encoding/json matches member names
// without regard to case and keeps the last of two, so {"name":"a","Name":"b"}
// would call b while a parser in front of the gateway read a: members must
// be spelt exactly, once each.
func decodeExact(raw []byte, v any, names ...string) error {
	obj := bytes.TrimSpace(raw)
	if !json.Valid(obj) || len(obj) == 0 || obj[0] != '{' {
		return errors.New("not a JSON object")
	}
	if p, _ := strictjson.Scan(obj, names, true, nil); p != nil {
		return fmt.Errorf("member %q is not allowed here", p.Key)
	}
	return json.Unmarshal(obj, v)
}

// SearchQuery is one tool search: words, optional filters and how many
// tools to return (0: DefaultSearchLimit).
type SearchQuery struct {
	Query string   `json:"query"`
	Tags  []string `json:"tags"`
	Kind  string   `json:"kind"`
	Limit int      `json:"limit"`

	terms   map[string]qterm // Query's weighted terms, set by check
	want    intent           // the kind of tool Query asks for, set by check
	one     bool             // whether Query points at one thing, set by check
	whoami  bool             // whether Query asks who the caller is (asksWhoAmI), set by check
	creates bool             // whether Query orders a thing made (asksToCreate), set by check
	joined  []string         // Query's neighbouring words run together (runTogether), set by check
}

// ErrBadSearch marks a search whose query or bounds are unusable; the
// error's text is the public reason.
var ErrBadSearch = errors.New("invalid search")

type searchError struct{ msg string }

func (e *searchError) Error() string { return e.msg }
func (e *searchError) Unwrap() error { return ErrBadSearch }

func badSearch(format string, args ...any) error {
	return &searchError{msg: "invalid arguments: " + fmt.Sprintf(format, args...)}
}

// check validates q and applies the default limit.
func (q *SearchQuery) check() error {
	switch {
	case len(q.Query) > utf8.UTFMax*MaxSearchQuery || !utf8.ValidString(q.Query) || utf8.RuneCountInString(q.Query) > MaxSearchQuery:
		return badSearch("query must be valid UTF-8 of at most %d characters", MaxSearchQuery)
	case q.Kind != "" && q.Kind != catalog.KindRead && q.Kind != catalog.KindWrite:
		return badSearch(`kind must be "read" or "write"`)
	case len(q.Tags) > 20:
		return badSearch("at most 20 tags")
	case q.Limit < 0 || q.Limit > MaxSearchLimit:
		return badSearch("limit must be between 1 and %d", MaxSearchLimit)
	}
	// Tokenised, stemmed and expanded once per search.
	clean := withoutValues(withoutPhones(q.Query))
	q.one = aboutOne(q.Query, clean)
	// "Open message 18c2f0a9b7d4", "open the settings": to read it.
	opens := opensExisting(q.Query, clean != q.Query) >= 0
	if opens {
		if m := openWord.FindStringIndex(clean); m != nil {
			clean = clean[:m[0]] + "view" + clean[m[1]:]
		}
	}
	clean, channel := withoutChannels(clean)
	q.one = q.one || channel
	// A span of time, a host name or a file name is seldom the one thing
	// asked about ("the past 24h", "a certificate for shop.example.com");
	// an IP address asks for an IP, a CIDR block for a subnet.
	clean = withoutFilenames(withoutHostnames(withoutDurations(withoutIPs(clean))))
	q.terms, q.want = queryTerms(clean, q.one), queryIntent(valuesAs(q.Query, "id"))
	if opens {
		q.want = intentRead
	}
	q.whoami = asksWhoAmI(clean)
	q.joined = runTogether(clean)
	q.creates = q.want == intentWrite && asksToCreate(words(clean), clean)
	if len(q.terms) == 0 && len(q.Tags) == 0 && q.Kind == "" {
		return badSearch("query has no words to search for (or give tags or kind)")
	}
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	return nil
}

// Search ranks the tools p may see in set for q, best first. It never
// returns, counts or lets rank a tool p cannot see: term statistics are
// taken over p's visible tools only. A bad query is an error wrapping
// [ErrBadSearch] whose text is the public reason.
func (c *Core) Search(ctx context.Context, p *authz.Principal, set string, q SearchQuery) ([]*Listed, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	v, err := c.view(ctx, p, set)
	if err != nil {
		return nil, err
	}
	return c.rank(v, q), nil
}

// rank answers a checked query over v's tools.
func (c *Core) rank(v *view, q SearchQuery) []*Listed {
	keep := func(doc int32) bool { return matchesFilters(c.order[doc].def, q.Tags, q.Kind) }
	var out []*Listed
	if len(q.terms) > 0 {
		for _, d := range c.index.rank(v.searchView(c.index), &q, keep) {
			out = append(out, c.order[d].listed)
		}
		return out
	}
	// Filters alone: the matching tools in catalog order.
	for _, t := range v.tools {
		if len(out) == q.Limit {
			break
		}
		if keep(int32(t.index)) {
			out = append(out, t.listed)
		}
	}
	return out
}

// SearchCatalog ranks every tool of the catalog for q, as an operator
// sees them (gateway tools search): no principal, no gates.
func (c *Core) SearchCatalog(q SearchQuery) ([]*Listed, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	return c.rank(&view{tools: c.order}, q), nil
}

// searchTools answers the search_tools meta tool for p on set.
func (c *Core) searchTools(ctx context.Context, p *authz.Principal, set string, raw []byte) *Result {
	var a struct {
		Query *string         `json:"query"`
		Tags  []string        `json:"tags"`
		Kind  json.RawMessage `json:"kind"`  // a string; null is not one
		Limit *float64        `json:"limit"` // 5.0 is the integer 5, as in any tool's arguments
	}
	var kind string
	if decodeExact(raw, &a, "query", "tags", "kind", "limit") != nil ||
		a.Kind != nil && (a.Kind[0] != '"' || json.Unmarshal(a.Kind, &kind) != nil) ||
		a.Limit != nil && *a.Limit != math.Trunc(*a.Limit) {
		return toolError(OutcomeToolError, "invalid arguments: search_tools takes {query, tags?, kind?, limit?}: query a string, tags a list of strings, kind read or write, limit an integer")
	}
	if a.Query == nil {
		return toolError(OutcomeToolError, "invalid arguments: query is required")
	}
	q := SearchQuery{Query: *a.Query, Tags: a.Tags, Kind: kind}
	if a.Limit != nil {
		if *a.Limit < 1 {
			return toolError(OutcomeToolError, fmt.Sprintf("invalid arguments: limit must be between 1 and %d", MaxSearchLimit))
		}
		q.Limit = int(min(*a.Limit, float64(MaxSearchLimit+1)))
	}
	found, err := c.Search(ctx, p, set, q)
	if err != nil {
		return toolError(OutcomeToolError, err.Error())
	}
	return c.searchResult(found, ctx.Value(noOutputSchemasKey{}) != nil)
}

type noOutputSchemasKey struct{}

// WithoutOutputSchemas marks ctx as a call from a client on a protocol
// revision older than 2025-06-18, which has no outputSchema:
// search_tools then describes each tool as tools/list shows it to that
// client.
func WithoutOutputSchemas(ctx context.Context) context.Context {
	return context.WithValue(ctx, noOutputSchemasKey{}, true)
}

// searchResult encodes the found tools as {"tools": [...]}, each as the
// MCP Tool object tools/list would show (name, title, description,
// inputSchema, outputSchema, annotations), within the catalog's structured
// bytes bound: tools past it are left out and the answer says so.
func (c *Core) searchResult(found []*Listed, noOutputSchemas bool) *Result {
	budget := int(c.cat.Limits.StructuredBytes)
	if budget <= 0 {
		budget = int(catalog.DefaultStructuredBytes)
	}
	b := []byte(`{"tools":[`)
	left := 0
	for i, l := range found {
		entry := l.MCP // the tool as tools/list would show it
		if noOutputSchemas && l.MCPBefore20250618 != nil {
			entry = l.MCPBefore20250618
		}
		if len(b)+len(entry)+256 > budget {
			left = len(found) - i
			break
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, entry...)
	}
	b = append(b, ']')
	if left > 0 {
		b = append(b, `,"`+catalog.TruncatedMember+`":{"list":"tools","dropped":`...)
		b = fmt.Appendf(b, "%d", left)
		b = append(b, `,"reason":"the answer reached the size limit; narrow the query or lower limit"}`...)
	}
	b = append(b, '}')
	return &Result{Structured: b, Text: string(b), Outcome: OutcomeOK}
}

// searchHint is the _meta "anthropic/searchHint" of a tool in a full
// listing: its title, tags and search_hint, for clients that search
// tools themselves.
func searchHint(t *catalog.Tool) string {
	parts := make([]string, 0, 2+len(t.Tags))
	if t.Title != "" {
		parts = append(parts, t.Title)
	}
	parts = append(parts, t.Tags...)
	if t.SearchHint != "" {
		parts = append(parts, t.SearchHint)
	}
	return strings.Join(parts, ", ")
}
