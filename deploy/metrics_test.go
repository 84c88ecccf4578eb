package deploy_test

// The Grafana dashboard and the chart's alerts query the gateway's metrics
// by name. These tests build the gateway from this checkout, run it against
// a real upstream that also serves its JWKS, make it count a call of every
// kind (a success, a write, a rate-limited call, a forged token, a call
// held for approval, an answer that breaks its output schema, an upstream
// that refuses connections), read its /metrics, and check that every
// metric, label and label value the queries name is one the gateway
// exports. Vectors appear on /metrics only once they have a series, which
// is why every kind of call is made.

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

const dashboardFile = "grafana/mcp-gateway.json"

// targetLabels are attached by Prometheus when it scrapes (the target's
// namespace, pod and job), so /metrics does not show them.
var targetLabels = []string{"namespace", "pod", "job", "instance", "service", "container", "endpoint"}

// exported is what one /metrics page holds: metric name -> label name ->
// the values seen.
type exported map[string]map[string]map[string]bool

var (
	exportedOnce sync.Once
	exportedSet  exported
	exportedErr  error
)

// gatewayMetrics runs the gateway once per test binary and returns what
// its /metrics exports after a call of every kind.
func gatewayMetrics(t *testing.T) exported {
	t.Helper()
	exportedOnce.Do(func() { exportedSet, exportedErr = scrapeGateway() })
	if exportedErr != nil {
		t.Fatal(exportedErr)
	}
	return exportedSet
}

const metricsCatalog = `version: 1
server:
  name: metrics-check
auth:
  jwt:
    jwks_url: ${UPSTREAM_URL}/jwks.json
    algorithms: [ES256]
    issuer: https://login.example.com/
    audience: https://mcp.example.com/mcp
gates:
  write: { scopes: [jobs:write] }
upstreams:
  monitor:
    base_url: ${UPSTREAM_URL}
    timeout: 5s
    workspace: { header: X-Workspace-Id }
  gone:
    base_url: ${GONE_URL}
    timeout: 5s
limits:
  rate:
    per_tool:
      get_limited: { rps: 0.001, burst: 1 }
tools:
  - name: get_job
    description: One job.
    kind: read
    input:
      type: object
      properties: { job_id: { type: string, minLength: 1 } }
      required: [job_id]
      additionalProperties: false
    request: { upstream: monitor, method: GET, path: "/v1/jobs/{job_id}" }
  - name: get_limited
    description: One job, rarely.
    kind: read
    request: { upstream: monitor, method: GET, path: /v1/jobs/j1 }
  - name: get_broken
    description: An answer that breaks its schema.
    kind: read
    request: { upstream: monitor, method: GET, path: /v1/broken }
    output_schema:
      type: object
      properties: { id: { type: string } }
      required: [id]
  - name: get_gone
    description: An upstream that refuses connections.
    kind: read
    request: { upstream: gone, method: GET, path: /v1/jobs/j1 }
  - name: requeue_job
    description: Requeue a job.
    kind: write
    gate: write
    request: { upstream: monitor, method: POST, path: /v1/jobs/j1/requeue }
  - name: cancel_job
    description: Cancel a job, once another person approves.
    kind: write
    gate: write
    approval: { approvers: write }
    request: { upstream: monitor, method: POST, path: /v1/jobs/j1/cancel }
`

const (
	issuer   = "https://login.example.com/"
	audience = "https://mcp.example.com/mcp"
)

// signingKey signs the test's tokens; the upstream serves its public half
// as the JWKS, so the gateway fetches keys as it does from an identity
// provider (and counts the fetch).
var signingKey = func() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}()

func jwks() string {
	pub, err := signingKey.PublicKey.ECDH()
	if err != nil {
		panic(err)
	}
	b, enc := pub.Bytes(), base64.RawURLEncoding // 0x04 || X || Y
	return fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","alg":"ES256","use":"sig","x":%q,"y":%q}]}`,
		enc.EncodeToString(b[1:33]), enc.EncodeToString(b[33:]))
}

