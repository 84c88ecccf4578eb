package catalog

import (
	"fmt"
	"maps"
	"slices"
)

// Discovery decides how a caller finds tools when a catalog holds more of
// them than an agent can keep in its context. With discovery on, tools/list
// offers the always-listed tools and two meta tools, search_tools and
// call_tool; every visible tool stays callable by name.
type Discovery struct {
	Meta `yaml:"-"`
	// Mode is DiscoveryOff (the default: every visible tool is listed),
	// DiscoveryOn, or DiscoveryAuto (on for a caller who may see more than
	// Threshold tools).
	Mode string `yaml:"mode"`
	// Threshold is auto's limit; default DefaultDiscoveryThreshold.
	Threshold int `yaml:"threshold"`
	// Always names tools listed even when discovery is on (beside those
	// marked discovery: always).
	Always []string `yaml:"always"`
}

// Discovery modes.
const (
	DiscoveryOff  = "off"
	DiscoveryAuto = "auto"
	DiscoveryOn   = "on"
)

// DiscoveryAlways is the one value a tool's discovery field takes.
const DiscoveryAlways = "always"

// DefaultDiscoveryThreshold is auto's threshold when none is written.
const DefaultDiscoveryThreshold = 40

// Names of the meta tools discovery adds; a catalog with discovery on
// anywhere cannot use them for tools of its own.
const (
	SearchToolsName = "search_tools"
	CallToolName    = "call_tool"
)

// On reports whether discovery is on for a caller who may see visible
// tools. A nil Discovery is off.
func (d *Discovery) On(visible int) bool {
	if d == nil {
		return false
	}
	switch d.Mode {
	case DiscoveryOn:
		return true
	case DiscoveryAuto:
		return visible > d.Threshold
	}
	return false
}

// DiscoveryFor returns the discovery settings of the toolset set ("" for
// the whole catalog): the toolset's own when it declares them, else the
// catalog's. Nil means off.
func (c *Catalog) DiscoveryFor(set string) *Discovery {
	if s := c.Toolsets[set]; set != "" && s != nil && s.Discovery != nil {
		return s.Discovery
	}
	return c.Discovery
}

// AlwaysListed reports whether t is listed even with discovery on under d.
func (d *Discovery) AlwaysListed(t *Tool) bool {
	return t.Discovery == DiscoveryAlways || d != nil && slices.Contains(d.Always, t.Name)
}

func discoveryDefaults(d *Discovery) {
	if d == nil {
		return
	}
	d.Mode = or(d.Mode, DiscoveryOff)
	if !d.Has("threshold") {
		d.Threshold = DefaultDiscoveryThreshold
	}
}

// discovery checks the catalog's and each toolset's discovery settings
// and the tools' discovery fields.
func (v *checker) discovery() {
	c := v.c
	names := make([]string, 0, len(c.Tools))
	for _, t := range c.Tools {
		names = append(names, t.Name)
	}
	on := false
	check := func(d *Discovery, path, subj string) {
		if d == nil {
			return
		}
		at := first(d.Pos, v.pos[path])
		switch d.Mode {
		case DiscoveryOff:
		case DiscoveryAuto, DiscoveryOn:
			on = true
		default:
			v.add(d.At("mode"), subj, "discovery.mode %q must be %q, %q or %q", d.Mode, DiscoveryOff, DiscoveryAuto, DiscoveryOn)
		}
		if d.Threshold < 1 {
			v.add(first(d.At("threshold"), at), subj, "discovery.threshold must be at least 1")
		}
		for i, n := range d.Always {
			if !slices.Contains(names, n) {
				v.add(first(v.pos[childIndex(path+".always", i)], d.At("always")), subj, "discovery.always names %q, which is not a tool%s", n, didYouMean(n, names))
			}
		}
	}
	check(c.Discovery, "discovery", "the catalog")
	for _, name := range slices.Sorted(maps.Keys(c.Toolsets)) {
		check(c.Toolsets[name].Discovery, childKey("toolsets", name)+".discovery", fmt.Sprintf("toolset %q", name))
	}
	for _, t := range c.Tools {
		subj := fmt.Sprintf("tool %q", t.Name)
		if t.Discovery != "" && t.Discovery != DiscoveryAlways {
			v.add(t.At("discovery"), subj, "discovery must be %q (or absent)", DiscoveryAlways)
		}
		if on && (t.Name == SearchToolsName || t.Name == CallToolName) {
			v.add(t.At("name"), subj, "the name is discovery's own meta tool: with discovery on, rename the tool (overrides: {%s: {rename: ...}})", t.Name)
		}
	}
}
