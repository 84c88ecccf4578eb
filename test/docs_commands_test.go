package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDocsCommands runs the shell commands the README and the docs show, as
// a reader would type them, against the built gateway and servers this test
// starts: so a page cannot keep a command that no longer works. A command
// that cannot run here (a cluster, Docker, a real identity provider, the
// whole test suite) is listed in notRunnable with the reason; a command on a
// page that is neither run nor listed fails the test, and so does a listed
// command no page shows any more.
func TestDocsCommands(t *testing.T) {
	pages := docPages(t)
	var all []docCommand
	for _, p := range pages {
		all = append(all, pageCommands(t, p)...)
	}
	seen := map[string]bool{}
	for _, c := range all {
		seen[c.text] = true
	}
	run, skipped := 0, 0
	for _, page := range pages {
		var cmds []docCommand
		for _, c := range all {
			if c.page == page {
				cmds = append(cmds, c)
			}
		}
		if len(cmds) == 0 {
			continue
		}
		t.Run(page, func(t *testing.T) {
			s := newDocSession(t, page)
			for _, c := range cmds {
				if _, ok := notRunnable[c.text]; ok {
					skipped++
					continue
				}
				if strings.HasPrefix(c.text, "curl ") && docChecks[c.text] == nil {
					// curl -s exits 0 on a 401 or a tool error.
					t.Errorf("%s:%d: no check in docChecks holds this curl call's answer to what the page says", c.page, c.line)
				}
				if c.expect != "" && docChecks[c.text] == nil {
					t.Errorf("%s:%d: the page states an outcome (%q) that no check in docChecks verifies", c.page, c.line, c.expect)
				}
				run++
				s.run(c)
			}
		})
	}
	for cmd, reason := range notRunnable {
		if !seen[cmd] {
			t.Errorf("notRunnable lists a command no page shows any more (%s): %q", reason, cmd)
		}
	}
	for name, keys := range map[string][]string{"docChecks": mapKeys(docChecks), "docBefore": mapKeys(docBefore), "docExitCodes": mapKeys(docExitCodes)} {
		for _, cmd := range keys {
			if !seen[cmd] {
				t.Errorf("%s names a command no page shows any more: %q", name, cmd)
			}
		}
	}
	t.Logf("%d commands on %d pages: %d run, %d not runnable here", len(all), len(pages), run, skipped)
}

