// Package example_test drives every tool of the Prometheus and Alertmanager
// example through the official Go MCP SDK, against the gateway built from
// this repository in front of the real services (see stack_test.go).
package example_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const catalogFile = "catalog.yaml"

var (
	readTools  = []string{"label_values", "list_firing_alerts", "list_rules", "list_silences", "list_targets", "list_unhealthy_targets", "get_silence", "query", "query_range"}
	writeTools = []string{"create_silence", "expire_silence", "schedule_silence"}
)

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func connect(t *testing.T, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "example-e2e", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}, Timeout: 30 * time.Second},
		MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its result, its text and its
// structuredContent decoded into a generic map.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (res *mcp.CallToolResult, text string, structured map[string]any) {
	t.Helper()
	if args == nil {
		args = map[string]any{} // a nil map would be sent as null, which MCP refuses
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s, %v): %v", name, args, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(raw, &structured)
	}
	return res, text, structured
}

// ok calls a tool that must succeed.
func ok(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, text, structured := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) is a tool error: %s", name, args, text)
	}
	if structured == nil {
		t.Fatalf("%s(%v): no structuredContent; text %s", name, args, text)
	}
	return structured
}

// toolError calls a tool that must fail and returns its reason.
func toolError(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, text, _ := call(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v) = %s, want a tool error", name, args, text)
	}
	return text
}

// items returns m[key] as a list of objects.
func items(t *testing.T, m map[string]any, key string) []map[string]any {
	t.Helper()
	raw, isList := m[key].([]any)
	if !isList {
		t.Fatalf("%q is %T in %v, want a list", key, m[key], m)
	}
	var out []map[string]any
	for _, v := range raw {
		o, _ := v.(map[string]any)
		out = append(out, o)
	}
	return out
}

func labelsOf(o map[string]any, key string) map[string]any {
	m, _ := o[key].(map[string]any)
	return m
}

// sentNothing fails when a service received any request after before.
func sentNothing(t *testing.T, r *recorder, before int, what string) {
	t.Helper()
	if got := r.requests(); len(got) != before {
		t.Errorf("%s: the service received %v, want nothing", what, got[before:])
	}
}

