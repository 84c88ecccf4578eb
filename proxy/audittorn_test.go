package proxy_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// tornChildEnv names the audit file the re-executed test writes under a
// file-size limit.
const tornChildEnv = "GATEWAY_TEST_TORN_AUDIT"

// A write cut short (a file-size limit reached mid-record, as a full disk
// does) leaves a fragment that the retry cannot end either; the next
// record still starts on a line of its own, so a JSON-lines reader loses
// the fragment and nothing else. The limit is real: RLIMIT_FSIZE, set in
// a child process (this test run again) with SIGXFSZ ignored, so writes
// past it fail with EFBIG after writing what fits.
func TestAuditRecordAfterATornWriteStartsOnItsOwnLine(t *testing.T) {
	if path := os.Getenv(tornChildEnv); path != "" {
		writeTornAudit(t, path)
		return
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditRecordAfterATornWriteStartsOnItsOwnLine$", "-test.count=1")
	cmd.Env = append(os.Environ(), tornChildEnv+"="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var tools []string
	for _, l := range lines {
		var r proxy.AuditRecord
		if json.Unmarshal([]byte(l), &r) == nil {
			tools = append(tools, r.Tool)
		}
	}
	if len(lines) != 3 || strings.Join(tools, ",") != "first,after" {
		t.Errorf("audit file = %q; want the first record, the fragment of the cut one, and the next record whole on its own line", b)
	}
}

// writeTornAudit runs in the child: one record, then a limit that cuts
// the next one short, then the limit lifted and one more record.
func writeTornAudit(t *testing.T, path string) {
	signal.Ignore(syscall.SIGXFSZ)
	sink := openAudit(t, path, nil)
	ctx := context.Background()
	rec := func(tool string, pad int) *proxy.AuditRecord {
		return &proxy.AuditRecord{Tool: tool, Stage: proxy.StageStarted, Arguments: json.RawMessage(`{"pad":"` + strings.Repeat("x", pad) + `"}`)}
	}
	if err := sink.Write(ctx, rec("first", 10)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(st.Size()) + 40
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(ctx, rec("cut", 200)); err == nil {
		t.Fatal("a record over the file-size limit was written")
	}
	if st, _ := os.Stat(path); uint64(st.Size()) != lim.Cur {
		t.Fatalf("file is %d bytes after the cut write, want the limit %d (part of the record written)", st.Size(), lim.Cur)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(ctx, rec("after", 10)); err != nil {
		t.Fatal(err)
	}
}
