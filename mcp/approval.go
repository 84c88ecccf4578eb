package mcp

import (
	"encoding/json"
	"net/http"

	"github.com/mcpgw/gateway/proxy"
)

// This file carries confirmations (issue 14) over the wire: what the
// client can ask its user and what a retry brought back go to the core as
// a proxy.Asking; a core result that needs input is answered as a
// multi round-trip InputRequiredResult (2026-07-28 basic/patterns/mrtr).

// withAsking puts into d's context what the core needs to ask for a
// confirmation: the era, whether the client declared form elicitation,
// and params.requestState and params.inputResponses of a retry.
func (d *dispatcher) withAsking() {
	a := &proxy.Asking{Modern: d.modern, Elicitation: d.modern && formElicitation(d.msg.metaCaps),
		URLElicitation: d.modern && urlElicitation(d.msg.metaCaps)}
	if d.modern {
		for it := newObjIter(d.msg.params); ; {
			rawKey, val, ok := it.next()
			if !ok {
				break
			}
			switch string(unquote(rawKey)) {
			case "requestState":
				a.RequestState, _ = stringValue(val)
			case "inputResponses":
				if len(val) > 0 && val[0] == '{' {
					a.Responses = json.RawMessage(val)
				}
			}
		}
	}
	d.ctx = proxy.WithAsking(d.ctx, a)
}

// formElicitation reports whether clientCapabilities declares
// elicitation in form mode: "elicitation": {} (form implied, as before
// modes existed) or "elicitation": {"form": {...}}.
func formElicitation(caps []byte) bool {
	var c struct {
		Elicitation *struct {
			Form *json.RawMessage `json:"form"`
			URL  *json.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	if len(caps) == 0 || json.Unmarshal(caps, &c) != nil || c.Elicitation == nil {
		return false
	}
	e := c.Elicitation
	return e.Form != nil || e.URL == nil
}

// urlElicitation reports whether clientCapabilities declares
// elicitation in url mode: "elicitation": {"url": {...}}.
func urlElicitation(caps []byte) bool {
	var c struct {
		Elicitation *struct {
			URL *json.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	return len(caps) > 0 && json.Unmarshal(caps, &c) == nil && c.Elicitation != nil && c.Elicitation.URL != nil &&
		string(*c.Elicitation.URL) != "null"
}

// inputRequiredReply answers a call that needs the user's input first:
// resultType input_required with one elicitation (a confirmation's form,
// or a four-eyes call's approval page URL) and the sealed requestState the
// client must echo.
func (d *dispatcher) inputRequiredReply(in *proxy.InputRequired) Reply {
	b := appendResultStart(make([]byte, 0, 1024), d.msg.id)
	b = append(b, `"resultType":"input_required","inputRequests":{`...)
	b = appendString(b, in.Key)
	if in.URL != "" {
		// A url elicitation (2026-07-28 client/elicitation §URL Mode).
		b = append(b, `:{"method":"elicitation/create","params":{"mode":"url","message":`...)
		b = appendString(b, in.Message)
		b = append(b, `,"url":`...)
		b = appendString(b, in.URL)
		b = append(b, `,"elicitationId":`...)
		b = appendString(b, in.ElicitationID)
	} else {
		b = append(b, `:{"method":"elicitation/create","params":{"mode":"form","message":`...)
		b = appendString(b, in.Message)
		b = append(b, `,"requestedSchema":`...)
		b = append(b, in.Schema...)
	}
	b = append(b, `}}},"requestState":`...)
	b = appendString(b, in.State)
	b = append(b, `,"_meta":{"`+metaServerInfo+`":`...)
	b = appendServerInfo(b, d.serverInfo())
	return Reply{Status: http.StatusOK, Body: append(b, "}}}"...)}
}
