package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptrace"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// AuditRecord is one write call, whatever its outcome. A call that is about
// to reach the upstream has two: stage "started", written before anything
// is sent, and stage "completed" with the outcome.
type AuditRecord struct {
	Time           string          `json:"time"`
	RequestID      string          `json:"request_id"`
	Actor          string          `json:"actor"`
	Subject        string          `json:"subject"`
	Workspace      string          `json:"workspace"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments"`
	UpstreamStatus int             `json:"upstream_status"`
	// UpstreamSent says the request went out to the upstream (its
	// headers were written to the connection), whether or not an answer
	// came: with UpstreamStatus 0 it is a write that may have been acted
	// on although no answer arrived. Absent: nothing was sent.
	UpstreamSent bool   `json:"upstream_sent,omitempty"`
	Outcome      string `json:"outcome,omitempty"`
	DurationMS   int64  `json:"duration_ms"`
	Stage        string `json:"stage"`
	// ApprovalID and Approver name the approval a record
	// belongs to: the request, the decision, and the execution it
	// released ("cfm_…" for a confirmation, where the approver is the
	// requester).
	ApprovalID string `json:"approval_id,omitempty"`
	Approver   string `json:"approver,omitempty"`
	// ApproverActor is the decider's actor on a decision record: the
	// person, where Approver is the subject of the token they used.
	ApproverActor string `json:"approver_actor,omitempty"`
}

// Audit stages.
const (
	StageStarted   = "started"
	StageCompleted = "completed"
)

// AuditSink stores audit records. Write returns nil only once the record
// is written out (appended, and synced when asked); an error means the
// record may be lost, and a write call whose first record fails is refused.
type AuditSink interface {
	Write(ctx context.Context, rec *AuditRecord) error
}

// LogAudit writes records to a structured log. It is the default sink. The
// handler's write error is returned (slog.Logger's own methods drop it).
type LogAudit struct{ Logger *slog.Logger }

func (a *LogAudit) Write(ctx context.Context, rec *AuditRecord) error {
	// The record is one group, so its keys (time included) keep the names
	// the audit contract gives them beside the log line's own.
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "audit", 0)
	r.AddAttrs(slog.Any("audit", rec))
	return a.Logger.Handler().Handle(ctx, r)
}

// FileAudit appends JSON lines to a file. Each record is one write system
// call on a file opened with O_APPEND, newline included, so processes
// sharing the file never interleave. A failed write is retried once on the
// file opened afresh; the sink recovers by itself when writing works again.
// A write that fails after writing part of a record (a file-size limit, a
// disk that fills mid-record) leaves a fragment; the sink remembers it,
// and the next record starts with a newline, so the fragment costs one
// line and never the record written after it.
type FileAudit struct {
	path string
	sync bool

	mu sync.Mutex
	f  *os.File // nil after a failed reopen
	// torn: the file may end in a fragment of a record, with no newline.
	torn bool
}

// FileAuditOptions configures a [FileAudit].
type FileAuditOptions struct {
	// Fsync syncs the file after each record, before Write returns, so
	// records survive power loss. False: the kernel writes them out.
	Fsync bool
}

// OpenFileAudit opens path for append, creating it with mode 0600.
func OpenFileAudit(path string, opts *FileAuditOptions) (*FileAudit, error) {
	a := &FileAudit{path: path}
	if opts != nil {
		a.sync = opts.Fsync
	}
	f, err := a.open()
	if err != nil {
		return nil, err
	}
	a.f = f
	return a, nil
}