// notRunnable is every command a page shows that this test does not run,
// keyed by the command as the page writes it (continuations joined by a
// space), with the reason.
var notRunnable = map[string]string{
	// The whole suite, benchmarks and tools that change the checkout.
	"./scripts/test.sh": "runs every test, this one included",
	"./scripts/bench.sh -scenarios small,list -c 1,16,64 -duration 3s -rounds 6 > bench.md":                                                                                                         "the benchmark docs/performance.md reports: minutes of pinned CPU; scripts/test.sh runs its quick mode",
	"./scripts/bench.sh                          # every scenario, about 15 minutes":                                                                                                                "the whole benchmark, about 15 minutes",
	"./scripts/bench.sh catalog                  # catalog scale":                                                                                                                                   "catalog scale up to 10,000 tools: minutes; the proxy package's tests build the same catalogs",
	"go test ./proxy -run '^$' -bench 'BenchmarkWrite$' -benchtime 300x   # approval":                                                                                                               "a benchmark: it reports time, which a test cannot judge; the approval tests run the same writes",
	"git worktree add /tmp/gw-old main && (cd /tmp/gw-old && go build -o /tmp/gateway-old ./cmd/gateway)":                                                                                           "adds a worktree to the reader's checkout",
	"./scripts/bench.sh -scenarios small -baseline-bin /tmp/gateway-old":                                                                                                                            "the benchmark against a second build: minutes of pinned CPU",
	"helm install mcp-gateway deploy/helm/mcp-gateway -n mcp-gateway --set image.repository=registry.example.com/mcp-gateway --set image.digest=sha256:... --set-file catalog.content=catalog.yaml": "needs a Kubernetes cluster and a pushed image; the deploy module's tests render the chart with the Helm SDK for several value sets",
	"./scripts/bench.sh > bench.md     # or: go run ./test/bench -quick":                                                                                                                            "the benchmark: about 15 minutes of pinned CPU; scripts/test.sh runs its quick mode",
	"git stash && go build -o /tmp/gateway-old ./cmd/gateway && git stash pop":                                                                                                                      "stashes the reader's uncommitted changes",
	"./scripts/bench.sh -scenarios small -c 16,64 -baseline-bin /tmp/gateway-old":                                                                                                                   "the benchmark against a second build: minutes of pinned CPU",
	"./scripts/mutation.sh             # or: ./scripts/mutation.sh rendering":                                                                                                                       "mutation testing: reruns package tests once per mutant, far over a minute",
	"npm ci --prefix test/openapi-cache --ignore-scripts --no-audit --no-fund":                                                                                                                      "installs from the npm registry; scripts/test.sh has installed test/openapi-cache, which the next commands use",
	"claude mcp add --transport http jobs https://mcp.example.com/mcp":                                                                                                                              "Claude Code and a gateway deployed with a real OpenID provider; TestClaudeCodeSeesTheGatewayNeedsSignIn runs it against one",
	"claude mcp list        # jobs: https://mcp.example.com/mcp (HTTP) - ! Needs authentication":                                                                                                    "Claude Code and a deployed gateway; TestClaudeCodeSeesTheGatewayNeedsSignIn checks this output",

	// Synopses: capitals are placeholders, brackets options.
	"gateway import openapi SPEC --upstream NAME [--base-url URL] [--tags a,b] [--include-writes] [--reads 'POST /*/filter']... [--workspace-param P] [--actor-header H] [--standalone] [-o FILE]":                          "a synopsis",
	"gateway check --catalog FILE --openapi SPEC [--upstream NAME] [--format text|json] [--probe [--token T | --workspace W]]":                                                                                              "a synopsis",
	"gateway token --sub S --workspace W --scopes \"a b\" (--secret-env VAR | --key FILE) [flags]":                                                                                                                          "a synopsis",
	"gateway import openapi SPEC --upstream NAME [--base-url URL] [--tags a,b] [--include-writes] [--reads 'POST /*/filter']... [--workspace-param P[,P...]] [--allow-unbound] [--actor-header H] [--standalone] [-o FILE]": "a synopsis",
	"gateway tools search [--catalog FILE] [--limit N] --tasks FILE [--min-recall R]":                                                                                                                                       "a synopsis",
	"gateway tools search [--catalog FILE] [--limit N] [--kind read|write] [--tag T] QUERY...":                                                                                                                              "a synopsis",

	// A deployment: a cluster, a registry, an identity provider, a host name.
	"docker build -t ghcr.io/example/mcp-gateway:1.0.0 .":                                                  "needs a Docker daemon",
	"docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/example/mcp-gateway:1.0.0 --push .": "needs Docker with buildx and pushes to a registry",
	"kubectl create namespace mcp-gateway":                                                                 "needs a Kubernetes cluster",
	"kubectl -n mcp-gateway create secret generic mcp-gateway --from-literal=GATEWAY_JWT_SECRET=\"$(openssl rand -base64 48)\" --from-literal=MONITOR_TOKEN=... --from-literal=OPERATOR_TOKEN=...": "needs a Kubernetes cluster",
	"kubectl -n mcp-gateway apply -k deploy/kubernetes":                                                                        "needs a Kubernetes cluster",
	"kubectl -n mcp-gateway rollout status deployment/mcp-gateway":                                                             "needs a Kubernetes cluster",
	"curl -s -o /dev/null -w '%{http_code}\\n' https://mcp.example.com/admin/mcp/tools -H \"Authorization: Bearer $TOKEN\"":    "mcp.example.com stands for the reader's deployment behind their identity provider",
	"export OIDC_CLIENT_SECRET=…                              # from step 1":                                                   "the client secret of the reader's OpenID provider",
	"export GATEWAY_APPROVAL_KEYS=$(openssl rand -base64 32)  # signing keys are derived from it: same value on every replica": "part of the sign-in deployment, which needs a real OpenID provider; TestAnMCPClientWithoutATokenSignsInAtTheCompanysProvider runs one",
	"export GATEWAY_OAUTH_STORE=redis://redis:6379/0          # or file:/var/lib/gateway/oauth.json; shared by replicas":       "names the deployment's Redis host",
	"gateway serve --catalog catalog.yaml":                                                                                     "serves the sign-in catalog, which needs a real OpenID provider; TestAnMCPClientWithoutATokenSignsInAtTheCompanysProvider runs one",
	"grep '\"request_id\":\"bf0186fb53d165d4\"' /var/log/gateway/audit.jsonl":                                                  "reads the deployment's audit file at /var/log/gateway",

	// The Prometheus example's stack: the example's own test runs these
	// programs on free ports (examples/prometheus-alertmanager/stack_test.go).
	"sudo apt-get update": "installs system packages as root",
	"sudo apt-get install -y --no-install-recommends prometheus prometheus-alertmanager": "installs system packages as root",
	"sudo systemctl disable --now prometheus prometheus-alertmanager":                    "changes the machine's services as root",
	"prometheus-alertmanager --config.file=examples/prometheus-alertmanager/alertmanager.yml --storage.path=/tmp/example-alertmanager --web.listen-address=127.0.0.1:9093 --cluster.listen-address=": "runs until stopped on fixed port 9093; the example's stack_test.go runs it on a free port",
	"prometheus --config.file=examples/prometheus-alertmanager/prometheus.yml --storage.tsdb.path=/tmp/example-prometheus --web.listen-address=127.0.0.1:9090 --rules.alert.resend-delay=1s":         "runs until stopped on fixed port 9090; the example's stack_test.go runs it on a free port",
	"export GATEWAY_JWT_SECRET=…   # the value serve has": "a placeholder for the secret the reader exported in serve's shell, which this test's session already holds",
}

