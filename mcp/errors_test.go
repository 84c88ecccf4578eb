package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

func TestCallErrorMapping(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		status    int
		code      int
		msg       string
		data      string
		challenge bool
	}{
		{"unknown-tool-is-32602", &proxy.UnknownToolError{Name: "nope"}, 200, -32602, `unknown tool "nope"`, "", false},
		{"wrapped-unknown-tool-is-32602", fmt.Errorf("calling: %w", &proxy.UnknownToolError{Name: "x"}), 200, -32602, `unknown tool "x"`, "", false},
		{"bare-sentinel-names-the-tool", proxy.ErrUnknownTool, 200, -32602, `unknown tool "asked"`, "", false},
		{"output-too-large-is-413", &proxy.OutputTooLargeError{Tool: "search", Bytes: 90000, Limit: 65536}, 413, -31413, "output too large",
			`{"error":"AGENT_OUTPUT_TOO_LARGE","tool":"search","bytes":90000,"limit":65536}`, false},
		{"challenge-is-403", &proxy.ChallengeError{Gate: "operate", Scopes: []string{"jobs:read", "jobs:operate"}}, 403, -31403, "insufficient scope",
			`{"error":"insufficient_scope","scopes":["jobs:read","jobs:operate"]}`, true},
		{"anything-else-is-500-internal", errors.New("dial tcp 10.0.0.7:5432: secret detail"), 500, -32603, "internal error", `{"request_id":"rid-1"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			d := &dispatcher{ctx: context.Background(), req: &Request{RequestID: "rid-1"}, log: slog.New(slog.NewTextHandler(&logs, nil))}
			e, chal := d.callError("asked", tc.err)
			if e.status != tc.status || e.code != tc.code || e.msg != tc.msg || string(e.data) != tc.data || (chal != nil) != tc.challenge {
				t.Fatalf("callError(%v) = %d %d %q %s challenge=%v, want %d %d %q %s challenge=%v",
					tc.err, e.status, e.code, e.msg, e.data, chal != nil, tc.status, tc.code, tc.msg, tc.data, tc.challenge)
			}
			if tc.status == 500 && !strings.Contains(logs.String(), "secret detail") {
				t.Errorf("internal error cause not logged: %s", logs.String())
			}
		})
	}
}
