package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// gateway tools search ranks the bundled catalog offline, with no
// variable set (placeholders stand in), and refuses a bad query with
// exit status 2 and the reason.
func TestToolsSearchRanksOffline(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	search := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"tools", "search", "--catalog", "../../catalog.yaml"}, args...), nil, &stdout, &stderr, none)
		return stdout.String(), stderr.String(), err
	}
	out, errs, err := search("--limit", "3", "pause", "a", "queue")
	if err != nil {
		t.Fatalf("tools search = %v\n%s", err, errs)
	}
	if lines := strings.Split(strings.TrimRight(out, "\n"), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], " 1. pause_queue (write): ") {
		t.Errorf("tools search pause a queue =\n%s\n%s", out, errs)
	}
	out, _, err = search("--kind", "read", "cancel", "a", "job")
	if err != nil || strings.Contains(out, "(write)") || out == "" {
		t.Errorf("tools search --kind read = %v\n%s", err, out)
	}
	for _, bad := range [][]string{{"--limit", "21", "jobs"}, {}, {"--kind", "delete", "jobs"}} {
		_, errs, err := search(bad...)
		if err != exitError(2) || !strings.Contains(errs, "invalid arguments") {
			t.Errorf("tools search %q = %v, %q; want exit 2 with the reason", bad, err, errs)
		}
	}
}
