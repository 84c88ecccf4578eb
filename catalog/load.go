package catalog

// Loading runs in four passes over one file, each reporting every problem it
// finds before the next begins:
//
//  1. yaml.v3 parses the bytes into a yaml.Node tree (one document only),
//     so every value keeps its line and column; a large catalog's tools
//     sequence is parsed in pieces on every core (yamlsplit.go).
//  2. A small reflective walker (decode.go) maps the tree onto the model
//     strictly, expanding ${VAR} inside each decoded scalar (expand.go).
//  3. applyDefaults fills what the operator left out (defaults.go).
//  4. validate checks the whole catalog and compiles schemas and templates
//     (validate.go, schema.go).
//
// Decoding problems stop the pipeline after pass 2: defaults and validation
// over a half-decoded catalog would only add noise.

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// LoadOptions configures [Load] and [Parse]. A nil *LoadOptions is the zero
// value.
type LoadOptions struct {
	// Getenv looks up ${VAR}. Nil: os.LookupEnv.
	Getenv func(string) (string, bool)
	// AuthOnly loads only what verifying and minting tokens reads: the
	// auth section, and each upstream's workspace binding (from the
	// catalog and its fragments), which decides whether tokens need a
	// workspace ([Principal.WorkspaceOptional]). Nothing else is decoded,
	// expanded or validated, so ${VAR}s elsewhere (upstream credentials,
	// base URLs) need not be set. The catalog returned has no tools and
	// must not be served. False: the whole catalog.
	AuthOnly bool
}

// Problem is one thing wrong with a catalog, at a position in its file.
type Problem struct {
	File string
	Pos  Pos // zero when the problem has no single place
	Msg  string
}

// String formats p as "FILE:LINE:COL: msg", leaving out what is unknown.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Pos.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(p.Pos.Line))
		if p.Pos.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Pos.Column))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// LoadError is every problem that kept a catalog from loading, in file order.
type LoadError struct {
	Problems []Problem

	err error // the I/O error behind a failed read, for errors.Is
}

// Error returns the problems, one per line.
func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the I/O error when the file could not be read, so that
// errors.Is(err, fs.ErrNotExist) works.
func (e *LoadError) Unwrap() error { return e.err }

// Load reads the catalog at path and parses it with [Parse].
func Load(path string, opts *LoadOptions) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = "cannot read catalog: " + pe.Err.Error()
		}
		return nil, &LoadError{Problems: []Problem{{File: path, Msg: msg}}, err: err}
	}
	return Parse(path, data, opts)
}

// Parse loads a catalog from data; file names it in messages and in
// [Catalog.File]. Every problem found is reported in one *[LoadError]. The
// returned catalog holds only enabled tools and is never modified again.
func Parse(file string, data []byte, opts *LoadOptions) (*Catalog, error) {
	lookup := os.LookupEnv
	if opts != nil && opts.Getenv != nil {
		lookup = opts.Getenv
	}
	p := &problems{file: file}
	root := parseYAML(data, p)
	if root == nil {
		return nil, p.err()
	}

	c := &Catalog{File: file}
	sum := sha256.Sum256(data)
	c.Hash = hex.EncodeToString(sum[:])

	d := newDecoder(p, lookup)
	if opts != nil && opts.AuthOnly {
		d.authOnly = true
		root = authOnlyRoot(root)
	}
	d.decodeRoot(root, c)
	if len(p.list) > 0 {
		return nil, p.err()
	}
	if len(c.Include) > 0 {
		c.Hash = includeFragments(c, d, p, data)
		if len(p.list) > 0 {
			return nil, p.err()
		}
	}
	applyOverrides(c, p, d.pos)
	if len(p.list) > 0 {
		return nil, p.err()
	}
	applyDefaults(c)
	if d.authOnly {
		v := &checker{c: c, p: p, pos: d.pos}
		v.auth()
		v.tenantless()
		if len(p.list) > 0 {
			return nil, p.err()
		}
		c.byName = map[string]*Tool{}
		return c, nil
	}
	validate(c, p, d.pos, lookup)
	if len(p.list) > 0 {
		return nil, p.err()
	}

	enabled := make([]*Tool, 0, len(c.Tools))
	c.byName = make(map[string]*Tool, len(c.Tools))
	for _, t := range c.Tools {
		if t.Enabled {
			enabled = append(enabled, t)
			c.byName[t.Name] = t
		}
	}
	c.Tools = enabled
	c.Warnings = p.warningLines()
	return c, nil
}

// authOnlyRoot keeps of a catalog's top mapping what [LoadOptions.AuthOnly]
// loads: version, auth, include, and the workspace of each upstream.
func authOnlyRoot(root *yaml.Node) *yaml.Node {
	if root.Kind != yaml.MappingNode {
		return root // reported as the catalog's shape
	}
	keep := *root
	keep.Content = nil
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "version", "auth", "include":
		case "upstreams":
			v = workspacesOnly(v)
		default:
			continue
		}
		keep.Content = append(keep.Content, k, v)
	}
	return &keep
}

