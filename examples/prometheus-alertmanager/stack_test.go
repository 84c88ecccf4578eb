package example_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/gateway/test/gatewaybin"
)

// This file runs the pieces the example needs as real processes: Debian's
// prometheus and prometheus-alertmanager on free loopback ports, with the
// configurations shipped beside the catalog, and the gateway built from
// this repository. scripts/test.sh installs the two packages in CI.

// exampleSecret is the HS256 secret the test gateway verifies tokens with
// (openssl rand -base64 32).
const exampleSecret = "q0mV3d1mK8yL0t5c9XvJ2hS7wZ4rN6bP1aE8uG3fT0k="

var gatewayBin string

func TestMain(m *testing.M) { gatewaybin.Main(m, "../../cmd/gateway", &gatewayBin) }

// lookBinary finds one of names on PATH. Missing, it fails the test under
// CI (which must run it) and skips it elsewhere, saying how to install.
func lookBinary(t *testing.T, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s not found on PATH: install Debian's %s (sudo apt-get install -y --no-install-recommends prometheus prometheus-alertmanager), or run ./scripts/test.sh as root",
		strings.Join(names, " or "), pkg)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// freePort returns a loopback address no one listens on right now. The
// services take their addresses from configuration files written before
// they start (Prometheus scrapes itself and Alertmanager at them), so a
// port is picked by listening on :0 and closing.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// lockedBuffer collects a process's output for a failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProcess runs a child process that is killed when the test ends.
func startProcess(t *testing.T, name string, args ...string) *lockedBuffer {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), tail(out.String(), 4000))
		}
	})
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitFor polls check until it returns nil or the bound passes.
func waitFor(t *testing.T, what string, bound time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, bound, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func getJSON(u string, v any) error {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(b, v)
}

// stack is Prometheus and Alertmanager, each behind a recording proxy so a
// test can tell what the gateway sent.
type stack struct {
	Prometheus, Alertmanager *recorder
}

// startStack starts Alertmanager and Prometheus with the example's shipped
// configurations (ports replaced, intervals shortened) and waits until
// Prometheus has scraped both and Alertmanager holds the AlwaysFiring alert.
func startStack(t *testing.T) *stack {
	t.Helper()
	promBin := lookBinary(t, "prometheus", "prometheus")
	amBin := lookBinary(t, "prometheus-alertmanager", "prometheus-alertmanager", "alertmanager")
	dir := t.TempDir()
	promAddr, amAddr := freePort(t), freePort(t)
	ports := strings.NewReplacer("127.0.0.1:9090", promAddr, "127.0.0.1:9093", amAddr,
		"scrape_interval: 5s", "scrape_interval: 1s", "evaluation_interval: 5s", "evaluation_interval: 1s")
	for _, f := range []string{"prometheus.yml", "rules.yml", "alertmanager.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(ports.Replace(string(b))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	startProcess(t, amBin,
		"--config.file="+filepath.Join(dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(dir, "alertmanager-data"),
		"--web.listen-address="+amAddr,
		"--cluster.listen-address=", // no clustering, no second port
	)
	startProcess(t, promBin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "prometheus-data"),
		"--web.listen-address="+promAddr,
		// The first notification goes out before Prometheus has found
		// Alertmanager and is dropped; resend within a second, not a minute.
		"--rules.alert.resend-delay=1s",
	)
	promURL, amURL := "http://"+promAddr, "http://"+amAddr
	waitFor(t, "Alertmanager ready", 60*time.Second, func() error { return getJSON(amURL+"/-/ready", nil) })
	waitFor(t, "Prometheus ready", 60*time.Second, func() error { return getJSON(promURL+"/-/ready", nil) })
	waitFor(t, "Prometheus scraping both targets", 60*time.Second, func() error {
		var r struct {
			Data struct {
				Result []struct{ Value []any }
			}
		}
		// Two seconds back: the gateway's {now} has whole seconds, so a
		// range query it sends ends up to a second before Prometheus's now,
		// and a target scraped only in that second would be missing there.
		at := time.Now().Add(-2 * time.Second).Unix()
		if err := getJSON(fmt.Sprintf("%s/api/v1/query?query=up&time=%d", promURL, at), &r); err != nil {
			return err
		}
		if len(r.Data.Result) != 2 {
			return fmt.Errorf("up has %d series", len(r.Data.Result))
		}
		return nil
	})
	waitFor(t, "Alertmanager holding AlwaysFiring", 90*time.Second, func() error {
		var alerts []struct{ Labels map[string]string }
		if err := getJSON(amURL+"/api/v2/alerts", &alerts); err != nil {
			return err
		}
		for _, a := range alerts {
			if a.Labels["alertname"] == "AlwaysFiring" {
				return nil
			}
		}
		return fmt.Errorf("alerts: %+v", alerts)
	})
	return &stack{Prometheus: newRecorder(t, promURL), Alertmanager: newRecorder(t, amURL)}
}

// recorder is a reverse proxy in front of a real service that notes each
// request's method, escaped path and, when it has a body, content type.
type recorder struct {
	URL  string
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T, target string) *recorder {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		seen := req.Method + " " + req.URL.EscapedPath()
		if ct := req.Header.Get("Content-Type"); req.ContentLength != 0 && ct != "" {
			seen += " " + ct
		}
		r.seen = append(r.seen, seen)
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// requests returns what was received so far.
func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// gateway is a running `gateway serve`.
type gateway struct {
	MCP    string
	stderr *lockedBuffer
}

// startGateway runs `gateway serve --catalog catalog` in front of st on a
// free loopback port and waits for its "serving" line.
func startGateway(t *testing.T, st *stack, catalog string) *gateway {
	t.Helper()
	cmd := exec.Command(gatewayBin, "serve", "--catalog", catalog, "--listen", "127.0.0.1:0", "--watch=false")
	cmd.Env = append(os.Environ(),
		"GATEWAY_JWT_SECRET="+exampleSecret,
		"PROMETHEUS_URL="+st.Prometheus.URL,
		"ALERTMANAGER_URL="+st.Alertmanager.URL,
	)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gateway{stderr: &lockedBuffer{}}
	urlc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			g.stderr.Write([]byte(line + "\n"))
			var rec struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
				select {
				case urlc <- rec.URL:
				default:
				}
			}
		}
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", tail(g.stderr.String(), 8000))
		}
	})
	select {
	case g.MCP = <-urlc:
	case <-done:
		t.Fatalf("gateway exited before serving:\n%s", g.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway did not start:\n%s", g.stderr.String())
	}
	return g
}

// auditRecord is one audit line of the gateway's log stream.
type auditRecord struct {
	Tool           string `json:"tool"`
	Actor          string `json:"actor"`
	Stage          string `json:"stage"`
	Outcome        string `json:"outcome"`
	UpstreamStatus int    `json:"upstream_status"`
}

// audits returns the audit records the gateway has logged so far.
func (g *gateway) audits() []auditRecord {
	var out []auditRecord
	for _, line := range strings.Split(g.stderr.String(), "\n") {
		var rec struct {
			Msg   string
			Audit auditRecord
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "audit" {
			out = append(out, rec.Audit)
		}
	}
	return out
}

// mintToken runs the README's `gateway token` command for this catalog.
func mintToken(t *testing.T, catalog, sub, actor, scopes string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gatewayBin, "token", "--catalog", catalog,
		"--secret-env", "GATEWAY_JWT_SECRET", "--sub", sub, "--actor", actor, "--scopes", scopes)
	cmd.Env = append(os.Environ(), "GATEWAY_JWT_SECRET="+exampleSecret)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gateway token: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}
