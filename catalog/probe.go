package catalog

import (
	"errors"
	"strings"
)

// ToolProbe is how `gateway check --probe` calls a read tool against the
// live upstream. The gateway itself never reads it while serving.
type ToolProbe struct {
	Meta `yaml:"-"`
	// Args are the arguments of the probe's call, exactly as a client
	// would send them; Load checks them against the tool's input schema.
	// Written explicitly, they are also what allows the probe to send a
	// read bound to POST (a query such as POST /flow_runs/filter).
	Args map[string]any `yaml:"args"`
}

// probe checks a tool's probe: only a read is ever probed, and its
// arguments must be ones the tool would accept from a client.
func (tc *toolCheck) probe() {
	t := tc.t
	if t.Probe == nil {
		return
	}
	pr := t.Probe
	at := first(pr.Pos, t.At("probe"))
	if t.Kind == KindWrite {
		tc.add(at, tc.subj, "probe: a write tool is never probed (gateway check --probe calls reads only); remove probe")
		return
	}
	if !pr.Has("args") {
		tc.add(at, tc.subj, "probe: args is required (the arguments gateway check --probe calls the tool with; {} for none)")
		return
	}
	if t.Schema == nil {
		return // the input schema's own problems are reported
	}
	err := t.Schema.Validate(jsonRoundTrip(map[string]any(pr.Args)))
	if err == nil {
		return
	}
	pos := pr.At("args")
	var ae *ArgumentError
	if errors.As(err, &ae) && ae.Field != "" {
		name, _ := firstSegment(ae.Field)
		pos = first(tc.pos[childKey(tc.path+".probe.args", name)], pos)
	}
	tc.add(pos, tc.subj, "probe.args: %s (the probe's arguments must fit the tool's input schema)", strings.TrimSpace(err.Error()))
}
