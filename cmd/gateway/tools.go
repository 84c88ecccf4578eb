package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcpgw/gateway/proxy"
)

const toolsUsage = `usage: gateway tools search [--catalog FILE] [--limit N] [--kind read|write] [--tag T] QUERY...
       gateway tools search [--catalog FILE] [--limit N] --tasks FILE [--min-recall R]
`

// runTools ranks a catalog's tools offline, as search_tools would for a
// caller who may see them all, so an operator can tune titles,
// descriptions and tags. Variables the catalog names but the environment
// lacks get placeholders: ranking reads no secret.
func runTools(args []string, stdout, stderr io.Writer, env lookupEnv) error {
	if len(args) == 0 || args[0] != "search" {
		fmt.Fprint(stderr, toolsUsage)
		return exitError(2)
	}
	fs := flag.NewFlagSet("tools search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, toolsUsage); fs.PrintDefaults() }
	path := fs.String("catalog", envOr(env, "GATEWAY_CATALOG", "catalog.yaml"), "catalog file (env GATEWAY_CATALOG)")
	var q proxy.SearchQuery
	fs.IntVar(&q.Limit, "limit", proxy.DefaultSearchLimit, fmt.Sprintf("how many tools to show (1 to %d)", proxy.MaxSearchLimit))
	fs.StringVar(&q.Kind, "kind", "", "only read or only write tools")
	var tag string
	fs.StringVar(&tag, "tag", "", "only tools carrying this tag")
	tasks := fs.String("tasks", "", "rank every task of FILE (one a line: task<TAB>tool[,tool]) and report recall and MRR instead")
	minRecall := fs.Float64("min-recall", 0, "with --tasks, exit 1 when recall at --limit is below this (0 to 1)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitError(2)
	}
	if tag != "" {
		q.Tags = []string{tag}
	}
	q.Query = strings.Join(fs.Args(), " ")
	if *tasks != "" && (q.Query != "" || q.Limit < 1 || q.Limit > proxy.MaxSearchLimit) || *minRecall < 0 || *minRecall > 1 || *minRecall > 0 && *tasks == "" {
		fmt.Fprintf(stderr, "gateway tools search: invalid arguments: give a QUERY or --tasks FILE, not both; --limit is 1 to %d, --min-recall (with --tasks) 0 to 1\n", proxy.MaxSearchLimit)
		return exitError(2)
	}
	cat, err := loadForCLI(*path, stderr, placeholderEnv(env))
	if err != nil {
		return err
	}
	core, err := proxy.New(cat, nil)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *path, err)
		return exitError(1)
	}
	if *tasks != "" {
		return rankTasks(core, q, *tasks, *minRecall, stdout, stderr)
	}
	found, err := core.SearchCatalog(q)
	if errors.Is(err, proxy.ErrBadSearch) {
		fmt.Fprintf(stderr, "gateway tools search: %v\n", err)
		return exitError(2)
	}
	for i, l := range found {
		desc, _, _ := strings.Cut(l.Tool.Description, "\n")
		if len(desc) > 100 {
			desc = desc[:97] + "..."
		}
		fmt.Fprintf(stdout, "%2d. %s (%s): %s\n", i+1, l.Tool.Name, l.Tool.Kind, desc)
	}
	if len(found) == 0 {
		fmt.Fprintln(stderr, "no tool matches")
	}
	return nil
}

// searchTask is one line of a tasks file: what an agent would ask, and
// the tools that answer it (any one counts).
type searchTask struct {
	line    int
	text    string
	answers []string
}

// readSearchTasks reads a tasks file: one task a line, "task<TAB>tool,tool";
// blank lines and lines starting with # are skipped.
func readSearchTasks(r io.Reader, name string) ([]searchTask, error) {
	var tasks []searchTask
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		task, answers, ok := strings.Cut(text, "\t")
		tools := strings.Split(answers, ",")
		if !ok || strings.TrimSpace(task) == "" || slices.Contains(tools, "") {
			return nil, fmt.Errorf("%s:%d: want task<TAB>tool[,tool], got %q", name, line, text)
		}
		tasks = append(tasks, searchTask{line, task, tools})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: no tasks", name)
	}
	return tasks, nil
}

// answerRank is the rank (from 1) of the first of answers among found, or
// 0 when none is there.
func answerRank(found []*proxy.Listed, answers []string) int {
	return slices.IndexFunc(found, func(l *proxy.Listed) bool { return slices.Contains(answers, l.Tool.Name) }) + 1
}

// rankTasks ranks every task of a tasks file as search_tools would for a
// caller who sees every tool, prints each miss with what came first, and
// then recall at q.Limit and MRR over the first MaxSearchLimit: an
// operator's check that agents find their tools, runnable in CI.
func rankTasks(core *proxy.Core, q proxy.SearchQuery, path string, minRecall float64, stdout, stderr io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "gateway tools search: %v\n", err)
		return exitError(1)
	}
	defer f.Close()
	tasks, err := readSearchTasks(f, path)
	if err != nil {
		fmt.Fprintf(stderr, "gateway tools search: %v\n", err)
		return exitError(1)
	}
	names := map[string]bool{}
	for _, t := range core.Catalog().Tools {
		names[t.Name] = true
	}
	limit := q.Limit
	found, rr := 0, 0.0
	for _, task := range tasks {
		for _, a := range task.answers {
			if !names[a] {
				fmt.Fprintf(stderr, "gateway tools search: %s:%d: the catalog has no tool %q\n", path, task.line, a)
				return exitError(1)
			}
		}
		q.Query, q.Limit = task.text, proxy.MaxSearchLimit
		ranked, err := core.SearchCatalog(q)
		if err != nil {
			fmt.Fprintf(stderr, "gateway tools search: %s:%d: %v\n", path, task.line, err)
			return exitError(1)
		}
		rank := answerRank(ranked, task.answers)
		if rank > 0 {
			rr += 1 / float64(rank)
		}
		if rank > 0 && rank <= limit {
			found++
			continue
		}
		var top []string
		for _, l := range ranked[:min(limit, len(ranked))] {
			top = append(top, l.Tool.Name)
		}
		where := "not in the first 20"
		if rank > 0 {
			where = fmt.Sprintf("rank %d", rank)
		}
		fmt.Fprintf(stdout, "miss (%s) %s:%d %q wants %s; first: %s\n", where, path, task.line, task.text, strings.Join(task.answers, " or "), strings.Join(top, ", "))
	}
	recall := float64(found) / float64(len(tasks))
	fmt.Fprintf(stdout, "%d tasks: recall@%d %.3f (%d found), MRR %.3f\n", len(tasks), limit, recall, found, rr/float64(len(tasks)))
	if recall < minRecall {
		fmt.Fprintf(stderr, "gateway tools search: recall@%d %.3f is below --min-recall %g\n", limit, recall, minRecall)
		return exitError(1)
	}
	return nil
}

// placeholderEnv is env with a stand-in for every variable it lacks: a
// loopback URL for names ending in _URL, "1" for the rest.
func placeholderEnv(env lookupEnv) lookupEnv {
	return func(k string) (string, bool) {
		if v, ok := env(k); ok {
			return v, true
		}
		if strings.HasSuffix(k, "_URL") {
			return "http://127.0.0.1:9", true
		}
		return "1", true
	}
}
