package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpgw/gateway/catalog"

	"github.com/mcpgw/gateway/internal/text"
)

// checkOutput holds a successful result of a tool that declares an
// output_schema to the schema it publishes (catalog.Tool.Output, which
// admits the members the gateway adds). The check runs on what the
// caller would have received, after trimming and withholding.
//
// A read's result that breaks it becomes a tool error naming the path and
// the rule, never the offending value, with the outcome
// OutcomeOutputInvalid: a client that trusts the advertised outputSchema
// never receives a structuredContent of another shape, and a read can be
// asked again.
//
// A write's result is never turned into an error: the upstream performed
// the write, and an agent told it failed retries it (a second issue, a
// second payment). Its answer is returned as it came, with the departure
// beside it (see departed).
func (c *Core) checkOutput(t *tool, status int, res *Result) *Result {
	// The not_found result is the catalog's own, advertised as the
	// schema's other alternative (catalog.Tool.OutputJSON).
	if t.def.Output == nil || res == nil || res.IsError || res.Structured == nil ||
		res.Outcome == OutcomeNotFound || res.Outcome == OutcomeOutputDeparted {
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
	why := text.Clip(err.Error(), 512)
	if t.def.Kind == catalog.KindWrite {
		return c.departed(t, status, res, "its answer does not match the output schema "+why)
	}
	c.logger.Warn("output schema violation", "tool", t.def.Name, "upstream", t.up.name, "status", status, "error", why)
	msg := fmt.Sprintf("upstream %s answered %d, but the result does not match the output schema of tool %q %s", t.up.name, status, t.def.Name, why)
	return toolError(OutcomeOutputInvalid, msg)
}

// departed is a write's successful result whose answer departs from what
// the catalog expects of it (its output schema, or its response paths):
// the result as it is, with catalog.DepartureMember first saying where,
// the outcome OutcomeOutputDeparted (counted with schema violations,
// audited as ok) and a Warn log line. why holds no value from the answer.
func (c *Core) departed(t *tool, status int, res *Result, why string) *Result {
	c.logger.Warn("write answer departs from its tool's expected shape", "tool", t.def.Name, "upstream", t.up.name, "status", status, "error", why)
	note := fmt.Sprintf("upstream %s answered %d and performed the write, but %s", t.up.name, status, why)
	return &Result{Structured: withMember(res.Structured, catalog.DepartureMember, note), Text: string(withMember([]byte(res.Text), catalog.DepartureMember, note)), Outcome: OutcomeOutputDeparted}
}

// withMember returns the JSON object obj with name: value as its first
// member (obj is compact JSON from the renderer, an object).
func withMember(obj []byte, name, value string) []byte {
	if len(obj) == 0 || obj[0] != '{' {
		return obj // not an object: nothing to add a member to
	}
	k, _ := json.Marshal(name)
	v, _ := json.Marshal(value)
	out := make([]byte, 0, len(obj)+len(k)+len(v)+2)
	out = append(out, '{')
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, v...)
	if rest := bytes.TrimSpace(obj[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, obj[1:]...)
}
