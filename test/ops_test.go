package test

import (
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
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpc posts one legacy-era JSON-RPC request and returns the HTTP status and body.
func rpc(t *testing.T, endpoint, tok, method, params string) (int, string) {
	t.Helper()
	resp, body := post(t, endpoint, tok, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	return resp.StatusCode, body
}

// status reads the metrics listener's /status: the catalog's hash and
// the reloads so far (/readyz on the main listener says only ready).
func status(t *testing.T, g *gateway) (int, map[string]any) {
	t.Helper()
	if g.Metrics == "" {
		t.Fatal("the gateway was started without --metrics-listen")
	}
	resp, err := http.Get(strings.TrimSuffix(g.Metrics, "/metrics") + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, v
}

// eventually polls cond every 20 ms for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func copyCatalog(t *testing.T, edit func(string) string) string {
	t.Helper()
	src, err := os.ReadFile("../catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	writeFile(t, path, edit(string(src)))
	return path
}

// writeFile replaces path atomically, as editors and ConfigMaps do.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestHotReload(t *testing.T) {
	up := startUpstream(t)
	path := copyCatalog(t, func(s string) string { return s })
	g := launch(t, launchConfig{upstreamURL: up.URL, catalog: path, args: []string{"--metrics-listen", "127.0.0.1:0"}})
	tok := token(t, "viewer", "globex", viewerScopes...)
	_, before := rpc(t, g.MCP, tok, "tools/list", "{}")
	if !strings.Contains(before, `"get_queue"`) {
		t.Fatalf("get_queue missing before the reload: %.300s", before)
	}
	_, r0 := status(t, g)

	// A valid change: get_queue disabled.
	orig, _ := os.ReadFile(path)
	changed := strings.Replace(string(orig), "  - name: get_queue\n", "  - name: get_queue\n    enabled: false\n", 1)
	if changed == string(orig) {
		t.Fatal("could not edit the catalog copy")
	}
	writeFile(t, path, changed)
	eventually(t, "the reload", func() bool { _, r := status(t, g); return r["reloads"] == 1.0 })
	_, after := rpc(t, g.MCP, tok, "tools/list", "{}")
	if strings.Contains(after, `"get_queue"`) || !strings.Contains(after, `"list_queues"`) {
		t.Errorf("after the reload the list is wrong: %.300s", after)
	}
	_, r1 := status(t, g)
	if r1["hash"] == r0["hash"] {
		t.Errorf("/status hash did not change: %v", r1)
	}

	// An invalid change keeps the current catalog and says where.
	writeFile(t, path, changed+"\nbogus_top_level_key: 1\n")
	eventually(t, "the failed reload to be counted", func() bool {
		return strings.Contains(scrape(t, g), `gateway_catalog_reloads_total{result="error"} 1`)
	})
	if _, r := status(t, g); r["hash"] != r1["hash"] || r["reloads"] != 1.0 {
		t.Errorf("an invalid catalog changed what is served: %v", r)
	}
	// Logs are flushed at least every 200 ms.
	eventually(t, "the reload error with file:line:col in the log", func() bool {
		return regexp.MustCompile(`catalog\.yaml:\d+:\d+: .*bogus_top_level_key`).MatchString(g.stderr.String())
	})
	if status, body := rpc(t, g.MCP, tok, "tools/call", `{"name":"list_queues","arguments":{}}`); status != 200 || strings.Contains(body, `"isError":true`) {
		t.Errorf("calls fail after a rejected reload: %d %.200s", status, body)
	}
	// SIGHUP reloads too: restore the original.
	writeFile(t, path, string(orig))
	g.cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, "the second reload", func() bool { _, r := status(t, g); return r["hash"] == r0["hash"] })
}

func scrape(t *testing.T, g *gateway) string {
	t.Helper()
	if g.Metrics == "" {
		t.Fatal("the gateway was started without --metrics-listen")
	}
	resp, err := http.Get(g.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestMetricsAfterAScriptedSequence(t *testing.T) {
	up := startUpstream(t)
	g := launch(t, launchConfig{upstreamURL: up.URL, args: []string{"--metrics-listen", "127.0.0.1:0"}})
	viewer := token(t, "viewer", "acme", viewerScopes...)
	for i := 0; i < 3; i++ {
		rpc(t, g.MCP, viewer, "tools/call", `{"name":"list_queues","arguments":{}}`)
	}
	rpc(t, g.MCP, viewer, "tools/call", `{"name":"cancel_job","arguments":{"job_id":"job-acme-0001"}}`)
	rpc(t, g.MCP, viewer, "tools/call", `{"name":"get_job","arguments":{"job_id":"job-nope"}}`)
	rpc(t, g.MCP, viewer, "tools/call", `{"name":"made_up_tool_`+fmt.Sprint(time.Now().UnixNano())+`","arguments":{}}`)
	rpc(t, g.MCP, "not-a-token", "tools/list", "{}")
	m := scrape(t, g)
	for _, want := range []string{
		`gateway_tool_calls_total{outcome="ok",tool="list_queues"} 3`,
		`gateway_tool_calls_total{outcome="denied",tool="cancel_job"} 1`,
		`gateway_tool_calls_total{outcome="not_found",tool="get_job"} 1`,
		`gateway_tool_calls_total{outcome="unknown_tool",tool="_unknown"} 1`,
		`gateway_upstream_responses_total{class="2xx",upstream="monitor"} 3`,
		`gateway_upstream_responses_total{class="4xx",upstream="monitor"} 1`,
		`gateway_catalog_reloads_total{result="ok"} 0`,
		`gateway_upstream_request_duration_seconds_count{upstream="monitor"} 4`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// Label values are bounded: no subject, workspace, token or invented name.
	for _, leak := range []string{"acme", "viewer", "made_up_tool", "not-a-token"} {
		if strings.Contains(m, leak) {
			t.Errorf("metrics contain %q", leak)
		}
	}
}

// slowUpstream puts a delay in front of the demo, so calls stay in flight.
func slowUpstream(t *testing.T, up *upstream, delay time.Duration) (string, *atomic.Int32) {
	t.Helper()
	target, _ := url.Parse(up.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		defer n.Add(-1)
		time.Sleep(delay)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func TestGracefulShutdownFinishesInFlightCalls(t *testing.T) {
	up := startUpstream(t)
	slow, inFlight := slowUpstream(t, up, 700*time.Millisecond)
	g := launch(t, launchConfig{upstreamURL: slow})
	tok := token(t, "viewer", "acme", viewerScopes...)
	const calls = 8
	results := make(chan string, calls)
	for i := 0; i < calls; i++ {
		go func() {
			status, body := rpc(t, g.MCP, tok, "tools/call", `{"name":"list_queues","arguments":{}}`)
			results <- fmt.Sprintf("%d %s", status, body)
		}()
	}
	eventually(t, "calls in flight", func() bool { return inFlight.Load() == calls })
	g.cmd.Process.Signal(syscall.SIGTERM)
	for i := 0; i < calls; i++ {
		if r := <-results; !strings.HasPrefix(r, "200 ") || strings.Contains(r, `"isError":true`) {
			t.Errorf("an in-flight call was dropped by the shutdown: %.200s", r)
		}
	}
	select {
	case <-g.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway did not exit after draining")
	}
	if code := g.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if _, err := http.Get(g.URL + "/healthz"); err == nil {
		t.Errorf("the listener still accepts after shutdown")
	}
}

// roundRobin sends each request to the next live node, like a load
// balancer without sticky sessions; a node that refuses connections is
// taken out, as a health-checking balancer would.
type roundRobin struct {
	mu    sync.Mutex
	nodes []*url.URL
	dead  map[string]bool
	next  int
	tok   string
	count map[string]int
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	var node *url.URL
	for i := 0; i < len(rr.nodes); i++ {
		n := rr.nodes[(rr.next+i)%len(rr.nodes)]
		if !rr.dead[n.Host] {
			node, rr.next = n, (rr.next+i+1)%len(rr.nodes)
			break
		}
	}
	rr.count[node.Host]++
	rr.mu.Unlock()
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = node.Scheme, node.Host, node.Host
	r.Header.Set("Authorization", "Bearer "+rr.tok)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil && strings.Contains(err.Error(), "refused") {
		rr.mu.Lock()
		rr.dead[node.Host] = true
		rr.mu.Unlock()
	}
	if err != nil {
		err = fmt.Errorf("node %s: %w", node.Host, err)
	}
	return resp, err
}

var nonceRE = regexp.MustCompile(`untrusted-document-text-[0-9a-f]{32}`)

func TestThreeStatelessNodes(t *testing.T) {
	up := startUpstream(t)
	slow, _ := slowUpstream(t, up, 30*time.Millisecond)
	var nodes []*gateway
	rr := &roundRobin{dead: map[string]bool{}, count: map[string]int{}, tok: token(t, "viewer", "acme", viewerScopes...)}
	for i := 0; i < 3; i++ {
		g := launch(t, launchConfig{upstreamURL: slow})
		nodes = append(nodes, g)
		u, _ := url.Parse(g.URL)
		rr.nodes = append(rr.nodes, u)
	}
	// One client session whose consecutive requests land on different nodes.
	for _, era := range eras {
		client := mcp.NewClient(&mcp.Implementation{Name: "rr", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: nodes[0].MCP, HTTPClient: &http.Client{Transport: rr}, DisableStandaloneSSE: true, MaxRetries: -1,
		}, era.opts)
		if err != nil {
			t.Fatalf("%s: Connect through the balancer: %v", era.name, err)
		}
		var texts []string
		for i := 0; i < 6; i++ {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "knowledge_search", Arguments: map[string]any{"query": "instructions"}})
			if err != nil || res.IsError {
				t.Fatalf("%s: call %d: %v %v", era.name, i, err, res)
			}
			texts = append(texts, nonceRE.ReplaceAllString(resultText(res), "NONCE"))
		}
		for i := range texts {
			if texts[i] != texts[0] {
				t.Errorf("%s: node answers differ:\n%s\n%s", era.name, texts[0], texts[i])
			}
		}
		cs.Close()
	}
	for _, n := range rr.nodes {
		if rr.count[n.Host] < 3 {
			t.Errorf("node %s served %d requests; the balancer did not spread them", n.Host, rr.count[n.Host])
		}
	}

	// Kill one node mid-run: only requests that were at it fail.
	victim := rr.nodes[1].Host
	var mu sync.Mutex
	var failures []string
	var ok atomic.Int32
	// Progress, not the clock, paces the run: 20 answers before the kill
	// and 20 after it, however slow the machine.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Transport: rr}
	for w := 0; w < 12; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPost, nodes[0].MCP, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_queues","arguments":{}}}`))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					ok.Add(1)
				}
			}
		}()
	}
	answered := func(n int32) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ok.Load() < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("only %d of %d requests answered within 60 s", ok.Load(), n)
			}
		}
	}
	answered(20)
	nodes[1].cmd.Process.Kill()
	answered(ok.Load() + 20)
	close(stop)
	wg.Wait()
	for _, f := range failures {
		if !strings.Contains(f, victim) {
			t.Errorf("a request to a live node failed: %s", f)
		}
	}
	if len(failures) > 24 {
		t.Errorf("%d requests failed; only those in flight at the killed node (at most one per worker, twice) should", len(failures))
	}
	t.Logf("killed %s: %d failed, %d succeeded", victim, len(failures), ok.Load())
}

func TestSlowClientsDoNotStarveOthers(t *testing.T) {
	up := startUpstream(t)
	g := launch(t, launchConfig{upstreamURL: up.URL})
	host := strings.TrimPrefix(g.URL, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// 300 clients that send half a request and then nothing (slowloris),
	// and 50 that send a body one byte at a time.
	for i := 0; i < 350; i++ {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if i < 300 {
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", host)
		} else {
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", host)
		}
	}
	tok := token(t, "viewer", "acme", viewerScopes...)
	start := time.Now()
	for i := 0; i < 5; i++ {
		status, body := rpc(t, g.MCP, tok, "tools/call", `{"name":"list_queues","arguments":{}}`)
		if status != 200 || strings.Contains(body, `"isError":true`) {
			t.Fatalf("a normal call failed beside slow clients: %d %.200s", status, body)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("five normal calls took %v beside slow clients", d)
	}
}
