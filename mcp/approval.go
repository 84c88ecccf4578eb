package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/mcpgw/gateway/proxy"
)

// This file carries confirmations over the wire: what the
// client can ask its user and what a retry brought back go to the core as
// a proxy.Asking; a core result that needs input is answered as a
// multi round-trip InputRequiredResult (2026-07-28 basic/patterns/mrtr).

// withAsking puts into x's context what the core needs to ask for a
// confirmation: the era, whether the client declared form or url
// elicitation, and params.requestState and params.inputResponses of a
// retry. It runs on every tools/call, so the capabilities are decoded at
// most once, and not at all when they do not mention elicitation.
func (x *exchange) withAsking() {
	m := x.msg
	form, url := elicitationModes(m.metaCaps)
	a := &proxy.Asking{Modern: x.modern, Elicitation: x.modern && form, URLElicitation: x.modern && url}
	if x.modern {
		a.RequestState, _ = stringValue(m.requestState)
		if r := m.inputResponses; len(r) > 0 && r[0] == '{' {
			a.Responses = json.RawMessage(r)
		}
	}
	if !x.modern && x.live != nil && x.version >= "2025-06-18" && form {
		a.Ask = x.live.ask
	}
	x.ctx = proxy.WithAsking(x.ctx, a)
}

// elicitationModes reports which elicitation modes clientCapabilities
// declares: form for "elicitation": {} (form implied, as before modes
// existed) or "elicitation": {"form": {...}}; url for
// "elicitation": {"url": {...}}.
func elicitationModes(caps []byte) (form, url bool) {
	if !bytes.Contains(caps, []byte("elicitation")) {
		return false, false
	}
	var c struct {
		Elicitation *struct {
			Form *json.RawMessage `json:"form"`
			URL  *json.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	if json.Unmarshal(caps, &c) != nil || c.Elicitation == nil {
		return false, false
	}
	e := c.Elicitation
	return e.Form != nil || e.URL == nil, e.URL != nil && string(*e.URL) != "null"
}

// inputRequired answers a call that needs the user's input first:
// resultType input_required with one elicitation (a confirmation's form,
// or a four-eyes call's approval page URL, 2026-07-28 client/elicitation
// §URL Mode) and the sealed requestState the client must echo.
func (x *exchange) inputRequired(in *proxy.InputRequired) value {
	params := object{{"mode", str("form")}, {"message", str(in.Message)}, {"requestedSchema", raw(in.Schema)}}
	if in.URL != "" {
		params = object{{"mode", str("url")}, {"message", str(in.Message)}, {"url", str(in.URL)}, {"elicitationId", str(in.ElicitationID)}}
	}
	return &inputRequiredResult{
		key:     in.Key,
		request: object{{"method", str("elicitation/create")}, {"params", params}},
		state:   in.State,
		info:    x.st.info,
	}
}