func TestExampleDrivesEveryTool(t *testing.T) {
	st := startStack(t)
	g := startGateway(t, st, catalogFile)
	operator := connect(t, g.MCP, mintToken(t, catalogFile, "alice", "alice@example.com", "monitoring:read monitoring:silence"))
	viewer := connect(t, g.MCP, mintToken(t, catalogFile, "bob", "bob@example.com", "monitoring:read"))

	t.Run("tools-each-caller-sees", func(t *testing.T) {
		for _, c := range []struct {
			cs   *mcp.ClientSession
			want []string
		}{{viewer, readTools}, {operator, append(slices.Clone(readTools), writeTools...)}} {
			var names []string
			for tool, err := range c.cs.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(names, want) {
				t.Errorf("tools = %v, want %v", names, want)
			}
		}
	})

	t.Run("query-up-returns-both-series", func(t *testing.T) {
		m := ok(t, viewer, "query", map[string]any{"query": "up"})
		if m["resultType"] != "vector" {
			t.Errorf("resultType = %v", m["resultType"])
		}
		jobs := map[any]any{}
		for _, s := range items(t, m, "series") {
			jobs[labelsOf(s, "metric")["job"]] = s["value"]
		}
		if jobs["prometheus"] != "1" || jobs["alertmanager"] != "1" {
			t.Errorf("up by job = %v, want 1 for prometheus and alertmanager", jobs)
		}
	})

	t.Run("query-is-sent-as-a-form", func(t *testing.T) {
		before := len(st.Prometheus.requests())
		ok(t, viewer, "query", map[string]any{"query": `count(up{job=~"prom.*|alert.*"})`})
		got := st.Prometheus.requests()[before:]
		if !slices.Contains(got, "POST /api/v1/query application/x-www-form-urlencoded") {
			t.Errorf("Prometheus received %v, want a form POST to /api/v1/query", got)
		}
	})

	t.Run("query-error-shows-prometheus-reason", func(t *testing.T) {
		reason := toolError(t, viewer, "query", map[string]any{"query": "up("})
		t.Logf("query up(: %s", reason)
		if !strings.Contains(reason, "parse error") {
			t.Errorf("query up( = %q, want Prometheus's parse error", reason)
		}
	})

	t.Run("query-range-last-5m", func(t *testing.T) {
		m := ok(t, viewer, "query_range", map[string]any{"query": "up", "since": "5m", "step": "15s"})
		if m["resultType"] != "matrix" {
			t.Errorf("resultType = %v", m["resultType"])
		}
		series := items(t, m, "series")
		if len(series) != 2 {
			t.Fatalf("series = %v, want 2", series)
		}
		for _, s := range series {
			if vs, _ := s["values"].([]any); len(vs) == 0 {
				t.Errorf("series %v has no values", s)
			}
		}
	})

	t.Run("query-range-defaults-apply", func(t *testing.T) {
		m := ok(t, viewer, "query_range", map[string]any{"query": "up"})
		if len(items(t, m, "series")) != 2 {
			t.Errorf("query_range with since and step defaulted = %v", m)
		}
	})

	t.Run("targets-compact", func(t *testing.T) {
		m := ok(t, viewer, "list_targets", nil)
		targets := items(t, m, "targets")
		if len(targets) != 2 {
			t.Fatalf("targets = %v", targets)
		}
		for _, tg := range targets {
			if tg["health"] != "up" || tg["job"] == nil || tg["instance"] == nil {
				t.Errorf("target %v, want job, instance and health up", tg)
			}
			if _, leaked := tg["discoveredLabels"]; leaked {
				t.Errorf("target %v carries fields the projection drops", tg)
			}
		}
		m = ok(t, viewer, "list_unhealthy_targets", nil)
		if got := items(t, m, "targets"); len(got) != 0 {
			t.Errorf("unhealthy targets = %v, want none", got)
		}
	})

	t.Run("rules", func(t *testing.T) {
		m := ok(t, viewer, "list_rules", map[string]any{"type": "alert"})
		groups := items(t, m, "groups")
		if len(groups) != 1 || groups[0]["name"] != "example" {
			t.Fatalf("groups = %v", groups)
		}
		rules := items(t, groups[0], "rules")
		if len(rules) != 1 || rules[0]["name"] != "AlwaysFiring" || rules[0]["state"] != "firing" {
			t.Errorf("rules = %v, want AlwaysFiring firing", rules)
		}
	})

	t.Run("label-values", func(t *testing.T) {
		m := ok(t, viewer, "label_values", map[string]any{"label": "job"})
		if got := m["values"]; !jsonEqual(got, []any{"alertmanager", "prometheus"}) {
			t.Errorf("job values = %v", got)
		}
		m = ok(t, viewer, "label_values", map[string]any{"label": "job", "match": []any{`up{job="prometheus"}`}})
		if got := m["values"]; !jsonEqual(got, []any{"prometheus"}) {
			t.Errorf("job values matching up{job=\"prometheus\"} = %v", got)
		}
	})

	t.Run("firing-alert-listed", func(t *testing.T) {
		if firing(t, viewer, nil) == nil {
			t.Error("AlwaysFiring is not among the firing alerts")
		}
	})

	var silenceID string
	t.Run("create-silence", func(t *testing.T) {
		start := time.Now()
		m := ok(t, operator, "create_silence", map[string]any{
			"matchers": []any{map[string]any{"name": "alertname", "value": "AlwaysFiring", "isRegex": false}},
			"comment":  "example test",
		})
		silenceID, _ = m["silenceID"].(string)
		if silenceID == "" {
			t.Fatalf("create_silence = %v, want a silenceID", m)
		}
		s := ok(t, viewer, "get_silence", map[string]any{"silence_id": silenceID})
		if s["id"] != silenceID || s["state"] != "active" || s["createdBy"] != "alice@example.com" || s["comment"] != "example test" {
			t.Errorf("get_silence = %v, want it active, created by alice@example.com", s)
		}
		// startsAt is {now}, endsAt {now+duration} with duration defaulted to 2h.
		ends, err := time.Parse(time.RFC3339, s["endsAt"].(string))
		if err != nil || ends.Sub(start) < 2*time.Hour-time.Minute || ends.Sub(start) > 2*time.Hour+time.Minute {
			t.Errorf("endsAt = %v (%v), want about 2h after %v", s["endsAt"], err, start)
		}
		if !hasAudit(g, "create_silence", "ok", 200) {
			t.Errorf("no audit record for create_silence with outcome ok: %+v", g.audits())
		}
	})
	if silenceID == "" {
		t.Fatal("no silence to go on with")
	}

	t.Run("silence-listed-and-mutes-the-alert", func(t *testing.T) {
		m := ok(t, viewer, "list_silences", nil)
		if !slices.ContainsFunc(items(t, m, "silences"), func(s map[string]any) bool { return s["id"] == silenceID }) {
			t.Errorf("list_silences = %v, want %s", m, silenceID)
		}
		if a := firing(t, viewer, nil); a != nil {
			t.Errorf("silenced AlwaysFiring still listed by default: %v", a)
		}
		a := firing(t, viewer, map[string]any{"silenced": true, "filter": []any{`alertname="AlwaysFiring"`}})
		if a == nil || !jsonEqual(a["silencedBy"], []any{silenceID}) {
			t.Errorf("with silenced: true, AlwaysFiring = %v, want silenced by %s", a, silenceID)
		}
	})

	t.Run("expire-silence-empty-200-is-ok", func(t *testing.T) {
		res, text, _ := call(t, operator, "expire_silence", map[string]any{"silence_id": silenceID})
		if res.IsError {
			t.Fatalf("expire_silence (Alertmanager answers 200 with no body) = %s, want success", text)
		}
		if !strings.Contains(text, "200") {
			t.Errorf("expire_silence = %s, want the result to say the upstream answered 200", text)
		}
		if !hasAudit(g, "expire_silence", "ok", 200) {
			t.Errorf("no audit record for expire_silence with outcome ok and status 200: %+v", g.audits())
		}
		s := ok(t, viewer, "get_silence", map[string]any{"silence_id": silenceID})
		if s["state"] != "expired" {
			t.Errorf("after expire_silence, get_silence = %v, want expired", s)
		}
		m := ok(t, viewer, "list_silences", nil)
		if slices.ContainsFunc(items(t, m, "silences"), func(s map[string]any) bool { return s["id"] == silenceID }) {
			t.Errorf("list_silences still shows the expired silence: %v", m)
		}
	})

	t.Run("unknown-silence-is-not-found", func(t *testing.T) {
		m := ok(t, viewer, "get_silence", map[string]any{"silence_id": "00000000-0000-4000-8000-000000000000"})
		if m["found"] != false {
			t.Errorf("get_silence of an unknown id = %v, want {found: false}", m)
		}
	})

	t.Run("scheduled-silence-is-pending-then-expired", func(t *testing.T) {
		tomorrow := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
		m := ok(t, operator, "schedule_silence", map[string]any{
			"matchers":  []any{map[string]any{"name": "severity", "value": "info", "isRegex": false}},
			"comment":   "maintenance window",
			"starts_at": tomorrow.Format(time.RFC3339), "ends_at": tomorrow.Add(2 * time.Hour).Format(time.RFC3339),
		})
		id, _ := m["silenceID"].(string)
		s := ok(t, viewer, "get_silence", map[string]any{"silence_id": id})
		if s["state"] != "pending" || s["createdBy"] != "alice@example.com" {
			t.Errorf("scheduled silence = %v, want pending, created by alice@example.com", s)
		}
		ok(t, operator, "expire_silence", map[string]any{"silence_id": id})
	})

	t.Run("bad-silence-shows-alertmanagers-reason", func(t *testing.T) {
		now := time.Now().UTC()
		reason := toolError(t, operator, "schedule_silence", map[string]any{
			"matchers":  []any{map[string]any{"name": "alertname", "value": "AlwaysFiring", "isRegex": false}},
			"comment":   "ends before it starts",
			"starts_at": now.Add(3 * time.Hour).Format(time.RFC3339), "ends_at": now.Add(time.Hour).Format(time.RFC3339),
		})
		t.Logf("schedule_silence ending before it starts: %s", reason)
		if !strings.Contains(reason, "start time must be before end time") {
			t.Errorf("schedule_silence ending before it starts = %q, want Alertmanager's reason", reason)
		}
	})

	t.Run("path-value-leaving-its-segment-is-refused", func(t *testing.T) {
		before := len(st.Alertmanager.requests())
		for _, id := range []string{"../status", "..%2Fstatus", ".."} {
			reason := toolError(t, viewer, "get_silence", map[string]any{"silence_id": id})
			t.Logf("get_silence %q: %s", id, reason)
			if !strings.Contains(reason, "silence_id") {
				t.Errorf("get_silence %q = %q, want a refusal naming silence_id", id, reason)
			}
		}
		sentNothing(t, st.Alertmanager, before, "get_silence with ../status")
	})

	t.Run("bad-inputs-send-nothing", func(t *testing.T) {
		before := len(st.Alertmanager.requests())
		for _, c := range []struct {
			cs   *mcp.ClientSession
			tool string
			args map[string]any
			want string
		}{
			{viewer, "create_silence", map[string]any{"matchers": []any{map[string]any{"name": "a", "value": "b", "isRegex": false}}, "comment": "x"}, "gate"},
			{operator, "expire_silence", map[string]any{"silence_id": "../status"}, "silence_id"},
			{operator, "create_silence", map[string]any{"matchers": []any{map[string]any{"name": "a", "value": "b"}}, "comment": "x"}, "isRegex"},
			{operator, "create_silence", map[string]any{"matchers": []any{map[string]any{"name": "a", "value": "b", "isRegex": false}}, "comment": "x", "duration": "2 hours"}, "duration"},
		} {
			if reason := toolError(t, c.cs, c.tool, c.args); !strings.Contains(reason, c.want) {
				t.Errorf("%s(%v) = %q, want it to name %q", c.tool, c.args, reason, c.want)
			}
		}
		sentNothing(t, st.Alertmanager, before, "refused calls")
	})

	t.Run("firing-alert-back-after-expiry", func(t *testing.T) {
		waitFor(t, "AlwaysFiring listed again", 30*time.Second, func() error {
			if firing(t, viewer, nil) == nil {
				return errNotYet
			}
			return nil
		})
	})

	// The example catalog with one projection misspelt (data → dta): the
	// call is an error naming the path, never an empty answer an agent
	// would read as "no series".
	t.Run("typo-in-projection-is-an-error", func(t *testing.T) {
		b, err := os.ReadFile(catalogFile)
		if err != nil {
			t.Fatal(err)
		}
		typo := strings.Replace(string(b), "series: data.result.#.{metric,value:value.1}", "series: dta.result.#.{metric,value:value.1}", 1)
		if typo == string(b) {
			t.Fatal("the query tool's series projection is not in the catalog")
		}
		path := filepath.Join(t.TempDir(), "catalog.yaml")
		if err := os.WriteFile(path, []byte(typo), 0o600); err != nil {
			t.Fatal(err)
		}
		g := startGateway(t, st, path)
		cs := connect(t, g.MCP, mintToken(t, path, "bob", "bob@example.com", "monitoring:read"))
		reason := toolError(t, cs, "query", map[string]any{"query": "up"})
		t.Logf("query through a misspelt projection: %s", reason)
		if !strings.Contains(reason, "dta.result") {
			t.Errorf("query through a misspelt projection = %q, want an error naming the path", reason)
		}
	})
}

type notYet struct{}

func (notYet) Error() string { return "not yet" }

var errNotYet error = notYet{}

// firing returns the AlwaysFiring alert as list_firing_alerts shows it, or nil.
func firing(t *testing.T, cs *mcp.ClientSession, args map[string]any) map[string]any {
	t.Helper()
	m := ok(t, cs, "list_firing_alerts", args)
	for _, a := range items(t, m, "alerts") {
		if a["alertname"] == "AlwaysFiring" {
			if a["severity"] != "info" || a["summary"] == nil {
				t.Errorf("AlwaysFiring = %v, want its severity and summary", a)
			}
			return a
		}
	}
	return nil
}

// hasAudit reports whether the gateway's stderr holds a completed record for
// tool with this outcome and status. The gateway writes the record before it
// answers, but its stderr reaches the test through a pipe that os/exec copies
// on another goroutine, so the line can arrive a moment after the answer: wait
// for it, up to a generous bound.
func hasAudit(g *gateway, tool, outcome string, status int) bool {
	match := func(r auditRecord) bool {
		return r.Tool == tool && r.Stage == "completed" && r.Outcome == outcome && r.UpstreamStatus == status && r.Actor == "alice@example.com"
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if slices.ContainsFunc(g.audits(), match) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
