// Command bench is the gateway's load benchmark. In one run it
// starts, on 127.0.0.1:
//
//   - direct: a minimal upstream (this binary, "bench upstream") that the
//     clients call straight;
//   - hop: a bare httputil.ReverseProxy ("bench hop") in front of it, the
//     floor cost of one Go proxy hop;
//   - sdk: an MCP server written by hand with the official Go SDK ("bench
//     sdk"): stateless Streamable HTTP answering JSON, the same HS256
//     token check, one tool per plain read doing the same upstream GET;
//     what a team would otherwise write (small and list scenarios only);
//   - gateway: the real gateway binary, built once, serving a generated
//     catalog with one tool per upstream endpoint; its clients send MCP
//     tools/call with a valid bearer token, either a few tokens reused
//     ("gateway", cached) or a new one per request ("gateway-fresh").
//
// Each server is its own process, so CPU time is read per process from
// /proc/<pid>/task/*/schedstat. A Go load generator with keep-alive (one
// connection per client) runs every scenario at each concurrency, rounds
// times, alternating the targets, and prints Markdown tables: req/s,
// p50/p99 latency, CPU microseconds per request of the proxy and of the
// upstream, peak RSS, and the ratios gateway/direct and gateway/hop. Then
// tools/list over a generated 5,000-tool catalog filtered per caller
// (following every cursor), and a memory run: many concurrent clients
// calling a tool whose upstream streams up to 1 GiB behind
// max_response_bytes: 64KiB.
//
// With -pin (the default where taskset exists and there are two CPUs or
// more), the upstream and the measured proxy run on CPU 0 and the load
// generator on CPU 1.
//
//	go run ./test/bench           # full run, about 15 minutes
//	go run ./test/bench -quick    # CI: a second per window; asserts nothing about speed
//
// The exit status is non-zero only when something does not work (a
// server fails to start, a check of the answers fails, more than 1% of
// requests fail); the targets are reported, never enforced.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type config struct {
	duration, warmup time.Duration
	rounds           int
	conc             []int
	pin              bool
	scenarios        map[string]bool
	tools            int
	freshTokens      int
	baselineBin      string
	hopFatBin        string
	memClients       int
	memDuration      time.Duration
	streamBytes      int64
	gatewayBin       string
	keep             bool
}

const allScenarios = "small,list,huge,write,tools-list,memory"