func scrapeGateway() (exported, error) {
	dir, err := os.MkdirTemp("", "gateway-metrics")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// Built from the gateway's own module (the repository root), as the
	// image builds it, not with this module's dependency versions.
	bin := filepath.Join(dir, "gateway")
	build := exec.Command("go", "build", "-o", bin, "./cmd/gateway")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the gateway: %v\n%s", err, out)
	}

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/jwks.json" {
			io.WriteString(w, jwks())
			return
		}
		if r.URL.Path == "/v1/broken" {
			io.WriteString(w, `{"id": 42}`)
			return
		}
		io.WriteString(w, `{"id": "j1", "state": "Running"}`)
	}))
	defer up.Close()
	// A port nothing listens on: connections are refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()

	cat := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(cat, []byte(metricsCatalog), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--catalog", cat, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "UPSTREAM_URL="+up.URL, "GONE_URL="+gone)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var logMu sync.Mutex
	var log strings.Builder
	serving, metricsURL := make(chan string, 1), make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			var rec struct{ Msg, URL string }
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				continue
			}
			switch rec.Msg {
			case "serving":
				serving <- rec.URL
			case "metrics":
				metricsURL <- rec.URL
			}
		}
		cmd.Wait()
	}()
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	logText := func() string { logMu.Lock(); defer logMu.Unlock(); return log.String() }
	var mcpURL, metrics string
	for mcpURL == "" || metrics == "" {
		select {
		case mcpURL = <-serving:
		case metrics = <-metricsURL:
		case <-exited:
			return nil, fmt.Errorf("the gateway exited before serving:\n%s", logText())
		case <-time.After(60 * time.Second):
			return nil, fmt.Errorf("the gateway did not start within 60 s:\n%s", logText())
		}
	}

	good := signJWT(map[string]any{"iss": issuer, "aud": audience, "sub": "ada", "ws": "acme", "scope": "jobs:write",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
	for _, c := range []struct {
		what, token, tool, args string
		want                    string // in the answer
	}{
		{"a read", good, "get_job", `{"job_id":"j1"}`, `"structuredContent":{"id":"j1"`},
		{"a write", good, "requeue_job", `{}`, `"structuredContent":{"id":"j1"`},
		{"a first call under a rate limit", good, "get_limited", `{}`, `"structuredContent":{"id":"j1"`},
		{"a second call over it", good, "get_limited", `{}`, `rate_limited`},
		{"an answer that breaks the output schema", good, "get_broken", `{}`, `"isError":true`},
		{"an upstream that refuses connections", good, "get_gone", `{}`, `"isError":true`},
		{"a write held for approval", good, "cancel_job", `{}`, `"isError":true`},
		{"a forged token", good[:len(good)-4] + "AAAA", "get_job", `{"job_id":"j1"}`, `invalid_token`},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":` + c.args + `}}`
		req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.what, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(answer)+resp.Header.Get("WWW-Authenticate"), c.want) {
			return nil, fmt.Errorf("%s (%s): status %d, answer %s; want %s in it\n%s", c.what, c.tool, resp.StatusCode, answer, c.want, logText())
		}
	}

	resp, err := http.Get(metrics)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseExposition(resp.Body)
}

// parseExposition reads the Prometheus text format: every sample's name,
// and the labels and values it carries.
func parseExposition(r io.Reader) (exported, error) {
	out := exported{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	labelRE := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		labels := ""
		if i := strings.IndexByte(line, '{'); i >= 0 && i < len(name) {
			name = line[:i]
			j := strings.LastIndexByte(line, '}')
			if j < i {
				return nil, fmt.Errorf("unbalanced braces in %q", line)
			}
			labels = line[i+1 : j]
		}
		_ = rest
		m := out[name]
		if m == nil {
			m = map[string]map[string]bool{}
			out[name] = m
		}
		for _, kv := range labelRE.FindAllStringSubmatch(labels, -1) {
			if m[kv[1]] == nil {
				m[kv[1]] = map[string]bool{}
			}
			m[kv[1]][kv[2]] = true
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/metrics holds no samples")
	}
	return out, sc.Err()
}

// signJWT signs claims with ES256 (RFC 7518 section 3.4: r || s, 32 bytes each).
func signJWT(claims map[string]any) string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT","kid":"k1"}`))
	body, _ := json.Marshal(claims)
	msg := head + "." + enc.EncodeToString(body)
	digest := sha256.Sum256([]byte(msg))
	r, s, err := ecdsa.Sign(rand.Reader, signingKey, digest[:])
	if err != nil {
		panic(err)
	}
	sig := append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	return msg + "." + enc.EncodeToString(sig)
}

// ---- PromQL, as far as the names go ----

// selector is one vector selector of a query: a metric and its matchers.
type selector struct {
	metric   string
	matchers []matcher
}

type matcher struct{ label, op, value string }

// queryNames is what a PromQL expression names: its selectors, and the
// labels its by/without/on/ignoring clauses group by.
type queryNames struct {
	selectors []selector
	grouping  []string
}

var promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "group_left": true, "group_right": true}