// docPages lists the pages a reader runs commands from: the README, every
// page under docs/, the deployment guide and each example's README.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md", "deploy/README.md"}
	for _, pattern := range []string{"docs/*.md", "docs/*/*.md", "examples/*/README.md"} {
		m, err := filepath.Glob(filepath.Join("..", pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			pages = append(pages, filepath.ToSlash(strings.TrimPrefix(p, ".."+string(filepath.Separator))))
		}
	}
	sort.Strings(pages)
	return pages
}

// docCommand is one command as a page shows it.
type docCommand struct {
	page   string
	line   int
	text   string // continuations joined by a space
	expect string // the outcome a "# → …" line after it states
}

// pageCommands extracts the commands of a page's sh, bash, console and
// shell blocks, joining backslash continuations, and the gateway
// invocations of its unlabelled blocks, where the CLI reference shows
// synopses (wrapped by indentation) and a command or two.
func pageCommands(t *testing.T, page string) []docCommand {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", page))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []docCommand
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		indent := lines[i][:strings.Index(lines[i], "```")]
		lang := strings.TrimSpace(strings.TrimPrefix(fence, "```"))
		shell := lang == "sh" || lang == "bash" || lang == "console" || lang == "shell"
		first := i + 1
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if !shell && lang != "" && lang != "text" {
			continue
		}
		last := -1 // the block's previous command, in cmds
		for j := 0; j < len(body); j++ {
			line := strings.TrimSpace(body[j])
			if lang == "console" {
				line = strings.TrimPrefix(line, "$ ")
			}
			if line == "" {
				continue
			}
			if strings.HasPrefix(line, "#") {
				if rest, ok := strings.CutPrefix(line, "# →"); ok && last >= 0 {
					cmds[last].expect = strings.TrimSpace(rest)
				}
				continue
			}
			if !shell && !strings.HasPrefix(body[j], "gateway ") {
				continue
			}
			start := first + j
			var parts []string
			for {
				if cont, ok := strings.CutSuffix(line, "\\"); ok && shell && j+1 < len(body) {
					parts = append(parts, strings.TrimSpace(cont))
				} else if !shell && j+1 < len(body) && strings.HasPrefix(body[j+1], " ") {
					parts = append(parts, line)
				} else {
					parts = append(parts, line)
					break
				}
				j++
				line = strings.TrimSpace(body[j])
			}
			cmds = append(cmds, docCommand{page: page, line: start + 1, text: strings.Join(parts, " ")})
			last = len(cmds) - 1
		}
	}
	return cmds
}

// docSession is a reader's shell for one page: a working directory that
// holds the repository's files at their relative paths (top-level files
// copied, since commands write beside them; directories linked), a PATH
// whose gateway is the binary built once, and variables kept from one
// command to the next as a shell would keep them.
type docSession struct {
	t        *testing.T
	page     string
	dir      string
	state    string   // the session's exported variables, as export -p prints them
	env      []string // the process environment of every command
	rewrites []string // old, new pairs applied to every command
	addr     string   // host:port of the server the session runs, for 127.0.0.1:8080
	server   *exec.Cmd
	exited   chan struct{}
	output   *lockedBuffer // the server's stdout and stderr
	claude   bool          // Claude Code is installed in test/ts
	onDemand string        // the server a page's calls to 127.0.0.1:8080 assume
	keyHash  string        // the API key hash the page printed
}

func newDocSession(t *testing.T, page string) *docSession {
	t.Helper()
	s := &docSession{t: t, page: page, dir: t.TempDir()}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		src, _ := filepath.Abs(filepath.Join("..", e.Name()))
		dst := filepath.Join(s.dir, e.Name())
		switch {
		case e.Name() == ".git":
		case e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".test") || isExecutable(e)):
			// Build outputs beside the sources (a gateway binary, test
			// binaries): not what a reader's clone holds.
		case e.IsDir():
			if err := os.Symlink(src, dst); err != nil {
				t.Fatal(err)
			}
		default:
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dst, string(data))
		}
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(gatewayBin, filepath.Join(bin, "gateway")); err != nil {
		t.Fatal(err)
	}
	s.state = filepath.Join(t.TempDir(), "state.sh")
	writeFile(t, s.state, "")
	// Claude Code as the TypeScript tests install it, with a home of its
	// own so its settings are the session's.
	if claude, err := filepath.Abs("ts/node_modules/.bin/claude"); err == nil {
		if _, err := os.Stat(claude); err == nil {
			if err := os.Symlink(claude, filepath.Join(bin, "claude")); err != nil {
				t.Fatal(err)
			}
			s.claude = true
		}
	}
	s.env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GATEWAY_BIN="+gatewayBin, "DOCS_SESSION_STATE="+s.state,
		"HOME="+t.TempDir(), "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	t.Cleanup(s.stop)
	if setup := docSetups[page]; setup != nil {
		setup(s)
	}
	return s
}

