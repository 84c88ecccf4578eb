package catalog

// include: lists fragment files (globs) whose upstreams and tools join the
// catalog, so that `gateway import` can rewrite a fragment without touching
// hand edits (which live in overrides:, see override.go).
//
// A fragment's nodes are decoded by the catalog's own decoder, after their
// line numbers are shifted by fragmentLines times the fragment's number:
// every position in the model stays a plain Pos, and problems.locate (and
// [Catalog.Locate]) map a shifted line back to its file and line.

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// fragmentLines is the line offset between files: fragment k's lines are
// numbered from k*fragmentLines. No fragment may be that long.
const fragmentLines = 1 << 24

// maxIncludes bounds how many fragment files one catalog may include.
const maxIncludes = 256

// locate maps a position to its file: the catalog's, or a fragment's.
func (p *problems) locate(pos Pos) (string, Pos) {
	if k := pos.Line / fragmentLines; k > 0 && k <= len(p.includes) {
		pos.Line -= k * fragmentLines
		return p.includes[k-1], pos
	}
	return p.file, pos
}

// Locate returns the file a position of this catalog's model stands in
// and the position within that file: positions of tools and upstreams
// from included fragments are numbered past the catalog's own lines.
func (c *Catalog) Locate(pos Pos) (string, Pos) {
	p := &problems{file: c.File, includes: c.Files}
	return p.locate(pos)
}

// includeFragments reads every file the include globs match, decodes its
// upstreams and tools into c, and returns the hash of the catalog's bytes
// and every fragment's (so a reload sees a changed fragment).
func includeFragments(c *Catalog, d *decoder, p *problems, data []byte) string {
	dir := filepath.Dir(c.File)
	var files []string
	for i, g := range c.Include {
		at := first(d.pos[childIndex("include", i)], c.At("include"))
		pattern := g
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(dir, pattern)
		}
		matches, err := filepath.Glob(pattern)
		var hidden []string
		matches = slices.DeleteFunc(matches, func(m string) bool {
			if hiddenMatch(pattern, m) {
				hidden = append(hidden, m)
				return true
			}
			return false
		})
		switch {
		case err != nil:
			p.add(at, "include %q: %v", g, err)
		case len(matches) == 0 && len(hidden) > 0:
			p.add(at, "include %q matches only hidden files such as %s: include never reads a file whose name starts with \".\" (where .env files and keys live), nor looks into such a directory through a wildcard", g, filepath.Base(hidden[0]))
		case len(matches) == 0:
			p.add(at, "include %q matches no file", g)
		}
		for _, m := range matches {
			if !slices.Contains(files, m) && filepath.Clean(m) != filepath.Clean(c.File) {
				files = append(files, m)
			}
		}
	}
	if len(files) > maxIncludes {
		p.add(c.At("include"), "include matches %d files, more than %d", len(files), maxIncludes)
		return c.Hash
	}
	slices.Sort(files)
	c.Files = files
	p.includes = files
	h := sha256.New()
	h.Write(data)
	// The catalog's own entry for an upstream a fragment declares adds
	// the operator's settings to it (mergeUpstream); its positions are
	// kept aside, since decoding the fragment records its own under the
	// same paths.
	own := maps.Clone(c.Upstreams)
	ownPos := map[string]Pos{}
	for k, at := range d.pos {
		if strings.HasPrefix(k, "upstreams.") || strings.HasPrefix(k, "upstreams[") {
			ownPos[k] = at
		}
	}
	upstreamAt := map[string]Pos{} // where a fragment declared each upstream
	for k, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			p.add(c.At("include"), "include: cannot read %s: %v", f, err)
			continue
		}
		h.Write([]byte{0})
		h.Write([]byte(f))
		h.Write([]byte{0})
		h.Write(raw)
		fp := &problems{file: f, redact: true}
		root := parseYAML(raw, fp)
		if root == nil {
			p.list = append(p.list, fp.list...)
			continue
		}
		if lineCount(raw) >= fragmentLines {
			p.list = append(p.list, Problem{File: f, Msg: "fragment is too long"})
			continue
		}
		shiftLines(root, (k+1)*fragmentLines, map[*yaml.Node]bool{})
		d.maxVisits += 2*countNodes(root) + aliasSlack
		d.redact = true
		if root.Kind != yaml.MappingNode {
			p.add(nodePos(root), "a fragment is a mapping of upstreams and tools, got %s", d.describe(root))
			d.redact = false
			continue
		}
		d.mapKeys(root, "", 0, func(key string, k, val *yaml.Node) {
			switch key {
			case "upstreams":
				if d.authOnly {
					val = workspacesOnly(val)
				}
				var ups map[string]*Upstream
				d.decode(val, reflect.ValueOf(&ups).Elem(), "upstreams", 1)
				for _, name := range slices.Sorted(mapsKeys(ups)) {
					u := ups[name]
					if prev, dup := upstreamAt[name]; dup {
						p.add(u.Pos, "upstream %q is declared by two fragments (first at %s); a fragment's upstream is settled in the catalog's own upstreams: entry of that name", name, where(p, prev))
						continue
					}
					upstreamAt[name] = u.Pos
					if o := own[name]; o != nil {
						mergeUpstream(u, o)
						prefix := childKey("upstreams", name)
						for k, at := range ownPos {
							if k == prefix || strings.HasPrefix(k, prefix+".") || strings.HasPrefix(k, prefix+"[") {
								d.pos[k] = at
							}
						}
					}
					if c.Upstreams == nil {
						c.Upstreams = map[string]*Upstream{}
					}
					c.Upstreams[name] = u
				}
			case "tools":
				if d.authOnly {
					return
				}
				var tools []*Tool
				if val.Kind != yaml.SequenceNode {
					d.mismatch(val, "tools", "a list of mappings")
					return
				}
				for _, e := range val.Content {
					var t *Tool
					path := childIndex("tools", len(c.Tools)+len(tools))
					d.labelElem(e, path)
					d.decodeElem(e, reflect.ValueOf(&t).Elem(), path, 1, "")
					tools = append(tools, t)
				}
				c.Tools = append(c.Tools, tools...)
			default:
				p.add(nodePos(k), "field %q not found in a fragment (it holds upstreams and tools)", key)
			}
		})
		d.redact = false
	}
	// Upstreams and tools that come from fragments count as written.
	if !c.Has("upstreams") && len(c.Upstreams) > 0 {
		c.Keys["upstreams"] = c.At("include")
	}
	if !c.Has("tools") && len(c.Tools) > 0 {
		c.Keys["tools"] = c.At("include")
	}
	return hex.EncodeToString(h.Sum(nil))
}

