package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// auditCore builds a core over testCatalog (plus extra YAML) whose audit
// records go to sink.
func auditCore(t *testing.T, upURL, extra string, sink proxy.AuditSink) *proxy.Core {
	return auditCoreTB(t, upURL, extra, sink)
}

func auditCoreTB(t testing.TB, upURL, extra string, sink proxy.AuditSink) *proxy.Core {
	t.Helper()
	cat, err := catalog.Parse("test.yaml", []byte(testCatalog+extra), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		return map[string]string{"UP": upURL, "SECRET": strings.Repeat("k", 32)}[k], true
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := proxy.New(cat, &proxy.Options{Audit: sink})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func openAudit(t *testing.T, path string, opts *proxy.FileAuditOptions) *proxy.FileAudit {
	t.Helper()
	sink, err := proxy.OpenFileAudit(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	return sink
}

// readAudit parses every line of an audit file; a line that is not a JSON
// record fails the test.
func readAudit(t *testing.T, path string) []proxy.AuditRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []proxy.AuditRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var r proxy.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestAuditRecordsEveryWriteOutcome(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/broken/") {
			w.WriteHeader(500)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	})
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := auditCore(t, rec.srv.URL, "", openAudit(t, path, nil))
	// Verifiers never build a principal without a subject; this one stands
	// for a token whose identity could not be resolved.
	noActor := authz.NewPrincipal("", "acme", "", []string{"read", "write"}, nil)
	type want struct {
		stage, outcome string
		status         int
	}
	started := want{proxy.StageStarted, "", 0}
	steps := []struct {
		p    *authz.Principal
		args string
		recs []want // a call that reaches the upstream has a started record first
	}{
		{writer, `{"id":"q1","limit":4,"approval_code":"s3cr3t-code"}`, []want{started, {proxy.StageCompleted, "ok", 200}}},
		{reader, `{"id":"q1","limit":4}`, []want{{proxy.StageCompleted, "denied", 0}}},
		{writer, `{"id":"q1","limit":0}`, []want{{proxy.StageCompleted, "tool_error", 0}}},
		{writer, `{"id":"broken"}`, []want{started, {proxy.StageCompleted, "tool_error", 500}}},
		{noActor, `{"id":"q1"}`, []want{{proxy.StageCompleted, "refused", 0}}},
	}
	ctx := proxy.WithRequestID(context.Background(), "req-1")
	for _, s := range steps {
		if _, err := c.Call(ctx, s.p, "set_limit", []byte(s.args)); err != nil {
			t.Fatal(err)
		}
	}
	// Reads are not audited.
	c.Call(ctx, writer, "get_item", []byte(`{"id":"x"}`))

	got := readAudit(t, path)
	i := 0
	for _, s := range steps {
		for _, w := range s.recs {
			if i >= len(got) {
				t.Fatalf("%d audit records, want more: %+v", len(got), got)
			}
			r := got[i]
			i++
			if r.Stage != w.stage || r.Outcome != w.outcome || r.UpstreamStatus != w.status || r.Tool != "set_limit" || r.RequestID != "req-1" {
				t.Errorf("record %d = %+v, want stage %s outcome %q status %d", i-1, r, w.stage, w.outcome, w.status)
			}
			if s.p.Subject != "" && (r.Actor != s.p.Actor || r.Subject != s.p.Subject || r.Workspace != "acme") {
				t.Errorf("record %d identity = %s/%s/%s", i-1, r.Actor, r.Subject, r.Workspace)
			}
			if strings.Contains(string(r.Arguments), "s3cr3t-code") {
				t.Errorf("record %d keeps a writeOnly argument: %s", i-1, r.Arguments)
			}
		}
	}
	if i != len(got) {
		t.Fatalf("%d audit records, want %d: %+v", len(got), i, got)
	}
	if !strings.Contains(string(got[0].Arguments), `"approval_code":"[redacted]"`) {
		t.Errorf("record 0 arguments = %s, want approval_code redacted", got[0].Arguments)
	}
	// The upstream saw the actor from the token on the two writes it received.
	for _, r := range rec.all() {
		if r.Method == "POST" && r.Header.Get("X-Actor") != "bob@example.com" {
			t.Errorf("write reached the upstream with X-Actor %q", r.Header.Get("X-Actor"))
		}
	}
}

// healthLog records what an AuditTrail reports.
type healthLog struct {
	mu       sync.Mutex
	written  map[string]int
	failures int
	healthy  bool
}

func (h *healthLog) AuditRecord(outcome string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.failures++
		return
	}
	if h.written == nil {
		h.written = map[string]int{}
	}
	h.written[outcome]++
}

func (h *healthLog) AuditHealthy(ok bool) { h.mu.Lock(); h.healthy = ok; h.mu.Unlock() }