// setenv sets a variable in the session, as the reader's environment holds it.
func (s *docSession) setenv(name, value string) {
	f, err := os.OpenFile(s.state, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "export %s='%s'\n", name, strings.ReplaceAll(value, "'", `'\''`))
}

// rewrite returns the command as this machine runs it: the gateway built
// once for `go run ./cmd/gateway` and `go build`, the address of the server
// the session started for the default 127.0.0.1:8080, and the page's own
// substitutions.
func (s *docSession) rewrite(cmd string) string {
	pairs := []string{
		"go run ./cmd/gateway ", "gateway ",
		"go build -o gateway ./cmd/gateway", `cp "$GATEWAY_BIN" gateway`,
		"apr_…", "$APPROVAL_ID",
		"<operator token>", "$OPERATOR",
	}
	if s.addr != "" {
		pairs = append(pairs, "127.0.0.1:8080", s.addr, "localhost:8080", s.addr)
	}
	pairs = append(pairs, s.rewrites...)
	return strings.NewReplacer(pairs...).Replace(cmd)
}

var (
	longRunning = regexp.MustCompile(`(?:^|[;&|]\s*|\./)gateway (serve|demo)\b`)
	listenFlag  = regexp.MustCompile(`--(metrics-)?listen[ =]\S+`)
)

// run runs one command of the page and checks it as the page describes.
func (s *docSession) run(c docCommand) {
	t := s.t
	t.Helper()
	if strings.HasPrefix(c.text, "claude ") && !s.claude {
		if os.Getenv("CI") != "" {
			t.Fatalf("Claude Code is not installed in test/ts (run npm ci there)")
		}
		t.Logf("%s:%d: not run: test/ts/node_modules missing; run `npm ci --prefix test/ts`", c.page, c.line)
		return
	}
	if s.server == nil && s.onDemand != "" && strings.Contains(c.text, "127.0.0.1:8080") {
		s.start(docCommand{page: s.page, text: s.onDemand}, s.onDemand)
	}
	if before := docBefore[c.text]; before != nil {
		before(s)
	}
	cmd := s.rewrite(c.text)
	if m := longRunning.FindStringIndex(cmd); m != nil {
		// A server runs until Ctrl-C: start it on a free port and keep
		// it for the page's next commands.
		cmd = listenFlag.ReplaceAllString(cmd, "--${1}listen 127.0.0.1:0")
		if !strings.Contains(cmd, "--listen") {
			end := strings.Index(cmd[m[0]:], "gateway ") + m[0]
			end += len("gateway ") + len(longRunning.FindStringSubmatch(cmd[m[0]:])[1])
			cmd = cmd[:end] + " --listen 127.0.0.1:0" + cmd[end:]
		}
		s.start(c, cmd)
		return
	}
	out, errOut, code := s.sh(c, cmd)
	if want := docExitCodes[c.text]; code != want {
		t.Fatalf("%s:%d: %s\nran as: %s\nexit %d, want %d\nstdout:\n%.2000s\nstderr:\n%.2000s", c.page, c.line, c.text, cmd, code, want, out, errOut)
	}
	if check := docChecks[c.text]; check != nil {
		if msg := check(s, out); msg != "" {
			t.Errorf("%s:%d: %s\n%s\nstdout:\n%.2000s\nstderr:\n%.1000s", c.page, c.line, c.text, msg, out, errOut)
		}
	}
}

// sh runs a command in the session's shell and keeps its variables.
func (s *docSession) sh(c docCommand, cmd string) (stdout, stderr string, code int) {
	s.t.Helper()
	p := exec.Command("bash", "-c", "set -a\n. \"$DOCS_SESSION_STATE\"\n"+cmd+"\n__rc=$?\nexport -p > \"$DOCS_SESSION_STATE\"\nexit $__rc\n")
	p.Dir, p.Env = s.dir, s.env
	var out, errOut bytes.Buffer
	p.Stdout, p.Stderr = &out, &errOut
	if err := p.Start(); err != nil {
		s.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		p.Process.Kill()
		<-done
		s.t.Fatalf("%s:%d: %s did not finish within 5 minutes", c.page, c.line, c.text)
	}
	return out.String(), errOut.String(), p.ProcessState.ExitCode()
}