func (a *FileAudit) open() (*os.File, error) {
	return os.OpenFile(a.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
}

// SetFsync turns syncing each record on or off (a reload may change it).
func (a *FileAudit) SetFsync(on bool) {
	a.mu.Lock()
	a.sync = on
	a.mu.Unlock()
}

func (a *FileAudit) Write(_ context.Context, rec *AuditRecord) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	n, err := a.writeLocked(line)
	if err == nil {
		return nil
	}
	// One retry on the file opened afresh: it may have been removed,
	// rotated or the disk may have recovered. A record cut short by the
	// failure is ended first (writeLocked starts with a newline while
	// the file may end in a fragment), so the next one starts on a line
	// of its own.
	if rerr := a.reopenLocked(); rerr != nil {
		return fmt.Errorf("audit file %s: %w (reopening: %v)", a.path, err, rerr)
	}
	if n == len(line) {
		// Written whole; only the sync failed. Sync again rather than
		// append the record a second time.
		if err2 := a.f.Sync(); err2 != nil {
			return fmt.Errorf("audit file %s: sync: %w", a.path, err2)
		}
		return nil
	}
	if _, err2 := a.writeLocked(line); err2 != nil {
		return fmt.Errorf("audit file %s: %w", a.path, err2)
	}
	return nil
}

// writeLocked writes line in one call, after a newline when the file may
// end in a fragment, then syncs when asked. n counts line's bytes
// written, so a failed sync after a whole write shows n == len(line). A
// write that fails partway marks the file torn.
func (a *FileAudit) writeLocked(line []byte) (int, error) {
	if a.f == nil {
		return 0, errors.New("audit file is not open")
	}
	out := line
	if a.torn {
		if st, err := a.f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
			a.torn = false // a new file: nothing to end
		} else {
			out = append([]byte{'\n'}, line...)
		}
	}
	n, err := a.f.Write(out)
	switch {
	case n == len(out):
		a.torn = false
	case n > 0:
		a.torn = true
	}
	if len(out) > len(line) {
		n = max(n-1, 0)
	}
	if err == nil && a.sync {
		err = a.f.Sync()
	}
	return n, err
}

func (a *FileAudit) reopenLocked() error {
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
	f, err := a.open()
	if err != nil {
		return err
	}
	a.f = f
	return nil
}

// Reopen closes the file and opens the path again, for log rotation
// (SIGHUP): later records go to whatever file the path names now.
func (a *FileAudit) Reopen() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reopenLocked()
}

// Close closes the file.
func (a *FileAudit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// AuditObserver receives what an [AuditTrail] sees. Implementations must be
// safe for concurrent use.
type AuditObserver interface {
	// AuditRecord is one record written (err nil) or lost; outcome is the
	// record's outcome, or "started" for a started record.
	AuditRecord(outcome string, err error)
	// AuditHealthy is the sink's state after each write.
	AuditHealthy(bool)
}

// AuditTrail wraps a sink: it counts records and failures, keeps the
// healthy state, and logs the first failure and the recovery once each,
// so a failing sink is loud without flooding the log.
type AuditTrail struct {
	sink   AuditSink
	logger *slog.Logger
	obs    AuditObserver

	mu      sync.Mutex
	failing bool
}

// NewAuditTrail wraps sink. A nil logger discards; a nil obs observes
// nothing.
func NewAuditTrail(sink AuditSink, logger *slog.Logger, obs AuditObserver) *AuditTrail {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t := &AuditTrail{sink: sink, logger: logger, obs: obs}
	if obs != nil {
		obs.AuditHealthy(true)
	}
	return t
}

func (t *AuditTrail) Write(ctx context.Context, rec *AuditRecord) error {
	err := t.sink.Write(ctx, rec)
	label := rec.Outcome
	if rec.Stage == StageStarted {
		label = StageStarted
	}
	t.mu.Lock()
	was := t.failing
	t.failing = err != nil
	t.mu.Unlock()
	switch {
	case err != nil && !was:
		t.logger.Error("audit records cannot be written; write calls are refused until they can", "error", err)
	case err == nil && was:
		t.logger.Info("audit records are written again; write calls are served")
	}
	if t.obs != nil {
		t.obs.AuditRecord(label, err)
		t.obs.AuditHealthy(err == nil)
	}
	return err
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

// auditEntry is one write call's audit state: the parts both records share.
type auditEntry struct {
	c     *Core
	p     *authz.Principal
	t     *tool
	args  json.RawMessage
	start time.Time

	approvalID, approver string // set when an approval released the call

	// sent is set once the request's headers were written to the
	// upstream's connection (from the transport's goroutine).
	sent atomic.Bool
}

// traceSent returns ctx carrying a client trace that marks e sent when
// the request's headers have been written to a connection: from then on
// the upstream may act on the write, answer or not.
func (e *auditEntry) traceSent(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { e.sent.Store(true) }})
}

