package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpgw/gateway/catalog"
)

// checkOutput holds a successful result of a tool that declares an
// output_schema to the schema it publishes (catalog.Tool.Output, which
// admits the members the gateway adds). A result that breaks it becomes
// a tool error naming the path and the rule, never the offending value,
// with the outcome OutcomeOutputInvalid: a client that trusts the
// advertised outputSchema never receives a structuredContent of another
// shape. The check runs on what the caller would have received, after
// trimming and withholding.
func (c *Core) checkOutput(t *tool, status int, res *Result) *Result {
	// The not_found result is the catalog's own, advertised as the
	// schema's other alternative (catalog.Tool.OutputJSON).
	if t.def.Output == nil || res == nil || res.IsError || res.Structured == nil || res.Outcome == OutcomeNotFound {
		return res
	}
	dec := json.NewDecoder(bytes.NewReader(res.Structured))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil {
		err = t.def.Output.Validate(v)
	}
	if err == nil {
		return res
	}
	c.logger.Warn("output schema violation", "tool", t.def.Name, "upstream", t.up.name, "status", status, "error", truncateText(err.Error(), 512))
	msg := fmt.Sprintf("upstream %s answered %d, but the result does not match the output schema of tool %q %s", t.up.name, status, t.def.Name, truncateText(err.Error(), 512))
	if t.def.Kind == catalog.KindWrite {
		// The upstream has acted; the agent must not retry blindly.
		msg += "; the write was performed, do not retry it"
	}
	return toolError(OutcomeOutputInvalid, msg)
}

// truncateText caps s at n bytes on a character boundary.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
