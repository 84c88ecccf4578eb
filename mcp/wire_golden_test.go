package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var updateWire = flag.Bool("update", false, "rewrite the response sections of testdata/wire/*.txtar")

// What clients see, pinned: each testdata/wire/*.txtar holds a request as
// a client sends it and the gateway's whole answer (status, the headers
// clients read, the body). A change to the wire shows up as a diff of
// these files; go test ./mcp -run TestWireGoldens -update rewrites them.
// The format is txtar: a comment saying what the exchange shows, then
// "-- request --" and "-- response --" sections.
func TestWireGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/wire/*.txtar")
	if len(files) < 10 {
		t.Fatalf("found %d wire goldens", len(files))
	}
	e := newEnv(t, testCatalog)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			a := parseTxtar(b)
			reqText, ok := a.file("request")
			if !ok {
				t.Fatalf("%s has no request section", f)
			}
			got := wireAnswer(t, e, reqText)
			if *updateWire {
				a.set("response", got)
				if err := os.WriteFile(f, a.format(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, _ := a.file("response")
			if got != want {
				t.Errorf("%s: the answer changed (rerun with -update if that is meant)\n--- want\n%s\n--- got\n%s", f, want, got)
			}
		})
	}
}

// tokenPlaceholder stands for a freshly signed token with the scopes
// named, so the files need no secret and never expire.
var tokenPlaceholder = regexp.MustCompile(`\{\{token ([a-z ]*)\}\}`)

// wireHeaders are the answer headers clients act on; the rest (Date,
// Content-Length) would only make the files churn.
var wireHeaders = []string{"Content-Type", "Cache-Control", "Www-Authenticate", "Retry-After", "Mcp-Session-Id", "Allow"}

// wireAnswer sends the request written in text ("METHOD PATH", header
// lines, a blank line, the body) and formats the answer the same way.
func wireAnswer(t *testing.T, e *env, text string) string {
	t.Helper()
	head, body, _ := strings.Cut(text, "\n\n")
	sc := bufio.NewScanner(strings.NewReader(head))
	sc.Scan()
	method, path, _ := strings.Cut(sc.Text(), " ")
	r := req{method: method, path: path, body: strings.TrimSuffix(body, "\n"), header: map[string]string{}}
	if method != http.MethodPost {
		r.body = ""
	}
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		v = tokenPlaceholder.ReplaceAllStringFunc(v, func(m string) string {
			return token(t, tokenPlaceholder.FindStringSubmatch(m)[1])
		})
		r.header[k] = v
	}
	resp := e.do(r)
	var out strings.Builder
	fmt.Fprintf(&out, "%d %s\n", resp.status, http.StatusText(resp.status))
	for _, k := range wireHeaders {
		for _, v := range resp.header.Values(k) {
			out.WriteString(k + ": " + v + "\n")
		}
	}
	out.WriteString("\n")
	var pretty bytes.Buffer
	if json.Indent(&pretty, resp.body, "", "  ") == nil {
		out.Write(latency.ReplaceAll(pretty.Bytes(), []byte(`"latency_ms": 0`)))
	} else {
		out.Write(resp.body)
	}
	s := out.String()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// latency is the one member whose value depends on the machine.
var latency = regexp.MustCompile(`"latency_ms": [0-9]+`)

// txtar is a minimal reader and writer of the txtar format
// (golang.org/x/tools/txtar): a comment, then files each introduced by a
// "-- name --" line.
type txtar struct {
	comment string
	names   []string
	data    map[string]string
}

var txtarMarker = regexp.MustCompile(`(?m)^-- (.+) --$`)

func parseTxtar(b []byte) *txtar {
	a := &txtar{data: map[string]string{}}
	s := string(b)
	idx := txtarMarker.FindAllStringSubmatchIndex(s, -1)
	if len(idx) == 0 {
		a.comment = s
		return a
	}
	a.comment = s[:idx[0][0]]
	for i, m := range idx {
		name := s[m[2]:m[3]]
		start := m[1] + 1
		end := len(s)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		if start > end {
			start = end
		}
		a.names = append(a.names, name)
		a.data[name] = s[start:end]
	}
	return a
}

func (a *txtar) file(name string) (string, bool) { s, ok := a.data[name]; return s, ok }

func (a *txtar) set(name, s string) {
	if !slices.Contains(a.names, name) {
		a.names = append(a.names, name)
	}
	a.data[name] = s
}

func (a *txtar) format() []byte {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, n := range a.names {
		b.WriteString("-- " + n + " --\n")
		s := a.data[n]
		b.WriteString(s)
		if s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}