func main() {
	if ok, err := subcommand(); ok {
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		os.Exit(2)
	}
	if cfg.pin {
		if err := pinSelf("1"); err != nil {
			fmt.Fprintln(os.Stderr, "bench: pinning the load generator to CPU 1:", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, os.Stdout)
	stop()
	killChildren()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	cfg := &config{}
	fs.DurationVar(&cfg.duration, "duration", 5*time.Second, "length of each measurement window")
	fs.DurationVar(&cfg.warmup, "warmup", 300*time.Millisecond, "load before each window, not counted")
	fs.IntVar(&cfg.rounds, "rounds", 3, "times each target is measured at each concurrency, alternating targets")
	concs := fs.String("c", "1,16,64", "concurrency levels (clients, one keep-alive connection each)")
	pin := fs.String("pin", "auto", "auto, on or off: servers on CPU 0, load generator on CPU 1 (auto: when taskset exists and nproc >= 2)")
	scen := fs.String("scenarios", allScenarios, "scenarios to run")
	fs.IntVar(&cfg.tools, "tools", 5000, "tools in the tools/list catalog")
	fs.IntVar(&cfg.freshTokens, "fresh-tokens", 20000, "distinct tokens gateway-fresh cycles through; above the gateway's token cache (10,000), every request misses it")
	fs.IntVar(&cfg.memClients, "mem-clients", 1000, "concurrent clients of the memory scenario")
	fs.DurationVar(&cfg.memDuration, "mem-duration", 10*time.Second, "length of the memory scenario")
	fs.Int64Var(&cfg.streamBytes, "stream-bytes", 1<<30, "most bytes the upstream's /stream sends per request")
	fs.StringVar(&cfg.gatewayBin, "gateway-bin", "", "a built gateway binary (default: go build ./cmd/gateway into a temp dir)")
	fs.StringVar(&cfg.hopFatBin, "hop-fat-bin", "", "the harness built with -tags fathop (the gateway's library packages linked in and initialised), whose hop is measured in the same run as target hop-fat: what a binary close to the gateway's size costs a bare proxy")
	fs.StringVar(&cfg.baselineBin, "baseline-bin", "", "another gateway binary (an older build, say), measured in the same run as targets gateway-base (cached tokens) and gateway-base-fresh")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the temp dir (catalogs, audit file)")
	quick := fs.Bool("quick", false, "CI: -duration 1s -warmup 100ms -rounds 1 -c 1,16 -mem-clients 50 -mem-duration 1s, unless set explicitly")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		for name, v := range map[string]string{"duration": "1s", "warmup": "100ms", "rounds": "1", "c": "1,16", "mem-clients": "50", "mem-duration": "1s"} {
			if !set[name] {
				_ = fs.Set(name, v)
			}
		}
	}
	for f := range strings.SplitSeq(*concs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 10000 {
			fmt.Fprintf(os.Stderr, "bench: -c: %q is not a concurrency level\n", f)
			return nil, errors.New("bad -c")
		}
		cfg.conc = append(cfg.conc, n)
	}
	switch *pin {
	case "on":
		cfg.pin = true
	case "off":
	case "auto":
		_, err := exec.LookPath("taskset")
		cfg.pin = err == nil && runtime.NumCPU() >= 2
	default:
		fmt.Fprintf(os.Stderr, "bench: -pin: want auto, on or off, not %q\n", *pin)
		return nil, errors.New("bad -pin")
	}
	if os.Getenv(envGeneratorCPU) != "" {
		cfg.pin = true // re-executed under taskset by pinSelf
	}
	cfg.scenarios = map[string]bool{}
	for s := range strings.SplitSeq(*scen, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(strings.Split(allScenarios, ","), s) {
			fmt.Fprintf(os.Stderr, "bench: -scenarios: unknown %q (want some of %s)\n", s, allScenarios)
			return nil, errors.New("bad -scenarios")
		}
		cfg.scenarios[s] = true
	}
	if cfg.rounds < 1 || cfg.duration <= 0 || cfg.tools < 1 || cfg.memClients < 1 || cfg.freshTokens < 1 {
		fmt.Fprintln(os.Stderr, "bench: -rounds, -duration, -tools, -mem-clients and -fresh-tokens must be positive")
		return nil, errors.New("bad flags")
	}
	return cfg, nil
}

// env is what every run shares: the servers and the tokens.
type env struct {
	cfg       *config
	out       io.Writer
	dir       string
	gateway   string // binary
	serverCPU string // "0" when pinned
	gwEnv     []string
	build     string // where the gateway binary came from

	upstream, hop, gw *child
	sdk               *child // the hand-written Go SDK server; url is its MCP endpoint
	base              *child // -baseline-bin's gateway, or nil
	hopFat            *child // -hop-fat-bin's hop, or nil
	cached            *tokens
	fresh             *tokens
	checks            []string // failed functional checks
	targets           []string // the targets, judged
}

func run(ctx context.Context, cfg *config, out io.Writer) (err error) {
	e := &env{cfg: cfg, out: out}
	e.dir, err = os.MkdirTemp("", "gateway-bench-")
	if err != nil {
		return err
	}
	if !cfg.keep {
		defer os.RemoveAll(e.dir)
	} else {
		logf("keeping %s", e.dir)
	}
	if cfg.pin {
		e.serverCPU = "0"
	}
	if v, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(v))); err == nil && n > 0 {
			clockTicks = n
		}
	}
	e.gwEnv = append(os.Environ(), secretEnv+"="+secret, "GOTRACEBACK=all")

	e.gateway = cfg.gatewayBin
	if e.gateway == "" {
		e.gateway = filepath.Join(e.dir, "gateway")
		logf("building the gateway")
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		build := exec.CommandContext(ctx, "go", "build", "-o", e.gateway, "./cmd/gateway")
		build.Dir = root
		if b, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/gateway: %w\n%s", err, b)
		}
		e.build = "built from " + gitState(root)
	} else {
		e.build = "prebuilt " + e.gateway
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	e.upstream, err = startChild(ctx, "upstream", e.serverCPU, os.Environ(), self, "upstream", "-stream-bytes", strconv.FormatInt(cfg.streamBytes, 10))
	if err != nil {
		return err
	}
	e.hop, err = startChild(ctx, "hop", e.serverCPU, os.Environ(), self, "hop", "-target", e.upstream.url)
	if err != nil {
		return err
	}
	if cfg.hopFatBin != "" {
		e.hopFat, err = startChild(ctx, "hop-fat", e.serverCPU, os.Environ(), cfg.hopFatBin, "hop", "-target", e.upstream.url)
		if err != nil {
			return err
		}
		targetNames = slices.Insert(targetNames, slices.Index(targetNames, "hop")+1, "hop-fat")
	}
	e.sdk, err = startChild(ctx, "sdk", e.serverCPU, os.Environ(), self, "sdk", "-target", e.upstream.url)
	if err != nil {
		return err
	}
	e.sdk.url += "/mcp"
	callCat := filepath.Join(e.dir, "calls.yaml")
	if err := writeFile(callCat, callCatalog(e.upstream.url, filepath.Join(e.dir, "audit.jsonl"))); err != nil {
		return err
	}
	if err := e.validate(ctx, callCat); err != nil {
		return err
	}
	e.gw, err = e.startGateway(ctx, "gateway", callCat)
	if err != nil {
		return err
	}
	if cfg.baselineBin != "" {
		bin := e.gateway
		e.gateway = cfg.baselineBin
		e.base, err = e.startGateway(ctx, "gateway-base", callCat)
		e.gateway = bin
		if err != nil {
			return err
		}
		// It is served the fresh tokens too, so that its token cache and
		// heap are in the state the measured gateway's are: a process
		// holding 10,000 cached tokens spends more on each collection.
		targetNames = append(targetNames, "gateway-base", "gateway-base-fresh")
	}
	logf("minting tokens")
	scopes := []string{"bench:read", "bench:write"}
	cached, err := mintMany("bench-cached", scopes, 4, 0)
	if err != nil {
		return err
	}
	fresh, err := mintMany("bench-fresh", scopes, cfg.freshTokens, 1000)
	if err != nil {
		return err
	}
	e.cached = &tokens{cached: cached}
	e.fresh = &tokens{fresh: fresh}

	e.header()
	calls := slices.DeleteFunc([]string{"small", "list", "huge", "write"}, func(s string) bool { return !cfg.scenarios[s] })
	if len(calls) > 0 {
		before := e.settled(e.gw)
		for _, s := range calls {
			if err := e.callScenario(ctx, s); err != nil {
				return err
			}
		}
		after := e.settled(e.gw)
		fmt.Fprintf(out, "The tools/call gateway before the scenarios: %s.\nAfter them, clients gone: %s.\n\n", before, after)
		if l := leaks(before, after); l != "" {
			e.checks = append(e.checks, "tools/call gateway after the scenarios: "+l)
		}
	}
	if cfg.scenarios["tools-list"] {
		if err := e.listScenario(ctx); err != nil {
			return err
		}
	}
	if cfg.scenarios["memory"] {
		if err := e.memoryScenario(ctx); err != nil {
			return err
		}
	}
	e.summary()
	if len(e.checks) > 0 {
		return fmt.Errorf("%d check(s) failed:\n  %s", len(e.checks), strings.Join(e.checks, "\n  "))
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// gitState names the commit the gateway was built from and whether the
// working tree differed from it.
func gitState(root string) string {
	rev, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "an unknown commit"
	}
	s := "commit " + strings.TrimSpace(string(rev))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		s += fmt.Sprintf(" plus uncommitted changes to %d tracked file(s)", strings.Count(string(st), "\n"))
	}
	return s
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run the benchmark inside the gateway module (go run ./test/bench)")
	}
	return filepath.Dir(mod), nil
}