func (c *Core) newAuditEntry(p *authz.Principal, t *tool, raw []byte, start time.Time) *auditEntry {
	return &auditEntry{c: c, p: p, t: t, args: auditArgs(raw, t, t.auditMax), start: start}
}

func (e *auditEntry) record(stage, outcome string, status int) *AuditRecord {
	rec := &AuditRecord{
		Time:           time.Now().UTC().Format(time.RFC3339Nano),
		Tool:           e.t.def.Name,
		Arguments:      e.args,
		UpstreamStatus: status,
		Outcome:        outcome,
		DurationMS:     time.Since(e.start).Milliseconds(),
		Stage:          stage,
		ApprovalID:     e.approvalID,
		Approver:       e.approver,
	}
	if e.p != nil {
		rec.Actor, rec.Subject, rec.Workspace = e.p.Actor, e.p.Subject, e.p.Workspace
	}
	return rec
}

// started writes the record that must exist before the upstream is called.
func (e *auditEntry) started(ctx context.Context) error {
	rec := e.record(StageStarted, "", 0)
	rec.RequestID = RequestID(ctx)
	return e.c.audit.Write(context.WithoutCancel(ctx), rec)
}

// completed writes the call's final record. A failure is not the
// caller's: the upstream may have acted, so the reply still goes out (the
// trail logs the failure and counts it).
func (e *auditEntry) completed(ctx context.Context, status int, res *Result, callErr error) {
	outcome := ""
	switch {
	case res != nil:
		outcome = res.Outcome
	case callErr != nil:
		outcome = OutcomeRefused
	}
	if outcome == OutcomeNotFound || outcome == OutcomeTruncated || outcome == OutcomeOutputDeparted {
		outcome = OutcomeOK
	}
	rec := e.record(StageCompleted, outcome, status)
	rec.RequestID = RequestID(ctx)
	rec.UpstreamSent = status != 0 || e.sent.Load()
	e.c.audit.Write(context.WithoutCancel(ctx), rec)
}

// auditArgs returns the arguments for the audit record as valid JSON, with
// the value of every argument whose schema marks it writeOnly (JSON Schema's
// annotation for values sent but never to be read back, such as secrets)
// replaced by "[redacted]". Arguments over max bytes, or that are not a
// JSON object, are recorded as {"sha256": …, "bytes": …} instead, so a
// caller cannot fill the trail with junk yet the record still identifies
// what was sent. For a tool with writeOnly arguments the digest is of the
// redacted arguments (re-encoded), never of a writeOnly value.
func auditArgs(args []byte, t *tool, max int) json.RawMessage {
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage("{}")
	}
	if max <= 0 {
		max = int(catalog.DefaultMaxArgumentBytes)
	}
	if len(t.redact) == 0 {
		if len(args) > max || !json.Valid(args) {
			return digestArgs(args)
		}
		return json.RawMessage(args)
	}
	// Redacted before the cap: a digest of the arguments as sent would let
	// anyone with the trail test guesses of a writeOnly value against it.
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		// Not an object: the secret cannot be told apart, so no digest
		// of it either; the length alone.
		return json.RawMessage(fmt.Sprintf(`{"bytes":%d}`, len(args)))
	}
	for _, name := range t.redact {
		if _, ok := m[name]; ok {
			m[name] = json.RawMessage(`"[redacted]"`)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return digestArgs(args)
	}
	if len(out) > max {
		return digestArgs(out)
	}
	return out
}

// auditMax is the most argument bytes t's audit records keep verbatim.
func auditMax(t *tool) int {
	if t.auditMax <= 0 {
		return int(catalog.DefaultMaxArgumentBytes)
	}
	return t.auditMax
}

func digestArgs(args []byte) json.RawMessage {
	sum := sha256.Sum256(args)
	return json.RawMessage(fmt.Sprintf(`{"sha256":%q,"bytes":%d}`, hex.EncodeToString(sum[:]), len(args)))
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