// aggregations may take their by/without clause before the parenthesis:
// sum by (le) (...).
var aggregations = map[string]bool{"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true}
var groupingKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// parsePromQL walks an expression: strings and range brackets are skipped,
// an identifier before "(" is a function or aggregation, one after a
// grouping keyword is a label list, any other is a metric name.
func parsePromQL(expr string) (queryNames, error) {
	var q queryNames
	i := 0
	skipSpace := func() {
		for i < len(expr) && strings.ContainsRune(" \t\r\n", rune(expr[i])) {
			i++
		}
	}
	ident := func() string {
		start := i
		for i < len(expr) && (isIdentByte(expr[i]) || (i > start && expr[i] >= '0' && expr[i] <= '9')) {
			i++
		}
		return expr[start:i]
	}
	str := func() (string, error) {
		quote := expr[i]
		i++
		var b strings.Builder
		for i < len(expr) && expr[i] != quote {
			if expr[i] == '\\' && i+1 < len(expr) {
				i++
			}
			b.WriteByte(expr[i])
			i++
		}
		if i >= len(expr) {
			return "", fmt.Errorf("unterminated string in %q", expr)
		}
		i++
		return b.String(), nil
	}
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if _, err := str(); err != nil {
				return q, err
			}
		case c == '[':
			j := strings.IndexByte(expr[i:], ']')
			if j < 0 {
				return q, fmt.Errorf("unterminated [ in %q", expr)
			}
			i += j + 1
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (expr[i] >= '0' && expr[i] <= '9' || expr[i] == '.' || expr[i] == 'e') {
				i++
			}
		case isIdentByte(c):
			name := ident()
			skipSpace()
			switch {
			case groupingKeywords[name]:
				if i < len(expr) && expr[i] == '(' {
					j := strings.IndexByte(expr[i:], ')')
					if j < 0 {
						return q, fmt.Errorf("unterminated %s ( in %q", name, expr)
					}
					for _, l := range strings.Split(expr[i+1:i+j], ",") {
						if l = strings.TrimSpace(l); l != "" {
							q.grouping = append(q.grouping, l)
						}
					}
					i += j + 1
				}
			case promKeywords[name], aggregations[name]:
			case i < len(expr) && expr[i] == '(':
				// A function or an aggregation.
			default:
				s := selector{metric: name}
				if i < len(expr) && expr[i] == '{' {
					i++
					for {
						skipSpace()
						if i < len(expr) && expr[i] == ',' {
							i++
							skipSpace()
						}
						if i >= len(expr) {
							return q, fmt.Errorf("unterminated { in %q", expr)
						}
						if expr[i] == '}' {
							i++
							break
						}
						label := ident()
						skipSpace()
						op := ""
						for _, o := range []string{"=~", "!~", "!=", "="} {
							if strings.HasPrefix(expr[i:], o) {
								op = o
								break
							}
						}
						if label == "" || op == "" {
							return q, fmt.Errorf("bad matcher at %q in %q", expr[i:], expr)
						}
						i += len(op)
						skipSpace()
						v, err := str()
						if err != nil {
							return q, err
						}
						s.matchers = append(s.matchers, matcher{label, op, v})
					}
				}
				q.selectors = append(q.selectors, s)
			}
		default:
			i++
		}
	}
	return q, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// checkQuery reports every name in expr the gateway does not export: a
// metric, a label on it, a value an equality matcher wants, a grouping label.
func checkQuery(where, expr string, ex exported) []string {
	q, err := parsePromQL(expr)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", where, err)}
	}
	var problems []string
	if len(q.selectors) == 0 {
		problems = append(problems, fmt.Sprintf("%s: %q names no metric", where, expr))
	}
	labels := map[string]bool{"le": true}
	for _, l := range targetLabels {
		labels[l] = true
	}
	for _, s := range q.selectors {
		m, ok := ex[s.metric]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: the gateway exports no metric %s", where, s.metric))
			continue
		}
		for l := range m {
			labels[l] = true
		}
		for _, mt := range s.matchers {
			if slices.Contains(targetLabels, mt.label) {
				continue
			}
			vals, ok := m[mt.label]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: %s has no label %s", where, s.metric, mt.label))
				continue
			}
			if mt.op == "=" && !vals[mt.value] {
				problems = append(problems, fmt.Sprintf("%s: %s{%s} never takes the value %q (seen: %q)", where, s.metric, mt.label, mt.value, sortedKeys(vals)))
			}
		}
	}
	for _, g := range q.grouping {
		if !labels[g] {
			problems = append(problems, fmt.Sprintf("%s: groups by %s, a label none of its metrics has", where, g))
		}
	}
	return problems
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ---- tests ----

