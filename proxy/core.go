// Package proxy is the core every surface shares: it lists the tools a
// principal may see and calls one, re-checking the same decision, validating
// arguments, building the upstream request from the catalog's templates,
// binding the workspace from the principal, reading a bounded answer and
// rendering it. The wire (JSON-RPC, HTTP status codes) belongs to mcp.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// Options configures a [Core]. The zero value is usable.
type Options struct {
	// Transport carries upstream requests. Nil: a shared pooled transport.
	Transport http.RoundTripper
	// Logger receives operational logs. Nil: discard.
	Logger *slog.Logger
	// Getenv reads the environment (the kill switch). Nil: os.Getenv.
	Getenv func(string) string
}

// Core serves one loaded catalog. It is immutable after New and safe for
// concurrent use; a reload builds a new Core.
type Core struct {
	cat    *catalog.Catalog
	logger *slog.Logger
}

// Catalog returns the catalog c serves.
func (c *Core) Catalog() *catalog.Catalog { return c.cat }

// Listed is one tool as a surface publishes it, encoded once at load.
type Listed struct {
	Tool *catalog.Tool
	// MCP is the MCP Tool object (name, title, description, inputSchema,
	// annotations) as compact JSON.
	MCP []byte
	// REST is {name, description, input_schema} as compact JSON.
	REST []byte
}

// Result is the outcome of a call that reached a decision. A tool failure
// (a gate, bad arguments, an upstream fault) is a Result with IsError set,
// not an error: the model should read it.
type Result struct {
	// Structured is the shaped result as a compact JSON object; nil when
	// IsError.
	Structured []byte
	// Text is the text content block: the same result as compact JSON
	// (fenced where untrusted), or the error message when IsError.
	Text    string
	IsError bool
	// Outcome is a bounded label for metrics and audit: ok, tool_error,
	// denied, not_found, truncated, refused.
	Outcome string
}

// Outcome labels.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error"
	OutcomeDenied    = "denied"
	OutcomeNotFound  = "not_found"
	OutcomeTruncated = "truncated"
	OutcomeRefused   = "refused"
)

// ErrUnknownTool: no enabled tool has that name. Surfaces answer it as a
// protocol error (-32602, REST 404), never as a tool result.
var ErrUnknownTool = errors.New("unknown tool")

// UnknownToolError names the tool that does not exist.
type UnknownToolError struct{ Name string }

func (e *UnknownToolError) Error() string { return fmt.Sprintf("unknown tool %q", e.Name) }
func (e *UnknownToolError) Unwrap() error { return ErrUnknownTool }

// OutputTooLargeError: a read's result cannot fit its bounds even with its
// list emptied. Surfaces answer HTTP 413 AGENT_OUTPUT_TOO_LARGE.
type OutputTooLargeError struct {
	Tool  string
	Bytes int // size of the smallest rendering tried
	Limit int
}

func (e *OutputTooLargeError) Error() string {
	return fmt.Sprintf("output of %q too large: %d bytes over a %d byte bound", e.Tool, e.Bytes, e.Limit)
}

// ChallengeError: a gate with on_deny: challenge denied the call. Surfaces
// answer HTTP 403 with WWW-Authenticate error="insufficient_scope".
type ChallengeError struct {
	Gate   string
	Scopes []string // every scope the call needs
}

func (e *ChallengeError) Error() string { return fmt.Sprintf("gate %q denied: insufficient scope", e.Gate) }

// New builds a Core for cat.
func New(cat *catalog.Catalog, opts *Options) (*Core, error) {
	panic("TODO")
}

// List returns the tools p may see, in catalog order.
func (c *Core) List(ctx context.Context, p *authz.Principal) []*Listed {
	panic("TODO")
}

// Call calls the tool name for p with args (a JSON object, or empty).
func (c *Core) Call(ctx context.Context, p *authz.Principal, name string, args []byte) (*Result, error) {
	panic("TODO")
}
