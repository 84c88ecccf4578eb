package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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

// gateway tools search --tasks ranks every task of a file, prints each
// miss with where it came and what came first, and reports recall and
// MRR; --min-recall turns a low recall into exit status 1, for CI. A task
// naming no tool of the catalog, or a malformed line, is an error at its
// line.
func TestToolsSearchRanksATasksFile(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	search := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"tools", "search", "--catalog", "../../catalog.yaml"}, args...), nil, &stdout, &stderr, none)
		return stdout.String(), stderr.String(), err
	}
	tasks := write("ops.tasks", "# what our agents ask\npause a queue\tpause_queue\n\nstop a job that hangs\tcancel_job,cancel_workflow\r\nxyzzy plugh\tget_job\n")
	out, errs, err := search("--tasks", tasks)
	if err != nil {
		t.Fatalf("tools search --tasks = %v\n%s", err, errs)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "miss (not in the first 20) "+tasks+`:5 "xyzzy plugh" wants get_job`) ||
		lines[1] != "3 tasks: recall@5 0.667 (2 found), MRR 0.667" {
		t.Errorf("tools search --tasks =\n%s", out)
	}
	if _, errs, err := search("--tasks", tasks, "--min-recall", "0.9"); err != exitError(1) || !strings.Contains(errs, "below --min-recall 0.9") {
		t.Errorf("tools search --min-recall 0.9 = %v, %q; want exit 1 with the reason", err, errs)
	}
	if _, _, err := search("--tasks", tasks, "--min-recall", "0.6"); err != nil {
		t.Errorf("tools search --min-recall 0.6 = %v, want success at 0.667", err)
	}
	for file, want := range map[string]string{
		"unknown.tasks":  "pause a queue\tpause_queues\n",
		"noanswer.tasks": "pause a queue\n",
		"empty.tasks":    "# nothing yet\n",
		"blank.tasks":    "pause a queue\tpause_queue,\n",
	} {
		path := write(file, want)
		_, errs, err := search("--tasks", path)
		if err != exitError(1) || !strings.Contains(errs, path) {
			t.Errorf("tools search --tasks %s = %v, %q; want exit 1 naming the file", file, err, errs)
		}
	}
	for _, bad := range [][]string{{"--tasks", tasks, "jobs"}, {"--min-recall", "0.5", "jobs"}, {"--tasks", tasks, "--min-recall", "2"}, {"--tasks", tasks, "--limit", "0"}} {
		if _, errs, err := search(bad...); err != exitError(2) || !strings.Contains(errs, "invalid arguments") {
			t.Errorf("tools search %q = %v, %q; want exit 2", bad, err, errs)
		}
	}
}