// validate runs "gateway validate" on a generated catalog.
func (e *env) validate(ctx context.Context, path string) error {
	cmd := exec.CommandContext(ctx, e.gateway, "validate", "--catalog", path)
	cmd.Env = e.gwEnv
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gateway validate --catalog %s: %w\n%s", path, err, b)
	}
	return nil
}

func (e *env) startGateway(ctx context.Context, name, catalogPath string) (*child, error) {
	return startChild(ctx, name, e.serverCPU, e.gwEnv, e.gateway, "serve", "--catalog", catalogPath, "--listen", "127.0.0.1:0")
}

// snap reads c's resources, its sockets classified by the ports of its
// listener and of the upstream.
func (e *env) snap(c *child) snapshot { return snap(c.pid, port(c.url), port(e.upstream.url)) }

// settled waits (at most 5 s) until no client connection is left on c's
// listener (the load generator has closed its own) and c's fd count held
// still for 200 ms, and returns c's snapshot.
func (e *env) settled(c *child) snapshot {
	s := e.snap(c)
	for range 25 {
		time.Sleep(200 * time.Millisecond)
		n := e.snap(c)
		if n.In == 0 && n.CloseWait == 0 && n.FDs == s.FDs {
			return n
		}
		s = n
	}
	return s
}

// leaks says what after holds that before did not, beyond the idle
// upstream pool (at most 256 connections per upstream): "" when nothing.
func leaks(before, after snapshot) string {
	var l []string
	if after.In > 0 {
		l = append(l, fmt.Sprintf("%d client connections still open", after.In))
	}
	if after.CloseWait > 0 {
		l = append(l, fmt.Sprintf("%d sockets in CLOSE_WAIT", after.CloseWait))
	}
	if after.Up > 256 {
		l = append(l, fmt.Sprintf("%d upstream connections, above the pool's 256", after.Up))
	}
	if n, m := before.FDs-before.Up-before.In, after.FDs-after.Up-after.In; m > n {
		l = append(l, fmt.Sprintf("%d other fds, %d before (sockets among them: %s)", m, n, strings.Join(after.Other, ", ")))
	}
	return strings.Join(l, "; ")
}

