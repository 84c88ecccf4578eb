package proxy

import (
	"encoding/json"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

// What a call adds to the caller's arguments once they are valid and
// before the request is built. The audit records the arguments
// as the caller sent them, never these.

// applyDefaults gives each absent top-level argument its JSON Schema
// default (catalog Tool.Defaults, checked against the property's schema at
// load). An argument sent as null is present: it keeps its null. Nested
// defaults are not applied.
func applyDefaults(t *catalog.Tool, args map[string]any) {
	for name, v := range t.Defaults {
		if _, present := args[name]; !present {
			args[name] = v
		}
	}
}

// dropComputed deletes from args whatever the caller sent under the
// reserved names of computed times, which only the gateway fills.
func dropComputed(refs []catalog.TimeRef, args map[string]any) {
	for _, r := range refs {
		delete(args, r.Name)
	}
}

// computeTimes puts the value of each computed time placeholder of the
// request into args under the placeholder's own name ("now",
// "now+ttl.unix"), so templates expand it like an argument: Unix seconds
// as a JSON number (whole in a JSON body, it stays a number), RFC 3339 as
// a string. Those names are reserved, so no declared argument has them;
// whatever an open schema let the caller send under them is dropped first.
// A {now+ARG} whose ARG is absent or null stays absent, as an absent
// argument would. A duration ARG cannot hold is the caller's error, and
// nothing is sent.
func computeTimes(refs []catalog.TimeRef, args map[string]any, now time.Time) error {
	dropComputed(refs, args)
	for _, r := range refs {
		at := now
		if r.Arg != "" {
			v := args[r.Arg]
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return argErrorf("invalid arguments: argument %q: must be a duration string like 2h or 1d", r.Arg)
			}
			d, err := catalog.ParseTimeOffset(s)
			if err != nil {
				return argErrorf("invalid arguments: argument %q: %v", r.Arg, err)
			}
			at = now.Add(time.Duration(r.Sign) * d)
		}
		if r.Unix {
			args[r.Name] = json.Number(catalog.FormatTime(at, true))
		} else {
			args[r.Name] = catalog.FormatTime(at, false)
		}
	}
	return nil
}
