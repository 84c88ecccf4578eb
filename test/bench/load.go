package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// workload says what the clients of one target send and how an answer is
// judged.
type workload interface {
	// client returns client i's request source. A client runs one request
	// at a time, so it may reuse its header map between requests.
	client(i int) client
}

type client interface {
	next(ctx context.Context) *http.Request
	// done judges a complete answer: whether it is what the scenario
	// expects, and how many items it carried (tools listed; 1 otherwise).
	done(status int, body []byte) (ok bool, items int)
}

// newRequest builds a request without parsing a URL per request.
func newRequest(ctx context.Context, method string, u *url.URL, h http.Header, body []byte) *http.Request {
	r := &http.Request{
		Method:     method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h,
		Host:       u.Host,
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return r.WithContext(ctx)
}

// plain is the direct and hop workload: the same REST call every time.
type plain struct {
	method string
	url    *url.URL
	header http.Header
	body   []byte
}

func (p *plain) client(int) client { return &plainClient{p: p, h: p.header.Clone()} }

type plainClient struct {
	p *plain
	h http.Header
}

func (c *plainClient) next(ctx context.Context) *http.Request {
	return newRequest(ctx, c.p.method, c.p.url, c.h, c.p.body)
}

func (c *plainClient) done(status int, _ []byte) (bool, int) { return status == http.StatusOK, 1 }

// tokens hands out bearer tokens: client i keeps reusing cached[i%len]
// (the gateway verifies each once and then answers from its cache), or,
// with fresh set, every request takes the next of a pool larger than the
// gateway's token cache, cycled in order, so every request misses the
// cache and pays for a full verification, as a new token would.
type tokens struct {
	cached []string
	fresh  []string
	next   atomic.Uint64
}

func (t *tokens) pick(client int) string {
	if t.fresh != nil {
		return t.fresh[(t.next.Add(1)-1)%uint64(len(t.fresh))]
	}
	return t.cached[client%len(t.cached)]
}

// mcpCall is a gateway workload: JSON-RPC tools/call in the 2025-11-25
// era.
type mcpCall struct {
	url    *url.URL
	body   []byte
	tokens *tokens
	// wantToolError: the scenario expects a tool error (isError) whose
	// text holds this string.
	wantToolError string
}

func mcpHeader() http.Header {
	return http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"Authorization":        {""},
	}
}

func callBody(tool, args string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args)
}

func (m *mcpCall) client(i int) client { return &mcpClient{m: m, i: i, h: mcpHeader()} }

type mcpClient struct {
	m *mcpCall
	i int
	h http.Header
}

func (c *mcpClient) next(ctx context.Context) *http.Request {
	c.h["Authorization"][0] = c.m.tokens.pick(c.i)
	return newRequest(ctx, http.MethodPost, c.m.url, c.h, c.m.body)
}

var isErrorTail = []byte(`"isError":true}}`)

func (c *mcpClient) done(status int, body []byte) (bool, int) {
	if status != http.StatusOK {
		return false, 0
	}
	isErr := bytes.HasSuffix(bytes.TrimSpace(body), isErrorTail)
	if c.m.wantToolError != "" {
		return isErr && bytes.Contains(body, []byte(c.m.wantToolError)), 1
	}
	return !isErr, 1
}

// mcpList is the tools/list workload: each client walks the whole list,
// following every nextCursor, then starts over as the next caller. One
// request is one page; items are the tools it listed.
type mcpList struct {
	url     *url.URL
	callers []string // bearer header values, one per listCallers entry
	want    []int    // tools each caller must see
}

func (m *mcpList) client(i int) client {
	return &listClient{m: m, caller: i % len(m.callers), h: mcpHeader()}
}

type listClient struct {
	m      *mcpList
	caller int
	cursor []byte
	seen   int
	h      http.Header
}

func (c *listClient) next(ctx context.Context) *http.Request {
	c.h["Authorization"][0] = c.m.callers[c.caller]
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if c.cursor != nil {
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"%s"}}`, c.cursor)
	}
	return newRequest(ctx, http.MethodPost, c.m.url, c.h, body)
}

var (
	toolStart    = []byte(`{"name":"tool_`)
	cursorPrefix = []byte(`"nextCursor":"`)
)

