package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
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
	for _, bad := range [][]string{{"--limit", "21", "jobs"}, {"--limit", "0", "jobs"}, {"--limit", "-3", "jobs"}, {}, {"--kind", "delete", "jobs"}} {
		_, errs, err := search(bad...)
		if err != exitError(2) || !strings.Contains(errs, "invalid arguments") {
			t.Errorf("tools search %q = %v, %q; want exit 2 with the reason", bad, err, errs)
		}
	}
}

// gateway tools search --tasks ranks every request of a file, prints each
// miss at its FILE:LINE with its rank and what came first, and reports
// recall at --limit and MRR; --min-recall turns a low recall into exit
// status 1, for CI, counted as printed. A file's unknown tools are all
// named before anything is ranked; a malformed line is an error at its
// line; a conflicting flag is named, with exit status 2.
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
	// A byte order mark, a comment, a blank line, CRLF, spaces around and
	// a repeat among the tools are all read as meant.
	tasks := write("ops.tasks", "\ufeff# what our agents ask\npause a queue\tpause_queue\n\n  # stopping\nstop a job that hangs\t cancel_job , cancel_workflow,cancel_job\r\nxyzzy plugh\tget_job\n")
	out, errs, err := search("--tasks", tasks)
	if err != nil {
		t.Fatalf("tools search --tasks = %v\n%s", err, errs)
	}
	want := tasks + `:6: miss (not in the first 20) "xyzzy plugh" wants get_job; first: (nothing matched)
3 tasks: recall@5 0.667 (2 of 3), MRR@20 0.667
`
	if out != want {
		t.Errorf("tools search --tasks =\n%s\nwant\n%s", out, want)
	}
	// Recall counts the first --limit; MRR always looks 20 deep. The
	// bundled catalog ranks cancel_workflow first for a hung job.
	hung := write("hung.tasks", "stop a job that hangs\tcancel_job\n")
	out, _, err = search("--tasks", hung, "--limit", "1")
	if want := hung + `:1: miss (rank 2) "stop a job that hangs" wants cancel_job; first: cancel_workflow
1 tasks: recall@1 0.000 (0 of 1), MRR@20 0.500
`; err != nil || out != want {
		t.Errorf("tools search --tasks --limit 1 = %v\n%s\nwant\n%s", err, out, want)
	}
	// 2 of 3 is 0.667 as printed: --min-recall 0.66 passes, 0.667 does not.
	if _, errs, err := search("--tasks", tasks, "--min-recall", "0.667"); err != exitError(1) || !strings.Contains(errs, "recall@5 is 2 of 3 (0.6667), below --min-recall 0.667 (3 of 3)") {
		t.Errorf("tools search --min-recall 0.667 = %v, %q; want exit 1 with the counts", err, errs)
	}
	if _, errs, err := search("--tasks", tasks, "--min-recall", "0.66"); err != nil {
		t.Errorf("tools search --min-recall 0.66 = %v, %q; want success at 2 of 3", err, errs)
	}
	// Every unknown tool is named, before any ranking.
	unknown := write("unknown.tasks", "pause a queue\tpause_queues\nstop a job\tcancel_job\nlist jobs\tlist_jobz,search_jobs\n")
	out, errs, err = search("--tasks", unknown)
	if err != exitError(1) || out != "" || !strings.Contains(errs, unknown+`:1: the catalog has no tool "pause_queues"`) || !strings.Contains(errs, unknown+`:3: the catalog has no tool "list_jobz"`) {
		t.Errorf("tools search --tasks with unknown tools = %v, %q, %q; want exit 1 naming both, nothing ranked", err, out, errs)
	}
	for file, c := range map[string]struct{ text, why string }{
		"noanswer.tasks": {"pause a queue\n", ":1: want request<TAB>tool"},
		"empty.tasks":    {"# nothing yet\n", ": no tasks"},
		"blank.tasks":    {"pause a queue\tpause_queue,\n", ":1: an empty tool name"},
		"tabbed.tasks":   {"pause a\tqueue\tpause_queue\n", `:1: "queue\tpause_queue" is no tool name`},
		"long.tasks":     {"pause a queue\tpause_queue\n" + strings.Repeat("x", 70<<10) + "\tget_job\n", ":2: line longer than 64 KiB"},
		"huge.tasks":     {strings.Repeat("queue ", 200) + "\tpause_queue\n", ":1: invalid arguments: query must be"},
	} {
		path := write(file, c.text)
		_, errs, err := search("--tasks", path)
		if err != exitError(1) || !strings.Contains(errs, path+c.why) {
			t.Errorf("tools search --tasks %s = %v, %q; want exit 1 with %q", file, err, errs, c.why)
		}
	}
	for _, c := range []struct {
		args []string
		why  string
	}{
		{[]string{"--tasks", tasks, "jobs"}, "give a QUERY or --tasks FILE, not both"},
		{[]string{"--tasks", ""}, "--tasks needs a file"},
		{[]string{"--tasks", tasks, "--kind", "read"}, "--kind and --tag do not apply to --tasks"},
		{[]string{"--tasks", tasks, "--tag", "jobs"}, "--kind and --tag do not apply to --tasks"},
		{[]string{"--min-recall", "0", "jobs"}, "--min-recall applies only to --tasks"},
		{[]string{"--tasks", tasks, "--min-recall", "2"}, "--min-recall must be between 0 and 1"},
		{[]string{"--tasks", tasks, "--min-recall", "NaN"}, "--min-recall must be between 0 and 1"},
		{[]string{"--tasks", tasks, "--limit", "0"}, "--limit must be between 1 and 20"},
	} {
		if _, errs, err := search(c.args...); err != exitError(2) || !strings.Contains(errs, "invalid arguments: "+c.why) {
			t.Errorf("tools search %q = %v, %q; want exit 2 saying %q", c.args, err, errs, c.why)
		}
	}
}

// gateway tools search prints a description from the catalog, or from the
// OpenAPI document it was imported from, with its control and format
// characters as spaces (an escape sequence must not retitle or clear the
// operator's terminal), cut on a character boundary.
func TestToolsSearchPrintsDescriptionsSafely(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	src := `version: 1
server: { name: cli }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  up: { base_url: "http://127.0.0.1:9" }
tools:
  - name: list_widgets
    description: "Lists widgets.\e]0;owned\a\e[2J"
    request: { upstream: up, path: /w }
  - name: list_gadgets
    description: "` + strings.Repeat("g", 97) + `éé gadgets"
    request: { upstream: up, path: /g }
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	none := func(string) (string, bool) { return "", false }
	if err := run(context.Background(), []string{"tools", "search", "--catalog", path, "list", "widgets", "gadgets"}, nil, &stdout, &stderr, none); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	if strings.ContainsAny(out, "\x1b\a") {
		t.Errorf("output carries raw control characters: %q", out)
	}
	if !utf8.ValidString(out) || !strings.Contains(out, "Lists widgets. ]0;owned") || !strings.Contains(out, strings.Repeat("g", 97)+"é…") {
		t.Errorf("output is not the descriptions cleaned and cut on a character: %q", out)
	}
}
