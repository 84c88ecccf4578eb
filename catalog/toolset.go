package catalog

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Toolset is a named subset of the catalog's tools, served on
// its own endpoint so an agent is offered a handful of tools rather than
// hundreds. A tool is in the set when it matches any selector: its name
// is listed in Tools, or it carries one of Tags, or its kind is one of
// Kinds. Disabled tools are never in a set. A set only narrows: callers
// still see only the tools their gates allow.
type Toolset struct {
	Meta  `yaml:"-"`
	Name  string   `yaml:"-"`
	Tools []string `yaml:"tools"`
	Tags  []string `yaml:"tags"`
	Kinds []string `yaml:"kinds"`
	// Discovery replaces the catalog's discovery settings on this
	// toolset's endpoint; nil: the catalog's apply.
	Discovery *Discovery `yaml:"discovery"`
}

// Selects reports whether t is in s: enabled, and matched by a name, a
// tag or a kind.
func (s *Toolset) Selects(t *Tool) bool {
	if !t.Enabled {
		return false
	}
	if slices.Contains(s.Tools, t.Name) || slices.Contains(s.Kinds, t.Kind) {
		return true
	}
	for _, g := range t.Tags {
		if slices.Contains(s.Tags, g) {
			return true
		}
	}
	return false
}

// ToolsetPath is where the toolset name is served under mcpPath.
func ToolsetPath(mcpPath, name string) string {
	return strings.TrimSuffix(mcpPath, "/") + "/" + name
}

// toolsetName is what a toolset may be called: one path segment that
// needs no escaping, and that is not "." or "..".
var toolsetName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$`)

// toolsets checks every toolset: a valid name whose path collides with
// no other route, selectors that name existing tools, tags and kinds, and
// at least one enabled tool selected.
func (v *checker) toolsets() {
	c := v.c
	mcpPath := c.Server.MCPPath
	if mcpPath == "" {
		mcpPath = DefaultMCPPath
	}
	names := make(map[string]bool, len(c.Tools))
	tags := map[string]bool{}
	for _, t := range c.Tools {
		names[t.Name] = true
		for _, g := range t.Tags {
			tags[g] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Toolsets)) {
		s := c.Toolsets[name]
		subj := fmt.Sprintf("toolset %q", name)
		base := childKey("toolsets", name)
		at := first(s.Pos, v.pos[base], c.At("toolsets"))
		if !toolsetName.MatchString(name) || name == ".." {
			v.add(at, subj, "a toolset name must be one URL path segment: 1 to 64 of A-Z a-z 0-9 _ - . (not starting with .)")
			continue
		}
		path := ToolsetPath(mcpPath, name)
		for _, other := range []struct{ what, path string }{
			{"server.admin_path", c.Server.AdminPath},
			{"the protected resource metadata", "/.well-known/oauth-protected-resource"},
		} {
			if other.path != "" && pathsOverlap(path, other.path) {
				v.add(at, subj, "its endpoint %s collides with %s (%s)", path, other.what, other.path)
			}
		}
		if len(s.Tools)+len(s.Tags)+len(s.Kinds) == 0 {
			v.add(at, subj, "select tools by name (tools), tag (tags) or kind (kinds)")
			continue
		}
		for i, n := range s.Tools {
			if !names[n] {
				v.add(first(v.pos[childIndex(base+".tools", i)], s.At("tools")), subj, "tools names %q, which is not a tool%s", n, didYouMean(n, slices.Collect(maps.Keys(names))))
			}
		}
		for i, g := range s.Tags {
			if !tags[g] {
				v.add(first(v.pos[childIndex(base+".tags", i)], s.At("tags")), subj, "tags names %q, which no tool carries", g)
			}
		}
		for i, k := range s.Kinds {
			if k != KindRead && k != KindWrite {
				v.add(first(v.pos[childIndex(base+".kinds", i)], s.At("kinds")), subj, "kinds entry %q must be %q or %q", k, KindRead, KindWrite)
			}
		}
		if !slices.ContainsFunc(c.Tools, s.Selects) {
			v.add(at, subj, "selects no enabled tool")
		}
	}
}

// pathsOverlap reports whether one path is the other or lies under it.
func pathsOverlap(a, b string) bool {
	a, b = strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/")
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}