// mergeUpstream lays the catalog's own entry o for an upstream over the
// fragment's u, so that the operator's settings (base URL, credentials,
// timeouts) live outside the file an import rewrites: every field o
// writes replaces u's, except headers, which merge by name (compared
// without case, as HTTP does), o's value winning.
func mergeUpstream(u, o *Upstream) {
	si := infoOf(reflect.TypeFor[Upstream]())
	uv, ov := reflect.ValueOf(u).Elem(), reflect.ValueOf(o).Elem()
	for _, key := range si.names {
		if !o.Has(key) {
			continue
		}
		u.Keys[key] = o.Keys[key]
		if key != "headers" {
			uv.Field(si.fields[key]).Set(ov.Field(si.fields[key]))
			continue
		}
		h := make(map[string]string, len(u.Headers)+len(o.Headers))
		for name, v := range u.Headers {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(o.Headers)), func(n string) bool { return strings.EqualFold(n, name) }) {
				h[name] = v
			}
		}
		maps.Copy(h, o.Headers)
		u.Headers = h
	}
}

// hiddenMatch reports whether m, a match of the glob pattern, is hidden
// from include: its file name starts with ".", or a wildcard in the
// pattern matched a directory whose name does (".git", ".secrets").
// Directories the pattern names literally may be hidden ones
// (~/.config/gateway/*.yaml): the operator chose them.
func hiddenMatch(pattern, m string) bool {
	hidden := func(name string) bool { return strings.HasPrefix(name, ".") && name != "." && name != ".." }
	if hidden(filepath.Base(m)) {
		return true
	}
	pe := strings.Split(filepath.ToSlash(pattern), "/")
	me := strings.Split(filepath.ToSlash(m), "/")
	if len(pe) != len(me) {
		return false
	}
	for i := range me {
		if hidden(me[i]) && strings.ContainsAny(pe[i], `*?[\`) {
			return true
		}
	}
	return false
}

// where formats pos as FILE:LINE:COL.
func where(p *problems, pos Pos) string {
	f, pos := p.locate(pos)
	return strings.TrimSuffix(Problem{File: f, Pos: pos, Msg: "-"}.String(), ": -")
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func shiftLines(n *yaml.Node, by int, seen map[*yaml.Node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by, seen)
	}
	shiftLines(n.Alias, by, seen)
}