func (e *env) header() {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	goVersion := runtime.Version()
	if b, err := exec.Command("go", "version").Output(); err == nil {
		goVersion = strings.TrimSpace(strings.TrimPrefix(string(b), "go version "))
	}
	nproc := runtime.NumCPU()
	if e.cfg.pin {
		nproc = 0
		if b, err := exec.Command("nproc", "--all").Output(); err == nil {
			nproc, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	fmt.Fprintf(e.out, "# Gateway load benchmark\n\n")
	fmt.Fprintf(e.out, "- machine: %d CPUs (%s), Linux %s, %s\n", nproc, model, kernel, goVersion)
	if e.cfg.pin {
		fmt.Fprintf(e.out, "- pinned: yes. upstream, hop, sdk and gateway on CPU 0 (GOMAXPROCS 1 each); the load generator on CPU 1 (GOMAXPROCS %d)\n", runtime.GOMAXPROCS(0))
	} else {
		fmt.Fprintf(e.out, "- pinned: no. every process may use every CPU (GOMAXPROCS %d)\n", runtime.GOMAXPROCS(0))
	}
	fmt.Fprintf(e.out, "- load: Go net/http client, keep-alive, one connection per client; %s windows after %s of warm-up; %d round(s) alternating direct, hop, sdk, gateway, gateway-fresh at each concurrency\n",
		e.cfg.duration, e.cfg.warmup, e.cfg.rounds)
	fmt.Fprintf(e.out, "- gateway binary: %s; its log (one access line per request at the default level) goes to a pipe the harness drains\n", e.build)
	fmt.Fprintf(e.out, "- gateway: tools/call in the 2025-11-25 era; `gateway` reuses 4 tokens (verified once, then cached), `gateway-fresh` cycles %d distinct tokens, more than the token cache holds, so each request verifies an HS256 signature\n", e.cfg.freshTokens)
	fmt.Fprintf(e.out, "- sdk: a stateless Streamable HTTP server written with the official Go SDK (JSON responses), its bearer middleware verifying every HS256 token with golang-jwt (no cache), one tool per plain read (small, list) that GETs the upstream and returns its object as structuredContent; measured with the cached workload's 4 tokens\n")
	fmt.Fprintf(e.out, "- CPU: per process from /proc/<pid>/task/*/schedstat over the window, divided by the requests completed in it; proxy = hop, sdk or gateway; server CPU %% = (proxy + upstream) / wall; peak RSS = VmHWM reset at each window; proxy kernel %% = system time over user + system time from /proc/<pid>/stat (– when under half a second of ticks); syscalls = read and write calls from /proc/<pid>/io, wake-ups = the threads' turns on a CPU (third field of each schedstat), per request\n\n")
}

// scenario is one tools/call scenario: the REST call direct and hop
// clients make, and the tools/call the gateway's make.
type scenario struct {
	name, method, path, body, tool, args, what string
}

var scenarios = map[string]scenario{
	"small": {name: "small", method: "GET", path: "/small", tool: "small", args: "{}", what: "a small read: ~300 B upstream JSON"},
	"list":  {name: "list", method: "GET", path: "/list", tool: "list", args: "{}", what: "a list read: 100 items, ~30 KiB upstream JSON"},
	"huge":  {name: "huge", method: "GET", path: "/huge", tool: "huge", args: "{}", what: "a list the gateway must truncate: 2 MiB upstream JSON, cut to 64 KiB structured / 80 KiB text"},
	"write": {name: "write", method: "POST", path: "/write", body: `{"note":"bench write"}`, tool: "write", args: `{"note":"bench write"}`, what: "a write with audit (audit.path file, flushed per call)"},
}

var targetNames = []string{"direct", "hop", "sdk", "gateway", "gateway-fresh"}

func (e *env) workloads(sc scenario) (map[string]workload, map[string]measured, error) {
	h := http.Header{
		"Authorization":  {"Bearer " + upstreamToken},
		"X-Workspace-Id": {workspaceID},
	}
	var body []byte
	if sc.body != "" {
		body = []byte(sc.body)
		h.Set("Content-Type", "application/json")
		h.Set("X-Actor", actorEmail)
	}
	du, err := url.Parse(e.upstream.url + sc.path)
	if err != nil {
		return nil, nil, err
	}
	hu, err := url.Parse(e.hop.url + sc.path)
	if err != nil {
		return nil, nil, err
	}
	gu, err := url.Parse(e.gw.url)
	if err != nil {
		return nil, nil, err
	}
	cb := callBody(sc.tool, sc.args)
	wls := map[string]workload{
		"direct":        &plain{method: sc.method, url: du, header: h, body: body},
		"hop":           &plain{method: sc.method, url: hu, header: h, body: body},
		"gateway":       &mcpCall{url: gu, body: cb, tokens: e.cached},
		"gateway-fresh": &mcpCall{url: gu, body: cb, tokens: e.fresh},
	}
	ms := map[string]measured{
		"direct":        {up: e.upstream},
		"hop":           {proxy: e.hop, up: e.upstream},
		"gateway":       {proxy: e.gw, up: e.upstream},
		"gateway-fresh": {proxy: e.gw, up: e.upstream},
	}
	if sdkScenarios[sc.name] {
		su, err := url.Parse(e.sdk.url)
		if err != nil {
			return nil, nil, err
		}
		wls["sdk"] = &mcpCall{url: su, body: cb, tokens: e.cached}
		ms["sdk"] = measured{proxy: e.sdk, up: e.upstream}
	}
	if e.hopFat != nil {
		fu, err := url.Parse(e.hopFat.url + sc.path)
		if err != nil {
			return nil, nil, err
		}
		wls["hop-fat"] = &plain{method: sc.method, url: fu, header: h, body: body}
		ms["hop-fat"] = measured{proxy: e.hopFat, up: e.upstream}
	}
	if e.base != nil {
		bu, err := url.Parse(e.base.url)
		if err != nil {
			return nil, nil, err
		}
		wls["gateway-base"] = &mcpCall{url: bu, body: cb, tokens: e.cached}
		ms["gateway-base"] = measured{proxy: e.base, up: e.upstream}
		wls["gateway-base-fresh"] = &mcpCall{url: bu, body: cb, tokens: e.fresh}
		ms["gateway-base-fresh"] = measured{proxy: e.base, up: e.upstream}
	}
	return wls, ms, nil
}

func (e *env) callScenario(ctx context.Context, name string) error {
	sc := scenarios[name]
	wls, ms, err := e.workloads(sc)
	if err != nil {
		return err
	}
	if err := e.checkScenario(ctx, sc); err != nil {
		e.checks = append(e.checks, err.Error())
		fmt.Fprintf(e.out, "## %s: check failed, not measured: %v\n\n", name, err)
		return nil
	}
	rows := map[string]*row{}
	for r := range e.cfg.rounds {
		for _, c := range e.cfg.conc {
			for _, t := range targetNames {
				if wls[t] == nil {
					continue // sdk: plain reads only
				}
				logf("%s: round %d/%d, c=%d, %s", name, r+1, e.cfg.rounds, c, t)
				s, err := measure(ctx, wls[t], c, e.cfg.warmup, e.cfg.duration, ms[t], 0)
				if err != nil {
					return fmt.Errorf("%s %s c=%d: %w", name, t, c, err)
				}
				key := t + "/" + strconv.Itoa(c)
				if rows[key] == nil {
					rows[key] = &row{target: t, conc: c}
				}
				rows[key].samples = append(rows[key].samples, s)
			}
		}
	}
	e.callTable(sc, rows)
	return nil
}
