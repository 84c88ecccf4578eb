package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/mcpgw/gateway/test/redistest"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The fleet test: three gateway processes (the built binary) share one
// Redis for rate limits, concurrency caps and approvals, in front of one
// upstream that records what it receives. A load generator spreads calls
// over the gateways while the test kills one of them, stops Redis and
// starts it again. It checks what a user of the fleet would notice:
//
//   - the upstream sees the configured rate (within 10 %), however many
//     replicas serve it, and never more calls in flight than the shared
//     max_concurrent;
//   - a workspace that floods slow calls gets its own limits (its rate,
//     its max_concurrent_per_workspace share) and another workspace's
//     calls go through meanwhile;
//   - a gateway killed mid-run loses no audit record of a write the
//     upstream received, and no approval: one requested through it is
//     approved and carried out through the others;
//   - with Redis stopped, calls are still served, none hangs, and the
//     fleet stays near its limit (each replica counts its share); when
//     Redis is back, shared counting resumes by itself.
//
// It runs about 40 s. The measured rates are logged (go test -v -run
// TestFleet ./test/).

const fleetCatalog = `
version: 1
server:
  name: fleet
  admin_path: /admin/mcp
auth:
  jwt:
    hmac_secret_env: GATEWAY_JWT_SECRET
    algorithms: [HS256]
    issuer: ${GATEWAY_ISSUER}
    audience: ${GATEWAY_AUDIENCE}
gates:
  view: { scopes: [read] }
  write: { scopes: [write] }
  approve: { scopes: [approve] }
upstreams:
  fast:
    base_url: ${FLEET_UP}/fast
    workspace: { header: X-Workspace }
  slow:
    base_url: ${FLEET_UP}/slow
    workspace: { header: X-Workspace }
    timeout: 3s
    max_concurrent: 6
    max_concurrent_per_workspace: 4
limits:
  rules:
    - { name: per-workspace, per: [workspace], rate: { rps: 20, burst: 5 } }
audit:
  path: ${AUDIT_PATH}
tools:
  - name: get_item
    description: Reads an item at once.
    input: { type: object, properties: { id: { type: string } }, required: [id], additionalProperties: false }
    request: { upstream: fast, path: "/items/{id}" }
  - name: slow_item
    description: Reads an item slowly.
    input: { type: object, properties: { id: { type: string } }, required: [id], additionalProperties: false }
    request: { upstream: slow, path: "/items/{id}" }
  - name: set_item
    description: Writes an item.
    kind: write
    gate: write
    input: { type: object, properties: { ref: { type: string } }, required: [ref], additionalProperties: false }
    request: { upstream: fast, method: POST, path: /writes, body: { ref: "{ref}" } }
  - name: cancel_thing
    description: Cancels a thing, once someone else approves.
    kind: write
    gate: write
    approval: { approvers: approve, ttl: 15m }
    input: { type: object, properties: { thing: { type: string } }, required: [thing], additionalProperties: false }
    request: { upstream: fast, method: POST, path: "/cancel/{thing}" }
`

// fleetUpstream records what it receives: when each fast read arrived,
// by workspace; each slow call's start and end; the refs written and the
// things cancelled.
type fleetUpstream struct {
	mu        sync.Mutex
	fast      map[string][]time.Time
	slow      []slowEvent
	writes    map[string]bool
	cancelled []string
}

type slowEvent struct {
	at    time.Time
	ws    string
	delta int
}

func newFleetUpstream(t *testing.T) (*fleetUpstream, string) {
	u := &fleetUpstream{fast: map[string][]time.Time{}, writes: map[string]bool{}}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return u, srv.URL
}

