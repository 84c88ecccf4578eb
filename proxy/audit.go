package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mcpgw/gateway/authz"
)

// AuditRecord is one write call, whatever its outcome.
type AuditRecord struct {
	Time           string          `json:"time"`
	RequestID      string          `json:"request_id"`
	Actor          string          `json:"actor"`
	Subject        string          `json:"subject"`
	Workspace      string          `json:"workspace"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments"`
	UpstreamStatus int             `json:"upstream_status"`
	Outcome        string          `json:"outcome"`
	DurationMS     int64           `json:"duration_ms"`
}

// AuditSink stores audit records. Write returns once the record is
// durable enough to reply: appended and flushed.
type AuditSink interface {
	Write(ctx context.Context, rec *AuditRecord) error
}

// LogAudit writes records to a structured log. It is the default sink.
type LogAudit struct{ Logger *slog.Logger }

func (a *LogAudit) Write(ctx context.Context, rec *AuditRecord) error {
	// The record is one group, so its keys (time included) keep the names
	// the audit contract gives them beside the log line's own.
	a.Logger.LogAttrs(ctx, slog.LevelInfo, "audit", slog.Any("audit", rec))
	return nil
}

// FileAudit appends JSON lines to a file, flushed before Write returns.
type FileAudit struct {
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
}

// OpenFileAudit opens path for append, creating it with mode 0600.
func OpenFileAudit(path string) (*FileAudit, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	return &FileAudit{f: f, w: bufio.NewWriter(f)}, nil
}

func (a *FileAudit) Write(_ context.Context, rec *AuditRecord) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.w.Write(line)
	a.w.WriteByte('\n')
	return a.w.Flush()
}

// Close closes the file.
func (a *FileAudit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.w.Flush()
	return a.f.Close()
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id for audit records.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func (c *Core) record(ctx context.Context, p *authz.Principal, t *tool, args []byte, status int, res *Result, callErr error, d time.Duration) {
	rec := &AuditRecord{
		Time:           time.Now().UTC().Format(time.RFC3339Nano),
		RequestID:      RequestID(ctx),
		Tool:           t.def.Name,
		Arguments:      auditArgs(args, t),
		UpstreamStatus: status,
		DurationMS:     d.Milliseconds(),
	}
	if p != nil {
		rec.Actor, rec.Subject, rec.Workspace = p.Actor, p.Subject, p.Workspace
	}
	switch {
	case res != nil:
		rec.Outcome = res.Outcome
	case callErr != nil:
		rec.Outcome = OutcomeRefused
	}
	if rec.Outcome == OutcomeNotFound || rec.Outcome == OutcomeTruncated {
		rec.Outcome = OutcomeOK
	}
	if err := c.audit.Write(context.WithoutCancel(ctx), rec); err != nil {
		c.logger.Error("audit write failed", "tool", t.def.Name, "error", err)
	}
}

// auditArgs returns the arguments for the audit record as valid JSON, with
// the value of every argument whose schema marks it writeOnly (JSON Schema's
// annotation for values sent but never to be read back, such as secrets)
// replaced by "[redacted]".
func auditArgs(args []byte, t *tool) json.RawMessage {
	if len(args) == 0 || !json.Valid(args) {
		return json.RawMessage("{}")
	}
	if len(t.redact) == 0 {
		return json.RawMessage(args)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return json.RawMessage(args)
	}
	for _, name := range t.redact {
		if _, ok := m[name]; ok {
			m[name] = json.RawMessage(`"[redacted]"`)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage("{}")
	}
	return out
}

// writeOnlyArgs lists the top-level properties of a schema marked
// writeOnly: true.
func writeOnlyArgs(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	var out []string
	for name, p := range props {
		if pm, ok := p.(map[string]any); ok && pm["writeOnly"] == true {
			out = append(out, name)
		}
	}
	return out
}
