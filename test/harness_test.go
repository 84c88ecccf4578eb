// Package test runs the built gateway binary against a real upstream (the
// demo job system, in this process) and real MCP clients.
package test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/demo"
	"github.com/mcpgw/gateway/test/gatewaybin"
)

const (
	testSecret   = "bTzelvbcDLReRnFetnAOn5DOgYWnpeGzVeEnyoRNYlY=" // openssl rand -base64 32
	serviceToken = "svc-token-for-tests"
	testAudience = "http://gateway.test/mcp"
	testIssuer   = "gateway-demo"
)

var gatewayBin string

func TestMain(m *testing.M) { gatewaybin.Main(m, "../cmd/gateway", &gatewayBin) }

// seenRequest is a request as the upstream received it.
type seenRequest struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

// upstream is the demo job system on a real loopback listener, recording
// what it receives.
type upstream struct {
	*demo.Server
	URL  string
	mu   sync.Mutex
	reqs []seenRequest
}

func startUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = demo.New(demo.Options{ServiceToken: serviceToken, Record: func(r *http.Request, body []byte) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.reqs = append(u.reqs, seenRequest{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
	}})
	srv := httptest.NewServer(u.Server)
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

func (u *upstream) requests() []seenRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seenRequest(nil), u.reqs...)
}

// gateway is a running gateway process.
type gateway struct {
	URL     string // base URL, http://127.0.0.1:port
	MCP     string // the MCP endpoint
	Metrics string // the /metrics URL, when started with --metrics-listen
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	stderr  *lockedBuffer
}

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

// startGateway runs `gateway serve` on the bundled catalog (or catalogPath)
// in front of up, on a free loopback port.
func startGateway(t *testing.T, up *upstream, catalogPath string, extraEnv ...string) *gateway {
	t.Helper()
	return launch(t, launchConfig{upstreamURL: up.URL, catalog: catalogPath, env: extraEnv})
}

// launchConfig says how to run one gateway process.
type launchConfig struct {
	upstreamURL string   // MONITOR_URL, OPERATOR_URL and KB_URL
	catalog     string   // default ../catalog.yaml
	args        []string // extra serve flags
	env         []string // extra environment
}

func launch(t *testing.T, cfg launchConfig) *gateway {
	t.Helper()
	if cfg.catalog == "" {
		cfg.catalog = "../catalog.yaml"
	}
	args := append([]string{"serve", "--catalog", cfg.catalog, "--listen", "127.0.0.1:0"}, cfg.args...)
	cmd := exec.Command(gatewayBin, args...)
	cmd.Env = append(os.Environ(),
		"GATEWAY_JWT_SECRET="+testSecret,
		"DEMO_SERVICE_TOKEN="+serviceToken,
		"MONITOR_URL="+cfg.upstreamURL, "OPERATOR_URL="+cfg.upstreamURL, "KB_URL="+cfg.upstreamURL,
		"GATEWAY_AUDIENCE="+testAudience, "GATEWAY_ISSUER="+testIssuer,
	)
	cmd.Env = append(cmd.Env, cfg.env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gateway{cmd: cmd, exited: make(chan struct{}), stderr: &lockedBuffer{}}
	urlc := make(chan string, 1)
	metricsc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			g.stderr.Write([]byte(line + "\n"))
			var rec struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			switch {
			case rec.Msg == "metrics":
				metricsc <- rec.URL
			case rec.Msg == "serving" && !sent:
				urlc <- rec.URL
				sent = true
			}
		}
		if !sent {
			close(urlc)
		}
		cmd.Wait()
		close(g.exited)
	}()
	t.Cleanup(func() {
		g.cmd.Process.Signal(os.Interrupt)
		select {
		case <-g.exited:
		case <-time.After(30 * time.Second):
			g.cmd.Process.Kill()
			<-g.exited
		}
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", g.stderr.String())
		}
	})
	select {
	case u, ok := <-urlc:
		if !ok {
			<-g.exited
			t.Fatalf("gateway exited before serving:\n%s", g.stderr.String())
		}
		g.MCP = u
		g.URL = strings.TrimSuffix(u, "/mcp")
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway did not start:\n%s", g.stderr.String())
	}
	select {
	case m := <-metricsc:
		g.Metrics = m
	default:
	}
	return g
}

// token signs a JWT the bundled catalog accepts.
func token(t *testing.T, sub, workspace string, scopes ...string) string {
	t.Helper()
	now := time.Now()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": testIssuer, "aud": testAudience, "sub": sub, "ws": workspace,
		"scope": strings.Join(scopes, " "), "email": sub + "@example.com",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	viewerScopes   = []string{"jobs:read"}
	operatorScopes = []string{"jobs:read", "jobs:requeue", "jobs:cancel", "schedules:trigger", "queues:manage", "workflows:cancel", "jobs:sensitive"}
)

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func httpClient(tok string) *http.Client {
	return &http.Client{Transport: bearer{tok, http.DefaultTransport}, Timeout: 30 * time.Second}
}

// post sends one raw JSON-RPC body with the given headers.
func post(t *testing.T, url, tok, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// logHas waits up to 10 s for the gateway's stderr to hold every one of
// wants, and reports whether it came to: a record the gateway wrote
// before it answered can still be in the pipe, unread by the harness,
// when the answer arrives.
func (g *gateway) logHas(wants ...*regexp.Regexp) bool {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		log, all := g.stderr.String(), true
		for _, re := range wants {
			all = all && re.MatchString(log)
		}
		if all || time.Now().After(deadline) {
			return all
		}
	}
}
