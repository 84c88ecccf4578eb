package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// once sends one request and reads the whole answer (functional checks).
func once(ctx context.Context, method, rawURL string, h http.Header, body []byte) (int, []byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(newRequest(ctx, method, u, h.Clone(), body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// callResult is the part of a tools/call answer the checks read.
type callResult struct {
	Result *struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends one tools/call to the gateway at mcpURL.
func call(ctx context.Context, mcpURL, bearer, tool, args string) (*callResult, error) {
	h := mcpHeader()
	h["Authorization"][0] = bearer
	status, b, err := once(ctx, http.MethodPost, mcpURL, h, callBody(tool, args))
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("tools/call %s: status %d: %.300s", tool, status, b)
	}
	var r callResult
	if err := json.Unmarshal(b, &r); err != nil || r.Result == nil {
		return nil, fmt.Errorf("tools/call %s: not a JSON-RPC result: %.300s", tool, b)
	}
	return &r, nil
}

// checkScenario makes sure every target answers what the scenario means
// before anything is timed: the hop passes the upstream's bytes through,
// the gateway answers a result (not a tool error) of the expected shape,
// with a cached and with a fresh token.
func (e *env) checkScenario(ctx context.Context, sc scenario) error {
	wls, _, err := e.workloads(sc)
	if err != nil {
		return err
	}
	d := wls["direct"].(*plain)
	var body []byte
	if sc.body != "" {
		body = []byte(sc.body)
	}
	ds, db, err := once(ctx, sc.method, e.upstream.url+sc.path, d.header, body)
	if err != nil || ds != http.StatusOK || !json.Valid(db) {
		return fmt.Errorf("%s: direct %s %s: status %d, %d bytes, %v", sc.name, sc.method, sc.path, ds, len(db), err)
	}
	hs, hb, err := once(ctx, sc.method, e.hop.url+sc.path, d.header, body)
	if err != nil || hs != http.StatusOK || !bytes.Equal(hb, db) {
		return fmt.Errorf("%s: hop answered status %d, %d bytes (direct: %d bytes), %v", sc.name, hs, len(hb), len(db), err)
	}
	auditBefore := lines(filepath.Join(e.dir, "audit.jsonl"))
	type answerer struct{ name, url, bearer string }
	callers := []answerer{{"gateway", e.gw.url, e.cached.cached[0]}, {"gateway", e.gw.url, e.fresh.fresh[len(e.fresh.fresh)-1]}}
	if sdkScenarios[sc.name] {
		callers = append(callers, answerer{"sdk", e.sdk.url, e.cached.cached[0]})
	}
	for _, a := range callers {
		r, err := call(ctx, a.url, a.bearer, sc.tool, sc.args)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", sc.name, a.name, err)
		}
		if r.Result.IsError || len(r.Result.Structured) == 0 || len(r.Result.Content) != 1 {
			return fmt.Errorf("%s: %s answered a tool error or no structuredContent: %+v", sc.name, a.name, r.Result)
		}
		var sv struct {
			ID        string            `json:"id"`
			OK        bool              `json:"ok"`
			Items     []json.RawMessage `json:"items"`
			Truncated *struct {
				Dropped int `json:"dropped"`
			} `json:"transportTruncated"`
		}
		if err := json.Unmarshal(r.Result.Structured, &sv); err != nil {
			return fmt.Errorf("%s: structuredContent: %w", sc.name, err)
		}
		switch sc.name {
		case "small":
			if sv.ID != "item-000001" {
				return fmt.Errorf("small: structuredContent.id = %q, want item-000001", sv.ID)
			}
		case "list":
			if len(sv.Items) != listItems || sv.Truncated != nil {
				return fmt.Errorf("list: %d items (truncated %v), want all %d", len(sv.Items), sv.Truncated != nil, listItems)
			}
		case "huge":
			if sv.Truncated == nil || sv.Truncated.Dropped == 0 || len(sv.Items) == 0 {
				return fmt.Errorf("huge: %d items, transportTruncated %+v; want a truncated list", len(sv.Items), sv.Truncated)
			}
		case "write":
			if !sv.OK {
				return fmt.Errorf("write: structuredContent %.200s, want ok", r.Result.Structured)
			}
		}
	}
	if sc.name == "write" {
		// Each write has a started and a completed record.
		if n := lines(filepath.Join(e.dir, "audit.jsonl")); n != auditBefore+4 {
			return fmt.Errorf("write: audit file has %d new records after 2 writes, want 4", n-auditBefore)
		}
	}
	return nil
}

func lines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

// judgeErrors records a failed check when more than 1% of a row's
// requests failed.
func (e *env) judgeErrors(what string, r *row) {
	reqs, errs, _, _, _, _, _ := r.total()
	if errs > 0 && errs*100 > reqs {
		first := ""
		for _, s := range r.samples {
			if s.firstErr != "" {
				first = s.firstErr
				break
			}
		}
		e.checks = append(e.checks, fmt.Sprintf("%s %s c=%d: %d of %d requests failed; first: %s", what, r.target, r.conc, errs, reqs+errs, first))
	}
}

// listScenario measures tools/list over a generated catalog filtered per
// caller, each client following every nextCursor.
func (e *env) listScenario(ctx context.Context) error {
	path := filepath.Join(e.dir, "tools.yaml")
	if err := writeFile(path, listCatalog(e.upstream.url, e.cfg.tools)); err != nil {
		return err
	}
	if err := e.validate(ctx, path); err != nil {
		return err
	}
	logf("tools-list: starting a gateway with %d tools", e.cfg.tools)
	t0 := time.Now()
	gw, err := e.startGateway(ctx, "gateway-list", path)
	if err != nil {
		return err
	}
	ready := time.Since(t0)
	defer gw.kill()
	u, err := url.Parse(gw.url)
	if err != nil {
		return err
	}
	wl := &mcpList{url: u}
	for i, c := range listCallers {
		tok, err := mint("list-"+c.name, c.scopes, 900000+i)
		if err != nil {
			return err
		}
		wl.callers = append(wl.callers, "Bearer "+tok)
		wl.want = append(wl.want, visibleTools(e.cfg.tools, c.scopes))
	}
	if err := checkList(ctx, wl); err != nil {
		e.checks = append(e.checks, err.Error())
		fmt.Fprintf(e.out, "## tools/list: check failed, not measured: %v\n\n", err)
		return nil
	}
	idle := e.snap(gw)
	var rows []*row
	for _, c := range e.cfg.conc {
		rows = append(rows, &row{target: "gateway", conc: c})
	}
	for r := range e.cfg.rounds {
		for i, c := range e.cfg.conc {
			logf("tools-list: round %d/%d, c=%d", r+1, e.cfg.rounds, c)
			s, err := measure(ctx, wl, c, e.cfg.warmup, e.cfg.duration, measured{proxy: gw, up: e.upstream}, 0)
			if err != nil {
				return fmt.Errorf("tools-list c=%d: %w", c, err)
			}
			rows[i].samples = append(rows[i].samples, s)
		}
	}
	e.listTable(rows, ready, idle, wl.want)
	return nil
}

// checkList walks each caller's whole list once, decoding every page.
func checkList(ctx context.Context, wl *mcpList) error {
	for i, bearer := range wl.callers {
		h := mcpHeader()
		h["Authorization"][0] = bearer
		seen := map[string]bool{}
		cursor := ""
		for page := 0; ; page++ {
			if page > 1000 {
				return errors.New("tools/list: more than 1000 pages")
			}
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
			if cursor != "" {
				body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":%q}}`, cursor)
			}
			status, b, err := once(ctx, http.MethodPost, wl.url.String(), h, body)
			if err != nil || status != http.StatusOK {
				return fmt.Errorf("tools/list for %s, page %d: status %d, %v: %.300s", listCallers[i].name, page, status, err, b)
			}
			var r struct {
				Result struct {
					Tools []struct {
						Name string `json:"name"`
					} `json:"tools"`
					NextCursor string `json:"nextCursor"`
				} `json:"result"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("tools/list for %s, page %d: %w", listCallers[i].name, page, err)
			}
			for _, t := range r.Result.Tools {
				if seen[t.Name] {
					return fmt.Errorf("tools/list for %s: %s listed twice", listCallers[i].name, t.Name)
				}
				seen[t.Name] = true
			}
			if cursor = r.Result.NextCursor; cursor == "" {
				break
			}
		}
		if len(seen) != wl.want[i] {
			return fmt.Errorf("tools/list for %s: %d tools, want %d", listCallers[i].name, len(seen), wl.want[i])
		}
	}
	return nil
}

// memoryScenario: cfg.memClients concurrent clients call a tool whose
// upstream streams up to cfg.streamBytes, behind max_response_bytes:
// 64KiB, against a gateway of its own. The gateway's VmRSS is sampled
// every 100 ms; fds and threads are read before and after, goroutines
// from a SIGQUIT dump of this gateway after the run and of an identical
// twin that only served the warm-up.
func (e *env) memoryScenario(ctx context.Context) error {
	cat := filepath.Join(e.dir, "calls.yaml")
	warm := func(g *child) error {
		if _, err := call(ctx, g.url, e.cached.cached[0], "small", "{}"); err != nil {
			return err
		}
		r, err := call(ctx, g.url, e.cached.cached[0], "stream", "{}")
		if err != nil {
			return err
		}
		if !r.Result.IsError || len(r.Result.Content) == 0 || !bytes.Contains([]byte(r.Result.Content[0].Text), []byte("max_response_bytes")) {
			return fmt.Errorf("memory: the stream tool answered %+v, want a max_response_bytes tool error", r.Result)
		}
		return nil
	}
	logf("memory: goroutine baseline from an idle twin gateway")
	twin, err := e.startGateway(ctx, "gateway-twin", cat)
	if err != nil {
		return err
	}
	if err := warm(twin); err != nil {
		twin.kill()
		e.checks = append(e.checks, err.Error())
		return nil
	}
	time.Sleep(time.Second)
	twinSnap := e.snap(twin)
	gBefore, err := twin.quitDump()
	if err != nil {
		return err
	}

	gw, err := e.startGateway(ctx, "gateway-memory", cat)
	if err != nil {
		return err
	}
	defer gw.kill()
	if err := warm(gw); err != nil {
		e.checks = append(e.checks, err.Error())
		return nil
	}
	time.Sleep(time.Second)
	before := e.snap(gw)
	if os.Getenv("BENCH_DEBUG_FDS") != "" {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", gw.pid))
		for _, en := range ents {
			l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", gw.pid, en.Name()))
			logf("before fd %s -> %s", en.Name(), l)
		}
	}
	u, err := url.Parse(gw.url)
	if err != nil {
		return err
	}
	wl := &mcpCall{url: u, body: callBody("stream", "{}"), tokens: e.cached, wantToolError: "max_response_bytes"}
	logf("memory: %d clients for %s", e.cfg.memClients, e.cfg.memDuration)
	s, err := measure(ctx, wl, e.cfg.memClients, e.cfg.warmup, e.cfg.memDuration, measured{proxy: gw, up: e.upstream}, 100*time.Millisecond)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	// The run's peak is the highest of VmHWM (reset after warm-up) and the
	// samples; a reset that failed leaves VmHWM at the lifetime peak,
	// which is still an upper bound.
	peak := max(s.hwmProxy, s.peakSampled)
	if st, err := procStatus(gw.pid); err == nil && s.hwmProxy == 0 {
		peak = max(peak, st.HWM)
	}
	after := e.settled(gw)
	if os.Getenv("BENCH_DEBUG_FDS") != "" {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", gw.pid))
		for _, en := range ents {
			l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", gw.pid, en.Name()))
			logf("fd %s -> %s", en.Name(), l)
		}
	}
	gAfter, err := gw.quitDump()
	if err != nil {
		return err
	}
	r := &row{target: "gateway", conc: e.cfg.memClients, samples: []*sample{s}}
	e.judgeErrors("memory", r)
	p := r.percentiles(0.5, 0.99)
	growth := peak - before.RSS
	fmt.Fprintf(e.out, "## memory: %d clients call a tool whose upstream streams up to %s, max_response_bytes: 64KiB\n\n", e.cfg.memClients, sizeString(e.cfg.streamBytes))
	fmt.Fprintf(e.out, "| gateway | RSS | fds | inbound conns | upstream conns | CLOSE_WAIT | threads | goroutines |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	fmt.Fprintf(e.out, "| idle twin, warm-up only | %s | %d | %d | %d | %d | %d | %d |\n", mib(twinSnap.RSS), twinSnap.FDs, twinSnap.In, twinSnap.Up, twinSnap.CloseWait, twinSnap.Threads, gBefore)
	fmt.Fprintf(e.out, "| before the run, idle | %s | %d | %d | %d | %d | %d | (twin's) |\n", mib(before.RSS), before.FDs, before.In, before.Up, before.CloseWait, before.Threads)
	fmt.Fprintf(e.out, "| peak during the run | %s | | | | | | |\n", mib(peak))
	fmt.Fprintf(e.out, "| after the run, clients gone | %s | %d | %d | %d | %d | %d | %d |\n\n", mib(after.RSS), after.FDs, after.In, after.Up, after.CloseWait, after.Threads, gAfter)
	fmt.Fprintf(e.out, "Goroutines come from SIGQUIT dumps (the gateway has no pprof endpoint); each idle upstream connection holds 2. Peak = max(VmHWM reset before the run, VmRSS sampled every 100 ms: %s).\n\n", mib(s.peakSampled))
	fmt.Fprintf(e.out, "calls: %d in %s (%.0f/s), each a max_response_bytes tool error as expected; p50 %s ms, p99 %s ms, failed %d; gateway CPU %.1f µs/call, upstream %.1f µs/call\n\n",
		s.reqs, s.wall.Round(time.Millisecond), float64(s.reqs)/s.wall.Seconds(), ms(p[0]), ms(p[1]), s.errs, r.proxyCPU(), r.upCPU())
	verdict := "MET"
	if growth > 192<<10 {
		verdict = "MISSED"
	}
	scale := ""
	if e.cfg.memClients < 1000 {
		scale = fmt.Sprintf(" (at %d clients; the target is stated for 1,000)", e.cfg.memClients)
	}
	e.targets = append(e.targets, fmt.Sprintf("memory, peak RSS <= idle + 192 MiB%s: idle %s, peak %s, +%s: %s", scale, mib(before.RSS), mib(peak), mib(growth), verdict))
	l := leaks(before, after)
	// Goroutines beyond the twin's, less 2 per extra pooled upstream
	// connection, would be a leak.
	extra := gAfter - gBefore - 2*(after.Up-twinSnap.Up)
	if extra > 0 {
		l = strings.TrimPrefix(l+fmt.Sprintf("; %d goroutines beyond the twin's and the pool's", extra), "; ")
	}
	fdVerdict := "MET"
	if l != "" {
		fdVerdict = "MISSED: " + l
		e.checks = append(e.checks, "memory gateway after the run: "+l)
	}
	e.targets = append(e.targets, fmt.Sprintf("no fd or goroutine growth after the memory run: fds %d -> %d, goroutines %d (idle twin) -> %d, upstream conns %d -> %d: %s",
		before.FDs, after.FDs, gBefore, gAfter, before.Up, after.Up, fdVerdict))
	return nil
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
