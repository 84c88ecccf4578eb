package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// descriptorsOn counts this process's open file descriptors on path.
func descriptorsOn(t *testing.T, path string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("this test needs /proc/self/fd to count open files: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

// With fsync on, a record counts as written only once it is synced: a
// file that cannot be synced (/dev/null accepts writes and refuses fsync)
// fails every write, which refuses the write calls; with fsync off the
// same file takes them.
func TestFileAuditSyncFailureIsAWriteFailure(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Fatalf("this test needs %s: %v", os.DevNull, err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.Symlink(os.DevNull, path); err != nil {
		t.Fatal(err)
	}
	sink := openAudit(t, path, &proxy.FileAuditOptions{Fsync: true})
	rec := &proxy.AuditRecord{Tool: "t", Arguments: json.RawMessage("{}")}
	ctx := context.Background()
	if err := sink.Write(ctx, rec); err == nil || !strings.Contains(err.Error(), "sync") {
		t.Errorf("Write with fsync on a file that cannot sync = %v, want a sync error", err)
	}
	sink.SetFsync(false)
	if err := sink.Write(ctx, rec); err != nil {
		t.Errorf("Write with fsync off = %v, want nil", err)
	}
	sink.SetFsync(true)
	if err := sink.Write(ctx, rec); err == nil {
		t.Errorf("Write after SetFsync(true) = nil, want a sync error")
	}

	// Through a core: the write call is refused and nothing is sent.
	up := newRecorder(t, nil)
	c := auditCore(t, up.srv.URL, "", sink)
	if res := call(t, c, writer, "set_limit", `{"id":"q1"}`); !res.IsError || res.Outcome != proxy.OutcomeRefused {
		t.Errorf("write call while records cannot be synced = %+v, want refused", res)
	}
	if n := up.count(); n != 0 {
		t.Errorf("the upstream received %d requests", n)
	}
}

// A record written whole whose sync failed is synced again on the file
// opened afresh, never appended a second time.
func TestFileAuditRetriesAFailedSyncWithoutWritingTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.Symlink(os.DevNull, path); err != nil {
		t.Fatal(err)
	}
	sink := openAudit(t, path, &proxy.FileAuditOptions{Fsync: true})
	// The path now names a regular file: the write goes whole to the file
	// opened first (which refuses fsync), the retry opens this one.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(context.Background(), &proxy.AuditRecord{Tool: "t", Arguments: json.RawMessage("{}")}); err != nil {
		t.Fatalf("Write = %v, want the retried sync to succeed", err)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("the file opened afresh holds %q: a record written whole was appended again", b)
	}
}

// Reopen and Close let go of the file: however often the trail is
// rotated, it holds one descriptor, and none once closed.
func TestFileAuditReleasesItsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := proxy.OpenFileAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := descriptorsOn(t, path); n != 1 {
		t.Fatalf("%d descriptors open on the audit file after OpenFileAudit, want 1", n)
	}
	for range 5 {
		if err := sink.Reopen(); err != nil {
			t.Fatal(err)
		}
	}
	if n := descriptorsOn(t, path); n != 1 {
		t.Errorf("%d descriptors open on the audit file after 5 reopens, want 1", n)
	}
	if err := sink.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if n := descriptorsOn(t, path); n != 0 {
		t.Errorf("%d descriptors open on the audit file after Close, want 0", n)
	}
	if err := sink.Close(); err != nil {
		t.Errorf("a second Close = %v, want nil", err)
	}
}

// The trail logs a failing sink's first failure, with its cause, and its
// recovery, once each and in that order; healthy writes log nothing.
func TestAuditTrailLogsTheFirstFailureAndTheRecoveryOnce(t *testing.T) {
	var fail bool
	sink := sinkFunc(func(context.Context, *proxy.AuditRecord) error {
		if fail {
			return errors.New("disk on fire")
		}
		return nil
	})
	var logs bytes.Buffer
	tr := proxy.NewAuditTrail(sink, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	rec := &proxy.AuditRecord{Stage: proxy.StageCompleted, Outcome: "ok"}
	for _, f := range []bool{false, false, true, true, false, false} {
		fail = f
		tr.Write(context.Background(), rec)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		switch {
		case strings.Contains(l, "level=ERROR") && strings.Contains(l, "audit records cannot be written") && strings.Contains(l, "disk on fire"):
			lines = append(lines, "failing")
		case strings.Contains(l, "level=INFO") && strings.Contains(l, "audit records are written again"):
			lines = append(lines, "recovered")
		default:
			lines = append(lines, l)
		}
	}
	if got := strings.Join(lines, ", "); got != "failing, recovered" {
		t.Errorf("logged %q, want the failure (with its cause), then the recovery:\n%s", got, logs.String())
	}
}