// start runs a server command in the background, waits until it serves,
// and takes the address and, from the demo, the tokens it prints.
func (s *docSession) start(c docCommand, cmd string) {
	t := s.t
	t.Helper()
	s.stop()
	srv := exec.Command("bash", "-c", "set -a\n. \"$DOCS_SESSION_STATE\"\n"+cmd)
	srv.Dir, srv.Env = s.dir, s.env
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w := io.Pipe()
	srv.Stdout, srv.Stderr = w, w
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited, output := make(chan struct{}), &lockedBuffer{}
	s.server, s.exited, s.output = srv, exited, output
	go func() {
		srv.Wait()
		w.Close()
		close(exited)
	}()
	// The server is ready when it logs "serving"; the demo also when it
	// has printed its tokens, which end with the Ctrl-C line.
	type ready struct {
		url    string
		tokens map[string]string
	}
	readyc := make(chan ready, 1)
	isDemo := longRunning.FindStringSubmatch(cmd)[1] == "demo"
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		tokens := map[string]string{}
		next, url, printed, sent := "", "", !isDemo, false
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			output.Write([]byte(line + "\n"))
			var rec struct{ Msg, URL string }
			switch {
			case json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" && url == "":
				url = rec.URL
			case strings.HasPrefix(line, "Ctrl-C"):
				printed = true
			case strings.HasPrefix(line, "viewer token of the other workspace"):
				next = "GLOBEX"
			case strings.HasPrefix(line, "viewer token"):
				next = "VIEWER"
			case strings.HasPrefix(line, "operator token"):
				next = "OPERATOR"
			case strings.HasPrefix(line, "approver token"):
				next = "APPROVER"
			case next != "" && line != "":
				tokens[next], next = line, ""
			}
			if url != "" && printed && !sent {
				readyc <- ready{url, tokens}
				sent = true
			}
		}
		if !sent {
			close(readyc)
		}
	}()
	var demo map[string]string
	select {
	case rd, ok := <-readyc:
		if !ok {
			t.Fatalf("%s:%d: %s\nran as: %s\nexited before serving:\n%s", c.page, c.line, c.text, cmd, s.output.String())
		}
		s.addr = strings.TrimSuffix(strings.TrimPrefix(rd.url, "http://"), "/mcp")
		demo = rd.tokens
	case <-time.After(time.Minute):
		t.Fatalf("%s:%d: %s did not serve within a minute:\n%s", c.page, c.line, c.text, s.output.String())
	}
	// The README's TOKEN is "a token the demo printed": the viewer's.
	for name, tok := range demo {
		s.setenv(name, tok)
	}
	if tok := demo["VIEWER"]; tok != "" {
		s.setenv("TOKEN", tok)
	}
}

// stop sends the session's server Ctrl-C, as the reader would.
func (s *docSession) stop() {
	if s.server == nil {
		return
	}
	syscall.Kill(-s.server.Process.Pid, syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		syscall.Kill(-s.server.Process.Pid, syscall.SIGKILL)
		<-s.exited
		s.t.Errorf("the server did not stop on Ctrl-C:\n%s", s.output.String())
	}
	s.server, s.addr = nil, ""
}

// docSetups prepares what a page assumes the reader already has, before
// its first command.
var docSetups = map[string]func(s *docSession){
	// "Your first service" serves the repository's catalog.yaml: its
	// environment names the services (here the sample upstream) and the
	// secret.
	"docs/getting-started.md": func(s *docSession) {
		up := startUpstream(s.t)
		for k, v := range map[string]string{"GATEWAY_JWT_SECRET": testSecret, "DEMO_SERVICE_TOKEN": serviceToken, "MONITOR_URL": up.URL} {
			s.setenv(k, v)
		}
	},
	// The page's steps run against the demo the reader started.
	"docs/howto/approval.md": func(s *docSession) {
		s.start(docCommand{page: s.page, text: "gateway demo"}, "gateway demo --listen 127.0.0.1:0")
	},
	// The reader saved the page's catalog as jobs.yaml and runs the jobs
	// service at JOBS_URL: here a small service that answers get_job and
	// says what it received.
	"docs/howto/front-a-service.md": func(s *docSession) {
		writeFile(s.t, filepath.Join(s.dir, "jobs.yaml"), firstBlock(s.t, s.page, "yaml"))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, ok := strings.CutPrefix(r.URL.Path, "/v1/jobs/")
			if r.Method != http.MethodGet || !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"id": id, "state": "Failed", "tenant": r.Header.Get("X-Tenant"), "authorization": r.Header.Get("Authorization")})
		}))
		s.t.Cleanup(srv.Close)
		s.rewrites = append(s.rewrites, "http://127.0.0.1:9090", srv.URL)
	},
	// The queries read a trail with a write by alice in it: the bundled
	// catalog with audit.path set, and one cancel_job call.
	"docs/howto/audit.md": func(s *docSession) {
		catalog := filepath.Join(s.dir, "catalog.yaml")
		data, err := os.ReadFile(catalog)
		if err != nil {
			s.t.Fatal(err)
		}
		// audit.path is relative to the gateway's working directory; the
		// page's commands run in the session's.
		writeFile(s.t, catalog, string(data)+"\naudit:\n  path: "+filepath.Join(s.dir, "audit.jsonl")+"\n")
		g := launch(s.t, launchConfig{upstreamURL: startUpstream(s.t).URL, catalog: catalog})
		resp, body := post(s.t, g.URL+"/admin/mcp/call", token(s.t, "alice", "acme", operatorScopes...),
			`{"name":"cancel_job","arguments":{"job_id":"job-acme-0001"}}`, nil)
		// A write is recorded whatever its outcome; this one is refused
		// upstream (the job has finished), which is recorded too.
		if resp.StatusCode != 200 || !strings.Contains(body, `"content"`) {
			s.t.Fatalf("alice's cancel_job = %d %s", resp.StatusCode, body)
		}
	},
	// The page's calls go to the gateway serving the catalog its token is
	// signed for, started with the secret the page exports. That gateway
	// calls Prometheus and Alertmanager; the page's call runs without them,
	// so they refuse connections.
	"docs/clients.md": func(s *docSession) {
		refused := closedAddr(s.t)
		s.setenv("PROMETHEUS_URL", "http://"+refused)
		s.setenv("ALERTMANAGER_URL", "http://"+refused)
		s.onDemand = "gateway serve --catalog examples/prometheus-alertmanager/catalog.yaml --listen 127.0.0.1:0"
	},
}