func (c *listClient) done(status int, body []byte) (bool, int) {
	if status != http.StatusOK {
		c.cursor, c.seen = nil, 0
		return false, 0
	}
	n := bytes.Count(body, toolStart)
	c.seen += n
	if i := bytes.Index(body, cursorPrefix); i >= 0 {
		rest := body[i+len(cursorPrefix):]
		if j := bytes.IndexByte(rest, '"'); j > 0 {
			c.cursor = append(c.cursor[:0], rest[:j]...)
			return true, n
		}
	}
	ok := c.seen == c.m.want[c.caller]
	c.cursor, c.seen = nil, 0
	c.caller = (c.caller + 1) % len(c.m.callers)
	return ok, n
}

// sample is one measurement window of one target at one concurrency.
type sample struct {
	reqs, errs, items int64
	firstErr          string
	lat               []int64 // nanoseconds, one per successful request
	wall              time.Duration
	cpuProxy, cpuUp   time.Duration
	// countsProxy counts the proxy's read and write system calls, its
	// threads' turns on a CPU and its user and system ticks in the window.
	countsProxy     procCounts
	cpuGen          time.Duration
	hwmProxy, hwmUp int64 // KiB; 0 when unknown
	peakSampled     int64 // KiB, the highest VmRSS sampled (memory scenario)
}

// measured names the processes whose CPU a window attributes.
type measured struct {
	proxy *child // hop or gateway; nil for direct
	up    *child
}

// measure runs conc clients of wl against their target for warmup, then
// for dur while counting, and returns what the window saw. Each client
// has its own keep-alive connection (the transport pools up to conc idle
// connections to the one host). sampleRSS, when > 0, samples the proxy's
// VmRSS at that interval.
func measure(ctx context.Context, wl workload, conc int, warmup, dur time.Duration, m measured, sampleRSS time.Duration) (*sample, error) {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:          conc + 16,
		MaxIdleConnsPerHost:   conc + 16,
		IdleConnTimeout:       time.Minute,
		ResponseHeaderTimeout: time.Minute,
		DisableCompression:    true,
	}
	defer tr.CloseIdleConnections()

	// Peaks cover the warm-up too: connections are made there.
	s := &sample{}
	pids := []int{m.up.pid}
	if m.proxy != nil {
		pids = append(pids, m.proxy.pid)
	}
	peakOK := true
	for _, pid := range pids {
		peakOK = resetPeak(pid) && peakOK
	}
	var phase atomic.Int32 // 0 warm-up, 1 counting, 2 stop
	samplerDone := make(chan struct{})
	if sampleRSS > 0 && m.proxy != nil {
		go func() {
			defer close(samplerDone)
			t := time.NewTicker(sampleRSS)
			defer t.Stop()
			for phase.Load() != 2 {
				if st, err := procStatus(m.proxy.pid); err == nil && st.RSS > s.peakSampled {
					s.peakSampled = st.RSS
				}
				<-t.C
			}
		}()
	} else {
		close(samplerDone)
	}
	results := make([]sample, conc)
	var wg sync.WaitGroup
	for i := range conc {
		cl := wl.client(i)
		res := &results[i]
		wg.Go(func() { runClient(ctx, tr, cl, &phase, res) })
	}
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	abort := func(err error) (*sample, error) {
		phase.Store(2)
		<-samplerDone
		select {
		case <-stopped:
		case <-time.After(time.Minute):
		}
		return nil, err
	}
	if err := sleep(ctx, warmup); err != nil {
		return abort(err)
	}

	up0, _ := cpu(m.up.pid)
	var px0 time.Duration
	var counts0 procCounts
	if m.proxy != nil {
		px0, _ = cpu(m.proxy.pid)
		counts0 = counts(m.proxy.pid)
	}
	gen0 := selfCPU()
	start := time.Now()
	phase.Store(1)

	err := sleep(ctx, dur)
	phase.Store(2)
	s.wall = time.Since(start)
	up1, _ := cpu(m.up.pid)
	s.cpuUp = up1 - up0
	if m.proxy != nil {
		px1, _ := cpu(m.proxy.pid)
		s.cpuProxy = px1 - px0
		s.countsProxy = counts(m.proxy.pid).sub(counts0)
	}
	s.cpuGen = selfCPU() - gen0
	<-samplerDone
	if peakOK {
		if st, err := procStatus(m.up.pid); err == nil {
			s.hwmUp = st.HWM
		}
		if m.proxy != nil {
			if st, err := procStatus(m.proxy.pid); err == nil {
				s.hwmProxy = st.HWM
			}
		}
	}
	if err != nil {
		return abort(err)
	}
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		return nil, errors.New("clients did not stop within a minute of the window's end")
	}
	for i := range results {
		r := &results[i]
		s.reqs += r.reqs
		s.errs += r.errs
		s.items += r.items
		if s.firstErr == "" {
			s.firstErr = r.firstErr
		}
		s.lat = append(s.lat, r.lat...)
	}
	return s, nil
}