func (h *healthLog) state() (int, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failures, h.healthy
}

// devFull is the kernel's always-full device: every write to it fails
// with ENOSPC, as on a full disk.
func devFull(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("this test needs /dev/full to stand for a full disk: %v", err)
	}
	return "/dev/full"
}

// A disk that fills up refuses writes (nothing sent), leaves reads alone,
// and recovers by itself when the file can be written again: no restart,
// no reload. The first failure and the recovery are logged once each.
func TestAuditFailureRefusesWritesUntilItRecovers(t *testing.T) {
	rec := newRecorder(t, nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	if err := os.Symlink(devFull(t), path); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	obs := &healthLog{}
	trail := proxy.NewAuditTrail(openAudit(t, path, nil), logger, obs)
	c := auditCore(t, rec.srv.URL, "", trail)

	for range 3 {
		res := call(t, c, writer, "set_limit", `{"id":"q1","limit":4}`)
		if !res.IsError || res.Outcome != proxy.OutcomeRefused || !strings.Contains(res.Text, "auditing is unavailable") {
			t.Fatalf("write with a full audit disk = %+v, want refused: auditing is unavailable", res)
		}
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("upstream received %d requests while audit records could not be written", n)
	}
	if res := call(t, c, writer, "get_item", `{"id":"x"}`); res.IsError {
		t.Fatalf("read while auditing is unavailable: %s", res.Text)
	}
	if fails, healthy := obs.state(); healthy || fails == 0 {
		t.Errorf("observer: healthy %v, %d failures; want unhealthy with failures", healthy, fails)
	}

	// The disk "recovers": the path now names a writable file.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if res := call(t, c, writer, "set_limit", `{"id":"q2","limit":4}`); res.IsError {
		t.Fatalf("write after recovery: %s", res.Text)
	}
	if n := rec.count(); n != 2 { // the read and the write
		t.Fatalf("upstream received %d requests, want 2", n)
	}
	got := readAudit(t, path)
	if len(got) != 2 || got[0].Stage != proxy.StageStarted || got[1].Outcome != "ok" || got[1].UpstreamStatus != 200 {
		t.Fatalf("records after recovery = %+v, want started and completed ok 200", got)
	}
	if _, healthy := obs.state(); !healthy || obs.written["started"] != 1 || obs.written["ok"] != 1 {
		t.Errorf("observer after recovery: healthy %v, written %v", healthy, obs.written)
	}
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	if n := strings.Count(out, "audit records cannot be written"); n != 1 {
		t.Errorf("first failure logged %d times, want once:\n%s", n, out)
	}
	if n := strings.Count(out, "audit records are written again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Reopen follows the path to a new file, as log rotation needs.
func TestAuditReopenFollowsRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	sink := openAudit(t, path, &proxy.FileAuditOptions{Fsync: true})
	ctx := context.Background()
	if err := sink.Write(ctx, &proxy.AuditRecord{Tool: "a", Arguments: json.RawMessage("{}")}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := sink.Reopen(); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(ctx, &proxy.AuditRecord{Tool: "b", Arguments: json.RawMessage("{}")}); err != nil {
		t.Fatal(err)
	}
	if old, cur := readAudit(t, path+".1"), readAudit(t, path); len(old) != 1 || old[0].Tool != "a" || len(cur) != 1 || cur[0].Tool != "b" {
		t.Fatalf("rotated file %+v, new file %+v", old, cur)
	}
}

// Two writers on one file (as two gateway processes would have) never
// interleave: every line is one whole record.
func TestAuditSharedFileNeverInterleaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sinks := []*proxy.FileAudit{openAudit(t, path, nil), openAudit(t, path, nil)}
	big := json.RawMessage(fmt.Sprintf(`{"note":%q}`, strings.Repeat("x", 6000)))
	var wg sync.WaitGroup
	const each = 100
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				if err := sinks[i%2].Write(context.Background(), &proxy.AuditRecord{Tool: fmt.Sprint(i, "-", j), Arguments: big}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := readAudit(t, path); len(got) != 8*each {
		t.Fatalf("%d records, want %d", len(got), 8*each)
	}
}

// A caller without the write gate cannot fill the trail: arguments over
// audit.max_argument_bytes are recorded as their SHA-256 and length.
func TestAuditCapsArguments(t *testing.T) {
	rec := newRecorder(t, nil)
	const limit = 1024
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := auditCore(t, rec.srv.URL, "audit: { max_argument_bytes: 1KiB }\n", openAudit(t, path, nil))
	argsOf := func(n int) string {
		// {"id":"q1","reason":"xxx…"} of exactly n bytes
		return `{"id":"q1","reason":"` + strings.Repeat("x", n-len(`{"id":"q1","reason":""}`)) + `"}`
	}
	cases := []struct {
		args   string
		kept   bool
		caller *authz.Principal
	}{
		{argsOf(limit - 1), true, reader},
		{argsOf(limit), true, reader},
		{argsOf(limit + 1), false, reader},
		{argsOf(1 << 20), false, reader},
		{`{"id":` + strings.Repeat("[", 2000), false, reader}, // not JSON: set_limit redacts, so its length alone
	}
	for _, tc := range cases {
		call(t, c, tc.caller, "set_limit", tc.args)
	}
	got := readAudit(t, path)
	if len(got) != len(cases) {
		t.Fatalf("%d records, want %d", len(got), len(cases))
	}
	for i, tc := range cases {
		r := got[i]
		if r.Outcome != "denied" {
			t.Errorf("record %d outcome %q, want denied", i, r.Outcome)
		}
		if tc.kept {
			if string(r.Arguments) != tc.args {
				t.Errorf("record %d: %d-byte arguments not kept as sent", i, len(tc.args))
			}
			continue
		}
		sum := sha256.Sum256([]byte(tc.args))
		want := fmt.Sprintf(`{"sha256":%q,"bytes":%d}`, hex.EncodeToString(sum[:]), len(tc.args))
		if !json.Valid([]byte(tc.args)) {
			want = fmt.Sprintf(`{"bytes":%d}`, len(tc.args))
		}
		if string(r.Arguments) != want {
			t.Errorf("record %d arguments = %.200s, want %s", i, r.Arguments, want)
		}
	}
	if st, _ := os.Stat(path); st.Size() > int64(len(cases))*(limit+600) {
		t.Errorf("audit file is %d bytes for %d denied calls", st.Size(), len(cases))
	}
}

// A caller who leaves after the write was sent does not cut it off: the
// upstream's answer is recorded as what happened.
func TestAuditRecordsWhatTheUpstreamDidAfterTheCallerLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		arrived, release := make(chan struct{}), make(chan struct{})
		rec, tr := newMemRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			close(arrived)
			<-release
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"ok":true}`)
		})
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		c := parseCoreWith(t, testCatalog, rec.srv.URL, &proxy.Options{Audit: openAudit(t, path, nil), Transport: tr})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *proxy.Result)
		go func() {
			res, _ := c.Call(ctx, writer, "set_limit", []byte(`{"id":"q1","limit":2}`))
			done <- res
		}()
		<-arrived
		cancel() // the client disconnects while the upstream works
		synctest.Wait()
		select {
		case res := <-done:
			t.Fatalf("the call ended when its caller left, before the upstream answered: %+v", res)
		default:
		}
		close(release)
		if res := <-done; res == nil || res.IsError {
			t.Fatalf("call = %+v", res)
		}
		got := readAudit(t, path)
		if len(got) != 2 || got[1].Outcome != "ok" || got[1].UpstreamStatus != http.StatusCreated {
			t.Fatalf("records = %+v, want started, then completed ok with status 201", got)
		}
	})
}

func TestAuditTrailHealthAcrossSinkErrors(t *testing.T) {
	var fail bool
	sink := sinkFunc(func(context.Context, *proxy.AuditRecord) error {
		if fail {
			return errors.New("boom")
		}
		return nil
	})
	obs := &healthLog{}
	tr := proxy.NewAuditTrail(sink, nil, obs)
	rec := &proxy.AuditRecord{Stage: proxy.StageCompleted, Outcome: "ok"}
	for _, f := range []bool{false, true, true, false} {
		fail = f
		err := tr.Write(context.Background(), rec)
		if (err != nil) != f || tr.Healthy() == f {
			t.Fatalf("fail=%v: err %v, healthy %v", f, err, tr.Healthy())
		}
	}
	if fails, _ := obs.state(); fails != 2 || obs.written["ok"] != 2 {
		t.Errorf("observed %d failures and %v written", fails, obs.written)
	}
}

type sinkFunc func(context.Context, *proxy.AuditRecord) error

func (f sinkFunc) Write(ctx context.Context, r *proxy.AuditRecord) error { return f(ctx, r) }

// For a tool with writeOnly arguments, arguments that cannot be parsed
// (so cannot be redacted) leave only their length: no digest of a secret.
func TestAuditUnparsableArgumentsOfARedactingToolKeepOnlyTheLength(t *testing.T) {
	rec := newRecorder(t, nil)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := auditCore(t, rec.srv.URL, "", openAudit(t, path, nil))
	args := `["approval_code","123456"]`
	call(t, c, writer, "set_limit", args)
	got := readAudit(t, path)
	if len(got) != 1 || string(got[0].Arguments) != fmt.Sprintf(`{"bytes":%d}`, len(args)) {
		t.Fatalf("records = %+v, want one with {\"bytes\":%d}", got, len(args))
	}
}