// docBefore runs before the command it is keyed by.
var docBefore = map[string]func(s *docSession){
	// Okta's description comes from the npm packages scripts/test.sh
	// installs (the page's npm ci, not run here).
	"go run ./cmd/gateway import openapi test/openapi-cache/node_modules/@okta/openapi/dist/spec.yaml --upstream okta --include-writes -o okta.yaml": func(s *docSession) {
		if _, err := os.Stat("openapi-cache/node_modules/@okta/openapi/dist/spec.yaml"); err != nil {
			if os.Getenv("CI") != "" {
				s.t.Fatalf("test/openapi-cache is not installed (run npm ci there): %v", err)
			}
			s.t.Skip("test/openapi-cache/node_modules missing; run `npm ci --prefix test/openapi-cache`: the page's remaining commands need it")
		}
	},
	// The comment names the catalog this command is for: RS256 with the
	// public key the two openssl commands wrote.
	`gateway token --catalog catalog.yaml --key dev.pem --sub dana --workspace acme --scopes "jobs:read" --ttl 15m`: func(s *docSession) {
		catalog := filepath.Join(s.dir, "catalog.yaml")
		data, err := os.ReadFile(catalog)
		if err != nil {
			s.t.Fatal(err)
		}
		rs := strings.Replace(string(data), "hmac_secret_env: GATEWAY_JWT_SECRET", "public_key_file: dev.pub.pem", 1)
		rs = strings.Replace(rs, "HS256", "RS256", 1)
		if rs == string(data) {
			s.t.Fatal("catalog.yaml no longer names hmac_secret_env: GATEWAY_JWT_SECRET and HS256")
		}
		writeFile(s.t, catalog, rs)
	},
	// "Check it": the gateway the page's mcp.example.com stands for,
	// serving the repository's catalog with auth.api_keys_file instead of
	// auth.jwt, and the page's keys.yaml holding the hash it printed.
	`curl -s https://mcp.example.com/admin/mcp/tools -H "Authorization: Bearer $KEY"`: func(s *docSession) {
		t := s.t
		if s.keyHash == "" {
			t.Fatal("the page printed no key hash before checking the key")
		}
		keys := blockWith(t, s.page, "yaml", "keys:")
		sha := regexp.MustCompile(`sha256: [0-9a-f]{64}`)
		if !sha.MatchString(keys) {
			t.Fatalf("%s: the keys.yaml block has no sha256 line", s.page)
		}
		keys = sha.ReplaceAllString(keys, "sha256: "+s.keyHash)
		// The page's example expiry is a date; the key the reader issues
		// today must not expire under the test.
		keys = regexp.MustCompile(`(?m)^\s*expires:.*\n`).ReplaceAllString(keys, "")
		writeFile(t, filepath.Join(s.dir, "keys.yaml"), keys)
		data, err := os.ReadFile(filepath.Join(s.dir, "catalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		jwtAuth := regexp.MustCompile(`(?s)\nauth:\n  jwt:.*?\n\n`)
		if !jwtAuth.Match(data) {
			t.Fatal("catalog.yaml no longer has an auth.jwt section to swap for api_keys_file")
		}
		writeFile(t, filepath.Join(s.dir, "keys.catalog.yaml"), string(jwtAuth.ReplaceAll(data, []byte("\nauth:\n  api_keys_file: keys.yaml\n\n"))))
		s.setenv("DEMO_SERVICE_TOKEN", serviceToken)
		s.start(docCommand{page: s.page, text: "gateway serve"}, "gateway serve --catalog keys.catalog.yaml --listen 127.0.0.1:0")
		s.rewrites = append(s.rewrites, "https://mcp.example.com", "http://"+s.addr)
	},
}

// docExitCodes holds the non-zero exits a page documents (a
// `gateway check` shown reporting drift exits 1); no page shows one today.
var docExitCodes = map[string]int{}

// docChecks hold commands to the outcome their page states; each returns
// what is wrong, or "".
var docChecks = map[string]func(s *docSession, out string) string{
	`claude mcp add --transport http backwave http://127.0.0.1:8080/mcp --header "Authorization: Bearer <operator token>"`: claudeConnects("backwave"),
	`claude mcp add --transport http monitoring http://127.0.0.1:8080/mcp --header "Authorization: Bearer $TOKEN"`:         claudeConnects("monitoring"),
	`curl -s http://127.0.0.1:8080/mcp -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2025-11-25' -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_jobs","arguments":{"state":"Failed","page_size":5}}}'`: func(s *docSession, out string) string {
		return wants(out, `"result"`, `"jobId":"job-acme-`, `"state":"Failed"`)
	},
	`curl -s http://127.0.0.1:8080/admin/mcp/tools -H "Authorization: Bearer $TOKEN"`: func(s *docSession, out string) string {
		return wants(out, `"search_jobs"`, `"knowledge_search"`)
	},
	`curl -s http://127.0.0.1:8080/admin/mcp/call -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"name":"get_job","arguments":{"job_id":"job-acme-0007"}}'`: func(s *docSession, out string) string {
		return wants(out, `job-acme-0007`, `"is_error":false`)
	},
	// The page's example of a miss, and of the override that fixes it.
	`go run ./cmd/gateway tools search --catalog estate.yaml make someone a super admin`: func(s *docSession, out string) string {
		if strings.Contains(out, "assign_role_to_user ") {
			return "assign_role_to_user is among the first five: the page's example of a miss no longer misses; pick another"
		}
		return wants(out, " 1. ")
	},
	`go run ./cmd/gateway tools search --catalog estate.yaml --limit 1 make someone a super admin`: func(s *docSession, out string) string {
		return wants(out, " 1. assign_role_to_user ")
	},
	`go run ./cmd/gateway tools search --catalog estate.yaml --tasks agents.tasks --min-recall 0.9`: func(s *docSession, out string) string {
		return wants(out, "2 tasks: recall@5 1.000 (2 of 2)")
	},
	`go run ./cmd/gateway tools search --catalog estate.yaml revoke all sessions of a user`: func(s *docSession, out string) string {
		first, _, _ := strings.Cut(out, "\n")
		return wants(strings.ToLower(first), "session")
	},
	"gateway schema > catalog.schema.json": func(s *docSession, out string) string {
		got, _ := os.ReadFile(filepath.Join(s.dir, "catalog.schema.json"))
		want, _ := os.ReadFile("../catalog.schema.json")
		if len(got) == 0 || !bytes.Equal(got, want) {
			return "the schema written differs from the repository's catalog.schema.json"
		}
		return ""
	},
	`curl -s http://127.0.0.1:8080/mcp -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2025-11-25' -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_firing_alerts","arguments":{}}}'`: func(s *docSession, out string) string {
		// Prometheus is not running: the token, the era and the tool
		// are accepted, and the call is a tool error, not a refusal.
		return wants(out, `"result"`, `"isError":true`)
	},
	`curl -s localhost:8080/admin/mcp/call -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"name":"get_job","arguments":{"job_id":"j-1"}}'`: func(s *docSession, out string) string {
		// The service answered, and received the workspace from the
		// token and its own credential, never the caller's.
		return wants(out, `"is_error":false`, `\"id\":\"j-1\"`, `\"tenant\":\"acme\"`, `\"authorization\":\"Bearer …\"`)
	},
	`curl -s localhost:8080/mcp -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'`: func(s *docSession, out string) string {
		return wants(out, `"tools":[`, `"name":"list_pets"`)
	},
	`printf %s "$KEY" | sha256sum | cut -d' ' -f1             # the hash: put this in keys.yaml`: func(s *docSession, out string) string {
		if !regexp.MustCompile(`^[0-9a-f]{64}\n$`).MatchString(out) {
			return "want 64 lowercase hex digits"
		}
		s.keyHash = strings.TrimSpace(out)
		return ""
	},
	`curl -s https://mcp.example.com/admin/mcp/tools -H "Authorization: Bearer $KEY"`: func(s *docSession, out string) string {
		// ci-bot holds jobs:read: the read tools, no write.
		if msg := wants(out, `"search_jobs"`); msg != "" {
			return msg
		}
		if strings.Contains(out, `"cancel_job"`) {
			return "the key's caller sees cancel_job without jobs:cancel"
		}
		return ""
	},
	`gateway token --catalog catalog.yaml --secret-env GATEWAY_JWT_SECRET --sub dana --workspace acme --scopes "jobs:read jobs:operate" --actor dana@example.com`: func(s *docSession, out string) string {
		return isJWT(out)
	},
	`gateway token --catalog catalog.yaml --key dev.pem --sub dana --workspace acme --scopes "jobs:read" --ttl 15m`: func(s *docSession, out string) string {
		return isJWT(out)
	},
	`curl -s http://127.0.0.1:8080/admin/mcp/call -H "Authorization: Bearer $OPERATOR" -H 'Content-Type: application/json' -d '{"name":"pause_queue","arguments":{"queue":"billing"}}'`: func(s *docSession, out string) string {
		return wants(out, `"is_error":true`, "cannot ask")
	},
	`curl -s http://127.0.0.1:8080/admin/mcp/call -H "Authorization: Bearer $OPERATOR" -H 'Content-Type: application/json' -d '{"name":"cancel_workflow","arguments":{"workflow_id":"wf-acme-0011"}}'`: func(s *docSession, out string) string {
		if msg := wants(out, `"is_error":true`, "cancel_workflow awaits approval: approval apr_", " must be approved by "); msg != "" {
			return msg
		}
		s.setenv("APPROVAL_ID", regexp.MustCompile(`apr_[A-Za-z0-9_-]+`).FindString(out))
		return ""
	},
	`curl -s http://127.0.0.1:8080/admin/mcp/approvals -H "Authorization: Bearer $APPROVER"`: func(s *docSession, out string) string {
		return wants(out, `"cancel_workflow"`, `wf-acme-0011`)
	},
	`curl -s -X POST http://127.0.0.1:8080/admin/mcp/approvals/apr_…/approve -H "Authorization: Bearer $APPROVER"`: func(s *docSession, out string) string {
		if msg := wants(out, `approved`); msg != "" {
			return msg
		}
		// "the operator repeats the call: it runs once"
		repeat := `curl -s http://127.0.0.1:8080/admin/mcp/call -H "Authorization: Bearer $OPERATOR" -H 'Content-Type: application/json' -d '{"name":"cancel_workflow","arguments":{"workflow_id":"wf-acme-0011"}}'`
		again, _, _ := s.sh(docCommand{page: s.page, text: repeat}, s.rewrite(repeat))
		return wants(again, `"is_error":false`)
	},
	`jq -c 'select(.actor=="alice@example.com" and .stage=="completed")' audit.jsonl`: func(s *docSession, out string) string {
		return wants(out, `"tool":"cancel_job"`, `"actor":"alice@example.com"`, `"stage":"completed"`)
	},
}

// claudeConnects checks that Claude Code, given a server by the page's
// line, connects to it.
func claudeConnects(name string) func(s *docSession, out string) string {
	return func(s *docSession, out string) string {
		list, errOut, code := s.sh(docCommand{page: s.page, text: "claude mcp list"}, "claude mcp list")
		if code != 0 {
			return fmt.Sprintf("claude mcp list: exit %d\n%s%s", code, list, errOut)
		}
		return wants(list, name+": http://"+s.addr+"/mcp", "Connected")
	}
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// wants returns what out lacks of the strings, or "".
func wants(out string, subs ...string) string {
	var missing []string
	for _, sub := range subs {
		if !strings.Contains(out, sub) {
			missing = append(missing, sub)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("output lacks %q", missing)
	}
	return ""
}

func isJWT(out string) string {
	if !regexp.MustCompile(`^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$`).MatchString(out) {
		return "want one signed JWT on a line"
	}
	return ""
}

// blockWith returns the first fenced block of the language on a page that
// starts with prefix.
func blockWith(t *testing.T, page, lang, prefix string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", page))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(data), "```"+lang+"\n")[1:] {
		if block, _, ok := strings.Cut(part, "```"); ok && strings.HasPrefix(block, prefix) {
			return block
		}
	}
	t.Fatalf("%s has no %s block starting %q", page, lang, prefix)
	return ""
}

// firstBlock returns the first fenced block of the language on a page.
func firstBlock(t *testing.T, page, lang string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", page))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```"+lang+"\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("%s has no %s block", page, lang)
	}
	return block
}

// closedAddr returns a loopback address that refuses connections.
func closedAddr(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	return addr
}

// isExecutable reports whether a directory entry is a file with an
// execute bit.
func isExecutable(e os.DirEntry) bool {
	info, err := e.Info()
	return err == nil && info.Mode()&0o111 != 0
}