func (u *fleetUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws := r.Header.Get("X-Workspace")
	now := time.Now()
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/slow/items/"):
		u.mu.Lock()
		u.slow = append(u.slow, slowEvent{now, ws, +1})
		u.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		u.mu.Lock()
		u.slow = append(u.slow, slowEvent{time.Now(), ws, -1})
		u.mu.Unlock()
	case strings.HasPrefix(p, "/fast/items/"):
		u.mu.Lock()
		u.fast[ws] = append(u.fast[ws], now)
		u.mu.Unlock()
	case p == "/fast/writes":
		var body struct{ Ref string }
		json.NewDecoder(r.Body).Decode(&body)
		u.mu.Lock()
		u.writes[body.Ref] = true
		u.mu.Unlock()
	case strings.HasPrefix(p, "/fast/cancel/"):
		u.mu.Lock()
		u.cancelled = append(u.cancelled, strings.TrimPrefix(p, "/fast/cancel/"))
		u.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true}`)
}

// rate is ws's fast reads a second in [from, to).
func (u *fleetUpstream) rate(ws string, from, to time.Time) float64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, at := range u.fast[ws] {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// peak is the most slow calls in flight at once in [from, to), of ws
// ("" for every workspace).
func (u *fleetUpstream) peak(ws string, from, to time.Time) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	cur, peak := 0, 0
	for _, e := range u.slow {
		if ws != "" && e.ws != ws {
			continue
		}
		cur += e.delta
		if !e.at.Before(from) && e.at.Before(to) {
			peak = max(peak, cur)
		}
	}
	return peak
}

// callResult is one call the load generator made.
type callResult struct {
	at      time.Time
	ws      string
	tool    string
	status  int // 0: the gateway could not be reached
	isError bool
	took    time.Duration
	ref     string
}

type loadGen struct {
	client *http.Client
	mu     sync.Mutex
	alive  []*gateway
	next   atomic.Uint64
	res    []callResult
}

func (lg *loadGen) pick() *gateway {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return lg.alive[int(lg.next.Add(1))%len(lg.alive)]
}

func (lg *loadGen) drop(g *gateway) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	lg.alive = slices.DeleteFunc(lg.alive, func(x *gateway) bool { return x == g })
}

// call makes one REST call through the next live gateway and records it.
func (lg *loadGen) call(tok, ws, tool, args, ref string) callResult {
	g := lg.pick()
	body := `{"name":"` + tool + `","arguments":` + args + `}`
	req, _ := http.NewRequest("POST", g.URL+"/admin/mcp/call", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	r := callResult{at: start, ws: ws, tool: tool, ref: ref}
	resp, err := lg.client.Do(req)
	if err == nil {
		var out struct {
			IsError bool `json:"is_error"`
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		json.Unmarshal(b, &out)
		r.status, r.isError = resp.StatusCode, out.IsError
	}
	r.took = time.Since(start)
	lg.mu.Lock()
	lg.res = append(lg.res, r)
	lg.mu.Unlock()
	return r
}

func (lg *loadGen) results(ws string, from, to time.Time) []callResult {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	var out []callResult
	for _, r := range lg.res {
		if r.ws == ws && !r.at.Before(from) && r.at.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// metricValue reads one sample of g's /metrics, or -1.
func metricValue(t *testing.T, g *gateway, sample string) float64 {
	resp, err := http.Get(g.Metrics)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

func TestFleetSharesLimitsThroughRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("the fleet test runs about 40 s")
	}
	up, upURL := newFleetUpstream(t)
	redis := redistest.New(t, true) // persistent: a restarted Redis keeps the approvals
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(cat, []byte(fleetCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := approvalKeys()
	var gws []*gateway
	var audits []string
	for i := range 3 {
		audit := filepath.Join(dir, fmt.Sprintf("audit-%d.jsonl", i))
		audits = append(audits, audit)
		gws = append(gws, launch(t, launchConfig{catalog: cat, args: []string{"--metrics-listen", "127.0.0.1:0"},
			env: []string{"FLEET_UP=" + upURL, "AUDIT_PATH=" + audit, keys, "GATEWAY_APPROVAL_STORE=" + redis.URL()}}))
	}
	for _, g := range gws {
		if !strings.Contains(g.stderr.String(), "limits are counted in Redis") {
			t.Fatalf("the startup log does not say limits are counted in Redis:\n%s", g.stderr.String())
		}
	}
	lg := &loadGen{client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, alive: slices.Clone(gws)}
	acme := token(t, "reader", "acme", "read")
	flood := token(t, "flooder", "flood", "read")
	calm := token(t, "quiet", "calm", "read")
	writer := token(t, "writer", "writes", "read", "write")
	op := token(t, "operator", "ops", "read", "write")
	approver := token(t, "approver", "ops", "read", "approve")

	// An approval requested through the gateway that will be killed.
	r := lg.callOn(t, gws[2], op, "cancel_thing", `{"thing":"t1"}`)
	approvalID := approvalID.FindString(r)
	if approvalID == "" {
		t.Fatalf("cancel_thing through gateway 3 = %s, want an approval request", r)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	worker := func(pause time.Duration, f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				f(i)
				time.Sleep(pause)
			}
		}()
	}
	// acme offers about four times its 20/s; flood hammers the slow
	// upstream; calm makes a slow call at a time; writer writes.
	for range 6 {
		worker(60*time.Millisecond, func(i int) { lg.call(acme, "acme", "get_item", `{"id":"a"}`, "") })
	}
	for range 12 {
		worker(20*time.Millisecond, func(i int) { lg.call(flood, "flood", "slow_item", `{"id":"f"}`, "") })
	}
	worker(100*time.Millisecond, func(i int) { lg.call(calm, "calm", "slow_item", `{"id":"c"}`, "") })
	var refs atomic.Int64
	worker(80*time.Millisecond, func(i int) {
		ref := "w" + strconv.FormatInt(refs.Add(1), 10)
		lg.call(writer, "writes", "set_item", `{"ref":"`+ref+`"}`, ref)
	})
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	sleepUntil := func(d time.Duration) { time.Sleep(time.Until(at(d))) }

	// Three replicas.
	sleepUntil(7 * time.Second)
	p1 := up.rate("acme", at(2*time.Second), at(7*time.Second))
	// Killed: no drain, no goodbye.
	lg.drop(gws[2])
	gws[2].cmd.Process.Kill()
	<-gws[2].exited

	// Two replicas, the same shared limit.
	sleepUntil(15 * time.Second)
	p2 := up.rate("acme", at(9*time.Second), at(15*time.Second))

	// Redis away: each replica counts its share. The killed replica left
	// the fleet's set within three heartbeats (6s), so both remaining
	// replicas count halves.
	redis.Stop()
	sleepUntil(21 * time.Second)
	p3 := up.rate("acme", at(16*time.Second), at(21*time.Second))

	// Redis back: shared counting resumes by itself.
	redis.Start()
	var back time.Time
	for deadline := time.Now().Add(15 * time.Second); back.IsZero(); time.Sleep(100 * time.Millisecond) {
		if metricValue(t, gws[0], "gateway_limit_store_shared") == 1 && metricValue(t, gws[1], "gateway_limit_store_shared") == 1 {
			back = time.Now()
		}
		if time.Now().After(deadline) {
			close(stop)
			wg.Wait()
			t.Fatal("shared counting did not resume within 15s of Redis coming back")
		}
	}
	// One upstream timeout (3s) after the return, every call in flight was
	// admitted by Redis again.
	settled := back.Add(3500 * time.Millisecond)
	time.Sleep(time.Until(settled.Add(5 * time.Second)))
	p4 := up.rate("acme", settled, settled.Add(5*time.Second))
	close(stop)
	wg.Wait()
	end := time.Now()

	// On MCP, a refusal is JSON-RPC -31429 naming the rule, with the
	// RateLimit fields: a quick run of calls spends flood's burst of 5.
	refused := false
	for i := 0; i < 20 && !refused; i++ {
		req, _ := http.NewRequest("POST", gws[0].MCP, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"m"}}}`))
		req.Header.Set("Authorization", "Bearer "+flood)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := lg.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 {
			continue
		}
		refused = true
		var body struct {
			Error struct {
				Code int
				Data struct{ Limit string }
			}
		}
		json.Unmarshal(b, &body)
		if body.Error.Code != -31429 || body.Error.Data.Limit != "per-workspace" ||
			resp.Header.Get("RateLimit-Policy") != `"per-workspace";q=5;w=1` || !strings.HasPrefix(resp.Header.Get("RateLimit"), `"per-workspace";r=0;t=`) || resp.Header.Get("Retry-After") == "" {
			t.Errorf("MCP refusal = %s with headers %v", b, resp.Header)
		}
	}
	if !refused {
		t.Error("20 quick MCP calls of flood were all admitted; want its rate to refuse some")
	}

	t.Logf("acme's rate at the upstream (limit 20/s): 3 replicas %.1f/s, 2 replicas %.1f/s, Redis stopped %.1f/s, Redis back %.1f/s", p1, p2, p3, p4)
	for _, m := range []struct {
		name string
		got  float64
	}{{"3 replicas", p1}, {"2 replicas", p2}, {"Redis back", p4}} {
		if m.got < 18 || m.got > 22 {
			t.Errorf("%s: the upstream saw acme at %.1f/s, want 20/s within 10%%", m.name, m.got)
		}
	}
	// Stopped Redis: each of the 2 replicas admits 1/2 of the limit.
	if p3 < 10 || p3 > 30 {
		t.Errorf("Redis stopped: the upstream saw acme at %.1f/s, want about 20/s (each replica its share)", p3)
	}

	// The shared concurrency caps, while Redis counted.
	for _, w := range [][2]time.Time{{t0, at(15 * time.Second)}, {settled, end}} {
		if p := up.peak("", w[0], w[1]); p > 6 {
			t.Errorf("%v–%v: the slow upstream had %d calls in flight, over max_concurrent 6", w[0].Sub(t0), w[1].Sub(t0), p)
		}
		if p := up.peak("flood", w[0], w[1]); p > 4 {
			t.Errorf("flood had %d slow calls in flight, over its max_concurrent_per_workspace 4", p)
		}
	}
	t.Logf("slow upstream in flight, peak: all %d, flood %d (caps 6 and 4); with Redis stopped: all %d",
		up.peak("", t0, at(15*time.Second)), up.peak("flood", t0, at(15*time.Second)), up.peak("", at(16*time.Second), at(21*time.Second)))

	// The flood hurt only itself: it met its own limits, calm met none.
	floodRes := lg.results("flood", t0, end)
	limited := 0
	for _, r := range floodRes {
		if r.status == 429 || r.isError {
			limited++
		}
	}
	if limited == 0 {
		t.Errorf("none of flood's %d calls met a limit", len(floodRes))
	}
	for _, w := range [][2]time.Time{{t0, at(15 * time.Second)}, {settled, end}} {
		var worst time.Duration
		calmRes := lg.results("calm", w[0], w[1])
		for _, r := range calmRes {
			if r.status == 0 {
				continue // the killed gateway
			}
			if r.status != 200 || r.isError {
				t.Errorf("calm's call at %v = %d (is_error %v), want it served while flood floods", r.at.Sub(t0), r.status, r.isError)
			}
			worst = max(worst, r.took)
		}
		if len(calmRes) == 0 || worst > 2*time.Second {
			t.Errorf("calm made %d calls, the slowest in %v; want each served within 2s", len(calmRes), worst)
		}
	}

	// Redis stopped: nothing hung, the rule was logged and counted.
	for _, r := range lg.results("acme", at(15*time.Second), at(21*time.Second)) {
		if r.took > 2*time.Second || r.status >= 500 {
			t.Errorf("acme's call with Redis stopped = %d after %v, want an answer within 2s", r.status, r.took)
		}
	}
	for i, g := range gws[:2] {
		for _, line := range strings.Split(g.stderr.String(), "\n") {
			if strings.Contains(line, "shared limit store") {
				t.Logf("gateway %d: %s", i+1, line)
			}
		}
		if !strings.Contains(g.stderr.String(), "shared limit store unavailable") || !strings.Contains(g.stderr.String(), "shared limit store answers again") {
			t.Errorf("a gateway's log does not tell the outage and the recovery")
		}
		if v := metricValue(t, g, `gateway_limit_store_fallbacks_total{op="take"}`); v <= 0 {
			t.Errorf("gateway_limit_store_fallbacks_total{op=take} = %v, want the fallbacks counted", v)
		}
	}

	// No audit record lost: every write the upstream received has its
	// started record, and every write answered ok its completed one.
	var trail bytes.Buffer
	for _, a := range audits {
		b, _ := os.ReadFile(a)
		trail.Write(b)
	}
	records := map[string][]string{}
	for _, line := range strings.Split(trail.String(), "\n") {
		var rec struct {
			Stage, Outcome string
			Arguments      struct{ Ref string }
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Arguments.Ref != "" {
			records[rec.Arguments.Ref] = append(records[rec.Arguments.Ref], rec.Stage+":"+rec.Outcome)
		}
	}
	up.mu.Lock()
	received := len(up.writes)
	for ref := range up.writes {
		if !slices.ContainsFunc(records[ref], func(s string) bool { return strings.HasPrefix(s, "started:") }) {
			t.Errorf("write %s reached the upstream with no started record (records %v)", ref, records[ref])
		}
	}
	up.mu.Unlock()
	answered := 0
	for _, r := range lg.results("writes", t0, end) {
		if r.status == 200 && !r.isError {
			answered++
			if !slices.Contains(records[r.ref], "completed:ok") {
				t.Errorf("write %s was answered ok with no completed record (records %v)", r.ref, records[r.ref])
			}
		}
	}
	t.Logf("writes: %d reached the upstream, %d answered ok, all audited", received, answered)
	if answered == 0 {
		t.Error("no write was answered ok")
	}

	// No approval lost: the one requested through the killed gateway is
	// approved through another and carried out through a third.
	if code, body, _ := rest(t, "POST", gws[0].URL+"/admin/mcp/approvals/"+approvalID+"/approve", approver); code != 200 {
		t.Fatalf("approving %s through gateway 1: %d %v", approvalID, code, body)
	}
	if r := lg.callOn(t, gws[1], op, "cancel_thing", `{"thing":"t1"}`); strings.Contains(r, `"is_error":true`) {
		t.Fatalf("the approved call through gateway 2 = %s", r)
	}
	up.mu.Lock()
	cancelled := slices.Clone(up.cancelled)
	up.mu.Unlock()
	if !slices.Equal(cancelled, []string{"t1"}) {
		t.Errorf("the upstream saw cancels %v, want t1 once", cancelled)
	}
}

// callOn makes one REST call through g and returns the body.
func (lg *loadGen) callOn(t *testing.T, g *gateway, tok, tool, args string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", g.URL+"/admin/mcp/call", strings.NewReader(`{"name":"`+tool+`","arguments":`+args+`}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := lg.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