func TestPromQLNames(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		want       queryNames
	}{
		{"rate-in-aggregation", `sum by (outcome) (rate(gateway_tool_calls_total{namespace=~"$namespace"}[$__rate_interval]))`,
			queryNames{selectors: []selector{{"gateway_tool_calls_total", []matcher{{"namespace", "=~", "$namespace"}}}}, grouping: []string{"outcome"}}},
		{"histogram-quantile", `histogram_quantile(0.95, sum by (le, upstream) (rate(x_bucket[5m])))`,
			queryNames{selectors: []selector{{"x_bucket", nil}}, grouping: []string{"le", "upstream"}}},
		{"binary-with-unless-on", "(sum by (a) (increase(m{class=\"error\"}[5m])) >= 10)\nunless on (a)\n(n > 0)",
			queryNames{selectors: []selector{{"m", []matcher{{"class", "=", "error"}}}, {"n", nil}}, grouping: []string{"a", "a"}}},
		{"matcher-with-comma-and-escape", `m{a!="x\"y",b!~"p|q"}`,
			queryNames{selectors: []selector{{"m", []matcher{{"a", "!=", `x"y`}, {"b", "!~", "p|q"}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePromQL(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("parsePromQL(%q) = %+v, want %+v", tc.expr, got, tc.want)
			}
		})
	}
}

// TestCheckQueryCatchesUnexportedNames keeps the check honest: a misspelt
// metric, label or value must be reported.
func TestCheckQueryCatchesUnexportedNames(t *testing.T) {
	ex := exported{"gateway_tool_calls_total": {"tool": {"get_job": true}, "outcome": {"ok": true}}}
	for _, tc := range []struct{ expr, want string }{
		{`rate(gateway_tool_call_total[5m])`, "no metric gateway_tool_call_total"},
		{`gateway_tool_calls_total{result="ok"}`, "has no label result"},
		{`gateway_tool_calls_total{outcome="okay"}`, `never takes the value "okay"`},
		{`sum by (upstream) (gateway_tool_calls_total)`, "groups by upstream"},
	} {
		if got := strings.Join(checkQuery("q", tc.expr, ex), "; "); !strings.Contains(got, tc.want) {
			t.Errorf("checkQuery(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
	if got := checkQuery("q", `sum by (namespace, tool) (rate(gateway_tool_calls_total{outcome="ok",job="g"}[5m]))`, ex); len(got) > 0 {
		t.Errorf("checkQuery of a good query = %q, want nothing", got)
	}
}

// dashboard is the part of Grafana's dashboard JSON that holds queries.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int     `json:"id"`
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a collapsed row's
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	GridPos struct{ H, W, X, Y int } `json:"gridPos"`
}

func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	var d dashboard
	if err := json.Unmarshal(readFile(t, dashboardFile), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard uid %q, title %q: want both", d.UID, d.Title)
	}
	ex := gatewayMetrics(t)
	var all []panel
	for _, p := range d.Panels {
		all = append(all, p)
		all = append(all, p.Panels...)
	}
	ids := map[int]bool{}
	queried := map[string]bool{}
	for _, p := range all {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, problem := range checkQuery(fmt.Sprintf("panel %q (%s)", p.Title, tg.RefID), tg.Expr, ex) {
				t.Error(problem)
			}
			q, _ := parsePromQL(tg.Expr)
			for _, s := range q.selectors {
				queried[strings.TrimSuffix(s.metric, "_bucket")] = true
			}
		}
	}
	labelValues := regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		text, _ := q["query"].(string)
		m := labelValues.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("variable %s: query %q, want label_values(metric, label)", v.Name, text)
			continue
		}
		if _, ok := ex[m[1]]; !ok {
			t.Errorf("variable %s: the gateway exports no metric %s", v.Name, m[1])
		}
	}
	// Every panel the dashboard promises.
	for _, want := range []string{"gateway_tool_calls_total", "gateway_tool_call_duration_seconds", "gateway_upstream_responses_total",
		"gateway_audit_failures_total", "gateway_audit_healthy", "gateway_rate_limited_total", "gateway_catalog_last_reload_success"} {
		if !queried[want] {
			t.Errorf("no panel queries %s", want)
		}
	}
}

// TestAlertsNameExportedMetrics checks the chart's PrometheusRule the same way.
func TestAlertsNameExportedMetrics(t *testing.T) {
	r := renderSet(t, "monitoring")
	pr := r.get(t, "PrometheusRule", "mcp-gateway").(*monitoringv1.PrometheusRule)
	ex := gatewayMetrics(t)
	n := 0
	for _, g := range pr.Spec.Groups {
		for _, rule := range g.Rules {
			n++
			for _, problem := range checkQuery("alert "+rule.Alert, rule.Expr.String(), ex) {
				t.Error(problem)
			}
		}
	}
	if n == 0 {
		t.Fatalf("the PrometheusRule has no rules")
	}
}