// runClient sends one request at a time until the phase says stop,
// counting only answers that complete while the window is open.
func runClient(ctx context.Context, tr *http.Transport, cl client, phase *atomic.Int32, res *sample) {
	var buf bytes.Buffer
	for phase.Load() != 2 && ctx.Err() == nil {
		req := cl.next(ctx)
		t0 := time.Now()
		resp, err := tr.RoundTrip(req)
		ok, items, why := false, 0, ""
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if err == nil {
				ok, items = cl.done(resp.StatusCode, buf.Bytes())
				if !ok {
					why = fmt.Sprintf("status %d: %.200s", resp.StatusCode, buf.Bytes())
				}
			}
		}
		if err != nil {
			why = err.Error()
		}
		el := time.Since(t0)
		if phase.Load() == 1 {
			if ok {
				res.reqs++
				res.items += int64(items)
				res.lat = append(res.lat, int64(el))
			} else {
				res.errs++
				if res.firstErr == "" {
					res.firstErr = why
				}
			}
		}
		if err != nil {
			time.Sleep(time.Millisecond) // a dead server must not become a spin
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// row is every window of one target at one concurrency, across rounds.
type row struct {
	target  string
	conc    int
	samples []*sample
}

func (r *row) total() (reqs, errs, items int64, wall, px, up, gen time.Duration) {
	for _, s := range r.samples {
		reqs += s.reqs
		errs += s.errs
		items += s.items
		wall += s.wall
		px += s.cpuProxy
		up += s.cpuUp
		gen += s.cpuGen
	}
	return
}

func (r *row) rps() float64 {
	reqs, _, _, wall, _, _, _ := r.total()
	return float64(reqs) / wall.Seconds()
}

// perReq is CPU per successful request in microseconds.
func perReq(d time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(n)
}

// proxyCounts is the proxy's read and write system calls and its
// threads' turns on a CPU, per request, and the share of its CPU time
// spent in the kernel (NaN when the ticks are too few to tell).
func (r *row) proxyCounts() (syscalls, wakeups, kernel float64) {
	reqs, c := r.proxyTotals()
	kernel = math.NaN()
	if c.user+c.sys >= 50 {
		kernel = float64(c.sys) / float64(c.user+c.sys)
	}
	if reqs == 0 {
		return 0, 0, kernel
	}
	return float64(c.syscalls) / float64(reqs), float64(c.wakeups) / float64(reqs), kernel
}

// proxyUserCPU is the proxy's user time per request in µs, from clock
// ticks: its own code's share, which the kernel's (the same loopback
// system calls for every proxy, but slow and noisy on some virtual
// machines) does not blur. 0 when unknown.
func (r *row) proxyUserCPU() float64 {
	reqs, c := r.proxyTotals()
	if reqs == 0 {
		return 0
	}
	return float64(c.user) * 1e6 / float64(clockTicks) / float64(reqs)
}

// proxyTotals sums the row's windows: requests and the proxy's counts.
func (r *row) proxyTotals() (reqs int64, c procCounts) {
	for _, s := range r.samples {
		reqs += s.reqs
		c = c.add(s.countsProxy)
	}
	return reqs, c
}

func (r *row) proxyCPU() float64 {
	reqs, _, _, _, px, _, _ := r.total()
	return perReq(px, reqs)
}

func (r *row) upCPU() float64 {
	reqs, _, _, _, _, up, _ := r.total()
	return perReq(up, reqs)
}

// percentiles returns the nearest-rank percentiles ps of every latency in
// the row, pooled across rounds.
func (r *row) percentiles(ps ...float64) []time.Duration {
	var all []int64
	for _, s := range r.samples {
		all = append(all, s.lat...)
	}
	slices.Sort(all)
	out := make([]time.Duration, len(ps))
	if len(all) == 0 {
		return out
	}
	for i, p := range ps {
		k := int(math.Ceil(p*float64(len(all)))) - 1 // nearest rank
		out[i] = time.Duration(all[max(0, min(k, len(all)-1))])
	}
	return out
}

func (r *row) peak() (proxy, up int64) {
	for _, s := range r.samples {
		proxy = max(proxy, s.hwmProxy)
		up = max(up, s.hwmUp)
	}
	return
}

// spread is the lowest and highest req/s of the row's windows.
func (r *row) spread() (lo, hi float64) {
	for i, s := range r.samples {
		v := float64(s.reqs) / s.wall.Seconds()
		if i == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return
}
