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
			x := &exchange{ctx: context.Background(), rid: "rid-1", log: slog.New(slog.NewTextHandler(&logs, nil))}
			f := x.classify("asked", tc.err)
			status, v := rpcError(nil, f)
			e := v.(*response).err
			var data []byte
			if e.data != nil {
				data = encode(nil, e.data)
			}
			chal := f.kind == failInsufficientScope
			if status != tc.status || e.code != tc.code || e.msg != tc.msg || string(data) != tc.data || chal != tc.challenge {
				t.Fatalf("classify(%v) = %d %d %q %s challenge=%v, want %d %d %q %s challenge=%v",
					tc.err, status, e.code, e.msg, data, chal, tc.status, tc.code, tc.msg, tc.data, tc.challenge)
			}
			if tc.status == 500 && !strings.Contains(logs.String(), "secret detail") {
				t.Errorf("internal error cause not logged: %s", logs.String())
			}
		})
	}
}
