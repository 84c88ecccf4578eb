package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// scaleWords make up synthetic tool text: names, descriptions and
// arguments of the shape an imported API has.
var scaleWords = strings.Fields("job run workflow deployment flow cancel retry list get create delete update alert rule silence metric query range label target user team repository issue comment branch commit tag release secret block document log filter count schedule worker pool queue artifact variable event webhook member setting key token")

// scaleCatalog writes a catalog of n imported-looking tools: each with a
// title, a two-sentence description, three arguments (one an enum) and
// an output schema of five properties. Every tool's schemas differ (the
// tool's number is in a description), so no load can share work between
// tools: the worst case for a catalog.
func scaleCatalog(n int) []byte {
	var b strings.Builder
	b.WriteString(`version: 1
server: { name: scale }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  up_write: { scopes: [up:write] }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
discovery: { mode: auto }
tools:
`)
	w := func(i, k int) string { return scaleWords[(i*7+k*13)%len(scaleWords)] }
	for i := range n {
		name := fmt.Sprintf("%s_%s_%s_%d", w(i, 0), w(i, 1), w(i, 2), i)
		kind := "read"
		extra := ""
		method := "GET"
		if i%4 == 3 {
			kind, extra, method = "write", "\n    gate: up_write", "POST"
		}
		fmt.Fprintf(&b, `  - name: %s
    title: %s %s %s
    description: %s the %s of a %s. Returns the %s with its %s and %s.
    kind: %s%s
    tags: [%s]
    input:
      type: object
      additionalProperties: false
      properties:
        %s_id: { type: string, description: The %s to act on (tool %d). }
        state: { type: string, enum: [open, closed, pending, failed] }
        limit: { type: integer, minimum: 1, maximum: 100 }
      required: [%s_id]
    request: { upstream: up, method: %s, path: "/v1/%s/{%s_id}/%s" }
    output_schema:
      type: object
      properties:
        id: { type: string, description: "Its id (tool %d)." }
        name: { type: string }
        state: { type: string }
        created: { type: string }
        items: { type: array, items: { type: object, properties: { id: { type: string }, value: { type: number } } } }
`, name, w(i, 0), w(i, 1), w(i, 2), w(i, 0), w(i, 1), w(i, 2), w(i, 3), w(i, 4), w(i, 5), kind, extra, w(i, 6), w(i, 2), w(i, 2), i, w(i, 2), method, w(i, 2), w(i, 2), w(i, 1), i)
	}
	return []byte(b.String())
}

// cpuTime is the CPU time the process has used, on every thread: on a
// shared machine, a steadier measure of the work a load does than the
// wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func scaleEnv(k string) (string, bool) { return "s3cret", k == "SECRET" }

// BenchmarkCatalogScale reports, for 100, 1,000 and 10,000 tools: the
// time to load the catalog and build its core (ready), the heap it holds
// (MiB-held), a discovery tools/list, and one search (with its p99; the
// first search of a caller also computes that caller's term statistics).
func BenchmarkCatalogScale(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		data := scaleCatalog(n)
		b.Run(fmt.Sprintf("tools=%d/ready", n), func(b *testing.B) {
			var before, after runtime.MemStats
			var cpu time.Duration
			for b.Loop() {
				start := cpuTime()
				runtime.GC()
				runtime.ReadMemStats(&before)
				cat, err := catalog.Parse("scale.yaml", data, &catalog.LoadOptions{Getenv: scaleEnv})
				if err != nil {
					b.Fatal(err)
				}
				core, err := proxy.New(cat, nil)
				if err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - start
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(core)
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-held")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "CPU-s/op")
		})
		cat, err := catalog.Parse("scale.yaml", data, &catalog.LoadOptions{Getenv: scaleEnv})
		if err != nil {
			b.Fatal(err)
		}
		core, err := proxy.New(cat, nil)
		if err != nil {
			b.Fatal(err)
		}
		p := &authz.Principal{Subject: "u", Workspace: "acme", Scopes: []string{"up:write"}, Actor: "u"}
		ctx := context.Background()
		b.Run(fmt.Sprintf("tools=%d/list", n), func(b *testing.B) {
			for b.Loop() {
				if l := core.List(ctx, p); len(l) == 0 {
					b.Fatal("empty list")
				}
			}
		})
		b.Run(fmt.Sprintf("tools=%d/search", n), func(b *testing.B) {
			queries := []string{"cancel the job that is stuck", "list failed workflow runs", "who changed this alert rule", "count pending tokens"}
			var took []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				if _, err := core.Search(ctx, p, "", proxy.SearchQuery{Query: queries[i%len(queries)], Limit: 5}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				i++
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "µs-p99")
		})
		// The costliest words to read: initials no tool uses, each of
		// which may be read against every tool's name (maxSpelled).
		b.Run(fmt.Sprintf("tools=%d/search-initials", n), func(b *testing.B) {
			const consonants = "bcdfghjklmnpqrstvwxz"
			var q strings.Builder
			for i := range 32 {
				fmt.Fprintf(&q, "%c%c%c ", consonants[i%20], consonants[i/20+1], 'z')
			}
			for b.Loop() {
				if _, err := core.Search(ctx, p, "", proxy.SearchQuery{Query: q.String(), Limit: 5}); err != nil && !errors.Is(err, proxy.ErrBadSearch) {
					b.Fatal(err)
				}
			}
		})
	}
}
