package proxy_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

var visibilityVocab = strings.Fields(`job run workflow deployment cancel retry list get create delete update alert rule silence metric
	review reviewer automation automate contributor contributes item entry row record salary bonus payroll homepage ticker
	user member people secret token key pool history audit log who which what my me this 42 stuck pending
	reference referenc configuration config setting error failure file image upload table column field
	watch watchlist add on addon`)

// visibilityCatalog writes n tools at random (a fixed seed), with output
// schemas two levels deep; every third is behind gate secret, or left
// out when drop is true.
func visibilityCatalog(n int, drop bool) string {
	var b strings.Builder
	b.WriteString(`version: 1
server: { name: visibility }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  secret: { scopes: [secret] }
  w: { scopes: [w] }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
discovery: { mode: on }
tools:
`)
	r := rand.New(rand.NewSource(7))
	w := func() string { return visibilityVocab[r.Intn(len(visibilityVocab))] }
	for i := range n {
		hidden := i%3 == 0
		// Draw every random value whether or not the tool is kept, so
		// the kept tools are the same in both catalogs.
		name := fmt.Sprintf("%s_%s_%d", w(), w(), i)
		title := w() + " " + w()
		desc := w() + " the " + w() + " of a " + w() + "."
		tag := w()
		arg := "a_" + w()
		out1, out2, out3 := w(), w(), w()
		argDesc := w()
		kind := "read"
		if r.Intn(3) == 0 {
			kind = "write"
		}
		path := "/v1/" + w()
		if r.Intn(2) == 0 {
			path += "/{" + arg + "_id}"
		}
		if hidden && drop {
			continue
		}
		gate := ""
		if kind == "write" {
			gate = "\n    gate: w"
		}
		if hidden {
			gate = "\n    gate: secret"
		}
		fmt.Fprintf(&b, `  - name: %s
    title: %s
    description: %s
    kind: %s%s
    tags: [%s]
    input: { type: object, properties: { %s_id: { type: string, description: "The %s." } }, required: [%s_id] }
    request: { upstream: up, method: GET, path: "%s" }
    output_schema: { type: object, properties: { %s: { type: string }, nested: { type: object, properties: { %s: { type: array, items: { type: object, properties: { %s: { type: string } } } } } } } }
`, name, title, desc, kind, gate, tag, arg, argDesc, arg, path, out1, out2, out3)
	}
	return b.String()
}

// TestSearchIgnoresHiddenTools: a caller who cannot see some tools gets
// exactly the answers, in the same order, that it would get from a
// catalog without them, over 4,000 random queries with kinds and tags.
func TestSearchIgnoresHiddenTools(t *testing.T) {
	const n = 150
	withHidden := searchCore(t, "a.yaml", visibilityCatalog(n, false))
	without := searchCore(t, "b.yaml", visibilityCatalog(n, true))
	p := authz.NewPrincipal("agent", "acme", "", []string{"w"}, nil)
	ctx := context.Background()
	r := rand.New(rand.NewSource(11))
	diffs := 0
	for i := range 4000 {
		k := 1 + r.Intn(5)
		var ws []string
		for range k {
			ws = append(ws, visibilityVocab[r.Intn(len(visibilityVocab))])
		}
		q := proxy.SearchQuery{Query: strings.Join(ws, " "), Limit: 1 + r.Intn(20)}
		if i%5 == 0 {
			q.Kind = []string{"read", "write"}[r.Intn(2)]
		}
		if i%7 == 0 {
			q.Tags = []string{visibilityVocab[r.Intn(len(visibilityVocab))]}
		}
		a, errA := withHidden.Search(ctx, p, "", q)
		b, errB := without.Search(ctx, p, "", q)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%+v: errors differ: %v / %v", q, errA, errB)
		}
		if na, nb := listedNames(a), listedNames(b); !slices.Equal(na, nb) {
			diffs++
			if diffs < 6 {
				t.Errorf("query %q (kind %q tags %v limit %d): with hidden tools %v, without %v", q.Query, q.Kind, q.Tags, q.Limit, na, nb)
			}
		}
	}
	if diffs > 0 {
		t.Errorf("%d of 4000 searches differ with hidden tools present", diffs)
	}
}