// workspacesOnly keeps of an upstreams: mapping each upstream's
// workspace binding.
func workspacesOnly(ups *yaml.Node) *yaml.Node {
	if ups.Kind != yaml.MappingNode {
		return ups
	}
	out := *ups
	out.Content = make([]*yaml.Node, 0, len(ups.Content))
	for i := 0; i+1 < len(ups.Content); i += 2 {
		name, u := ups.Content[i], ups.Content[i+1]
		if u.Kind == yaml.AliasNode && u.Alias != nil {
			u = u.Alias
		}
		if u.Kind == yaml.MappingNode {
			w := *u
			w.Content = nil
			for j := 0; j+1 < len(u.Content); j += 2 {
				if u.Content[j].Value == "workspace" {
					w.Content = append(w.Content, u.Content[j], u.Content[j+1])
				}
			}
			u = &w
		}
		out.Content = append(out.Content, name, u)
	}
	return &out
}

var (
	yamlLine   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlQuoted = regexp.MustCompile("'[^']*'|`[^`]*`|\"[^\"]*\"")
)

// parseYAML returns the single document's top node, or nil after adding
// the reason to p.
func parseYAML(data []byte, p *problems) (root *yaml.Node) {
	defer func() {
		// yaml.v3 is fuzzed upstream, but a catalog is operator input: a
		// parser bug should cost a load error, not the process.
		if r := recover(); r != nil {
			p.add(Pos{}, "cannot parse YAML: %v", r)
			root = nil
		}
	}()
	if len(data) >= splitMinBytes {
		if doc, ok := parseSplit(data, splitParts()); ok {
			return doc.Content[0]
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			p.add(Pos{}, "empty catalog")
		} else {
			p.addYAMLError(err, data)
		}
		return nil
	}
	// A second Decode must see io.EOF, or a second document would slip by
	// unread.
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		if err != nil {
			p.addYAMLError(err, data)
		} else {
			p.add(Pos{extra.Line, extra.Column}, "a catalog is one YAML document; a second one starts here")
		}
		return nil
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		p.add(Pos{}, "empty catalog")
		return nil
	}
	return doc.Content[0]
}

// problems collects what is wrong, and what is merely odd, with one file.
type problems struct {
	file string
	// redact drops quoted text from yaml.v3's messages (an included
	// file's, which may hold secrets: see decoder.redact).
	redact   bool
	includes []string // included fragment files; see fragmentLines
	list     []Problem
	warnings []Problem
}

func (p *problems) add(pos Pos, format string, args ...any) {
	file, pos := p.locate(pos)
	p.list = append(p.list, Problem{File: file, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (p *problems) warn(pos Pos, format string, args ...any) {
	file, pos := p.locate(pos)
	p.warnings = append(p.warnings, Problem{File: file, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// addYAMLError turns a yaml.v3 syntax error ("yaml: line 3: ...") into a
// problem on that line.
func (p *problems) addYAMLError(err error, data []byte) {
	msg := err.Error()
	if p.redact {
		// yaml.v3 quotes anchor names and, in some messages, values.
		// A quoted punctuation mark is the syntax it expected: kept.
		msg = yamlQuoted.ReplaceAllStringFunc(msg, func(q string) string {
			if len(q) == 3 && !unicode.IsLetter(rune(q[1])) && !unicode.IsDigit(rune(q[1])) {
				return q
			}
			return "…"
		})
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		// yaml.v3 may name the line after the last one at end of input.
		line = min(line, lineCount(data))
		p.add(Pos{Line: line}, "invalid YAML: %s", m[2])
		return
	}
	p.add(Pos{}, "invalid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
}

// lineCount counts lines as YAML does: CR, LF and CRLF end a line, and so
// do NEL, LS and PS.
func lineCount(data []byte) int {
	s := string(data)
	n := 1 + strings.Count(s, "\n") + strings.Count(s, "\r") - strings.Count(s, "\r\n")
	return n + strings.Count(s, "\u0085") + strings.Count(s, "\u2028") + strings.Count(s, "\u2029")
}

// sorted returns ps in file order without repeats (an alias decoded twice
// reports the same problem twice).
func sorted(ps []Problem, files ...string) []Problem {
	ps = slices.Clone(ps)
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(slices.Index(files, a.File), slices.Index(files, b.File)),
			cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column))
	})
	return slices.Compact(ps)
}

func (p *problems) err() error {
	return &LoadError{Problems: sorted(p.list, append([]string{p.file}, p.includes...)...)}
}

func (p *problems) warningLines() []string {
	var lines []string
	for _, w := range sorted(p.warnings, append([]string{p.file}, p.includes...)...) {
		lines = append(lines, w.String())
	}
	return lines
}
